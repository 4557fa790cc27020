//! `window.focus`: raise and focus a window by its id.

use cc_protocol::{Description, ErrorCode, Risk, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef, no_check};
use super::describe::{self, Judged};
use super::exec::{Exec, drv};
use super::fields::window_id;
use crate::spec::{Field, Ty};

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Args {
    id: u64,
}

pub(super) struct WindowFocus;

impl Tool for WindowFocus {
    type Args = Args;

    fn escalates(&self, _: &Args) -> bool {
        false
    }

    fn describe(&self, a: &Args, judged: &Judged<'_>) -> Description {
        let which = match &judged.landing.window {
            Some(w) => describe::window(w),
            None => format!("window {}", a.id),
        };
        Description {
            title: format!("Bring {which} to the front"),
            ..Default::default()
        }
    }

    fn target(&self, a: &Args) -> Target {
        Target::Window(a.id)
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        let id = a.id;
        let exists = drv(ex.driver.windows())?.iter().any(|w| w.id == id);
        if !exists {
            return Err(ToolError::with_data(
                ErrorCode::InvalidArguments,
                format!("no window with id {id}; call window.list"),
                json!({"issues": [{"path": "id", "message": "no such window"}]}),
            ));
        }
        drv(ex.driver.focus_window(id))?;
        Ok(json!({"id": id}))
    }
}

pub(crate) fn def() -> ToolDef {
    ToolDef {
        name: "window.focus",
        summary: "Raise and focus a window by its id.",
        risk: Risk::Moderate,
        needs: Needs::Windows,
        nature: Nature::Acts,
        text: TextEntry::No,
        moves_focus: true,
        lands: Lands::Window,
        outputs: &[("id", "the focused window")],
        params: Ty::Object(vec![Field::req("id", window_id(), "an id of window.list")]),
        examples: vec![json!({"id": 4194305})],
        check: no_check,
        runs: Runs::Alone(&WindowFocus),
    }
}
