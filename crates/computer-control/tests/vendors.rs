//! The vendors' vocabularies replayed as their documentation and reference
//! implementations send them, against the virtual desktop through the real server —
//! over the plugin protocol (stdio `tools.call`) and over MCP — each call's effect read
//! back from the desktop through plain tools (values, states, window rectangles, the
//! pointer) and each answer checked in the vendor's own shape.

use crate::common;
use crate::vendor_support;

use serde_json::{Value, json};
use vendor_support::{Desk, centre, png_pixels, png_size, states};

/// A vendor call and what must be true after it.
type Step = (Value, Box<dyn Fn(&mut Desk, &Value)>);

fn run(desk: &mut Desk, vocabulary: &str, steps: Vec<Step>) {
    for (n, (call, check)) in steps.into_iter().enumerate() {
        let answer = desk.vendor_ok(vocabulary, call.clone());
        eprintln!("{} {vocabulary} step {n}: {call}", desk.name());
        check(desk, &answer);
    }
}

/// The list's selection label says `label`.
fn selected(d: &mut Desk, label: &str) {
    let snap = d.plain("a11y.snapshot", json!({"level": "full"}));
    assert!(
        common::find_node(&snap["tree"], "text", label).is_some(),
        "no {label:?}"
    );
}

fn near(a: (i64, i64), b: (f64, f64), tolerance: f64) -> bool {
    (a.0 as f64 - b.0).abs() <= tolerance && (a.1 as f64 - b.1).abs() <= tolerance
}

// ---- Anthropic: 1920x1080 canvas, shown to the model as 1366x768 (the demo's FWXGA).

/// A canvas point as the model sees it in the scaled screenshot.
fn shown(p: (f64, f64)) -> Value {
    json!([
        (p.0 * 1366.0 / 1920.0).round() as i64,
        (p.1 * 768.0 / 1080.0).round() as i64
    ])
}

fn anthropic_image(answer: &Value) -> (u32, u32) {
    let blocks = answer["content"].as_array().expect("content");
    let img = blocks
        .iter()
        .find(|b| b["type"] == "image")
        .unwrap_or_else(|| panic!("no image block in {answer}"));
    assert_eq!(img["source"]["type"], "base64");
    assert_eq!(img["source"]["media_type"], "image/png");
    assert_eq!(answer["is_error"], false);
    png_size(img["source"]["data"].as_str().unwrap())
}

