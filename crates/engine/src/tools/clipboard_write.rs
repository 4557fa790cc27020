//! `clipboard.write`: puts text on the clipboard, where any application may paste it.

use cc_protocol::{Description, Risk, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef, no_check};
use super::describe::{Judged, count};
use super::exec::{Exec, drv};
use crate::spec::{Field, Ty};

/// The most text it puts there at once.
const MAX_CHARS: usize = 100_000;

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Args {
    text: String,
}

pub(super) struct ClipboardWrite;

impl Tool for ClipboardWrite {
    type Args = Args;

    fn escalates(&self, _: &Args) -> bool {
        false
    }

    fn describe(&self, a: &Args, judged: &Judged<'_>) -> Description {
        let text = judged.text(&a.text);
        Description {
            title: format!(
                "Put {} on the clipboard",
                count(a.text.chars().count(), "character", "characters")
            ),
            text: Some(text),
            ..Default::default()
        }
    }

    fn target(&self, _: &Args) -> Target {
        Target::Focused
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        ex.check_stop()?;
        drv(ex.driver.clipboard_write(&a.text))?;
        Ok(json!({"chars": a.text.chars().count()}))
    }
}

pub(crate) fn def() -> ToolDef {
    ToolDef {
        name: "clipboard.write",
        summary: "Put text on the clipboard for any application to paste (ctrl+v).",
        risk: Risk::Moderate,
        needs: Needs::Clipboard,
        nature: Nature::Acts,
        text: TextEntry::No,
        moves_focus: false,
        lands: Lands::Focused,
        outputs: &[("chars", "characters put on the clipboard")],
        params: Ty::Object(vec![Field::req(
            "text",
            Ty::Str {
                max_chars: Some(MAX_CHARS),
                non_empty: false,
            },
            "the text; it stays on the clipboard until another application copies something",
        )]),
        examples: vec![json!({"text": "https://example.org/report.pdf"})],
        check: no_check,
        runs: Runs::Alone(&ClipboardWrite),
    }
}
