//! The vendors' computer-use vocabularies (Anthropic's computer tool, OpenAI's
//! `computer` tool, Gemini's computer use), served in their own argument and result
//! shapes. A vendor call is only a translation: it becomes our own tools' typed calls
//! (`pointer_click::Args`, `keyboard_type::Args`, `screen_capture::Args`, …, so a
//! misspelt tool does not compile) run as one `batch.execute` through the gate, so rules, risk, confirmation, the emergency stop,
//! standby and governance judge it exactly as they judge a plain call.
//!
//! One file per vocabulary (`anthropic.rs`, `openai.rs`, `gemini.rs`) holds its
//! translation and result shape; `scaling.rs` the screenshot space each fixes per
//! session; `keys.rs` the key names; `input.rs` strict reading of vendor arguments;
//! `run.rs` the batch, the wait for a person and the shaping of the answer.

mod anthropic;
mod gemini;
mod input;
mod keys;
mod openai;
mod run;
mod scaling;

use std::collections::HashMap;

use serde_json::{Value, json};

use cc_protocol::ToolError;

use crate::config::Config;
use crate::encode::Fit;
use crate::tools::call::Built;
use crate::tools::screen_capture::{self, Region, Size as CaptureSize};

pub(crate) use input::Refusal;
use scaling::Display;

/// A declared screenshot size, width by height.
pub(crate) type Size = (u32, u32);

/// A vocabulary as served: its name on `tools.call` (`anthropic.computer`), what
/// `tools.list`, the manifest and MCP say of it, and its translation.
pub struct Vocabulary {
    /// The name `tools.call` takes; over MCP the dot becomes an underscore.
    pub name: &'static str,
    /// Whose models speak it.
    pub vendor: &'static str,
    /// One line for `tools.list`, the manifest and MCP.
    pub summary: &'static str,
    /// The JSON Schema of its arguments (the vendor's own call shape).
    pub schema: fn() -> Value,
    /// Calls as the vendor documents them.
    pub examples: fn() -> Vec<Value>,
    translate: fn(&Value, &mut Context) -> Result<Plan, Refusal>,
    answer: fn(&Value, &Plan, &Ran, &Display) -> Value,
    /// The vendor-shaped answer to a failure, when the vendor has one.
    failure: fn(&Value, &ToolError) -> Option<Value>,
    /// The size the caller declares in this call (the vendor's tool-definition fields).
    declared: fn(&Value) -> Result<Option<Size>, Refusal>,
    /// The screenshot space when the caller declares none.
    default_display: fn((u32, u32)) -> Display,
}

/// Every vocabulary, in a fixed order.
pub fn vocabularies() -> &'static [Vocabulary] {
    static ALL: [Vocabulary; 3] = [
        anthropic::VOCABULARY,
        openai::VOCABULARY,
        gemini::VOCABULARY,
    ];
    &ALL
}

/// The vocabulary `tools.call` knows by `name`.
pub fn find_vocabulary(name: &str) -> Option<&'static Vocabulary> {
    vocabularies().iter().find(|v| v.name == name)
}

/// A vocabulary as `tools.list` and the manifest describe it.
pub fn vocabulary_json(v: &Vocabulary) -> Value {
    json!({
        "name": v.name,
        "vendor": v.vendor,
        "summary": v.summary,
        "parameters": (v.schema)(),
        "examples": (v.examples)(),
    })
}

/// What a vocabulary remembers within one session: the screenshot space it fixed, and
/// a press a model made that waits for its release (nothing stays held between two
/// actions, so `left_mouse_down` … `left_mouse_up` becomes one drag or click).
#[derive(Debug, Default)]
pub struct VendorSession {
    displays: HashMap<&'static str, Display>,
    pressed: HashMap<&'static str, Press>,
}

/// What the plan's calls answered.
pub(crate) struct Ran {
    /// Each step's result, in order.
    pub results: Vec<Value>,
    /// The closing capture, when the plan asked for one.
    pub shot: Option<Shot>,
}

/// A capture as a vendor carries it.
pub(crate) struct Shot {
    pub mime: String,
    pub base64: String,
    pub data_url: String,
    pub width: u64,
    pub height: u64,
}

impl Shot {
    fn from_result(r: &Value) -> Option<Shot> {
        let url = r["data_url"].as_str()?;
        let (mime, data) = url.strip_prefix("data:")?.split_once(";base64,")?;
        Some(Shot {
            mime: mime.to_string(),
            base64: data.to_string(),
            data_url: url.to_string(),
            width: r["width"].as_u64()?,
            height: r["height"].as_u64()?,
        })
    }
}

/// A deferred press: where the button went down, and where the pointer moved since.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Press {
    pub at: (i64, i64),
    pub moved_to: Option<(i64, i64)>,
}

/// What a translation may read and keep.
pub(crate) struct Context {
    pub display: Display,
    pub pressed: Option<Press>,
}

/// One vendor call, translated: our tool calls, run in order as one batch.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub steps: Vec<Built>,
    /// The capture run last, when the answer carries the screen.
    pub capture: Option<Capture>,
    /// Why a person must confirm it whatever the gate says (a vendor's safety check).
    pub confirm: Option<String>,
    /// The deferred press after this call, when it changes.
    pub press: Option<PressChange>,
    /// A press whose position comes from the named step's `position` result.
    pub press_from_step: Option<usize>,
}

