//! `clipboard.read`: the clipboard's text. It changes nothing, but what it reads may be
//! a secret someone copied, so it is not a benign observation and only the caller ever
//! sees the text (events, logs, the console and receipts show its length).

use cc_protocol::{Description, ErrorCode, Risk, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef, no_check};
use super::describe::Judged;
use super::exec::{Exec, drv};
use crate::spec::Ty;

/// No arguments.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Args {}

pub(super) struct ClipboardRead;

impl Tool for ClipboardRead {
    type Args = Args;

    fn escalates(&self, _: &Args) -> bool {
        false
    }

    fn describe(&self, _: &Args, _: &Judged<'_>) -> Description {
        Description {
            title: "Read the clipboard (its text is never shown here)".into(),
            ..Default::default()
        }
    }

    fn target(&self, _: &Args) -> Target {
        Target::Focused
    }

    fn run(&self, _: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        let c = drv(ex.driver.clipboard_read())?;
        if c.secret {
            // The desktop says its owner copied a password: it was not even read.
            return Err(ToolError::with_data(
                ErrorCode::PolicyDenied,
                "the clipboard holds a password (its owner marked it secret); it is not read",
                json!({"rule": "secret_clipboard", "owner": c.owner}),
            ));
        }
        let chars = c.text.as_ref().map_or(0, |t| t.chars().count());
        Ok(json!({"text": c.text, "chars": chars, "owner": c.owner}))
    }
}

pub(crate) fn def() -> ToolDef {
    ToolDef {
        name: "clipboard.read",
        summary: "Read the clipboard's text (may reveal secrets: events and logs show only its length).",
        risk: Risk::Moderate,
        needs: Needs::Clipboard,
        nature: Nature::Reveals,
        text: TextEntry::No,
        moves_focus: false,
        lands: Lands::Focused,
        outputs: &[
            ("text", "the clipboard's text; null when it is empty or holds no text"),
            ("chars", "its length in characters"),
            (
                "owner",
                "who put it there (an application id, or the owner's window); null when nobody owns it",
            ),
        ],
        params: Ty::Object(vec![]),
        examples: vec![json!({})],
        check: no_check,
        runs: Runs::Alone(&ClipboardRead),
    }
}
