//! `screen.capture` on the virtual desktop: the default image is the canvas itself,
//! sized for models (a point read off it is a canvas point); every format decodes to the size it claims, regions map as
//! `image px = (canvas − region.origin) × image_scale`, displays, windows, native zoom,
//! scale, grayscale, budgets, frame numbers, unchanged frames and changed boxes.

use crate::common;

use common::{Server, crop_rgb, data_url_bytes, jpeg_info, webp_dims};
use serde_json::json;

/// The operator's explicit canvas of 1920 over this 1920-pixel desk (canvas units are
/// physical pixels): what the tests about exact crops and sizes run on.
fn full_canvas() -> serde_json::Value {
    json!({"capture": {"default_width": 1920}})
}

#[test]
fn the_default_capture_is_the_canvas_sized_for_models() {
    let mut s = Server::start();
    let started = s.start_session(json!({}));
    // The canvas itself is the largest a model takes as it is: 1430 × 804 on this
    // 1920 × 1080 desk (1431 × 805 would pass 1.15 megapixels).
    let surface = &started["surface"];
    assert_eq!(
        (&surface["display_width_px"], &surface["display_height_px"]),
        (&json!(1430), &json!(804)),
        "{surface}"
    );
    let r = s.ok("screen.capture", json!({}));
    assert_eq!(
        (r["width"].as_u64().unwrap(), r["height"].as_u64().unwrap()),
        (1430, 804)
    );
    assert_eq!(r["size"], "model");
    // Screen content: a palette PNG, the cheapest format for it.
    assert_eq!(r["format"], "png");
    let url = r["data_url"].as_str().unwrap();
    assert!(url.starts_with("data:image/png;base64,"), "{}", &url[..40]);
    let bytes = data_url_bytes(url);
    assert_eq!(r["bytes"], bytes.len());
    let colours = r["palette"].as_u64().expect("a palette PNG");
    assert!((2..=256).contains(&colours), "{colours}");
    assert_eq!(&bytes[25], &3, "IHDR colour type 3: indexed");
    let (w, h, _, px) = common::decode_png(&bytes);
    assert_eq!((w, h), (1430, 804));
    assert!(bytes.len() < 120_000, "{} bytes", bytes.len());
    // The canvas with its factor to physical pixels, as the original sent it; the
    // image is the canvas, pixel for unit.
    assert_eq!(
        r["canvas"],
        json!({"display_width_px": 1430, "display_height_px": 804,
               "physical": {"x": 0, "y": 0, "width": 1920, "height": 1080},
               "scale": 1920.0 / 1430.0})
    );
    assert_eq!(r["canvas"]["scale"], surface["scale"]);
    assert_eq!(
        r["region"],
        json!({"x": 0, "y": 0, "width": 1430, "height": 804})
    );
    assert_eq!(
        r["to_canvas"],
        json!({"offset_x": 0, "offset_y": 0, "scale_x": 1.0, "scale_y": 1.0})
    );
    assert_eq!(r["image_scale"], 1.0);
    // Not a blank image: the desktop has windows.
    let first = &px[..3];
    assert!(px.chunks(3).any(|p| p != first));

    // The same pixels as the canvas-sized capture, up to the palette: one space.
    let (_, fw, fh, _, full) = s.capture_png(json!({}));
    assert_eq!((fw, fh), (w, h));
    let diff: u64 = px
        .iter()
        .zip(&full)
        .map(|(a, b)| (*a as i64 - *b as i64).unsigned_abs())
        .sum();
    assert!(
        diff / (px.len() as u64) < 2,
        "mean channel difference {}",
        diff / px.len() as u64
    );

    // A second capture of an unchanged screen still comes with its image (a harness
    // may have pruned the first from the model's context).
    let again = s.ok("screen.capture", json!({}));
    assert!(again["data_url"].is_string(), "{again}");
    assert!(again.get("unchanged").is_none(), "{again}");
    assert!(again["frame"].as_u64() > r["frame"].as_u64());

    // Limits of the caller's own (a vendor's), and the full size by argument.
    let r = s.ok("screen.capture", json!({"max_edge": 1024}));
    assert_eq!(
        (r["width"].as_u64(), r["height"].as_u64()),
        (Some(1024), Some(576))
    );
    let r = s.ok(
        "screen.capture",
        json!({"size": "native", "max_pixels": 1_205_862, "max_edge": 1568}),
    );
    assert_eq!(
        (r["width"].as_u64(), r["height"].as_u64()),
        (Some(1464), Some(823))
    );
}

