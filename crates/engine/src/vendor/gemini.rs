//! Gemini computer use: a `function_call` (`{name, args, id?}`) of the predefined
//! functions in, its `FunctionResponse` (`{name, id?, response, parts:[{inline_data}]}`)
//! out. Points are on Gemini's 0–999 grid over the whole canvas, denormalized as
//! Google's reference does. Both function sets are read: Gemini 2.5 / 3 Flash
//! (`click_at`, `type_text_at`, `key_combination`, `scroll_at`, …) and 3.5's desktop set
//! (`click`, `type`, `hotkey`, `scroll`, …). Browser-only functions that have no
//! desktop meaning (`navigate`, `search`, and 3.5's `key_down`/`key_up`, which would
//! leave a key held) are refused with the reason; `go_back` and `go_forward` are the
//! desktop's alt+Left and alt+Right. A `safety_decision` of `require_confirmation`
//! becomes a confirmation a person answers, acknowledged in the response.

use cc_protocol::keys::{Modifier, Named};
use cc_protocol::{Key, ToolError};
use serde_json::{Value, json};

use super::input::{Input, Read, Refusal};
use super::keys::{chord_call, map_chord, map_key};
use super::scaling::{Display, grid_to_canvas};
use super::{Context, Plan, Press, PressChange, Ran, Size, Vocabulary, full_capture};
use crate::tools::call::Built;
use crate::tools::fields::ButtonArg;
use crate::tools::pointer_scroll::AxisArg;
use crate::tools::{
    keyboard_combo, keyboard_press, keyboard_type, pointer_click, pointer_drag, pointer_move,
    pointer_scroll, wait_pause,
};

pub(super) const VOCABULARY: Vocabulary = Vocabulary {
    name: "gemini.computer",
    vendor: "google",
    summary: "Gemini computer use: a function_call of its predefined functions (0-999 grid) in, \
              the FunctionResponse with the screenshot out; require_confirmation is answered \
              by a person.",
    schema,
    examples,
    translate,
    answer,
    failure,
    declared,
    default_display: Display::canvas,
};

const FUNCTIONS: &[&str] = &[
    "open_web_browser",
    "click_at",
    "hover_at",
    "type_text_at",
    "key_combination",
    "scroll_document",
    "scroll_at",
    "drag_and_drop",
    "go_back",
    "go_forward",
    "wait_5_seconds",
    "navigate",
    "search",
    "click",
    "double_click",
    "triple_click",
    "middle_click",
    "right_click",
    "mouse_down",
    "mouse_up",
    "move",
    "type",
    "wait",
    "press_key",
    "hotkey",
    "take_screenshot",
    "scroll",
    "key_down",
    "key_up",
];

/// Pixels of wheel travel per notch.
const PIXELS_PER_NOTCH: f64 = 100.0;

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "enum": FUNCTIONS},
            "id": {"type": "string"},
            "args": {
                "type": "object",
                "description": "the function's arguments: x and y on the 0-999 grid, text, keys, direction, magnitude, …; safety_decision and intent as the model sends them",
                "properties": {
                    "x": {"type": "integer", "minimum": 0, "maximum": 999},
                    "y": {"type": "integer", "minimum": 0, "maximum": 999},
                    "text": {"type": "string"},
                    "press_enter": {"type": "boolean"},
                    "clear_before_typing": {"type": "boolean"},
                    "keys": {},
                    "key": {"type": "string"},
                    "direction": {"type": "string", "enum": ["up", "down", "left", "right"]},
                    "magnitude": {"type": "integer", "minimum": 0, "maximum": 999},
                    "magnitude_in_pixels": {"type": "integer", "minimum": 0, "maximum": 999},
                    "destination_x": {"type": "integer", "minimum": 0, "maximum": 999},
                    "destination_y": {"type": "integer", "minimum": 0, "maximum": 999},
                    "start_x": {"type": "integer"}, "start_y": {"type": "integer"},
                    "end_x": {"type": "integer"}, "end_y": {"type": "integer"},
                    "seconds": {"type": "number", "minimum": 0, "maximum": 300},
                    "url": {"type": "string"},
                    "intent": {"type": "string"},
                    "safety_decision": {"type": "object", "properties": {"decision": {"type": "string"}, "explanation": {"type": "string"}}}
                }
            }
        },
        "required": ["name"],
        "additionalProperties": false
    })
}

