//! `window.list`: the top-level windows with app, pid, title, canvas rect and focus.

use cc_protocol::{Description, Rect, Risk, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef, no_check};
use super::describe::Judged;
use super::exec::{Exec, drv};
use crate::spec::Ty;

/// No arguments.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Args {}

pub(super) struct WindowList;

impl Tool for WindowList {
    type Args = Args;

    fn escalates(&self, _: &Args) -> bool {
        false
    }

    fn describe(&self, _: &Args, _: &Judged<'_>) -> Description {
        Description {
            title: "List the windows".into(),
            ..Default::default()
        }
    }

    fn target(&self, _: &Args) -> Target {
        Target::Focused
    }

    fn run(&self, _: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        let windows = drv(ex.driver.windows())?;
        let items: Vec<Value> = windows
            .iter()
            .map(|w| {
                let [l, t, r, b] = ex.canvas.rect_from_physical(&w.rect);
                let rect = Rect {
                    x: l,
                    y: t,
                    width: r - l,
                    height: b - t,
                };
                let display = ex
                    .canvas
                    .display_at(l + (r - l) / 2, t + (b - t) / 2)
                    .map(|d| d.id.clone());
                json!({
                    "id": w.id,
                    "app_id": w.app_id,
                    "pid": w.pid,
                    "title": w.title,
                    "rect": rect,
                    "display": display,
                    "focused": w.focused,
                })
            })
            .collect();
        Ok(json!({"windows": items}))
    }
}

pub(crate) fn def() -> ToolDef {
    ToolDef {
        name: "window.list",
        summary: "List top-level windows with app, pid, title, canvas rect and focus.",
        risk: Risk::Benign,
        needs: Needs::Windows,
        nature: Nature::Observes,
        text: TextEntry::No,
        moves_focus: false,
        lands: Lands::Focused,
        outputs: &[("windows", "top-level windows")],
        params: Ty::Object(vec![]),
        examples: vec![json!({})],
        check: no_check,
        runs: Runs::Alone(&WindowList),
    }
}
