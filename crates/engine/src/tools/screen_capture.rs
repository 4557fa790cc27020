//! `screen.capture`: the screen, a region or one display, as an image on the canvas.

use cc_protocol::{Risk, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::def::{Checked, Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef};
use super::exec::{Exec, capture};
use crate::encode::Format;
use crate::spec::{Field, Ty};

/// A canvas rectangle.
#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct Region {
    pub x: i64,
    pub y: i64,
    pub width: i64,
    pub height: i64,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    pub region: Option<Region>,
    pub display: Option<String>,
    #[serde(deserialize_with = "format")]
    pub format: Format,
    pub quality: u8,
    pub scale: f64,
    pub grayscale: bool,
}

fn format<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Format, D::Error> {
    let name = String::deserialize(d)?;
    Format::parse(&name).ok_or_else(|| serde::de::Error::custom(format!("no format {name:?}")))
}

struct ScreenCapture;

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

fn region_or_display(c: &mut Checked<'_>) {
    if c.given("region") && c.given("display") {
        c.issue("display", "give region or display, not both");
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
        summary: "Capture the screen (or a region or one display) as an image on the canvas.",
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
            ("canvas", "the canvas the image covers"),
            ("region", "the captured canvas region"),
            ("image_scale", "image pixels per canvas unit"),
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
        check: region_or_display,
        runs: Runs::Alone(&ScreenCapture),
    }
}