/// A desk that a model takes as it is keeps its own size: no canvas larger than the
/// screen, no resampling.
#[test]
fn a_small_desk_is_its_own_canvas() {
    let mut s = Server::start_with(
        Some(json!({"platform": {"virtual_displays": [
            {"id": "0", "x": 0, "y": 0, "width": 1280, "height": 800}
        ]}})),
        &[],
    );
    let started = s.start_session(json!({}));
    let surface = &started["surface"];
    assert_eq!(
        (
            &surface["display_width_px"],
            &surface["display_height_px"],
            &surface["scale"]
        ),
        (&json!(1280), &json!(800), &json!(1.0)),
        "{surface}"
    );
    let r = s.ok("screen.capture", json!({}));
    assert_eq!((&r["width"], &r["height"]), (&json!(1280), &json!(800)));
    assert_eq!(r["image_scale"], 1.0);
}

/// The operator's width wins over the automatic one.
#[test]
fn a_configured_canvas_width_wins() {
    let mut s = Server::start_with(Some(full_canvas()), &[]);
    let started = s.start_session(json!({}));
    assert_eq!(started["surface"]["display_width_px"], 1920);
    // The image is still sized for a model, and says how it maps back.
    let r = s.ok("screen.capture", json!({}));
    assert_eq!((&r["width"], &r["height"]), (&json!(1430), &json!(804)));
    assert_eq!(r["region"]["width"], 1920);
    assert!(
        (r["to_canvas"]["scale_x"].as_f64().unwrap() - 1920.0 / 1430.0).abs() < 1e-12,
        "{r}"
    );
}

/// `capture.max_bytes`: a capture whose encoding is larger is sent smaller, aspect
/// kept and mapped back by `to_canvas`, within the budget.
#[test]
fn a_capture_over_max_bytes_is_sent_smaller_within_it() {
    let mut s = Server::start_with(Some(json!({"capture": {"max_bytes": 2048}})), &[]);
    s.start_session(json!({}));
    let whole = s.ok("screen.capture", json!({"format": "png", "size": "native"}));
    let (w, h) = (
        whole["width"].as_u64().unwrap(),
        whole["height"].as_u64().unwrap(),
    );
    assert!(
        whole["bytes"].as_u64().unwrap() <= 2048,
        "{}",
        whole["bytes"]
    );
    assert!(w < 1920 && h < 1080, "{w}x{h}");
    let aspect = w as f64 / h as f64;
    assert!((aspect - 1920.0 / 1080.0).abs() < 0.05, "{w}x{h}");
    let bytes = data_url_bytes(whole["data_url"].as_str().unwrap());
    assert_eq!(bytes.len() as u64, whole["bytes"].as_u64().unwrap());
    let (dw, dh, _, _) = common::decode_png(&bytes);
    assert_eq!((dw as u64, dh as u64), (w, h));
    let m = &whole["to_canvas"];
    assert!(
        (m["scale_x"].as_f64().unwrap() - 1430.0 / w as f64).abs() < 1e-9,
        "{m}"
    );
}

