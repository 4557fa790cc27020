//! OpenAI's `computer` tool (Responses API): a `computer_call` item with a batch of
//! `actions[]` (or the preview's single `action`) and its `pending_safety_checks`;
//! the answer is the `computer_call_output` item carrying the screen after the batch.
//! Points are display pixels of the declared display (`display_width` ×
//! `display_height`, the preview tool's fields), the whole canvas when none is declared.
//! Pending safety checks become a confirmation a person answers on the operator
//! channel; once approved they come back as `acknowledged_safety_checks`.

use cc_protocol::{Key, ToolError};
use serde_json::{Value, json};

use super::input::{Input, Read, Refusal, declared_size};
use super::keys::{chord_call, map_key};
use super::scaling::Display;
use super::{Context, Plan, Ran, Size, Vocabulary, full_capture};
use crate::tools::call::Built;
use crate::tools::fields::ButtonArg;
use crate::tools::pointer_scroll::AxisArg;
use crate::tools::{
    keyboard_type, pointer_click, pointer_drag, pointer_move, pointer_scroll, wait_pause,
};

pub(super) const VOCABULARY: Vocabulary = Vocabulary {
    name: "openai.computer",
    vendor: "openai",
    summary: "OpenAI's computer tool: a computer_call (actions[] or action, \
              pending_safety_checks) in, its computer_call_output with the screenshot out; \
              safety checks are confirmed by a person, never by the model.",
    schema,
    examples,
    translate,
    answer,
    failure,
    declared,
    default_display: Display::canvas,
};

const CALL_MEMBERS: &[&str] = &[
    "type",
    "id",
    "call_id",
    "status",
    "action",
    "actions",
    "pending_safety_checks",
    "display_width",
    "display_height",
];

/// Pixels of wheel travel per notch, as OpenAI's xdotool mapping counts them.
const PIXELS_PER_NOTCH: f64 = 100.0;
/// The guide's `wait`.
const WAIT_MS: u64 = 2000;

fn schema() -> Value {
    let xy = json!({"type": "integer"});
    let keys = json!({"type": "array", "items": {"type": "string"}});
    let action = json!({
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": ["click", "double_click", "drag", "keypress", "move", "screenshot", "scroll", "type", "wait"]},
            "x": xy, "y": xy,
            "button": {"type": "string", "enum": ["left", "right", "wheel", "back", "forward"]},
            "keys": keys,
            "path": {"type": "array", "items": {"type": "object", "properties": {"x": xy, "y": xy}, "required": ["x", "y"]}, "minItems": 2},
            "scroll_x": xy, "scroll_y": xy,
            "text": {"type": "string"}
        },
        "required": ["type"]
    });
    let check = json!({"type": "object", "properties": {"id": {"type": "string"}, "code": {"type": "string"}, "message": {"type": "string"}}, "required": ["id"]});
    json!({
        "type": "object",
        "properties": {
            "type": {"const": "computer_call"},
            "id": {"type": "string"},
            "call_id": {"type": "string"},
            "status": {"type": "string"},
            "actions": {"type": "array", "items": action, "maxItems": 100},
            "action": action,
            "pending_safety_checks": {"type": "array", "items": check},
            "display_width": {"type": "integer", "minimum": 1, "description": "the declared display; fixed for the session by its first call"},
            "display_height": {"type": "integer", "minimum": 1}
        },
        "additionalProperties": false
    })
}

fn examples() -> Vec<Value> {
    vec![
        json!({"type": "computer_call", "call_id": "call_1", "actions": [{"type": "screenshot"}]}),
        json!({"type": "computer_call", "call_id": "call_2", "actions": [
            {"type": "click", "button": "left", "x": 640, "y": 400},
            {"type": "type", "text": "hello"},
            {"type": "keypress", "keys": ["ENTER"]}
        ]}),
        json!({"type": "computer_call", "call_id": "call_3",
               "action": {"type": "scroll", "x": 640, "y": 400, "scroll_x": 0, "scroll_y": 300},
               "pending_safety_checks": [{"id": "cu_sc_1", "code": "malicious_instructions", "message": "…"}]}),
    ]
}

fn declared(v: &Value) -> Result<Option<Size>, Refusal> {
    declared_size(v, "display_width", "display_height")
}

fn point(a: &Input<'_>, cx: &Context) -> Read<(i64, i64)> {
    let x = a.num("x", f64::MIN, f64::MAX)?;
    let y = a.num("y", f64::MIN, f64::MAX)?;
    cx.display
        .point_to_canvas(x, y)
        .map_err(|m| Refusal::at(a.path("x"), m))
}

