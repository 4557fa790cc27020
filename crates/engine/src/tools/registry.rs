//! Every tool of PROTOCOL §4: name, summary, base risk, argument spec, examples.
//! `tools.list`, the manifest, MCP and validation all read this one table.

use std::sync::OnceLock;

use cc_protocol::Risk;
use serde_json::{Value, json};

use crate::spec::{Field, Ty};

/// What a tool needs from the backend (for `tools.list`'s `available`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    Nothing,
    Capture,
    Input,
    Accessibility,
    Windows,
}

/// One tool.
#[derive(Debug, Clone)]
pub struct ToolDef {
    pub name: &'static str,
    pub summary: &'static str,
    pub risk: Risk,
    pub params: Ty,
    pub examples: Vec<Value>,
    pub needs: Needs,
}

fn point_fields(required: bool) -> Vec<Field> {
    if required {
        vec![
            Field::req("x", Ty::coord(), "canvas x (clamped into the canvas)"),
            Field::req("y", Ty::coord(), "canvas y (clamped into the canvas)"),
        ]
    } else {
        vec![
            Field::opt(
                "x",
                Ty::coord(),
                "canvas x; with y, or neither (current position)",
            ),
            Field::opt(
                "y",
                Ty::coord(),
                "canvas y; with x, or neither (current position)",
            ),
        ]
    }
}

fn point() -> Ty {
    Ty::Object(point_fields(true))
}

fn frame() -> Field {
    Field::opt(
        "frame",
        Ty::int(0, i64::MAX >> 11),
        "the frame of the capture these coordinates were computed from; fails stale_frame if the layout changed since",
    )
}

fn button() -> Field {
    Field::def(
        "button",
        Ty::one_of(&["left", "middle", "right"]),
        json!("left"),
        "pointer button",
    )
}

fn hold() -> Field {
    Field::def(
        "hold_ms",
        Ty::int(0, 10_000),
        json!(0),
        "how long the button stays down",
    )
}

fn window_id() -> Ty {
    Ty::int(0, (1i64 << 53) - 1)
}

