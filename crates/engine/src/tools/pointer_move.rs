//! `pointer.move`: the pointer to a canvas point, in straight-line steps.

use cc_protocol::{Risk, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef, no_check};
use super::exec::{Exec, pointer};
use super::fields::{frame, landing, point_fields, relative_to};
use crate::spec::{Field, Ty};

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    x: f64,
    y: f64,
    steps: u64,
    frame: Option<u64>,
    window: Option<u64>,
}

struct PointerMove;

impl Tool for PointerMove {
    type Args = Args;

    fn escalates(&self, _: &Args) -> bool {
        false
    }

    fn target(&self, a: &Args) -> Target {
        landing(a.window, vec![(a.x, a.y)])
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        ex.frames.check(a.frame)?;
        let (ox, oy) = pointer::origin(ex, a.window)?;
        let target = ex.canvas.to_physical(ox + a.x, oy + a.y);
        pointer::glide(ex, target, a.steps)?;
        Ok(json!({"position": pointer::position(ex)?}))
    }
}

pub(crate) fn def() -> ToolDef {
    let mut params = point_fields(true);
    params.extend([
        Field::def("steps", Ty::int(1, 200), json!(1), "intermediate moves"),
        frame(),
        relative_to(),
    ]);
    ToolDef {
        name: "pointer.move",
        summary: "Move the pointer to a canvas point.",
        risk: Risk::Moderate,
        needs: Needs::Input,
        nature: Nature::Acts,
        text: TextEntry::No,
        moves_focus: false,
        lands: Lands::Pointer,
        outputs: &[("position", "the pointer's canvas position")],
        params: Ty::Object(params),
        examples: vec![
            json!({"x": 640, "y": 400}),
            json!({"x": 20, "y": 10, "window": 2}),
        ],
        check: no_check,
        runs: Runs::Alone(&PointerMove),
    }
}
