//! `a11y.activate`: invoke, toggle or select an element (named by reference, selector
//! or node of the latest snapshot), or click it.

use cc_protocol::{Risk, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef};
use super::element::{self, ElementArg};
use super::exec::{Exec, a11y};
use crate::spec::{Field, Ty};

/// How the element may be activated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Method {
    /// A semantic action, else a click.
    Auto,
    /// A semantic action only, never a click.
    Pattern,
    /// A click at the element's centre.
    Pointer,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Args {
    #[serde(flatten)]
    pub element: ElementArg,
    pub method: Method,
}

pub(super) struct A11yActivate;

impl Tool for A11yActivate {
    type Args = Args;

    fn escalates(&self, _: &Args) -> bool {
        false
    }

    fn target(&self, a: &Args) -> Target {
        a.element.target()
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        a11y::activate(&a, ex)
    }
}

pub(crate) fn def() -> ToolDef {
    ToolDef {
        name: "a11y.activate",
        summary: "Activate an element (by ref, selector, or node of the latest snapshot): invoke, toggle, select, or click.",
        risk: Risk::Moderate,
        needs: Needs::Accessibility,
        nature: Nature::Acts,
        text: TextEntry::No,
        moves_focus: true,
        lands: Lands::Element,
        outputs: a11y::OUTPUTS,
        params: Ty::Object({
            let mut f = element::fields();
            f.push(Field::def(
                "method",
                Ty::one_of(&["auto", "pattern", "pointer"]),
                json!("auto"),
                "pattern: semantic only, never a click",
            ));
            f
        }),
        examples: element::examples(),
        check: element::check,
        runs: Runs::Alone(&A11yActivate),
    }
}
