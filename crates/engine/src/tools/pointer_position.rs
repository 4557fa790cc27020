//! `pointer.position`: where the pointer is, on the canvas. An observation, so a model
//! that asks "where is the cursor?" (Anthropic's `cursor_position`) is answered
//! through the gate like everything else, without moving anything.

use cc_protocol::{Description, Risk, ToolError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef, no_check};
use super::describe::Judged;
use super::exec::{Exec, pointer};
use crate::spec::Ty;

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub(crate) struct Args {}

pub(super) struct PointerPosition;

impl Tool for PointerPosition {
    type Args = Args;

    fn escalates(&self, _: &Args) -> bool {
        false
    }

    fn describe(&self, _: &Args, _: &Judged<'_>) -> Description {
        Description {
            title: "Read where the pointer is".into(),
            ..Default::default()
        }
    }

    fn target(&self, _: &Args) -> Target {
        Target::Focused
    }

    fn run(&self, _: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        Ok(json!({"position": pointer::position(ex)?}))
    }
}

pub(crate) fn def() -> ToolDef {
    ToolDef {
        name: "pointer.position",
        summary: "Read the pointer's canvas position without moving it.",
        risk: Risk::Benign,
        needs: Needs::Input,
        nature: Nature::Observes,
        text: TextEntry::No,
        moves_focus: false,
        lands: Lands::Focused,
        outputs: &[("position", "the pointer's canvas position")],
        params: Ty::Object(vec![]),
        examples: vec![json!({})],
        check: no_check,
        runs: Runs::Alone(&PointerPosition),
    }
}