fn examples() -> Vec<Value> {
    vec![
        json!({"name": "click_at", "args": {"x": 500, "y": 500}}),
        json!({"name": "type_text_at", "args": {"x": 400, "y": 300, "text": "hello", "press_enter": false}}),
        json!({"name": "key_combination", "args": {"keys": "Control+A"}}),
        json!({"name": "scroll_at", "args": {"x": 500, "y": 500, "direction": "down", "magnitude": 400}}),
    ]
}

/// The screenshot is the whole canvas; Gemini's tool declares no display.
fn declared(_: &Value) -> Result<Option<Size>, Refusal> {
    Ok(None)
}

const ARGS: &[&str] = &[
    "x",
    "y",
    "text",
    "press_enter",
    "clear_before_typing",
    "keys",
    "key",
    "direction",
    "magnitude",
    "magnitude_in_pixels",
    "destination_x",
    "destination_y",
    "start_x",
    "start_y",
    "end_x",
    "end_y",
    "seconds",
    "url",
    "intent",
    "safety_decision",
];

/// A grid point named `xn`, `yn` → canvas.
fn grid_point(a: &Input<'_>, d: &Display, xn: &str, yn: &str) -> Read<(i64, i64)> {
    let x = a.num(xn, f64::MIN, f64::MAX)?;
    let y = a.num(yn, f64::MIN, f64::MAX)?;
    let cx = grid_to_canvas(x, d.canvas_width).map_err(|m| Refusal::at(a.path(xn), m))?;
    let cy = grid_to_canvas(y, d.canvas_height).map_err(|m| Refusal::at(a.path(yn), m))?;
    Ok((cx, cy))
}

fn click(x: i64, y: i64, button: ButtonArg, times: u64) -> Built {
    Built::new(pointer_click::Args::new(
        Some((x, y)),
        button,
        times,
        Vec::new(),
    ))
}

fn drag(from: (i64, i64), to: (i64, i64)) -> Built {
    Built::new(pointer_drag::Args::between(from, to, Vec::new()))
}

fn key_press(key: Key) -> Built {
    Built::new(keyboard_press::Args::new(key))
}

fn combo(keys: [Key; 2]) -> Built {
    Built::new(keyboard_combo::Args::new(keys.to_vec(), None))
}

fn notches(px: f64) -> f64 {
    (px / PIXELS_PER_NOTCH).round().clamp(1.0, 100.0)
}

/// A scroll of `px` pixels in `direction` at an optional point.
fn scroll(direction: &str, px: f64, at: Option<(i64, i64)>, a: &Input<'_>) -> Read<Built> {
    let (axis, sign) = match direction {
        "up" => (AxisArg::Vertical, 1.0),
        "down" => (AxisArg::Vertical, -1.0),
        "left" => (AxisArg::Horizontal, -1.0),
        "right" => (AxisArg::Horizontal, 1.0),
        _ => {
            return Err(Refusal::at(
                a.path("direction"),
                "must be up, down, left or right",
            ));
        }
    };
    let amount = (sign * notches(px)) as i64;
    Ok(Built::new(pointer_scroll::Args::new(
        axis,
        amount,
        at,
        Vec::new(),
    )))
}

fn refuse_browser(name: &str) -> Refusal {
    Refusal::at(
        "name",
        format!(
            "{name} is a browser function with no meaning on a desktop; exclude it with \
             excluded_predefined_functions (or use ENVIRONMENT_DESKTOP), and reach a page by \
             clicking and typing in a browser window"
        ),
    )
}

