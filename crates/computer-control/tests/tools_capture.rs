//! `screen.capture` on the virtual desktop: every format decodes to the size it claims,
//! regions map as `image px = (canvas − region.origin) × image_scale`, displays, scale,
//! grayscale, budgets and frame numbers.

mod common;

use common::{Server, crop_rgb, data_url_bytes, jpeg_info, webp_dims};
use serde_json::json;

#[test]
fn png_full_screen_decodes_to_the_claimed_size() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let r = s.ok("screen.capture", json!({}));
    assert_eq!(r["format"], "png");
    let url = r["data_url"].as_str().unwrap();
    assert!(url.starts_with("data:image/png;base64,"), "{}", &url[..40]);
    let bytes = data_url_bytes(url);
    assert_eq!(r["bytes"], bytes.len());
    let (w, h, ct, px) = common::decode_png(&bytes);
    assert_eq!((w, h), (1920, 1080));
    assert_eq!(
        (r["width"].as_u64().unwrap(), r["height"].as_u64().unwrap()),
        (1920, 1080)
    );
    assert_eq!(ct, png::ColorType::Rgb);
    assert_eq!(px.len(), 1920 * 1080 * 3);
    assert_eq!(
        r["canvas"],
        json!({"display_width_px": 1920, "display_height_px": 1080})
    );
    assert_eq!(
        r["region"],
        json!({"x": 0, "y": 0, "width": 1920, "height": 1080})
    );
    assert_eq!(r["image_scale"], 1.0);
    // Not a blank image: the desktop has windows.
    let first = &px[..3];
    assert!(px.chunks(3).any(|p| p != first));
}

#[test]
fn jpeg_and_webp_decode_to_the_claimed_size() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let hi = s.ok(
        "screen.capture",
        json!({"format": "jpeg", "quality": 95, "scale": 0.5, "region": {"x": 100, "y": 100, "width": 640, "height": 360}}),
    );
    let lo = s.ok(
        "screen.capture",
        json!({"format": "jpeg", "quality": 5, "scale": 0.5, "region": {"x": 100, "y": 100, "width": 640, "height": 360}}),
    );
    for r in [&hi, &lo] {
        assert_eq!(r["format"], "jpeg");
        let url = r["data_url"].as_str().unwrap();
        assert!(url.starts_with("data:image/jpeg;base64,"));
        let bytes = data_url_bytes(url);
        assert_eq!(r["bytes"], bytes.len());
        assert_eq!(&bytes[bytes.len() - 2..], &[0xFF, 0xD9], "EOI marker");
        let (w, h, comps) = jpeg_info(&bytes);
        assert_eq!((w, h), (320, 180));
        assert_eq!(
            (r["width"].as_u64().unwrap(), r["height"].as_u64().unwrap()),
            (320, 180)
        );
        assert_eq!(comps, 3);
    }
    assert!(
        hi["bytes"].as_u64().unwrap() > lo["bytes"].as_u64().unwrap(),
        "quality changes the encoding"
    );
    let g = s.ok(
        "screen.capture",
        json!({"format": "jpeg", "grayscale": true, "scale": 0.25, "region": {"x": 100, "y": 100, "width": 640, "height": 360}}),
    );
    let (w, h, comps) = jpeg_info(&data_url_bytes(g["data_url"].as_str().unwrap()));
    assert_eq!(
        (w, h, comps),
        (160, 90, 1),
        "grayscale JPEG has one component"
    );

    let r = s.ok("screen.capture", json!({"format": "webp", "scale": 0.25}));
    assert_eq!(r["format"], "webp");
    let url = r["data_url"].as_str().unwrap();
    assert!(url.starts_with("data:image/webp;base64,"));
    let bytes = data_url_bytes(url);
    assert_eq!(r["bytes"], bytes.len());
    assert_eq!(webp_dims(&bytes), (480, 270));
    assert_eq!(
        (r["width"].as_u64().unwrap(), r["height"].as_u64().unwrap()),
        (480, 270)
    );
}

