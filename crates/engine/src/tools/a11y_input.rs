//! `a11y.input`: set the text of an element (named by reference, selector or node of
//! the latest snapshot).

use cc_protocol::{Risk, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef};
use super::element::{self, ElementArg};
use super::exec::{Exec, a11y};
use super::fields::text;
use crate::spec::Ty;

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Args {
    #[serde(flatten)]
    pub element: ElementArg,
    pub text: String,
}

pub(super) struct A11yInput;

impl Tool for A11yInput {
    type Args = Args;

    fn escalates(&self, _: &Args) -> bool {
        false
    }

    fn target(&self, a: &Args) -> Target {
        a.element.target()
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        a11y::input(&a, ex)
    }
}

pub(crate) fn def() -> ToolDef {
    ToolDef {
        name: "a11y.input",
        summary: "Set the text of an element (by ref, selector, or node of the latest snapshot).",
        risk: Risk::Moderate,
        needs: Needs::Accessibility,
        nature: Nature::Acts,
        text: TextEntry::Element,
        moves_focus: true,
        lands: Lands::Element,
        outputs: a11y::OUTPUTS,
        params: Ty::Object({
            let mut f = element::fields();
            f.push(text("the text"));
            f
        }),
        examples: element::examples()
            .into_iter()
            .map(|mut e| {
                e["text"] = json!("Ada");
                e
            })
            .collect(),
        check: element::check,
        runs: Runs::Alone(&A11yInput),
    }
}
