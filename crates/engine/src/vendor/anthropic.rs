//! Anthropic's computer tool (`computer_20250124`, `computer_20251124` with `zoom`, and
//! the members of the computer toolset, sent here with the member's name as `action`).
//! Arguments are the `tool_use` block's `input`; the answer is the `tool_result`'s
//! `{content, is_error}` (text and base64 image blocks). Points are in the scaled
//! screenshot space Anthropic's reference fixes ([`Display::anthropic`]), or in the
//! `display_width_px`×`display_height_px` the caller declares.

use cc_protocol::{Key, ToolError};
use serde_json::{Value, json};

use super::input::{Input, Read, Refusal, declared_size};
use super::keys::{chord_call, map_chord};
use super::scaling::Display;
use super::{
    Context, Plan, Press, PressChange, Ran, Size, Vocabulary, full_capture, region_capture,
};
use crate::tools::call::Built;
use crate::tools::fields::ButtonArg;
use crate::tools::pointer_scroll::AxisArg;
use crate::tools::{
    keyboard_combo, keyboard_type, pointer_click, pointer_drag, pointer_move, pointer_position,
    pointer_scroll, wait_pause,
};

pub(super) const VOCABULARY: Vocabulary = Vocabulary {
    name: "anthropic.computer",
    vendor: "anthropic",
    summary: "Anthropic's computer tool (computer_20250124, computer_20251124 with zoom, the \
              computer toolset's members): the tool_use input in, the tool_result content out; \
              every action runs as our own tools through the safety gate.",
    schema,
    examples,
    translate,
    answer,
    failure,
    declared,
    default_display: Display::anthropic,
};

const MEMBERS: &[&str] = &[
    "action",
    "coordinate",
    "start_coordinate",
    "text",
    "key",
    "repeat",
    "scroll_direction",
    "scroll_amount",
    "duration",
    "region",
    "display_width_px",
    "display_height_px",
];

const ACTIONS: &[&str] = &[
    "screenshot",
    "zoom",
    "cursor_position",
    "key",
    "hold_key",
    "type",
    "mouse_move",
    "left_click",
    "right_click",
    "middle_click",
    "double_click",
    "triple_click",
    "left_click_drag",
    "left_mouse_down",
    "left_mouse_up",
    "scroll",
    "wait",
];