#[test]
fn full_size_png_is_lossless_and_canvas_sized_by_argument() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let r = s.ok("screen.capture", json!({"size": "canvas", "format": "png"}));
    assert_eq!(r["format"], "png");
    assert_eq!(r["size"], "canvas");
    assert_eq!(r["lossy"], false);
    let bytes = data_url_bytes(r["data_url"].as_str().unwrap());
    let (w, h, ct, px) = common::decode_png(&bytes);
    assert_eq!((w, h), (1430, 804));
    assert_eq!(ct, png::ColorType::Rgb);
    assert_eq!(px.len(), 1430 * 804 * 3);
    assert_eq!(r["image_scale"], 1.0);
    assert_eq!(
        r["to_canvas"],
        json!({"offset_x": 0, "offset_y": 0, "scale_x": 1.0, "scale_y": 1.0})
    );
    // Lossless: the same pixels as a WebP (lossless too) of the same capture.
    let webp = s.ok(
        "screen.capture",
        json!({"size": "canvas", "format": "webp"}),
    );
    assert_eq!(webp["lossy"], false);
    assert_eq!(
        webp_dims(&data_url_bytes(webp["data_url"].as_str().unwrap())),
        (1430, 804)
    );
}

#[test]
fn native_size_zooms_to_the_displays_own_pixels() {
    // A canvas 960 wide over a 1920 physical screen: the display is twice as dense.
    let mut s = Server::start();
    s.start_session(json!({"capture": {"default_width": 960}}));
    let (_, nw, nh, _, native_full) = s.capture_png(json!({"size": "native"}));
    assert_eq!((nw, nh), (1920, 1080), "native: physical pixels");
    let (r, w, h, _, px) = s.capture_png(
        json!({"region": {"x": 60, "y": 40, "width": 320, "height": 220}, "size": "native"}),
    );
    assert_eq!((w, h), (640, 440));
    assert_eq!(r["image_scale"], 2.0, "two image pixels per canvas unit");
    assert_eq!(
        r["to_canvas"],
        json!({"offset_x": 60, "offset_y": 40, "scale_x": 0.5, "scale_y": 0.5})
    );
    assert_eq!(
        px,
        crop_rgb(&native_full, nw, 120, 80, 640, 440),
        "exact display pixels"
    );
    // The same region at canvas size has half the pixels each way.
    let (_, w, h, _, _) =
        s.capture_png(json!({"region": {"x": 60, "y": 40, "width": 320, "height": 220}}));
    assert_eq!((w, h), (320, 220));
    // Limits given bound a native image too, aspect kept; a region within them stays
    // native.
    let (_, w, h, _, _) = s.capture_png(json!({"size": "native", "max_edge": 1000}));
    assert_eq!((w, h), (1000, 563));
    let (_, w, h, _, _) =
        s.capture_png(json!({"size": "native", "max_pixels": 1_150_000, "max_edge": 1568}));
    assert_eq!((w, h), (1430, 804));
    let (_, w, h, _, px) = s.capture_png(
        json!({"region": {"x": 60, "y": 40, "width": 320, "height": 220}, "size": "native", "max_edge": 1568}),
    );
    assert_eq!((w, h), (640, 440));
    assert_eq!(px, crop_rgb(&native_full, nw, 120, 80, 640, 440));
}

