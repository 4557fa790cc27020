//! `pointer.move`: the pointer to a canvas point or an element's centre, in
//! straight-line steps.

use cc_protocol::{Description, Risk, ToolError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef};
use super::describe::{Judged, places, relative};
use super::element;
use super::exec::{Exec, pointer};
use super::fields::{At, aim, frame, point_fields, relative_to};
use crate::spec::{Field, Ty};

/// Moves in one step unless a call asks for more.
const STEPS: u64 = 1;

#[derive(Debug, Clone, Deserialize, Serialize)]
pub(crate) struct Args {
    #[serde(flatten)]
    at: At,
    steps: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    frame: Option<u64>,
}

impl Args {
    /// The pointer to a canvas point in one step: a move as a vocabulary asks for one.
    pub(crate) fn to(x: i64, y: i64) -> Args {
        Args {
            at: At::canvas(Some((x, y))),
            steps: STEPS,
            frame: None,
        }
    }
}

pub(super) struct PointerMove;

impl Tool for PointerMove {
    type Args = Args;

    fn escalates(&self, _: &Args) -> bool {
        false
    }

    fn describe(&self, a: &Args, judged: &Judged<'_>) -> Description {
        let target = self.target(a);
        let place = places(&target, judged).swap_remove(0);
        Description {
            title: format!("Move the pointer{}", place.after("to", "to")),
            detail: relative(&target),
            marks: place.marked("move").into_iter().collect(),
            ..Default::default()
        }
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
        Field::def("steps", Ty::int(1, 200), json!(STEPS), "intermediate moves"),
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
