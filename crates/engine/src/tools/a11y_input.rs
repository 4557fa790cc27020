//! `a11y.input`: set the text of an element (named by reference, selector or node of
//! the latest snapshot).

use cc_protocol::{Description, Risk, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef};
use super::describe::{Judged, acted_on, centre_mark};
use super::element::{self, ElementArg};
use super::element::{acted, center, click_at, resolve};
use super::exec::{Exec, drv};
use cc_desktop::Pace;
use cc_protocol::ErrorCode;
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

    fn describe(&self, a: &Args, judged: &Judged<'_>) -> Description {
        Description {
            title: format!("Enter text into {}", acted_on(&self.target(a), judged)),
            text: Some(judged.text(&a.text)),
            marks: centre_mark(judged, "input"),
            ..Default::default()
        }
    }

    fn target(&self, a: &Args) -> Target {
        a.element.target()
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        input(&a, ex)
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
        outputs: element::OUTPUTS,
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

fn input(args: &Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
    let node = args.element.node_id;
    let text = args.text.as_str();
    let (entry, info) = resolve(&args.element, ex)?;
    let mut out = acted(&entry, node);
    let label = node.map_or_else(|| entry.element_ref.clone(), |n| format!("node {n}"));
    if info.settable_text {
        ex.check_stop()?;
        drv(ex.driver.a11y_set_text(&entry.handle, text))?;
        // Read back (never for passwords, whose value is not readable by design).
        if !entry.password {
            let after = drv(ex.driver.a11y_element(&entry.handle))?.and_then(|i| i.value);
            if after.as_deref() != Some(text) {
                return Err(ToolError::new(
                    ErrorCode::DriverFailed,
                    format!("{label} did not take the text (read-back differs)"),
                ));
            }
        }
        out.insert("method_used".into(), json!("value"));
        return Ok(Value::Object(out));
    }
    click_at(ex, center(&info, &label)?)?;
    let mut chars = 0usize;
    drv(ex.driver.prepare_typing(text, Pace::BackToBack))?;
    for c in text.chars() {
        ex.check_stop()?;
        drv(ex.driver.type_char(c))?;
        chars += 1;
    }
    out.insert("method_used".into(), json!("pointer_type"));
    out.insert("chars".into(), json!(chars));
    Ok(Value::Object(out))
}
