//! `screen.capture`: the screen, a region, one display or one window, as an image sized
//! for a model (or the canvas, or the display's own pixels), with the mapping back to
//! the canvas; an unchanged screen answers without an image.

use cc_protocol::{Risk, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::def::{Checked, Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef};
use super::exec::{Exec, capture};
use super::fields::window_id;
use crate::encode::{Fit, Format};
use crate::spec::{Field, Ty};

/// A canvas rectangle.
#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct Region {
    pub x: i64,
    pub y: i64,
    pub width: i64,
    pub height: i64,
}

/// What the image's pixels are measured against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Size {
    /// Canvas units × `scale`, then within `max_edge` and `max_pixels`.
    Model,
    /// Canvas units × `scale` (within `max_edge` and `max_pixels` when given).
    Canvas,
    /// The display's own pixels × `scale` (zoom; within `max_edge` and `max_pixels`
    /// when given).
    Native,
}

impl Size {
    pub fn name(self) -> &'static str {
        match self {
            Size::Model => "model",
            Size::Canvas => "canvas",
            Size::Native => "native",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Args {
    pub region: Option<Region>,
    pub display: Option<String>,
    pub window: Option<u64>,
    #[serde(deserialize_with = "format")]
    pub format: Format,
    pub quality: u8,
    pub size: Size,
    pub scale: f64,
    pub max_edge: Option<u32>,
    pub max_pixels: Option<u64>,
    pub grayscale: bool,
    pub if_changed: bool,
    pub changes: bool,
}

impl Args {
    /// The limits the image must fit in: those given, else the model's for `size:
    /// model` and none for the full sizes (so a zoom can be native yet bounded).
    pub fn fit(&self) -> Fit {
        let default = match self.size {
            Size::Model => Fit::MODEL,
            Size::Canvas | Size::Native => Fit::NONE,
        };
        Fit {
            max_edge: self.max_edge.unwrap_or(default.max_edge),
            max_pixels: self.max_pixels.unwrap_or(default.max_pixels),
        }
    }
}

fn format<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Format, D::Error> {
    let name = String::deserialize(d)?;
    Format::parse(&name).ok_or_else(|| serde::de::Error::custom(format!("no format {name:?}")))
}

pub(super) struct ScreenCapture;

impl Tool for ScreenCapture {
    type Args = Args;

    fn escalates(&self, _: &Args) -> bool {
        false
    }

    fn target(&self, _: &Args) -> Target {
        Target::Focused
    }

    fn run(&self, args: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        capture::capture(&args, ex)
    }
}

fn one_area(c: &mut Checked<'_>) {
    let given: Vec<&str> = ["region", "display", "window"]
        .into_iter()
        .filter(|k| c.given(k))
        .collect();
    if given.len() > 1 {
        c.issue(
            given[1],
            "give at most one of region, display and window",
        );
    }
}

pub(crate) fn def() -> ToolDef {
    let region = Ty::Object(vec![
        Field::req("x", Ty::int(-1_000_000, 1_000_000), "canvas left"),
        Field::req("y", Ty::int(-1_000_000, 1_000_000), "canvas top"),
        Field::req("width", Ty::int(1, 1_000_000), "canvas width"),
        Field::req("height", Ty::int(1, 1_000_000), "canvas height"),
    ]);
    ToolDef {
        name: "screen.capture",
        summary: "Capture the screen (or a region, one display or one window) as an image sized for a model, with its mapping to the canvas.",
        risk: Risk::Benign,
        needs: Needs::Capture,
        nature: Nature::Observes,
        text: TextEntry::No,
        moves_focus: false,
        lands: Lands::Focused,
        outputs: &[
            (
                "format",
                "png, jpeg or webp (the pixels are the image content block)",
            ),
            ("width", "image width in pixels"),
            ("height", "image height in pixels"),
            ("bytes", "encoded size"),
            (
                "frame",
                "frame number to cite in actions computed from this capture",
            ),
            (
                "canvas",
                "{display_width_px, display_height_px, physical, scale}: the canvas the image covers and its factor to physical pixels",
            ),
            ("region", "the captured canvas region"),
            ("image_scale", "image pixels per canvas unit"),
            (
                "to_canvas",
                "{offset_x, offset_y, scale_x, scale_y}: image pixel (u, v) is canvas point (offset_x + u × scale_x, offset_y + v × scale_y)",
            ),
            ("size", "model, canvas or native: what the image size was measured against"),
            ("palette", "colours of a palette PNG"),
            ("lossy", "whether pixels were changed beyond resizing (a quantized palette or JPEG)"),
            ("window", "the captured window's id"),
            (
                "unchanged",
                "true: the pixels equal those of `frame`, which the agent already has; no image is sent",
            ),
            (
                "changes",
                "{since_frame, boxes}: canvas rectangles that changed since the last capture received (with changes: true)",
            ),
        ],
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
            Field::opt(
                "window",
                window_id(),
                "a window id of window.list: its rectangle, not raised (what covers it shows)",
            ),
            Field::cfg(
                "format",
                Ty::one_of(&["auto", "png", "jpeg", "webp"]),
                "capture.default_format",
                "image format; auto: a palette PNG for screen content, JPEG for photographic content",
            ),
            Field::cfg(
                "quality",
                Ty::int(1, 100),
                "capture.default_quality",
                "JPEG quality",
            ),
            Field::def(
                "size",
                Ty::one_of(&["model", "canvas", "native"]),
                json!("model"),
                "model: canvas size within max_edge and max_pixels; canvas: canvas size; native: the display's own pixels (zoom); any of them within max_edge and max_pixels when given",
            ),
            Field::def(
                "scale",
                Ty::num(0.1, 1.0),
                json!(1.0),
                "image size relative to the size chosen by `size`",
            ),
            Field::opt(
                "max_edge",
                Ty::int(16, 16384),
                "longest image side in pixels, aspect kept; when not given: 1568 for size model, no limit for canvas and native",
            ),
            Field::opt(
                "max_pixels",
                Ty::int(1024, 1 << 40),
                "most image pixels, aspect kept; when not given: 1 150 000 for size model, no limit for canvas and native",
            ),
            Field::cfg(
                "grayscale",
                Ty::Bool,
                "capture.grayscale",
                "grayscale image",
            ),
            Field::def(
                "if_changed",
                Ty::Bool,
                json!(false),
                "answer `unchanged` without an image when the pixels equal the last capture the agent received with the same arguments",
            ),
            Field::def(
                "changes",
                Ty::Bool,
                json!(false),
                "add the canvas boxes that changed since the last capture received of the same area",
            ),
        ]),
        examples: vec![
            json!({}),
            json!({"region": {"x": 0, "y": 0, "width": 800, "height": 600}, "format": "jpeg", "quality": 70}),
            json!({"region": {"x": 100, "y": 100, "width": 400, "height": 300}, "size": "native"}),
            json!({"size": "native", "max_edge": 1568, "max_pixels": 1_150_000}),
            json!({"window": 2, "changes": true}),
            json!({"if_changed": true}),
            json!({"size": "canvas", "format": "png"}),
        ],
        check: one_area,
        runs: Runs::Alone(&ScreenCapture),
    }
}