/// `keys` of a key press, or the modifiers held during a pointer action.
fn key_list(a: &Input<'_>, required: bool) -> Read<Vec<Key>> {
    let list = match a.raw("keys") {
        None if !required => return Ok(Vec::new()),
        None => return Err(Refusal::at(a.path("keys"), "must list at least one key")),
        Some(v) => v
            .as_array()
            .filter(|k| !(required && k.is_empty()))
            .ok_or_else(|| Refusal::at(a.path("keys"), "must list at least one key"))?,
    };
    list.iter()
        .enumerate()
        .map(|(n, k)| {
            let at = format!("{}[{n}]", a.path("keys"));
            let name = k
                .as_str()
                .ok_or_else(|| Refusal::at(at.clone(), "must be a string"))?;
            map_key(name).map_err(|m| Refusal::at(at, m))
        })
        .collect()
}

/// One action → our tool calls.
fn action(v: &Value, path: &str, cx: &Context, out: &mut Vec<Built>) -> Read<()> {
    let kind = v["type"].as_str().unwrap_or_default();
    let known: &[&str] = match kind {
        "click" => &["type", "x", "y", "button", "keys"],
        "double_click" | "move" => &["type", "x", "y", "keys"],
        "drag" => &["type", "path", "keys"],
        "keypress" => &["type", "keys"],
        "scroll" => &["type", "x", "y", "scroll_x", "scroll_y", "keys"],
        "type" => &["type", "text"],
        "wait" | "screenshot" => &["type"],
        "" => return Err(Refusal::at(format!("{path}.type"), "is required")),
        other => {
            return Err(Refusal::at(
                format!("{path}.type"),
                format!(
                    "unknown action {other:?} (known: click, double_click, drag, keypress, move, \
                     screenshot, scroll, type, wait)"
                ),
            ));
        }
    };
    let a = Input::new(v, path, known)?;
    match kind {
        "click" => {
            let (x, y) = point(&a, cx)?;
            let button = match a.opt_str("button")?.unwrap_or("left") {
                "left" => ButtonArg::Left,
                "right" => ButtonArg::Right,
                "wheel" | "middle" => ButtonArg::Middle,
                other => {
                    return Err(Refusal::at(
                        a.path("button"),
                        format!("the {other} button is not supported (left, right, wheel)"),
                    ));
                }
            };
            let held = key_list(&a, false)?;
            let click = pointer_click::Args::new(Some((x, y)), button, 1, held);
            out.push(Built::new(click));
        }
        "double_click" => {
            let (x, y) = point(&a, cx)?;
            let held = key_list(&a, false)?;
            let click = pointer_click::Args::new(Some((x, y)), ButtonArg::Left, 2, held);
            out.push(Built::new(click));
        }
        "move" => {
            if !key_list(&a, false)?.is_empty() {
                return Err(Refusal::at(
                    a.path("keys"),
                    "keys held during a move are not supported (a move presses nothing)",
                ));
            }
            let (x, y) = point(&a, cx)?;
            out.push(Built::new(pointer_move::Args::to(x, y)));
        }
        "drag" => {
            let pts = a
                .raw("path")
                .and_then(Value::as_array)
                .filter(|p| p.len() >= 2)
                .ok_or_else(|| {
                    Refusal::at(a.path("path"), "must list at least two {x, y} points")
                })?;
            let mut canvas = Vec::with_capacity(pts.len());
            for (n, p) in pts.iter().enumerate() {
                let pi = Input::new(p, &format!("{}[{n}]", a.path("path")), &["x", "y"])?;
                canvas.push(point(&pi, cx)?);
            }
            // Our drag is one press, a straight glide and one release: from the first
            // point to the last (the points between are not visited).
            let (from, to) = (canvas[0], canvas[canvas.len() - 1]);
            let held = key_list(&a, false)?;
            out.push(Built::new(pointer_drag::Args::between(from, to, held)));
        }
        "keypress" => {
            // The SDK calls `keys` a combination: pressed together, released in reverse.
            out.push(chord_call(key_list(&a, true)?));
        }
        "scroll" => {
            let (x, y) = point(&a, cx)?;
            let dx = a.opt_num("scroll_x", -1e6, 1e6)?.unwrap_or(0.0);
            let dy = a.opt_num("scroll_y", -1e6, 1e6)?.unwrap_or(0.0);
            // Per axis, max(1, |round(d/100)|) notches; positive y scrolls down, and our
            // positive amount scrolls up.
            let notches = |d: f64| ((d / PIXELS_PER_NOTCH).round().abs()).clamp(1.0, 100.0);
            let held = if dx != 0.0 || dy != 0.0 {
                key_list(&a, false)?
            } else {
                Vec::new()
            };
            let scroll = |axis, amount: f64| {
                let args =
                    pointer_scroll::Args::new(axis, amount as i64, Some((x, y)), held.clone());
                Built::new(args)
            };
            if dy != 0.0 {
                out.push(scroll(AxisArg::Vertical, -dy.signum() * notches(dy)));
            }
            if dx != 0.0 {
                out.push(scroll(AxisArg::Horizontal, dx.signum() * notches(dx)));
            }
        }
        "type" => {
            out.push(Built::new(keyboard_type::Args::new(a.str("text")?, false)));
        }
        "wait" => out.push(Built::new(wait_pause::Args::new(WAIT_MS))),
        _ => {} // screenshot: the capture closes every call
    }
    Ok(())
}