fn translate(v: &Value, cx: &mut Context) -> Result<Plan, Refusal> {
    let call = Input::new(v, "", &["name", "args", "id"])?;
    let name = call.str("name")?;
    call.opt_str("id")?;
    let empty = json!({});
    let args = call.raw("args").unwrap_or(&empty);
    let a = Input::new(args, "args", ARGS)?;
    a.opt_str("intent")?;
    let d = cx.display;
    let mut steps: Vec<Built> = Vec::new();
    let mut press = None;
    match name {
        "open_web_browser" | "take_screenshot" => {}
        "click_at" | "click" => {
            let (x, y) = grid_point(&a, &d, "x", "y")?;
            steps.push(click(x, y, ButtonArg::Left, 1));
        }
        "double_click" | "triple_click" | "middle_click" | "right_click" => {
            let (x, y) = grid_point(&a, &d, "x", "y")?;
            steps.push(match name {
                "double_click" => click(x, y, ButtonArg::Left, 2),
                "triple_click" => click(x, y, ButtonArg::Left, 3),
                "middle_click" => click(x, y, ButtonArg::Middle, 1),
                _ => click(x, y, ButtonArg::Right, 1),
            });
        }
        "hover_at" | "move" => {
            let (x, y) = grid_point(&a, &d, "x", "y")?;
            steps.push(Built::new(pointer_move::Args::to(x, y)));
            if let Some(p) = cx.pressed {
                press = Some(PressChange::Set(Press {
                    moved_to: Some((x, y)),
                    ..p
                }));
            }
        }
        "type_text_at" => {
            let (x, y) = grid_point(&a, &d, "x", "y")?;
            let text = a.str("text")?;
            // The reference app reads a missing press_enter as false (the doc table
            // says true); clear_before_typing defaults to true in both.
            let enter = a.opt_bool("press_enter")?.unwrap_or(false);
            let clear = a.opt_bool("clear_before_typing")?.unwrap_or(true);
            steps.push(click(x, y, ButtonArg::Left, 1));
            if clear {
                steps.push(combo([Key::Modifier(Modifier::Ctrl), Key::Char('a')]));
                steps.push(key_press(Key::Named(Named::Delete)));
            }
            steps.push(Built::new(keyboard_type::Args::new(text, enter)));
        }
        "type" => {
            let enter = a.opt_bool("press_enter")?.unwrap_or(false);
            steps.push(Built::new(keyboard_type::Args::new(a.str("text")?, enter)));
        }
        "key_combination" => {
            let keys = map_chord(a.str("keys")?).map_err(|m| Refusal::at("args.keys", m))?;
            steps.push(chord_call(keys));
        }
        "press_key" => {
            let key = map_key(a.str("key")?).map_err(|m| Refusal::at("args.key", m))?;
            steps.push(chord_call(vec![key]));
        }
        "hotkey" => {
            let list = a
                .raw("keys")
                .and_then(Value::as_array)
                .filter(|k| !k.is_empty())
                .ok_or_else(|| Refusal::at("args.keys", "must list at least one key"))?;
            let keys = list
                .iter()
                .enumerate()
                .map(|(n, k)| {
                    let at = format!("args.keys[{n}]");
                    k.as_str()
                        .ok_or_else(|| Refusal::at(at.clone(), "must be a string"))
                        .and_then(|s| map_key(s).map_err(|m| Refusal::at(at, m)))
                })
                .collect::<Read<Vec<Key>>>()?;
            steps.push(chord_call(keys));
        }
        "scroll_document" => {
            match a.str("direction")? {
                "down" => steps.push(key_press(Key::Named(Named::PgDn))),
                "up" => steps.push(key_press(Key::Named(Named::PgUp))),
                // The reference scrolls half the viewport's width.
                dir => steps.push(scroll(dir, f64::from(d.canvas_width) / 2.0, None, &a)?),
            }
        }
        "scroll_at" => {
            let at = grid_point(&a, &d, "x", "y")?;
            let dir = a.str("direction")?;
            let magnitude = a.opt_num("magnitude", 0.0, 999.0)?.unwrap_or(800.0);
            let span = if dir == "left" || dir == "right" {
                d.canvas_width
            } else {
                d.canvas_height
            };
            let px = magnitude / 1000.0 * f64::from(span);
            steps.push(scroll(dir, px, Some(at), &a)?);
        }
        "scroll" => {
            let at = grid_point(&a, &d, "x", "y")?;
            let px = a
                .opt_num("magnitude_in_pixels", 0.0, 999.0)?
                .unwrap_or(300.0);
            steps.push(scroll(a.str("direction")?, px, Some(at), &a)?);
        }
        "drag_and_drop" => {
            let (from, to) = if a.has("start_x") {
                (
                    grid_point(&a, &d, "start_x", "start_y")?,
                    grid_point(&a, &d, "end_x", "end_y")?,
                )
            } else {
                (
                    grid_point(&a, &d, "x", "y")?,
                    grid_point(&a, &d, "destination_x", "destination_y")?,
                )
            };
            steps.push(drag(from, to));
        }
        "mouse_down" => {
            if cx.pressed.is_some() {
                return Err(Refusal::at(
                    "name",
                    "the button is already down; send mouse_up first",
                ));
            }
            let at = grid_point(&a, &d, "x", "y")?;
            // Nothing stays held between two calls: mouse_up performs the press.
            steps.push(Built::new(pointer_move::Args::to(at.0, at.1)));
            press = Some(PressChange::Set(Press { at, moved_to: None }));
        }
        "mouse_up" => {
            let Some(p) = cx.pressed else {
                return Err(Refusal::at(
                    "name",
                    "mouse_up without a mouse_down before it",
                ));
            };
            let to = if a.has("x") {
                grid_point(&a, &d, "x", "y")?
            } else {
                p.moved_to.unwrap_or(p.at)
            };
            steps.push(if to == p.at {
                click(p.at.0, p.at.1, ButtonArg::Left, 1)
            } else {
                drag(p.at, to)
            });
            press = Some(PressChange::Clear);
        }
        "go_back" => steps.push(combo([
            Key::Modifier(Modifier::Alt),
            Key::Named(Named::Left),
        ])),
        "go_forward" => steps.push(combo([
            Key::Modifier(Modifier::Alt),
            Key::Named(Named::Right),
        ])),
        "wait_5_seconds" => steps.push(Built::new(wait_pause::Args::new(5000))),
        "wait" => {
            let s = a.opt_num("seconds", 0.0, 300.0)?.unwrap_or(1.0);
            let ms = (s * 1000.0).round() as u64;
            steps.push(Built::new(wait_pause::Args::new(ms)));
        }
        "navigate" | "search" => return Err(refuse_browser(name)),
        "key_down" | "key_up" => {
            return Err(Refusal::at(
                "name",
                format!(
                    "{name} would leave a key held between calls, which this server never does; \
                     use hotkey or press_key"
                ),
            ));
        }
        other => {
            return Err(Refusal::at(
                "name",
                format!(
                    "unknown function {other:?} (known: {})",
                    FUNCTIONS.join(", ")
                ),
            ));
        }
    }
    let confirm = match a.raw("safety_decision") {
        None => None,
        Some(sd) => {
            let s = Input::new(sd, "args.safety_decision", &["decision", "explanation"])?;
            match s.str("decision")? {
                "require_confirmation" => Some(format!(
                    "Gemini asks a person to confirm {name}: {}",
                    s.opt_str("explanation")?.unwrap_or("(no explanation)")
                )),
                _ => None,
            }
        }
    };
    Ok(Plan {
        steps,
        capture: Some(full_capture(&d)),
        confirm,
        press,
        ..Plan::default()
    })
}

fn response(v: &Value, body: Value) -> Value {
    let mut out = json!({"name": v["name"], "response": body});
    if let Some(id) = v.get("id").filter(|x| x.is_string()) {
        out["id"] = id.clone();
    }
    out
}

/// The `FunctionResponse`: the screenshot as an inline part; the acknowledgement of a
/// confirmed `require_confirmation`. A desktop has no URL, so none is reported.
fn answer(v: &Value, plan: &Plan, ran: &Ran, _: &Display) -> Value {
    let mut body = json!({});
    if plan.confirm.is_some() {
        body["safety_acknowledgement"] = json!("true");
    }
    let mut out = response(v, body);
    if let Some(s) = &ran.shot {
        out["parts"] = json!([{"inline_data": {"mime_type": s.mime, "data": s.base64}}]);
    }
    out
}

fn failure(v: &Value, e: &ToolError) -> Option<Value> {
    Some(response(
        v,
        json!({"error": format!("{}: {}", e.code.as_str(), e.message)}),
    ))
}
