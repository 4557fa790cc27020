//! `pointer.move`: the pointer to a canvas point or an element's centre, in
//! straight-line steps.

use cc_protocol::{Risk, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef};
use super::element;
use super::exec::{Exec, pointer};
use super::fields::{At, aim, frame, point_fields, relative_to};
use crate::spec::{Field, Ty};

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Args {
    #[serde(flatten)]
    at: At,
    steps: u64,
    frame: Option<u64>,
}

pub(super) struct PointerMove;

impl Tool for PointerMove {
    type Args = Args;

    fn escalates(&self, _: &Args) -> bool {
        false
    }

    fn target(&self, a: &Args) -> Target {
        a.at.target()
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        ex.frames.check(a.frame)?;
        let aimed = a.at.go(ex, a.steps)?;
        let mut out = json!({"position": pointer::position(ex)?});
        if let Some(element) = aimed {
            out["element"] = element;
        }
        Ok(out)
    }
}

pub(crate) fn def() -> ToolDef {
    let mut params = point_fields(false);
    params.extend([
        Field::def("steps", Ty::int(1, 200), json!(1), "intermediate moves"),
        frame(),
        element::field(),
        relative_to(),
    ]);
    ToolDef {
        name: "pointer.move",
        summary: "Move the pointer to a canvas point or to an element (by ref or selector).",
        risk: Risk::Moderate,
        needs: Needs::Input,
        nature: Nature::Acts,
        text: TextEntry::No,
        moves_focus: false,
        lands: Lands::Pointer,
        outputs: &[
            ("position", "the pointer's canvas position"),
            ("element", "with element: {ref, role, name} of the element moved to"),
        ],
        params: Ty::Object(params),
        examples: vec![
            json!({"x": 640, "y": 400}),
            json!({"x": 20, "y": 10, "window": 2}),
            json!({"element": {"selector": {"role": "button", "name": "OK"}}, "steps": 10}),
        ],
        check: aim,
        runs: Runs::Alone(&PointerMove),
    }
}