/// `pending_safety_checks` as given (each needs an `id`).
fn checks(v: &Value) -> Read<Vec<Value>> {
    let Some(list) = v.get("pending_safety_checks").filter(|x| !x.is_null()) else {
        return Ok(Vec::new());
    };
    let list = list
        .as_array()
        .ok_or_else(|| Refusal::at("pending_safety_checks", "must be a list"))?;
    list.iter()
        .enumerate()
        .map(|(n, c)| {
            let path = format!("pending_safety_checks[{n}]");
            let i = Input::new(c, &path, &["id", "code", "message"])?;
            i.str("id")?;
            i.opt_str("code")?;
            i.opt_str("message")?;
            Ok(c.clone())
        })
        .collect()
}

fn translate(v: &Value, cx: &mut Context) -> Result<Plan, Refusal> {
    let call = Input::new(v, "", CALL_MEMBERS)?;
    if let Some(t) = call.opt_str("type")?
        && t != "computer_call"
    {
        return Err(Refusal::at("type", "must be computer_call"));
    }
    call.opt_str("call_id")?;
    let actions: Vec<(String, &Value)> = match (call.raw("actions"), call.raw("action")) {
        (Some(_), Some(_)) => {
            return Err(Refusal::at("action", "give actions or action, not both"));
        }
        (Some(list), None) => list
            .as_array()
            .filter(|l| !l.is_empty() && l.len() <= 100)
            .ok_or_else(|| Refusal::at("actions", "must list 1 to 100 actions"))?
            .iter()
            .enumerate()
            .map(|(n, a)| (format!("actions[{n}]"), a))
            .collect(),
        (None, Some(a)) => vec![("action".to_string(), a)],
        (None, None) => return Err(Refusal::at("actions", "is required (or action)")),
    };
    let mut steps = Vec::new();
    for (path, a) in &actions {
        if !a.is_object() {
            return Err(Refusal::at(path.clone(), "must be an object"));
        }
        action(a, path, cx, &mut steps)?;
    }
    let pending = checks(v)?;
    let confirm = (!pending.is_empty()).then(|| {
        let said: Vec<String> = pending
            .iter()
            .map(|c| {
                format!(
                    "{}: {}",
                    c["code"].as_str().unwrap_or("safety_check"),
                    c["message"].as_str().unwrap_or("(no message)")
                )
            })
            .collect();
        format!(
            "OpenAI flagged this computer call; a person must acknowledge: {}",
            said.join("; ")
        )
    });
    Ok(Plan {
        steps,
        capture: Some(full_capture(&cx.display)),
        confirm,
        ..Plan::default()
    })
}

/// The `computer_call_output` item: the screen after the batch and the checks the
/// person acknowledged.
fn answer(v: &Value, _: &Plan, ran: &Ran, _: &Display) -> Value {
    let url = ran
        .shot
        .as_ref()
        .map(|s| s.data_url.clone())
        .unwrap_or_default();
    let mut out = json!({
        "type": "computer_call_output",
        "output": {"type": "computer_screenshot", "image_url": url},
    });
    if let Some(id) = v.get("call_id").filter(|x| x.is_string()) {
        out["call_id"] = id.clone();
    }
    if let Ok(pending) = checks(v)
        && !pending.is_empty()
    {
        out["acknowledged_safety_checks"] = Value::Array(pending);
    }
    out
}

/// The Responses API has no failure item for a computer call: the envelope error is
/// the answer.
fn failure(_: &Value, _: &ToolError) -> Option<Value> {
    None
}
