//! `pointer.click`: one, two or three clicks at a canvas point or where the pointer is.

use cc_protocol::{Risk, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef};
use super::exec::{Exec, pointer};
use super::fields::{At, ButtonArg, button, frame, hold, point_fields, relative_to, x_with_y};
use crate::spec::{Field, Ty};

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    #[serde(flatten)]
    at: At,
    button: ButtonArg,
    times: u64,
    hold_ms: u64,
    frame: Option<u64>,
}

struct PointerClick;

impl Tool for PointerClick {
    type Args = Args;

    fn escalates(&self, _: &Args) -> bool {
        false
    }

    fn target(&self, a: &Args) -> Target {
        a.at.target()
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        ex.frames.check(a.frame)?;
        a.at.go(ex)?;
        let times = a.times.max(1);
        for _ in 0..times {
            pointer::press(ex, a.button.button(), a.hold_ms)?;
        }
        Ok(
            json!({"button": a.button.name(), "times": times, "position": pointer::position(ex)?}),
        )
    }
}

pub(crate) fn def() -> ToolDef {
    let mut params = point_fields(false);
    params.extend([
        button(),
        Field::def(
            "times",
            Ty::int(1, 3),
            json!(1),
            "1 click, 2 double, 3 triple",
        ),
        hold(),
        frame(),
        relative_to(),
    ]);
    ToolDef {
        name: "pointer.click",
        summary: "Click at a canvas point (or where the pointer is).",
        risk: Risk::Moderate,
        needs: Needs::Input,
        nature: Nature::Acts,
        text: TextEntry::No,
        moves_focus: true,
        lands: Lands::Pointer,
        outputs: &[
            ("button", "the button clicked"),
            ("times", "clicks"),
            ("position", "where, in canvas coordinates"),
        ],
        params: Ty::Object(params),
        examples: vec![
            json!({"x": 640, "y": 400}),
            json!({"x": 10, "y": 10, "button": "right"}),
        ],
        check: x_with_y,
        runs: Runs::Alone(&PointerClick),
    }
}