fn build() -> Vec<ToolDef> {
    let region = Ty::Object(vec![
        Field::req("x", Ty::int(-1_000_000, 1_000_000), "canvas left"),
        Field::req("y", Ty::int(-1_000_000, 1_000_000), "canvas top"),
        Field::req("width", Ty::int(1, 1_000_000), "canvas width"),
        Field::req("height", Ty::int(1, 1_000_000), "canvas height"),
    ]);
    let batch_item = Ty::Object(vec![
        Field::req(
            "tool",
            Ty::Str {
                max_chars: Some(64),
                non_empty: true,
            },
            "a tool name",
        ),
        Field::def("arguments", Ty::Any, json!({}), "that tool's arguments"),
    ]);
    let mut click = point_fields(false);
    click.extend([
        button(),
        Field::def(
            "times",
            Ty::int(1, 3),
            json!(1),
            "1 click, 2 double, 3 triple",
        ),
        hold(),
        frame(),
    ]);
    let mut mv = point_fields(true);
    mv.extend([
        Field::def("steps", Ty::int(1, 200), json!(1), "intermediate moves"),
        frame(),
    ]);
    let mut scroll = vec![
        Field::def(
            "axis",
            Ty::one_of(&["vertical", "horizontal"]),
            json!("vertical"),
            "scroll axis",
        ),
        Field::req(
            "amount",
            Ty::int(-100, 100),
            "notches; positive is up or right",
        ),
    ];
    scroll.extend(point_fields(false));
    scroll.push(frame());
    vec![
        ToolDef {
            name: "screen.capture",
            summary: "Capture the screen (or a region or one display) as an image on the canvas.",
            risk: Risk::Benign,
            params: Ty::Object(vec![
                Field::opt("region", region, "canvas rectangle to capture"),
                Field::opt(
                    "display",
                    Ty::Str {
                        max_chars: Some(64),
                        non_empty: true,
                    },
                    "a display id from surface.displays",
                ),
                Field::cfg(
                    "format",
                    Ty::one_of(&["png", "jpeg", "webp"]),
                    "capture.default_format",
                    "image format",
                ),
                Field::cfg(
                    "quality",
                    Ty::int(1, 100),
                    "capture.default_quality",
                    "JPEG quality",
                ),
                Field::def(
                    "scale",
                    Ty::num(0.1, 1.0),
                    json!(1.0),
                    "image size relative to the canvas",
                ),
                Field::cfg(
                    "grayscale",
                    Ty::Bool,
                    "capture.grayscale",
                    "grayscale image",
                ),
            ]),
            examples: vec![
                json!({}),
                json!({"region": {"x": 0, "y": 0, "width": 800, "height": 600}, "format": "jpeg", "quality": 70}),
            ],
            needs: Needs::Capture,
        },
        ToolDef {
            name: "pointer.move",
            summary: "Move the pointer to a canvas point.",
            risk: Risk::Moderate,
            params: Ty::Object(mv),
            examples: vec![json!({"x": 640, "y": 400})],
            needs: Needs::Input,
        },
        ToolDef {
            name: "pointer.click",
            summary: "Click at a canvas point (or where the pointer is).",
            risk: Risk::Moderate,
            params: Ty::Object(click),
            examples: vec![
                json!({"x": 640, "y": 400}),
                json!({"x": 10, "y": 10, "button": "right"}),
            ],
            needs: Needs::Input,
        },
        ToolDef {
            name: "pointer.drag",
            summary: "Press at one canvas point, move to another in steps, release.",
            risk: Risk::Moderate,
            params: Ty::Object(vec![
                Field::req("from", point(), "start point"),
                Field::req("to", point(), "end point"),
                button(),
                Field::def("steps", Ty::int(1, 400), json!(24), "intermediate moves"),
                hold(),
                frame(),
            ]),
            examples: vec![json!({"from": {"x": 100, "y": 100}, "to": {"x": 400, "y": 300}})],
            needs: Needs::Input,
        },
        ToolDef {
            name: "pointer.scroll",
            summary: "Scroll by notches, at a canvas point or where the pointer is.",
            risk: Risk::Moderate,
            params: Ty::Object(scroll),
            examples: vec![
                json!({"amount": -3}),
                json!({"axis": "horizontal", "amount": 2, "x": 500, "y": 300}),
            ],
            needs: Needs::Input,
        },
        ToolDef {
            name: "keyboard.press",
            summary: "Press and release one key.",
            risk: Risk::Moderate,
            params: Ty::Object(vec![Field::req("key", Ty::KeyName, "a key name")]),
            examples: vec![json!({"key": "enter"})],
            needs: Needs::Input,
        },
        ToolDef {
            name: "keyboard.combo",
            summary: "Press keys in order and release them in reverse (a shortcut).",
            risk: Risk::Moderate,
            params: Ty::Object(vec![Field::req(
                "keys",
                Ty::KeyCombo,
                "key names, as a list or \"ctrl+shift+esc\"",
            )]),
            examples: vec![
                json!({"keys": ["ctrl", "a"]}),
                json!({"keys": "ctrl+shift+esc"}),
            ],
            needs: Needs::Input,
        },
        ToolDef {
            name: "keyboard.type",
            summary: "Type any Unicode text exactly, optionally pressing Enter after.",
            risk: Risk::Moderate,
            params: Ty::Object(vec![
                Field::req(
                    "text",
                    Ty::Str {
                        max_chars: Some(10_000),
                        non_empty: false,
                    },
                    "the text",
                ),
                Field::def(
                    "submit",
                    Ty::Bool,
                    json!(false),
                    "press Enter after the text",
                ),
                Field::def(
                    "interval_ms",
                    Ty::int(0, 1000),
                    json!(0),
                    "pause between characters",
                ),
            ]),
            examples: vec![
                json!({"text": "hello, world"}),
                json!({"text": "query", "submit": true}),
            ],
            needs: Needs::Input,
        },
        ToolDef {
            name: "wait.pause",
            summary: "Wait, e.g. for an animation to finish.",
            risk: Risk::Benign,
            params: Ty::Object(vec![Field::req(
                "ms",
                Ty::int(0, 600_000),
                "milliseconds (truncated to runtime.max_wait_ms)",
            )]),
            examples: vec![json!({"ms": 500})],
            needs: Needs::Nothing,
        },
        ToolDef {
            name: "a11y.snapshot",
            summary: "Snapshot the accessibility tree (roles, names, states, canvas rects).",
            risk: Risk::Benign,
            params: Ty::Object(vec![
                Field::cfg(
                    "level",
                    Ty::one_of(&["skeleton", "standard", "full"]),
                    "a11y.default_level",
                    "detail level",
                ),
                Field::opt("depth", Ty::int(1, 40), "depth cap (overrides the level)"),
                Field::opt(
                    "max_nodes",
                    Ty::int(1, 10_000),
                    "node cap (overrides the level)",
                ),
                Field::cfg(
                    "include_rects",
                    Ty::Bool,
                    "a11y.include_rects",
                    "include canvas rects",
                ),
                Field::opt(
                    "window",
                    window_id(),
                    "scope to one window (an id of window.list)",
                ),
            ]),
            examples: vec![json!({}), json!({"level": "full", "window": 4194305})],
            needs: Needs::Accessibility,
        },
        ToolDef {
            name: "a11y.activate",
            summary: "Activate an element of the latest snapshot (invoke, toggle, select, or click).",
            risk: Risk::Moderate,
            params: Ty::Object(vec![
                Field::req(
                    "snapshot_id",
                    Ty::Str {
                        max_chars: Some(64),
                        non_empty: true,
                    },
                    "the latest snapshot_id",
                ),
                Field::req(
                    "node_id",
                    Ty::int(0, u32::MAX as i64),
                    "a node id of that snapshot",
                ),
                Field::def(
                    "method",
                    Ty::one_of(&["auto", "pattern", "pointer"]),
                    json!("auto"),
                    "pattern: semantic only, never a click",
                ),
            ]),
            examples: vec![json!({"snapshot_id": "snap-…", "node_id": 7})],
            needs: Needs::Accessibility,
        },
        ToolDef {
            name: "a11y.input",
            summary: "Set the text of an element of the latest snapshot.",
            risk: Risk::Moderate,
            params: Ty::Object(vec![
                Field::req(
                    "snapshot_id",
                    Ty::Str {
                        max_chars: Some(64),
                        non_empty: true,
                    },
                    "the latest snapshot_id",
                ),
                Field::req(
                    "node_id",
                    Ty::int(0, u32::MAX as i64),
                    "a node id of that snapshot",
                ),
                Field::req(
                    "text",
                    Ty::Str {
                        max_chars: Some(10_000),
                        non_empty: false,
                    },
                    "the text",
                ),
            ]),
            examples: vec![json!({"snapshot_id": "snap-…", "node_id": 4, "text": "Ada"})],
            needs: Needs::Accessibility,
        },
        ToolDef {
            name: "window.list",
            summary: "List top-level windows with app, pid, title, canvas rect and focus.",
            risk: Risk::Benign,
            params: Ty::Object(vec![]),
            examples: vec![json!({})],
            needs: Needs::Windows,
        },
        ToolDef {
            name: "window.focus",
            summary: "Raise and focus a window by its id.",
            risk: Risk::Moderate,
            params: Ty::Object(vec![Field::req("id", window_id(), "an id of window.list")]),
            examples: vec![json!({"id": 4194305})],
            needs: Needs::Windows,
        },
        ToolDef {
            name: "batch.execute",
            summary: "Run several tool calls in order; one confirmation covers the whole batch.",
            risk: Risk::Benign,
            params: Ty::Object(vec![
                Field::req(
                    "items",
                    Ty::list(batch_item, 1, Some(100)),
                    "the calls, in order",
                ),
                Field::def(
                    "continue_on_error",
                    Ty::Bool,
                    json!(false),
                    "keep going after a failed item",
                ),
                Field::cfg(
                    "gap_ms",
                    Ty::int(0, 60_000),
                    "runtime.batch_gap_ms",
                    "pause between items",
                ),
            ]),
            examples: vec![
                json!({"items": [{"tool": "pointer.click", "arguments": {"x": 100, "y": 100}}, {"tool": "keyboard.type", "arguments": {"text": "hi"}}]}),
            ],
            needs: Needs::Nothing,
        },
    ]
}

/// Every tool, in the order of the spec.
pub fn tools() -> &'static [ToolDef] {
    static TOOLS: OnceLock<Vec<ToolDef>> = OnceLock::new();
    TOOLS.get_or_init(build)
}

/// Looks a tool up by name.
pub fn find(name: &str) -> Option<&'static ToolDef> {
    tools().iter().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifteen_tools_and_no_confirmation_tool() {
        assert_eq!(tools().len(), 15);
        assert!(tools().iter().all(|t| !t.name.contains("confirm")));
    }
}