#[test]
fn default_format_and_quality_come_from_the_config() {
    let mut s = Server::start_with(
        Some(json!({"capture": {"default_format": "jpeg", "default_quality": 10}})),
        &[],
    );
    s.start_session(json!({}));
    let r = s.ok(
        "screen.capture",
        json!({"region": {"x": 100, "y": 100, "width": 640, "height": 360}}),
    );
    assert_eq!(r["format"], "jpeg");
    let low = r["bytes"].as_u64().unwrap();
    let r = s.ok(
        "screen.capture",
        json!({"region": {"x": 100, "y": 100, "width": 640, "height": 360}, "quality": 100}),
    );
    assert!(r["bytes"].as_u64().unwrap() > low);
    let started: Vec<_> = s
        .events
        .iter()
        .filter(|e| e["type"] == "action.started")
        .map(|e| e["payload"]["arguments"].clone())
        .collect();
    assert_eq!(started[0]["quality"], 10, "{started:?}");
    assert_eq!(started[0]["format"], "jpeg");
}

#[test]
fn region_pixels_equal_the_full_capture_crop() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let (_, fw, _, _, full) = s.capture_png(json!({}));
    let (r, w, h, _, px) =
        s.capture_png(json!({"region": {"x": 100, "y": 50, "width": 400, "height": 300}}));
    assert_eq!((w, h), (400, 300));
    assert_eq!(
        r["region"],
        json!({"x": 100, "y": 50, "width": 400, "height": 300})
    );
    assert_eq!(r["image_scale"], 1.0);
    assert_eq!(px, crop_rgb(&full, fw, 100, 50, 400, 300));

    // Scaled region: image px = (canvas − origin) × image_scale.
    let (r, w, h, _, _) = s.capture_png(
        json!({"region": {"x": 100, "y": 50, "width": 400, "height": 300}, "scale": 0.5}),
    );
    assert_eq!((w, h), (200, 150));
    assert_eq!(r["image_scale"], 0.5);
    assert_eq!(r["width"], 200);
    assert_eq!(r["canvas"]["display_width_px"], 1920);

    // A region hanging over the edge is clipped to the canvas and says so.
    let (r, w, h, _, px) =
        s.capture_png(json!({"region": {"x": 1800, "y": 1000, "width": 400, "height": 400}}));
    assert_eq!(
        r["region"],
        json!({"x": 1800, "y": 1000, "width": 120, "height": 80})
    );
    assert_eq!((w, h), (120, 80));
    assert_eq!(px, crop_rgb(&full, fw, 1800, 1000, 120, 80));
    let (r, _, _, _, _) =
        s.capture_png(json!({"region": {"x": -20, "y": -10, "width": 50, "height": 40}}));
    assert_eq!(
        r["region"],
        json!({"x": 0, "y": 0, "width": 30, "height": 30})
    );

    // Wholly outside: refused.
    let err = s.fails(
        "screen.capture",
        json!({"region": {"x": 5000, "y": 0, "width": 10, "height": 10}}),
        "invalid_arguments",
    );
    assert_eq!(common::issue_paths(&err), vec!["region"]);
}

#[test]
fn region_on_a_scaled_canvas_maps_to_the_same_pixels() {
    // Canvas 960 wide over a 1920 physical screen: a canvas region covers twice as
    // many physical pixels and the image is still canvas-sized.
    let mut s = Server::start();
    s.start_session(json!({"capture": {"default_width": 960}}));
    let (_, fw, fh, _, full) = s.capture_png(json!({}));
    assert_eq!((fw, fh), (960, 540));
    let (r, w, h, _, px) =
        s.capture_png(json!({"region": {"x": 60, "y": 60, "width": 320, "height": 220}}));
    assert_eq!((w, h), (320, 220));
    assert_eq!(r["image_scale"], 1.0);
    assert_eq!(
        r["canvas"],
        json!({"display_width_px": 960, "display_height_px": 540})
    );
    // Same content as the full capture's crop, up to resampling differences.
    let want = crop_rgb(&full, fw, 60, 60, 320, 220);
    let diff: u64 = px
        .iter()
        .zip(&want)
        .map(|(a, b)| (*a as i64 - *b as i64).unsigned_abs())
        .sum();
    assert!(
        diff / (px.len() as u64) < 8,
        "region differs from the crop: mean abs diff {}",
        diff / px.len() as u64
    );
}