/// The pixels of the image block of an Anthropic answer.
fn anthropic_pixels(answer: &Value) -> (u32, u32, Vec<u8>) {
    anthropic_image(answer);
    let img = answer["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "image")
        .unwrap();
    png_pixels(img["source"]["data"].as_str().unwrap())
}

/// A zoom's image is exactly what a plain capture of the same canvas region at the
/// display's own pixels shows, within the model's image limits (in `format`: `png`,
/// lossless, where the zoom's own encoding is too; else the vocabulary's, `auto`).
fn zoomed_like_a_native_capture(
    d: &mut Desk,
    zoom: &Value,
    region: Value,
    format: &str,
) -> (u32, u32) {
    let (w, h, px) = anthropic_pixels(zoom);
    let (plain, b64) = d.capture(
        json!({"region": region, "size": "native", "format": format, "if_changed": false,
               "max_edge": 1568, "max_pixels": 1_150_000}),
    );
    let (pw, ph, ppx) = png_pixels(&b64);
    assert_eq!((w, h), (pw, ph), "{plain}");
    assert!(px == ppx, "the zoom shows other pixels than the region's");
    (w, h)
}

fn anthropic_steps(desk: &mut Desk) -> Vec<Step> {
    let name = centre(&desk.node("edit", "Name"));
    let check = centre(&desk.node("checkbox", "Remember me"));
    let list = centre(&desk.node("list", "Items"));
    let item = centre(&desk.node("listitem", "Item 2"));
    let (ix, iy) = desk.window_rect("Items");
    let (sx, sy) = desk.window_rect("Sign in");
    let full = |_: &mut Desk, a: &Value| assert_eq!(anthropic_image(a), (1366, 768));
    vec![
        (json!({"action": "screenshot"}), Box::new(full)),
        (
            json!({"action": "left_click", "coordinate": shown(name)}),
            Box::new(|d, a| {
                anthropic_image(a);
                assert!(states(&d.node("edit", "Name")).contains(&"focused".into()));
            }),
        ),
        (
            json!({"action": "type", "text": "Ada Lovelace"}),
            Box::new(|d, _| assert_eq!(d.node("edit", "Name")["value"], "Ada Lovelace")),
        ),
        (
            // xdotool syntax: two keystrokes separated by a space.
            json!({"action": "key", "text": "ctrl+a BackSpace"}),
            Box::new(|d, _| assert_eq!(d.node("edit", "Name")["value"], "")),
        ),
        (
            json!({"action": "type", "text": "Ada"}),
            Box::new(|d, _| assert_eq!(d.node("edit", "Name")["value"], "Ada")),
        ),
        (
            json!({"action": "mouse_move", "coordinate": shown(check)}),
            Box::new(move |d, _| {
                let p = d.pointer();
                assert!(near(p, check, 1.0), "{p:?} vs {check:?}");
            }),
        ),
        (
            json!({"action": "cursor_position"}),
            Box::new(move |_, a| {
                let s = shown(check);
                let want = format!("X={},Y={}", s[0], s[1]);
                assert_eq!(a["content"], json!([{"type": "text", "text": want}]));
            }),
        ),
        (
            json!({"action": "left_click"}),
            Box::new(|d, _| {
                assert!(states(&d.node("checkbox", "Remember me")).contains(&"checked".into()))
            }),
        ),
        (
            json!({"action": "double_click", "coordinate": shown(check)}),
            Box::new(|d, _| {
                assert!(states(&d.node("checkbox", "Remember me")).contains(&"checked".into()))
            }),
        ),
        (
            json!({"action": "triple_click", "coordinate": shown(check)}),
            Box::new(|d, _| {
                assert!(!states(&d.node("checkbox", "Remember me")).contains(&"checked".into()))
            }),
        ),
        (
            json!({"action": "right_click", "coordinate": shown(check)}),
            Box::new(|d, _| {
                assert!(!states(&d.node("checkbox", "Remember me")).contains(&"checked".into()))
            }),
        ),
        (
            json!({"action": "left_click", "coordinate": shown(item)}),
            Box::new(|d, _| selected(d, "Selected: Item 2")),
        ),
        (
            // Modifiers held for the click, as the docs put them in `text`.
            json!({"action": "left_click", "coordinate": shown(item), "text": "ctrl"}),
            Box::new(|d, _| selected(d, "Selected: none")),
        ),
        (
            json!({"action": "scroll", "coordinate": shown(list), "scroll_direction": "down", "scroll_amount": 2, "text": "shift"}),
            Box::new(|d, _| {
                assert_ne!(d.node("scrollbar", "Horizontal")["value"], "0");
                assert_eq!(d.node("scrollbar", "Vertical")["value"], "0");
            }),
        ),
        (
            json!({"action": "scroll", "coordinate": shown(list), "scroll_direction": "down", "scroll_amount": 3}),
            Box::new(|d, _| assert_ne!(d.node("scrollbar", "Vertical")["value"], "0")),
        ),
        (
            json!({"action": "scroll", "coordinate": shown(list), "scroll_direction": "up", "scroll_amount": 10}),
            Box::new(|d, _| assert_eq!(d.node("scrollbar", "Vertical")["value"], "0")),
        ),
        (
            json!({"action": "left_click_drag",
                   "start_coordinate": shown((ix as f64 + 100.0, iy as f64 + 10.0)),
                   "coordinate": shown((ix as f64 + 240.0, iy as f64 + 80.0))}),
            Box::new(move |d, _| {
                let (x, y) = d.window_rect("Items");
                assert!(
                    near((x, y), (ix as f64 + 140.0, iy as f64 + 70.0), 2.0),
                    "{x},{y}"
                );
            }),
        ),
        (
            json!({"action": "mouse_move", "coordinate": shown((sx as f64 + 200.0, sy as f64 + 10.0))}),
            Box::new(|_, _| {}),
        ),
        (json!({"action": "left_mouse_down"}), Box::new(|_, _| {})),
        (
            json!({"action": "mouse_move", "coordinate": shown((sx as f64 + 200.0, sy as f64 + 60.0))}),
            Box::new(move |d, _| {
                assert_eq!(d.window_rect("Sign in"), (sx, sy), "nothing held yet")
            }),
        ),
        (
            json!({"action": "left_mouse_up"}),
            Box::new(move |d, _| {
                let (x, y) = d.window_rect("Sign in");
                assert!(near((x, y), (sx as f64, sy as f64 + 50.0), 2.0), "{x},{y}");
            }),
        ),
        (
            json!({"action": "zoom", "region": [0, 0, 683, 384]}),
            // Half the screen at the display's own pixels (here the canvas's: the
            // canvas is the screen), larger than the 1366x768 screenshot.
            Box::new(|d, a| {
                let region = json!({"x": 0, "y": 0, "width": 960, "height": 540});
                assert_eq!(
                    zoomed_like_a_native_capture(d, a, region, "png"),
                    (960, 540)
                );
            }),
        ),
        (json!({"action": "wait", "duration": 0.1}), Box::new(full)),
        (
            json!({"action": "hold_key", "text": "shift", "duration": 0.05}),
            Box::new(full),
        ),
    ]
}

#[test]
fn anthropic_sequences_over_the_plugin_protocol_and_mcp() {
    for mut desk in [Desk::stdio(json!({})), Desk::mcp()] {
        let steps = anthropic_steps(&mut desk);
        run(&mut desk, "anthropic.computer", steps);
    }
}

/// Anthropic's zoom on a display denser than the canvas: a 960-unit canvas over the
/// 1920x1080 screen, shown to the model as 960x540. The zoomed region comes at the
/// display's own pixels (two per canvas unit each way), the same pixels a native
/// capture of it shows; a region whose native size exceeds the model's image limits
/// comes as the largest image within them.
#[test]
fn anthropic_zoom_is_the_regions_native_pixels_within_the_image_limits() {
    let mut desk = Desk::stdio(json!({"capture": {"default_width": 960}}));
    let full = desk.vendor_ok("anthropic.computer", json!({"action": "screenshot"}));
    assert_eq!(anthropic_image(&full), (960, 540), "the model's screenshot");
    let zoom = desk.vendor_ok(
        "anthropic.computer",
        json!({"action": "zoom", "region": [100, 50, 420, 270]}),
    );
    let region = json!({"x": 100, "y": 50, "width": 320, "height": 220});
    assert_eq!(
        zoomed_like_a_native_capture(&mut desk, &zoom, region, "png"),
        (640, 440),
        "the region's native size"
    );
    // The whole screen natively is 1920x1080: too large for one image, so the largest
    // within 1568 px and 1.15 megapixels (resampled, so encoded as the vocabulary's
    // screenshots are: `auto`, here a quantized palette).
    let zoom = desk.vendor_ok(
        "anthropic.computer",
        json!({"action": "zoom", "region": [0, 0, 960, 540]}),
    );
    let region = json!({"x": 0, "y": 0, "width": 960, "height": 540});
    let (w, h) = zoomed_like_a_native_capture(&mut desk, &zoom, region, "auto");
    assert_eq!((w, h), (1430, 804));
}

// ---- OpenAI: display pixels of the whole 1920x1080 canvas.

fn openai_output(answer: &Value, call_id: &str) {
    assert_eq!(answer["type"], "computer_call_output");
    assert_eq!(answer["call_id"], call_id);
    assert_eq!(answer["output"]["type"], "computer_screenshot");
    let url = answer["output"]["image_url"].as_str().expect("image_url");
    let b64 = url
        .strip_prefix("data:image/png;base64,")
        .expect("a PNG data URL");
    assert_eq!(png_size(b64), (1920, 1080));
    assert!(
        answer.get("acknowledged_safety_checks").is_none(),
        "{answer}"
    );
}

fn call(id: &str, actions: Value) -> Value {
    json!({"type": "computer_call", "id": format!("cu_{id}"), "call_id": id, "status": "completed", "actions": actions, "pending_safety_checks": []})
}

fn openai_steps(desk: &mut Desk) -> Vec<Step> {
    let name = centre(&desk.node("edit", "Name"));
    let check = centre(&desk.node("checkbox", "Remember me"));
    let list = centre(&desk.node("list", "Items"));
    let (ix, iy) = desk.window_rect("Items");
    let px = |p: (f64, f64)| (p.0.round(), p.1.round());
    let (nx, ny) = px(name);
    let (cx, cy) = px(check);
    let (lx, ly) = px(list);
    let (tx, ty) = px(centre(&desk.node("listitem", "Item 3")));
    vec![
        (
            call("call_1", json!([{"type": "screenshot"}])),
            Box::new(|_, a| openai_output(a, "call_1")),
        ),
        (
            // One batch, as GA models send it: run in order, one screenshot after.
            call(
                "call_2",
                json!([
                    {"type": "click", "button": "left", "x": nx, "y": ny},
                    {"type": "type", "text": "Grace"},
                    {"type": "keypress", "keys": ["CTRL", "A"]},
                    {"type": "keypress", "keys": ["BACKSPACE"]},
                    {"type": "type", "text": "Grace Hopper"}
                ]),
            ),
            Box::new(|d, a| {
                openai_output(a, "call_2");
                assert_eq!(d.node("edit", "Name")["value"], "Grace Hopper");
            }),
        ),
        (
            // The preview's single `action`.
            json!({"type": "computer_call", "call_id": "call_3", "action": {"type": "click", "button": "left", "x": cx, "y": cy}}),
            Box::new(|d, a| {
                openai_output(a, "call_3");
                assert!(states(&d.node("checkbox", "Remember me")).contains(&"checked".into()));
            }),
        ),
        (
            call(
                "call_4",
                json!([{"type": "double_click", "x": cx, "y": cy}, {"type": "move", "x": lx, "y": ly}]),
            ),
            Box::new(move |d, _| {
                assert!(states(&d.node("checkbox", "Remember me")).contains(&"checked".into()));
                assert!(near(d.pointer(), (lx, ly), 0.0));
            }),
        ),
        (
            call(
                "call_5",
                json!([{"type": "scroll", "x": lx, "y": ly, "scroll_x": 0, "scroll_y": 300}]),
            ),
            Box::new(|d, _| assert_ne!(d.node("scrollbar", "Vertical")["value"], "0")),
        ),
        (
            call(
                "call_5b",
                json!([
                    {"type": "scroll", "x": lx, "y": ly, "scroll_x": 0, "scroll_y": -1000},
                    {"type": "click", "button": "left", "x": tx, "y": ty}
                ]),
            ),
            Box::new(|d, _| selected(d, "Selected: Item 3")),
        ),
        (
            call(
                "call_5c",
                json!([
                    {"type": "click", "button": "left", "x": tx, "y": ty, "keys": ["CTRL"]},
                    {"type": "scroll", "x": lx, "y": ly, "scroll_x": 0, "scroll_y": 200, "keys": ["SHIFT"]}
                ]),
            ),
            Box::new(|d, _| {
                selected(d, "Selected: none");
                assert_ne!(d.node("scrollbar", "Horizontal")["value"], "0");
            }),
        ),
        (
            call(
                "call_6",
                json!([{"type": "drag", "path": [
                    {"x": ix + 100, "y": iy + 10}, {"x": ix + 150, "y": iy + 40}, {"x": ix + 200, "y": iy + 70}
                ]}]),
            ),
            Box::new(move |d, _| assert_eq!(d.window_rect("Items"), (ix + 100, iy + 60))),
        ),
        (
            call(
                "call_7",
                json!([{"type": "click", "button": "right", "x": cx, "y": cy}, {"type": "wait"}]),
            ),
            Box::new(|d, a| {
                openai_output(a, "call_7");
                assert!(states(&d.node("checkbox", "Remember me")).contains(&"checked".into()));
            }),
        ),
    ]
}

#[test]
fn openai_sequences_over_the_plugin_protocol_and_mcp() {
    for mut desk in [Desk::stdio(json!({})), Desk::mcp()] {
        let steps = openai_steps(&mut desk);
        run(&mut desk, "openai.computer", steps);
    }
}

// ---- Gemini: the 0-999 grid over the canvas.

fn grid(p: (f64, f64)) -> (i64, i64) {
    (
        (p.0 * 1000.0 / 1920.0).round() as i64,
        (p.1 * 1000.0 / 1080.0).round() as i64,
    )
}

fn gemini_response(answer: &Value, name: &str) {
    assert_eq!(answer["name"], name, "{answer}");
    assert!(answer["response"].is_object());
    let part = &answer["parts"][0]["inline_data"];
    assert_eq!(part["mime_type"], "image/png");
    assert_eq!(png_size(part["data"].as_str().unwrap()), (1920, 1080));
}

fn gemini_steps(desk: &mut Desk) -> Vec<Step> {
    let (nx, ny) = grid(centre(&desk.node("edit", "Name")));
    let check = centre(&desk.node("checkbox", "Remember me"));
    let (cx, cy) = grid(check);
    let (lx, ly) = grid(centre(&desk.node("list", "Items")));
    let (ix, iy) = desk.window_rect("Items");
    let (sx, sy) = desk.window_rect("Sign in");
    let (tx, ty) = grid((ix as f64 + 100.0, iy as f64 + 10.0));
    let (ux, uy) = grid((sx as f64 + 200.0, sy as f64 + 10.0));
    vec![
        (
            json!({"name": "take_screenshot", "args": {}}),
            Box::new(|_, a| gemini_response(a, "take_screenshot")),
        ),
        (
            json!({"name": "type_text_at", "id": "fc_1", "args": {"x": nx, "y": ny, "text": "Linus", "press_enter": false}}),
            Box::new(|d, a| {
                gemini_response(a, "type_text_at");
                assert_eq!(a["id"], "fc_1");
                assert_eq!(d.node("edit", "Name")["value"], "Linus");
            }),
        ),
        (
            // clear_before_typing defaults to true: the field holds only the new text.
            json!({"name": "type_text_at", "args": {"x": nx, "y": ny, "text": "Torvalds"}}),
            Box::new(|d, _| assert_eq!(d.node("edit", "Name")["value"], "Torvalds")),
        ),
        (
            json!({"name": "key_combination", "args": {"keys": "Control+A"}}),
            Box::new(|_, a| gemini_response(a, "key_combination")),
        ),
        (
            json!({"name": "press_key", "args": {"key": "Delete", "intent": "empty the field"}}),
            Box::new(|d, _| assert_eq!(d.node("edit", "Name")["value"], "")),
        ),
        (
            json!({"name": "type", "args": {"text": "Ken", "intent": "type the name"}}),
            Box::new(|d, _| assert_eq!(d.node("edit", "Name")["value"], "Ken")),
        ),
        (
            json!({"name": "click_at", "args": {"x": cx, "y": cy}}),
            Box::new(|d, _| {
                assert!(states(&d.node("checkbox", "Remember me")).contains(&"checked".into()))
            }),
        ),
        (
            json!({"name": "hover_at", "args": {"x": lx, "y": ly}}),
            Box::new(move |d, _| {
                let want = (lx as f64 / 1000.0 * 1920.0, ly as f64 / 1000.0 * 1080.0);
                assert!(near(d.pointer(), (want.0.trunc(), want.1.trunc()), 0.0));
            }),
        ),
        (
            json!({"name": "scroll_at", "args": {"x": lx, "y": ly, "direction": "down", "magnitude": 300}}),
            Box::new(|d, _| assert_ne!(d.node("scrollbar", "Vertical")["value"], "0")),
        ),
        (
            json!({"name": "scroll", "args": {"x": lx, "y": ly, "direction": "up", "magnitude_in_pixels": 999}}),
            Box::new(|d, _| assert_eq!(d.node("scrollbar", "Vertical")["value"], "0")),
        ),
        (
            json!({"name": "drag_and_drop", "args": {"x": tx, "y": ty, "destination_x": tx + 50, "destination_y": ty + 50}}),
            Box::new(move |d, _| {
                let (x, y) = d.window_rect("Items");
                assert!(
                    near((x, y), (ix as f64 + 96.0, iy as f64 + 54.0), 2.0),
                    "{x},{y}"
                );
            }),
        ),
        (
            json!({"name": "mouse_down", "args": {"x": ux, "y": uy}}),
            Box::new(|_, _| {}),
        ),
        (
            json!({"name": "mouse_up", "args": {"x": ux, "y": uy + 40}}),
            Box::new(move |d, _| {
                let (x, y) = d.window_rect("Sign in");
                assert!(near((x, y), (sx as f64, sy as f64 + 43.0), 2.0), "{x},{y}");
            }),
        ),
        (
            json!({"name": "right_click", "args": {"x": cx, "y": cy}}),
            Box::new(|d, _| {
                assert!(states(&d.node("checkbox", "Remember me")).contains(&"checked".into()))
            }),
        ),
        (
            json!({"name": "go_back", "args": {}}),
            Box::new(|_, a| gemini_response(a, "go_back")),
        ),
        (
            json!({"name": "wait", "args": {"seconds": 0}}),
            Box::new(|_, a| gemini_response(a, "wait")),
        ),
    ]
}

#[test]
fn gemini_sequences_over_the_plugin_protocol_and_mcp() {
    for mut desk in [Desk::stdio(json!({})), Desk::mcp()] {
        let steps = gemini_steps(&mut desk);
        run(&mut desk, "gemini.computer", steps);
    }
}