fn schema() -> Value {
    let point = json!({"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 2, "maxItems": 2});
    json!({
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ACTIONS},
            "coordinate": point,
            "start_coordinate": point,
            "text": {"type": "string", "description": "type: the text; key and hold_key: xdotool key names such as ctrl+s or Return; clicks, drags and scrolls: modifiers held during them (shift, ctrl+shift)"},
            "repeat": {"type": "integer", "minimum": 1, "maximum": 100},
            "scroll_direction": {"type": "string", "enum": ["up", "down", "left", "right"]},
            "scroll_amount": {"type": "integer", "minimum": 0, "maximum": 100},
            "duration": {"type": "number", "minimum": 0, "maximum": 300},
            "region": {"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 4, "maxItems": 4},
            "key": {"type": "string", "description": "modifiers held during a click, as the 20250124 demo reads them (the docs use text)"},
            "display_width_px": {"type": "integer", "minimum": 1, "description": "the tool definition's width; fixed for the session by its first call"},
            "display_height_px": {"type": "integer", "minimum": 1}
        },
        "required": ["action"],
        "additionalProperties": false
    })
}

fn examples() -> Vec<Value> {
    vec![
        json!({"action": "screenshot"}),
        json!({"action": "left_click", "coordinate": [683, 384]}),
        json!({"action": "type", "text": "hello"}),
        json!({"action": "key", "text": "ctrl+a"}),
        json!({"action": "scroll", "coordinate": [683, 384], "scroll_direction": "down", "scroll_amount": 3}),
        json!({"action": "zoom", "region": [0, 0, 683, 384]}),
    ]
}

fn declared(v: &Value) -> Result<Option<Size>, Refusal> {
    declared_size(v, "display_width_px", "display_height_px")
}

/// A screenshot point → canvas.
fn point(i: &Input<'_>, cx: &Context, name: &str) -> Read<Option<(i64, i64)>> {
    match i.opt_pair(name)? {
        None => Ok(None),
        Some((x, y)) => cx
            .display
            .point_to_canvas(x, y)
            .map(Some)
            .map_err(|m| Refusal::at(i.path(name), m)),
    }
}

fn required_point(i: &Input<'_>, cx: &Context, name: &str) -> Read<(i64, i64)> {
    point(i, cx, name)?.ok_or_else(|| Refusal::at(i.path(name), "is required"))
}

/// Keys held for one click, drag or scroll: `text` as the docs put them (`shift`,
/// `ctrl+shift`), or `key` as the 20250124 demo reads them on clicks; none when
/// neither is given.
fn modifiers(i: &Input<'_>) -> Read<Vec<Key>> {
    let chord = match (i.opt_str("text")?, i.opt_str("key")?) {
        (Some(_), Some(_)) => {
            return Err(Refusal::at(
                i.path("key"),
                "give the modifiers in text or key, not both",
            ));
        }
        (Some(t), None) => ("text", t),
        (None, Some(k)) => ("key", k),
        (None, None) => return Ok(Vec::new()),
    };
    map_chord(chord.1).map_err(|m| Refusal::at(i.path(chord.0), m))
}

/// Members an action does not take are refused by name.
fn only(i: &Input<'_>, action: &str, allowed: &[&str]) -> Read<()> {
    for m in MEMBERS {
        let general = ["action", "display_width_px", "display_height_px"].contains(m);
        if !general && !allowed.contains(m) && i.has(m) {
            return Err(Refusal::at(i.path(m), format!("{action} takes no {m}")));
        }
    }
    Ok(())
}

/// `key` text: chords separated by spaces (`ctrl+a Delete`), as xdotool reads it.
fn key_steps(i: &Input<'_>, text: &str, repeat: usize) -> Read<Vec<Built>> {
    let chords: Vec<&str> = text.split_whitespace().collect();
    if chords.is_empty() {
        return Err(Refusal::at(i.path("text"), "names no key"));
    }
    let mut steps = Vec::new();
    for _ in 0..repeat {
        for c in &chords {
            let keys = map_chord(c).map_err(|m| Refusal::at(i.path("text"), m))?;
            steps.push(chord_call(keys));
        }
    }
    Ok(steps)
}

fn click(button: ButtonArg, times: u64, at: Option<(i64, i64)>, held: Vec<Key>) -> Built {
    Built::new(pointer_click::Args::new(at, button, times, held))
}

fn translate(v: &Value, cx: &mut Context) -> Result<Plan, Refusal> {
    let i = Input::new(v, "", MEMBERS)?;
    let action = i.str("action")?;
    let d = cx.display;
    let mut plan = Plan {
        capture: Some(full_capture(&d)),
        ..Plan::default()
    };
    match action {
        "screenshot" => only(&i, action, &[])?,
        "zoom" => {
            only(&i, action, &["region"])?;
            let [x0, y0, x1, y1] = i.quad("region")?;
            let inside = |x: f64, y: f64| {
                x >= 0.0 && y >= 0.0 && x <= f64::from(d.width) && y <= f64::from(d.height)
            };
            if !(x1 > x0 && y1 > y0 && inside(x0, y0) && inside(x1, y1)) {
                return Err(Refusal::at(
                    "region",
                    format!(
                        "must be [x0, y0, x1, y1] with x0 < x1 and y0 < y1 inside the {}x{} screenshot",
                        d.width, d.height
                    ),
                ));
            }
            let sx = f64::from(d.canvas_width) / f64::from(d.width);
            let sy = f64::from(d.canvas_height) / f64::from(d.height);
            let c = |v: f64, s: f64| (v * s).round() as i64;
            plan.capture = Some(region_capture(
                c(x0, sx),
                c(y0, sy),
                c(x1, sx).max(c(x0, sx) + 1),
                c(y1, sy).max(c(y0, sy) + 1),
            ));
        }
        "cursor_position" => {
            only(&i, action, &[])?;
            plan.steps
                .push(Built::new(pointer_position::Args::default()));
            plan.capture = None;
        }
        "key" => {
            only(&i, action, &["text", "repeat"])?;
            let repeat = i.opt_num("repeat", 1.0, 100.0)?.unwrap_or(1.0) as usize;
            plan.steps = key_steps(&i, i.str("text")?, repeat)?;
        }
        "hold_key" => {
            only(&i, action, &["text", "duration"])?;
            let keys = map_chord(i.str("text")?).map_err(|m| Refusal::at("text", m))?;
            let ms = (i.num("duration", 0.0, 300.0)? * 1000.0).round() as u64;
            plan.steps
                .push(Built::new(keyboard_combo::Args::new(keys, Some(ms))));
        }
        "type" => {
            only(&i, action, &["text"])?;
            plan.steps
                .push(Built::new(keyboard_type::Args::new(i.str("text")?, false)));
        }
        "mouse_move" => {
            only(&i, action, &["coordinate"])?;
            let (x, y) = required_point(&i, cx, "coordinate")?;
            plan.steps.push(Built::new(pointer_move::Args::to(x, y)));
            if let Some(p) = cx.pressed {
                plan.press = Some(PressChange::Set(Press {
                    moved_to: Some((x, y)),
                    ..p
                }));
            }
        }
        "left_click" | "right_click" | "middle_click" | "double_click" | "triple_click" => {
            only(&i, action, &["coordinate", "text", "key"])?;
            let held = modifiers(&i)?;
            let at = point(&i, cx, "coordinate")?;
            let (button, times) = match action {
                "right_click" => (ButtonArg::Right, 1),
                "middle_click" => (ButtonArg::Middle, 1),
                "double_click" => (ButtonArg::Left, 2),
                "triple_click" => (ButtonArg::Left, 3),
                _ => (ButtonArg::Left, 1),
            };
            plan.steps.push(click(button, times, at, held));
        }
        "left_click_drag" => {
            only(&i, action, &["start_coordinate", "coordinate", "text"])?;
            let held = modifiers(&i)?;
            let Some(from) = point(&i, cx, "start_coordinate")? else {
                return Err(Refusal::at(
                    "start_coordinate",
                    "is required (computer_20250124 and later drag from start_coordinate)",
                ));
            };
            let to = required_point(&i, cx, "coordinate")?;
            plan.steps
                .push(Built::new(pointer_drag::Args::between(from, to, held)));
        }
        "left_mouse_down" => {
            only(&i, action, &[])?;
            if cx.pressed.is_some() {
                return Err(Refusal::at(
                    "action",
                    "the left button is already down; send left_mouse_up first",
                ));
            }
            // Nothing stays held between two actions: the press is remembered and
            // performed, with its release, by left_mouse_up.
            plan.steps
                .push(Built::new(pointer_position::Args::default()));
            plan.press_from_step = Some(0);
        }
        "left_mouse_up" => {
            only(&i, action, &[])?;
            let Some(p) = cx.pressed else {
                return Err(Refusal::at(
                    "action",
                    "left_mouse_up without a left_mouse_down before it",
                ));
            };
            plan.steps.push(match p.moved_to {
                Some(to) if to != p.at => {
                    Built::new(pointer_drag::Args::between(p.at, to, Vec::new()))
                }
                _ => click(ButtonArg::Left, 1, Some(p.at), Vec::new()),
            });
            plan.press = Some(PressChange::Clear);
        }
        "scroll" => {
            only(
                &i,
                action,
                &["coordinate", "scroll_direction", "scroll_amount", "text"],
            )?;
            let held = modifiers(&i)?;
            let at = point(&i, cx, "coordinate")?;
            let n = i.num("scroll_amount", 0.0, 100.0)?;
            if n.fract() != 0.0 {
                return Err(Refusal::at(
                    "scroll_amount",
                    "must be a whole number of clicks",
                ));
            }
            let (axis, sign) = match i.str("scroll_direction")? {
                "up" => (AxisArg::Vertical, 1.0),
                "down" => (AxisArg::Vertical, -1.0),
                "left" => (AxisArg::Horizontal, -1.0),
                "right" => (AxisArg::Horizontal, 1.0),
                _ => {
                    return Err(Refusal::at(
                        "scroll_direction",
                        "must be up, down, left or right",
                    ));
                }
            };
            let amount = (sign * n) as i64;
            plan.steps.push(Built::new(pointer_scroll::Args::new(
                axis, amount, at, held,
            )));
        }
        "wait" => {
            only(&i, action, &["duration"])?;
            let ms = (i.num("duration", 0.0, 300.0)? * 1000.0).round() as u64;
            plan.steps.push(Built::new(wait_pause::Args::new(ms)));
        }
        other => {
            return Err(Refusal::at(
                "action",
                format!("unknown action {other:?} (known: {})", ACTIONS.join(", ")),
            ));
        }
    }
    Ok(plan)
}

fn image_block(ran: &Ran) -> Option<Value> {
    let s = ran.shot.as_ref()?;
    Some(json!({
        "type": "image",
        "source": {"type": "base64", "media_type": s.mime, "data": s.base64}
    }))
}

/// The tool_result's `{content, is_error}`: the screen after the action as an image
/// block; `cursor_position` as text in screenshot pixels.
fn answer(v: &Value, _: &Plan, ran: &Ran, display: &Display) -> Value {
    let mut content = Vec::new();
    if v["action"] == "cursor_position" {
        let p = ran
            .results
            .first()
            .map(|r| r["position"].clone())
            .unwrap_or_default();
        let (x, y) = (
            p["x"].as_f64().unwrap_or(0.0),
            p["y"].as_f64().unwrap_or(0.0),
        );
        let (sx, sy) = display.point_from_canvas(x, y);
        content.push(json!({"type": "text", "text": format!("X={sx},Y={sy}")}));
    }
    content.extend(image_block(ran));
    json!({"content": content, "is_error": false})
}

fn failure(_: &Value, e: &ToolError) -> Option<Value> {
    Some(json!({
        "content": [{"type": "text", "text": format!("{}: {}", e.code.as_str(), e.message)}],
        "is_error": true
    }))
}