#[test]
fn jpeg_and_webp_decode_to_the_claimed_size() {
    let mut s = Server::start();
    s.start_session(full_canvas());
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
    s.start_session(full_canvas());
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
        json!({"display_width_px": 960, "display_height_px": 540,
               "physical": {"x": 0, "y": 0, "width": 1920, "height": 1080}, "scale": 2.0})
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
    s.start_session(full_canvas());
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
    assert!(w < 1430 && w > 300, "{w}");
    assert_eq!(r["width"], w);
    assert_eq!(r["height"], h);
    let scale = r["image_scale"].as_f64().unwrap();
    assert!((scale - w as f64 / 1430.0).abs() < 1e-9, "{r}");
    assert_eq!(
        r["region"]["width"], 1430,
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
            json!({"region": {"x": 0, "y": 0, "width": 32, "height": 32}, "if_changed": false}),
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
        json!({"region": {"x": 0, "y": 0, "width": 32, "height": 32}, "if_changed": false}),
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

#[test]
fn an_unchanged_screen_answers_without_an_image() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let first = s.ok("screen.capture", json!({"if_changed": true}));
    let n = first["frame"].as_u64().unwrap();
    let again = s.ok("screen.capture", json!({"if_changed": true}));
    assert_eq!(again["unchanged"], true, "{again}");
    assert_eq!(again["frame"], n, "the frame the agent already has");
    assert_eq!(again["message"], format!("unchanged since frame {n}"));
    assert!(again.get("data_url").is_none(), "no image is sent");
    assert_eq!(again["to_canvas"], first["to_canvas"]);
    assert_eq!(s.status()["frame"], n, "no frame was issued");

    // Other arguments are another image: it is sent.
    let other = s.ok(
        "screen.capture",
        json!({"format": "jpeg", "if_changed": true}),
    );
    assert!(other.get("unchanged").is_none());
    assert!(other["frame"].as_u64().unwrap() > n);
    let j = other["frame"].as_u64().unwrap();
    assert_eq!(
        s.ok(
            "screen.capture",
            json!({"format": "jpeg", "if_changed": true})
        )["frame"],
        j
    );
    // Without the opt-in (the default) the image is sent again under a new frame.
    let forced = s.ok("screen.capture", json!({"format": "jpeg"}));
    assert!(forced["data_url"].is_string());
    assert_eq!(forced["frame"], j + 1);

    // The screen changes: the image is sent.
    s.click_node("checkbox", "Remember me");
    let after = s.ok(
        "screen.capture",
        json!({"format": "jpeg", "if_changed": true}),
    );
    assert!(after["data_url"].is_string(), "{after}");
    assert_eq!(after["frame"], j + 2);

    // A new session's agent has seen nothing.
    s.method_ok("session.stop", json!(null));
    s.start_session(json!({}));
    let fresh = s.ok(
        "screen.capture",
        json!({"format": "jpeg", "if_changed": true}),
    );
    assert!(fresh["data_url"].is_string(), "{fresh}");
}

#[test]
fn changes_box_what_a_click_redrew() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let first = s.ok("screen.capture", json!({"changes": true}));
    assert_eq!(
        first["changes"],
        json!({"since_frame": null, "boxes": [{"x": 0, "y": 0, "width": 1430, "height": 804}]}),
        "nothing to compare with: the whole region"
    );
    let node = s.node("checkbox", "Remember me");
    let r: Vec<i64> = node["rect"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    s.click_node("checkbox", "Remember me");
    let after = s.ok("screen.capture", json!({"changes": true}));
    assert!(after["data_url"].is_string());
    assert_eq!(after["changes"]["since_frame"], first["frame"]);
    let boxes = after["changes"]["boxes"].as_array().unwrap();
    assert!(!boxes.is_empty() && boxes.len() <= 32, "{boxes:?}");
    // Some box covers the check box's mark; each box is a small part of the screen.
    let covers = |b: &serde_json::Value| {
        let g = |k: &str| b[k].as_i64().unwrap();
        g("x") <= r[0] + 2
            && g("y") <= r[1] + 2
            && g("x") + g("width") >= r[0] + 10
            && g("y") + g("height") >= r[1] + 10
    };
    assert!(boxes.iter().any(covers), "{boxes:?} vs {r:?}");
    for b in boxes {
        assert!(
            b["width"].as_i64().unwrap() * b["height"].as_i64().unwrap() < 1430 * 804 / 4,
            "{b}"
        );
    }
    // Nothing changed since: unchanged (when asked for), with no boxes.
    let same = s.ok(
        "screen.capture",
        json!({"changes": true, "if_changed": true}),
    );
    assert_eq!(same["unchanged"], true);
    assert_eq!(
        same["changes"],
        json!({"since_frame": after["frame"], "boxes": []})
    );
}

#[test]
fn a_window_is_captured_where_it_is_without_raising_it() {
    let mut s = Server::start();
    s.start_session(full_canvas());
    let windows = s.ok("window.list", json!({}))["windows"]
        .as_array()
        .unwrap()
        .clone();
    assert!(windows.len() >= 2, "{windows:?}");
    let focused_before: Vec<_> = windows
        .iter()
        .map(|w| (w["id"].clone(), w["focused"].clone()))
        .collect();
    // A window below the top one.
    let w = &windows[1];
    let rect = &w["rect"];
    let (_, fw, _, _, full) = s.capture_png(json!({}));
    let (r, iw, ih, _, px) = s.capture_png(json!({"window": w["id"]}));
    assert_eq!(r["window"], w["id"]);
    let g = |k: &str| rect[k].as_i64().unwrap();
    let (x, y) = (g("x").max(0), g("y").max(0));
    let (cw, ch) = (
        (g("x") + g("width")).min(1920) - x,
        (g("y") + g("height")).min(1080) - y,
    );
    assert_eq!(
        r["region"],
        json!({"x": x, "y": y, "width": cw, "height": ch})
    );
    assert_eq!((iw as i64, ih as i64), (cw, ch));
    assert_eq!(
        px,
        crop_rgb(&full, fw, x as u32, y as u32, cw as u32, ch as u32)
    );
    // Not raised, focus unchanged.
    let after: Vec<_> = s.ok("window.list", json!({}))["windows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["id"].clone(), w["focused"].clone()))
        .collect();
    assert_eq!(after, focused_before);

    let err = s.fails(
        "screen.capture",
        json!({"window": 987654}),
        "invalid_arguments",
    );
    assert_eq!(common::issue_paths(&err), vec!["window"]);
    assert!(
        err["message"].as_str().unwrap().contains("not on screen"),
        "{err}"
    );
    let err = s.fails(
        "screen.capture",
        json!({"window": w["id"], "region": {"x": 0, "y": 0, "width": 5, "height": 5}}),
        "invalid_arguments",
    );
    assert_eq!(common::issue_paths(&err), vec!["window"]);
}

#[test]
fn pointer_coordinates_relative_to_a_window() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let node = s.node("checkbox", "Remember me");
    let (cx, cy) = common::center(&node);
    let windows = s.ok("window.list", json!({}))["windows"]
        .as_array()
        .unwrap()
        .clone();
    let w = windows
        .iter()
        .find(|w| {
            let g = |k: &str| w["rect"][k].as_i64().unwrap();
            (g("x")..g("x") + g("width")).contains(&cx)
                && (g("y")..g("y") + g("height")).contains(&cy)
        })
        .expect("the window holding the check box")
        .clone();
    let (ox, oy) = (
        w["rect"]["x"].as_i64().unwrap(),
        w["rect"]["y"].as_i64().unwrap(),
    );
    let moved = s.ok("pointer.move", json!({"x": 3, "y": 4, "window": w["id"]}));
    assert_eq!(moved["position"], json!({"x": ox + 3, "y": oy + 4}));
    let clicked = s.ok(
        "pointer.click",
        json!({"x": cx - ox, "y": cy - oy, "window": w["id"]}),
    );
    assert_eq!(clicked["position"], json!({"x": cx, "y": cy}));
    let checked = s.node("checkbox", "Remember me");
    assert!(
        checked["states"]
            .as_array()
            .unwrap()
            .contains(&json!("checked")),
        "{checked}"
    );
    let drag = s.ok(
        "pointer.drag",
        json!({"from": {"x": 1, "y": 2}, "to": {"x": 5, "y": 6}, "window": w["id"], "steps": 2}),
    );
    assert_eq!(drag["from"], json!({"x": ox + 1, "y": oy + 2}));
    assert_eq!(drag["to"], json!({"x": ox + 5, "y": oy + 6}));

    // A window that is not on screen: refused, nothing clicked (not even at the same
    // coordinates taken as canvas ones, where the check box is).
    let err = s.fails(
        "pointer.click",
        json!({"x": cx, "y": cy, "window": 987654}),
        "invalid_arguments",
    );
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("window 987654 is not on screen"),
        "{err}"
    );
    let still = s.node("checkbox", "Remember me");
    assert!(
        still["states"]
            .as_array()
            .unwrap()
            .contains(&json!("checked")),
        "{still}"
    );
    let err = s.fails(
        "pointer.click",
        json!({"window": w["id"]}),
        "invalid_arguments",
    );
    assert_eq!(common::issue_paths(&err), vec!["window"]);
    s.fails(
        "pointer.scroll",
        json!({"amount": 1, "window": w["id"]}),
        "invalid_arguments",
    );
}
