//! `a11y.input`: set the text of an element of the latest snapshot.

use cc_protocol::{Risk, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef, no_check};
use super::exec::{Exec, a11y};
use super::fields::{node_id, snapshot_id, text};
use crate::spec::Ty;

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    pub snapshot_id: String,
    pub node_id: u32,
    pub text: String,
}

struct A11yInput;

impl Tool for A11yInput {
    type Args = Args;

    fn escalates(&self, _: &Args) -> bool {
        false
    }

    fn target(&self, a: &Args) -> Target {
        Target::Element {
            snapshot_id: a.snapshot_id.clone(),
            node_id: a.node_id,
        }
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        a11y::input(&a, ex)
    }
}

pub(crate) fn def() -> ToolDef {
    ToolDef {
        name: "a11y.input",
        summary: "Set the text of an element of the latest snapshot.",
        risk: Risk::Moderate,
        needs: Needs::Accessibility,
        nature: Nature::Acts,
        text: TextEntry::Element,
        moves_focus: true,
        lands: Lands::Element,
        outputs: a11y::OUTPUTS,
        params: Ty::Object(vec![snapshot_id(), node_id(), text("the text")]),
        examples: vec![json!({"snapshot_id": "snap-…", "node_id": 4, "text": "Ada"})],
        check: no_check,
        runs: Runs::Alone(&A11yInput),
    }
}
