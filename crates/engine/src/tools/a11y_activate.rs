//! `a11y.activate`: invoke, toggle or select an element (named by reference, selector
//! or node of the latest snapshot), or click it.

use cc_protocol::{Description, Risk, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef};
use super::describe::{Judged, acted_on, centre_mark};
use super::element::{self, ElementArg};
use super::element::{acted, center, click_at, resolve};
use super::exec::{Exec, drv};
use cc_desktop::{ElementInfo, SemanticAction};
use cc_protocol::{ErrorCode, Role};
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

    fn describe(&self, a: &Args, judged: &Judged<'_>) -> Description {
        Description {
            title: format!("Activate {}", acted_on(&self.target(a), judged)),
            marks: centre_mark(judged, "activate"),
            ..Default::default()
        }
    }

    fn target(&self, a: &Args) -> Target {
        a.element.target()
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        activate(&a, ex)
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
        outputs: element::OUTPUTS,
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

/// The semantic action that fits a role best, if the element offers it.
fn preferred(info: &ElementInfo) -> Option<SemanticAction> {
    let want = match info.role {
        Role::Checkbox | Role::Radiobutton => SemanticAction::Toggle,
        Role::Listitem | Role::Treeitem | Role::Tabitem | Role::Row | Role::Cell => {
            SemanticAction::Select
        }
        _ => SemanticAction::Invoke,
    };
    if info.actions.contains(&want) {
        Some(want)
    } else {
        info.actions.first().copied()
    }
}

fn action_name(a: SemanticAction) -> &'static str {
    match a {
        SemanticAction::Invoke => "invoke",
        SemanticAction::Toggle => "toggle",
        SemanticAction::Select => "select",
    }
}

fn activate(args: &Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
    let node = args.element.node_id;
    let (entry, info) = resolve(&args.element, ex)?;
    let mut out = acted(&entry, node);
    let label = node.map_or_else(|| entry.element_ref.clone(), |n| format!("node {n}"));
    let method = args.method;
    if method != Method::Pointer {
        if let Some(a) = preferred(&info) {
            ex.check_stop()?;
            drv(ex.driver.a11y_perform(&entry.handle, a))?;
            out.insert("method_used".into(), json!(action_name(a)));
            return Ok(Value::Object(out));
        }
        if method == Method::Pattern {
            return Err(ToolError::with_data(
                ErrorCode::DriverFailed,
                format!(
                    "{label} offers no semantic action (invoke, toggle, select); method \"pattern\" never falls back to a click"
                ),
                json!({"reason": "no_semantic_action"}),
            ));
        }
    }
    let pos = click_at(ex, center(&info, &label)?)?;
    out.insert("method_used".into(), json!("pointer"));
    out.insert("position".into(), pos);
    Ok(Value::Object(out))
}