#[test]
fn display_capture_scale_and_grayscale() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let (r, w, h, _, _) = s.capture_png(json!({"display": "0", "scale": 0.25}));
    assert_eq!((w, h), (480, 270));
    assert_eq!(
        r["region"],
        json!({"x": 0, "y": 0, "width": 1920, "height": 1080})
    );
    let (r, w, h, _, _) = s.capture_png(json!({"scale": 0.1}));
    assert_eq!((w, h), (192, 108));
    assert_eq!(r["width"], 192);
    assert_eq!(r["image_scale"], 0.1);
    let (r, w, h, _, _) = s.capture_png(
        json!({"scale": 0.25, "region": {"x": 100, "y": 100, "width": 640, "height": 360}}),
    );
    assert_eq!((w, h), (160, 90));
    assert_eq!(r["image_scale"], 0.25);
    let (_, _, _, ct, px) = s.capture_png(json!({"scale": 0.25, "grayscale": true, "region": {"x": 100, "y": 100, "width": 640, "height": 360}}));
    assert_eq!(ct, png::ColorType::Grayscale);
    assert_eq!(px.len(), 160 * 90);
    let (_, _, _, ct, _) = s.capture_png(json!({"scale": 0.25, "grayscale": false, "region": {"x": 100, "y": 100, "width": 640, "height": 360}}));
    assert_eq!(ct, png::ColorType::Rgb);
    let err = s.fails(
        "screen.capture",
        json!({"display": "7"}),
        "invalid_arguments",
    );
    assert_eq!(common::issue_paths(&err), vec!["display"]);
}

#[test]
fn area_budget_scales_down_and_says_so() {
    let mut s = Server::start();
    s.start_session(json!({"capture": {"max_area": 100000}}));
    let (r, w, h, _, _) = s.capture_png(json!({}));
    assert!(w * h <= 100_000, "{w}x{h}");
    assert!(w < 1920 && w > 300, "{w}");
    assert_eq!(r["width"], w);
    assert_eq!(r["height"], h);
    let scale = r["image_scale"].as_f64().unwrap();
    assert!((scale - w as f64 / 1920.0).abs() < 1e-9, "{r}");
    assert_eq!(
        r["region"]["width"], 1920,
        "the region is still the full canvas"
    );
}

#[test]
fn frames_increase_and_show_in_meta() {
    let mut s = Server::start();
    s.start_session(json!({}));
    assert_eq!(s.status()["frame"], 0);
    let mut last = 0;
    for _ in 0..4 {
        let env = s.tool(
            "screen.capture",
            json!({"region": {"x": 0, "y": 0, "width": 32, "height": 32}}),
        );
        let f = env["result"]["frame"].as_u64().unwrap();
        assert!(f > last, "frame {f} after {last}");
        assert_eq!(env["meta"]["frame"], f, "meta.frame is the latest frame");
        last = f;
    }
    // Other tools report the latest frame in meta too.
    let env = s.tool("pointer.move", json!({"x": 5, "y": 5}));
    assert_eq!(env["meta"]["frame"], last);
    assert_eq!(s.status()["frame"], last);
    // A failed capture issues no frame.
    s.fails(
        "screen.capture",
        json!({"display": "nope"}),
        "invalid_arguments",
    );
    let f = s.ok(
        "screen.capture",
        json!({"region": {"x": 0, "y": 0, "width": 32, "height": 32}}),
    )["frame"]
        .as_u64()
        .unwrap();
    assert_eq!(f, last + 1);
    // Frames continue across sessions of one server (they are never reissued).
    s.method_ok("session.stop", json!(null));
    s.start_session(json!({}));
    let f2 = s.ok(
        "screen.capture",
        json!({"region": {"x": 0, "y": 0, "width": 32, "height": 32}}),
    )["frame"]
        .as_u64()
        .unwrap();
    assert!(f2 > f, "frame {f2} after {f} in a new session");
}

#[test]
fn capture_shows_what_a_click_changed() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let node = s.node("checkbox", "Remember me");
    let r = node["rect"].as_array().unwrap();
    let v: Vec<i64> = r.iter().map(|x| x.as_i64().unwrap()).collect();
    let region = json!({"x": v[0], "y": v[1], "width": v[2] - v[0], "height": v[3] - v[1]});
    let (_, _, _, _, before) = s.capture_png(json!({"region": region}));
    s.click_node("checkbox", "Remember me");
    let (_, _, _, _, after) = s.capture_png(json!({"region": region}));
    assert_ne!(before, after, "the check mark is drawn");
}
