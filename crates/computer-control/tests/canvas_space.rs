//! One space for what a model sees and where it clicks (PROTOCOL §4.1): by default the
//! canvas is the largest image a model takes as it is, so a point read off the default
//! capture, clicked as is, lands on what the image showed there, on the virtual desktop,
//! X11 and a wlroots compositor; a desk that already fits keeps its own size. The canvas
//! is the operator's: an agent cannot rescale it out from under an `in_region` rule. An
//! X11 desk without an accessibility bus lists the accessibility tools as unavailable,
//! with the reason.

use crate::common;
use crate::http_support;

use std::process::Command;
use std::time::{Duration, Instant};

use cc_test_kit::{sway, x11};
use common::{Server, find_node, find_where, has_state};
use serde_json::{Value, json};

/// A checkbox of the latest snapshot, found again by what the test knows of it.
type Find<'a> = &'a dyn Fn(&mut Server) -> (Value, Value);

/// The default capture as PNG pixels, checked to be the canvas itself: the image is
/// `display_width_px` × `display_height_px` and `to_canvas` is the identity.
fn default_image(s: &mut Server) -> (u32, Vec<u8>) {
    let surface = s.status()["surface"].clone();
    let r = s.ok("screen.capture", json!({"format": "png"}));
    assert_eq!(r["size"], "model");
    assert_eq!(
        (&r["width"], &r["height"]),
        (&surface["display_width_px"], &surface["display_height_px"]),
        "the default image is the canvas: {surface}"
    );
    assert_eq!(
        r["to_canvas"],
        json!({"offset_x": 0, "offset_y": 0, "scale_x": 1.0, "scale_y": 1.0})
    );
    assert_eq!(r["canvas"]["scale"], surface["scale"]);
    assert_eq!(r["canvas"]["physical"], surface["physical"]);
    let raw = common::data_url_bytes(r["data_url"].as_str().expect("an image every time"));
    let (w, _, _, px) = common::decode_png(&raw);
    (w, px)
}

/// The topmost enabled, unchecked, named checkbox with a rect of a GTK window's
/// subtree. gtk3-widget-factory's first column is checked, unchecked, then
/// inconsistent (drawn as a dash whatever its state): the topmost unchecked one is
/// the plain one, whose toggle shows.
fn topmost_unchecked(window: &Value) -> Value {
    common::nodes(window)
        .into_iter()
        .map(|(_, n)| n)
        .filter(|n| {
            n["role"] == "checkbox"
                && has_state(n, "enabled")
                && !has_state(n, "checked")
                && n["name"].as_str().is_some_and(|t| !t.is_empty())
                && n["rect"].is_array()
        })
        .min_by_key(|n| (n["rect"][1].as_i64(), n["rect"][0].as_i64()))
        .unwrap_or_else(|| panic!("no unchecked checkbox in {window}"))
        .clone()
}

/// The image pixels inside `[l, t, r, b]` (image coordinates) that differ.
fn changed_in(a: &[u8], b: &[u8], w: u32, rect: [i64; 4]) -> Vec<(i64, i64)> {
    let h = (a.len() / 3) as i64 / i64::from(w);
    let mut out = Vec::new();
    for y in rect[1].max(0)..rect[3].min(h) {
        for x in rect[0].max(0)..rect[2].min(i64::from(w)) {
            let i = ((y * i64::from(w) + x) * 3) as usize;
            if a[i..i + 3] != b[i..i + 3] {
                out.push((x, y));
            }
        }
    }
    out
}