/// How a call changes the deferred press.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum PressChange {
    Set(Press),
    Clear,
}

/// The screen a vendor's answer carries. Its format, quality and grayscale are the
/// session config's, so it becomes a call only where the config is at hand
/// ([`Capture::call`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Capture {
    /// The whole screen in the display's space, `scale` × the canvas: exactly that
    /// size (not the plain tools' model-sized default).
    Full { scale: f64 },
    /// A canvas rectangle at the display's own pixels, as Anthropic's reference zooms:
    /// native when that fits the model's image limits ([`Fit::MODEL`]: 1568 px on the
    /// long edge, 1.15 megapixels), else the largest image within them, aspect kept.
    Region(Region),
}

impl Capture {
    /// `screen.capture`'s call for it under `config`, an image every time (a vendor's
    /// screenshot has no "unchanged" answer).
    pub(crate) fn call(self, config: &Config) -> Built {
        Built::new(match self {
            Capture::Full { scale } => {
                screen_capture::Args::image(config, None, CaptureSize::Canvas, scale, None)
            }
            Capture::Region(r) => screen_capture::Args::image(
                config,
                Some(r),
                CaptureSize::Native,
                1.0,
                Some(Fit::MODEL),
            ),
        })
    }
}

/// The whole screen in `display`'s space.
pub(crate) fn full_capture(display: &Display) -> Capture {
    Capture::Full {
        scale: display.scale(),
    }
}

/// The canvas rectangle from (`x0`, `y0`) to (`x1`, `y1`) at the display's own pixels.
pub(crate) fn region_capture(x0: i64, y0: i64, x1: i64, y1: i64) -> Capture {
    Capture::Region(Region {
        x: x0,
        y: y0,
        width: x1 - x0,
        height: y1 - y0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hostile shapes in every member a vocabulary reads: each is translated or refused
    /// by member, never a panic.
    #[test]
    fn hostile_vendor_input_is_refused_never_a_panic() {
        let odd = [
            json!(null),
            json!(true),
            json!(-1),
            json!(1e308),
            json!("NaN"),
            json!("Infinity"),
            json!(""),
            json!("\u{0}"),
            json!([]),
            json!([null, null]),
            json!([1e308, -1e308]),
            json!([1, 2, 3, 4, 5]),
            json!({}),
            json!({"x": "a", "y": []}),
            json!([{"x": null}]),
            json!("ctrl+"),
            json!("+"),
            json!("x".repeat(10_000)),
        ];
        let members = [
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
            "actions",
            "action",
            "pending_safety_checks",
            "call_id",
            "type",
            "name",
            "args",
            "id",
            "display_width_px",
            "display_height_px",
            "display_width",
            "display_height",
        ];
        let seeds = [
            json!({"action": "left_click"}),
            json!({"action": "zoom"}),
            json!({"action": "key"}),
            json!({"action": "scroll"}),
            json!({"actions": [{"type": "click"}]}),
            json!({"actions": [{"type": "drag"}]}),
            json!({"name": "click_at", "args": {}}),
            json!({"name": "type_text_at", "args": {}}),
            json!({"name": "scroll_at", "args": {}}),
        ];
        let canvas = (1920, 1080);
        for voc in vocabularies() {
            for seed in &seeds {
                for m in members {
                    for v in &odd {
                        let mut call = seed.clone();
                        call[m] = v.clone();
                        for nested in ["args", "actions"] {
                            if let Some(a) = call.get_mut(nested) {
                                if let Some(o) = a.as_object_mut() {
                                    o.insert("x".into(), v.clone());
                                }
                                if let Some(first) = a.get_mut(0).and_then(Value::as_object_mut) {
                                    first.insert("x".into(), v.clone());
                                }
                            }
                        }
                        let _ = (voc.declared)(&call);
                        let mut cx = Context {
                            display: (voc.default_display)(canvas),
                            pressed: Some(Press {
                                at: (1, 1),
                                moved_to: None,
                            }),
                        };
                        if let Err(r) = (voc.translate)(&call, &mut cx) {
                            assert!(!r.message.is_empty(), "{} {call}", voc.name);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_vocabulary_translates_its_own_examples() {
        for voc in vocabularies() {
            let display = (voc.default_display)((1920, 1080));
            for ex in (voc.examples)() {
                let mut cx = Context {
                    display,
                    pressed: None,
                };
                let plan = (voc.translate)(&ex, &mut cx)
                    .unwrap_or_else(|r| panic!("{} {ex}: {r:?}", voc.name));
                // Every step is a valid call of a plain tool, and what validation
                // makes of its arguments types to what was built.
                let config = crate::config::ConfigStack::new();
                let capture = plan.capture.map(|c| c.call(config.config()));
                assert!(capture.is_some(), "{} {ex}", voc.name);
                for b in plan.steps.iter().cloned().chain(capture) {
                    let (def, args) = (b.def(), b.args().clone());
                    let call =
                        crate::tools::ToolCall::built(b, config.value()).unwrap_or_else(|e| {
                            panic!("{} {ex}: {} {args}: {e:?}", voc.name, def.name)
                        });
                    crate::tools::ToolCall::typed(def, call.args().clone())
                        .unwrap_or_else(|e| panic!("{} {ex}: {}: {e}", voc.name, def.name));
                }
            }
        }
    }
}