/// Waits until the checkbox `find` returns reads `checked` (or not).
fn wait_checked(s: &mut Server, find: Find<'_>, checked: bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, node) = find(s);
        if has_state(&node, "checked") == checked {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{node} did not become checked={checked}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Reads a checkbox's place off the default image, as a model would, and clicks that
/// image point as is. The place is where the image changes when the checkbox is
/// toggled by its accessibility action (no pointer involved); the click, given the
/// image's own coordinates, must toggle the checkbox back.
fn click_what_the_image_shows(s: &mut Server, find: Find<'_>) -> (i64, i64) {
    let (snap, node) = find(s);
    assert!(!has_state(&node, "checked"), "{node}");
    let rect: Vec<i64> = node["rect"]
        .as_array()
        .unwrap_or_else(|| panic!("no rect: {node}"))
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    let around = [rect[0] - 4, rect[1] - 4, rect[2] + 4, rect[3] + 4];
    let (w, before) = default_image(s);
    let act = s.ok(
        "a11y.activate",
        json!({"snapshot_id": snap["snapshot_id"], "node_id": node["id"], "method": "pattern"}),
    );
    assert_eq!(act["method_used"], "toggle", "{act}");
    wait_checked(s, find, true);
    let deadline = Instant::now() + Duration::from_secs(10);
    let changed = loop {
        let (_, after) = default_image(s);
        let changed = changed_in(&before, &after, w, around);
        if !changed.is_empty() {
            break changed;
        }
        if Instant::now() >= deadline {
            let all = changed_in(&before, &after, w, [0, 0, i64::from(w), 100_000]);
            let (xs, ys): (Vec<i64>, Vec<i64>) = all.iter().copied().unzip();
            panic!(
                "the image did not change at {around:?}, where the checkbox is on the canvas; {} pixels changed in x {:?}..{:?}, y {:?}..{:?}; {node}",
                all.len(),
                xs.iter().min(),
                xs.iter().max(),
                ys.iter().min(),
                ys.iter().max()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // The middle of what changed: the check mark as the image shows it.
    let (xs, ys): (Vec<i64>, Vec<i64>) = changed.iter().copied().unzip();
    let u = (xs.iter().min().unwrap() + xs.iter().max().unwrap()) / 2;
    let v = (ys.iter().min().unwrap() + ys.iter().max().unwrap()) / 2;
    let clicked = s.ok("pointer.click", json!({"x": u, "y": v}));
    assert_eq!(clicked["position"], json!({"x": u, "y": v}));
    wait_checked(s, find, false);
    (u, v)
}

#[test]
fn a_point_read_off_the_default_image_clicks_what_it_shows() {
    let mut s = Server::start();
    let started = s.start_session(json!({}));
    assert_eq!(
        (
            &started["surface"]["display_width_px"],
            &started["surface"]["display_height_px"]
        ),
        (&json!(1430), &json!(804))
    );
    let find = |s: &mut Server| {
        let snap = s.snapshot(json!({"level": "full"}));
        let node = find_node(&snap["tree"], "checkbox", "Remember me")
            .expect("Remember me")
            .clone();
        (snap, node)
    };
    let (u, v) = click_what_the_image_shows(&mut s, &find);
    // On the 1920-pixel screen the click landed where the image showed the mark.
    let rect = find(&mut s).1["rect"].clone();
    let r: Vec<i64> = rect
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect();
    assert!(
        (r[0]..r[2]).contains(&u) && (r[1]..r[3]).contains(&v),
        "{u},{v} in {rect}"
    );
}

/// The vocabularies declare their own screenshot sizes over whatever canvas there is:
/// Anthropic's reference shows the default 1430 × 804 canvas as 1366 × 768, and a
/// point read there lands on the checkbox.
#[test]
fn a_vendor_vocabulary_works_on_the_default_canvas() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let shot = s.ok("anthropic.computer", json!({"action": "screenshot"}));
    let data = shot["content"][0]["source"]["data"].as_str().unwrap();
    use base64::Engine as _;
    let png = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    let (w, h, _, _) = common::decode_png(&png);
    assert_eq!((w, h), (1366, 768));
    let (x, y) = common::center(&s.node("checkbox", "Remember me"));
    let shown = [
        (x as f64 * 1366.0 / 1430.0).round() as i64,
        (y as f64 * 768.0 / 804.0).round() as i64,
    ];
    let r = s.ok(
        "anthropic.computer",
        json!({"action": "left_click", "coordinate": shown}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert!(has_state(&s.node("checkbox", "Remember me"), "checked"));
}

/// The canvas is the space the operator's `in_region` rules are written in. An agent
/// that could rescale it would move every rule's rectangle out from under its clicks
/// (on a canvas 4000 wide, canvas (600, 420) is the physical pixel that canvas (300,
/// 200) of the operator's canvas shows); so the width is the operator's, at session
/// start and at runtime, and the rule still holds.
#[tokio::test]
async fn an_agent_cannot_rescale_the_canvas_out_from_under_an_operator_rule() {
    use http_support::{AGENT, OPERATOR, tokens_config};
    let mut config = tokens_config();
    config["safety"] = json!({"rules": [{
        "match": {"tool": "pointer.click", "argument": {
            "name": "x", "matcher": "in_region",
            "value": {"x": 0, "y": 0, "width": 400, "height": 300}}},
        "effect": "deny"}]});
    let s = http_support::Server::start_with(Some(config), &[], &[]);
    let refused = |st: u16, r: &Value| {
        assert_eq!(st, 403, "{r}");
        let why = r["error"]["message"].as_str().unwrap_or_default();
        assert!(why.contains("capture.default_width"), "{why}");
    };
    let (st, r) = s
        .post_rpc(
            AGENT,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "session.start",
                    "params": {"capture": {"default_width": 4000}}}),
        )
        .await;
    refused(st, &r);
    let started = s.call(AGENT, "session.start", json!({})).await;
    assert_eq!(started["ok"], true, "{started}");
    let surface = started["result"]["surface"].clone();
    assert_eq!(surface["display_width_px"], 1430);
    for width in [json!(4000), json!(200), json!("auto")] {
        for params in [
            json!({"capture": {"default_width": width}}),
            json!({"patch": {"capture": {"default_width": width, "grayscale": true}}}),
        ] {
            let (st, r) = s
                .post_rpc(
                    AGENT,
                    &json!({"jsonrpc": "2.0", "id": 1, "method": "session.configure",
                            "params": params}),
                )
                .await;
            refused(st, &r);
        }
    }
    let status = s.call(AGENT, "system.status", json!({})).await;
    assert_eq!(status["result"]["surface"], surface, "the canvas stayed");
    // The click the rule is about is still refused, and nothing moved.
    let click = s
        .call(
            AGENT,
            "tools.call",
            json!({"tool": "pointer.click", "arguments": {"x": 300, "y": 200}}),
        )
        .await;
    assert_eq!(click["error"]["code"], "policy_denied", "{click}");
    let at = s
        .call(
            AGENT,
            "tools.call",
            json!({"tool": "pointer.position", "arguments": {}}),
        )
        .await;
    assert_ne!(
        at["result"]["position"],
        json!({"x": 300, "y": 200}),
        "{at}"
    );
    // The operator may change the canvas (and with it what the rule covers).
    let r = s
        .call(
            OPERATOR,
            "session.configure",
            json!({"capture": {"default_width": 1920}}),
        )
        .await;
    assert_eq!(r["ok"], true, "{r}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let status = s.call(AGENT, "system.status", json!({})).await;
        if status["result"]["surface"]["display_width_px"] == 1920 {
            break;
        }
        assert!(Instant::now() < deadline, "{status}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A `serve` on an X11 desk, with extra environment.
fn x11_serve(desk: &x11::Desk, envs: &[(&str, &str)]) -> Server {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_computer-control"));
    desk.env(&mut cmd);
    cmd.args(["serve", "--platform", "x11"])
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env("COMPUTER_CONTROL_LOG", "info");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    Server::start_command(cmd)
}

#[test]
fn x11_a_point_read_off_the_default_image_clicks_what_it_shows() {
    let mut desk = x11::Desk::start();
    let window_id = {
        let mut d = desk.driver();
        desk.widget_factory(&mut d)
    };
    let mut s = x11_serve(&desk, &[]);
    let started = s.start_session(json!({}));
    assert_eq!(started["surface"]["display_width_px"], 1430);
    let snap = s.snapshot(json!({"level": "full"}));
    let window = find_where(&snap["tree"], "window", &|w| w["window_id"] == window_id).unwrap();
    let cb = topmost_unchecked(window);
    // Several checkboxes share a name: this one is the one at the same place.
    let find = |s: &mut Server| {
        let snap = s.snapshot(json!({"level": "full"}));
        let node = find_where(&snap["tree"], "checkbox", &|n| {
            n["name"] == cb["name"] && n["rect"] == cb["rect"]
        })
        .unwrap_or_else(|| panic!("no checkbox like {cb}"))
        .clone();
        (snap, node)
    };
    let (u, v) = click_what_the_image_shows(&mut s, &find);
    // On the X server the pointer is where that canvas point maps: × 1920 / 1430.
    let (px, py) = desk.pointer();
    let scale = 1920.0 / 1430.0;
    assert!(
        (f64::from(px) - u as f64 * scale).abs() <= 2.0
            && (f64::from(py) - v as f64 * scale).abs() <= 2.0,
        "pointer at {px},{py} for image point {u},{v}"
    );
}

#[test]
fn x11_a_desk_that_fits_a_model_keeps_its_size() {
    let desk = x11::Desk::start_sized(1280, 800);
    let mut s = x11_serve(&desk, &[]);
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
    let (w, px) = default_image(&mut s);
    assert_eq!((w, px.len()), (1280, 1280 * 800 * 3));
}

/// Without an accessibility bus the desktop still captures and acts; `tools.list`
/// marks the accessibility tools unavailable and says why, and calling one says so.
#[test]
fn x11_without_an_accessibility_bus_the_a11y_tools_say_unavailable() {
    let desk = x11::Desk::start();
    let nowhere = format!("unix:path={}", desk.path("no-bus").display());
    let mut s = x11_serve(&desk, &[("DBUS_SESSION_BUS_ADDRESS", &nowhere)]);
    let list = s.method_ok("tools.list", json!({}));
    let tools = list["tools"].as_array().unwrap();
    let by_name = |n: &str| tools.iter().find(|t| t["name"] == n).unwrap().clone();
    for name in ["a11y.snapshot", "a11y.activate", "a11y.input"] {
        let t = by_name(name);
        assert_eq!(t["available"], false, "{t}");
        let why = t["reason"].as_str().unwrap_or_default();
        assert!(why.contains("accessibility"), "{t}");
    }
    for name in ["screen.capture", "pointer.click", "keyboard.type"] {
        let t = by_name(name);
        assert_eq!(t["available"], true, "{t}");
        assert!(t.get("reason").is_none(), "{t}");
    }
    let started = s.start_session(json!({}));
    assert_eq!(started["capabilities"]["accessibility"], false, "{started}");
    assert_eq!(started["capabilities"]["capture"], true, "{started}");
    s.fails("a11y.snapshot", json!({}), "backend_unavailable");
    s.ok("screen.capture", json!({}));
}

#[test]
fn wlroots_a_point_read_off_the_default_image_clicks_what_it_shows() {
    let mut desk = sway::Desk::start();
    desk.spawn("gtk3-widget-factory", &[]);
    let mut cmd = desk.command(env!("CARGO_BIN_EXE_computer-control"));
    cmd.args(["serve"]).env("COMPUTER_CONTROL_LOG", "info");
    let mut s = Server::start_command(cmd);
    let started = s.start_session(json!({}));
    assert_eq!(started["surface"]["display_width_px"], 1430);
    let deadline = Instant::now() + Duration::from_secs(30);
    let cb = loop {
        let snap = s.snapshot(json!({"level": "full"}));
        let found = find_where(&snap["tree"], "checkbox", &|n| n["rect"].is_array());
        if found.is_some() {
            break topmost_unchecked(&snap["tree"]);
        }
        assert!(Instant::now() < deadline, "no checkbox: {snap}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let find = |s: &mut Server| {
        let snap = s.snapshot(json!({"level": "full"}));
        let node = find_where(&snap["tree"], "checkbox", &|n| {
            n["name"] == cb["name"] && n["rect"] == cb["rect"]
        })
        .unwrap_or_else(|| panic!("no checkbox like {cb}"))
        .clone();
        (snap, node)
    };
    click_what_the_image_shows(&mut s, &find);
}
