//! `keyboard.type`: any Unicode text, one pre-emptible character at a time.

use cc_desktop::Pace;
use cc_protocol::keys::Named;
use cc_protocol::{Description, Key, Risk, ToolError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef, no_check};
use super::describe::{Judged, quoted};
use super::exec::{Exec, drv};
use super::fields::text;
use crate::call::Progress;
use crate::spec::{Field, Ty};

/// Characters follow each other at once unless a call spaces them.
const INTERVAL_MS: u64 = 0;

#[derive(Debug, Clone, Deserialize, Serialize)]
pub(crate) struct Args {
    text: String,
    submit: bool,
    interval_ms: u64,
}

impl Args {
    /// `text` typed, then Enter when `submit`.
    pub(crate) fn new(text: impl Into<String>, submit: bool) -> Args {
        Args {
            text: text.into(),
            submit,
            interval_ms: INTERVAL_MS,
        }
    }
}

pub(super) struct KeyboardType;

impl Tool for KeyboardType {
    type Args = Args;

    fn escalates(&self, _: &Args) -> bool {
        false
    }

    fn describe(&self, a: &Args, judged: &Judged<'_>) -> Description {
        let text = judged.text(&a.text);
        let then = if a.submit { ", then press Enter" } else { "" };
        Description {
            title: format!("Type {}{then}", quoted(&text)),
            text: Some(text),
            detail: Some("into the focused window".into()),
            ..Default::default()
        }
    }

    fn target(&self, _: &Args) -> Target {
        Target::Focused
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        let mut chars = 0usize;
        let pace = if a.interval_ms > 0 {
            Pace::Spaced
        } else {
            Pace::BackToBack
        };
        drv(ex.driver.prepare_typing(&a.text, pace))?;
        let total = a.text.chars().count() as u64;
        for c in a.text.chars() {
            ex.check_stop()?;
            drv(ex.driver.type_char(c))?;
            chars += 1;
            ex.progress(Progress::Typed {
                chars: chars as u64,
                total,
            });
            if a.interval_ms > 0 {
                ex.sleep_ms(a.interval_ms)?;
            }
        }
        if a.submit {
            ex.check_stop()?;
            let enter = Key::Named(Named::Enter);
            drv(ex.driver.key(enter, true))?;
            drv(ex.driver.key(enter, false))?;
        }
        Ok(json!({"chars": chars, "submit": a.submit}))
    }
}

pub(crate) fn def() -> ToolDef {
    ToolDef {
        name: "keyboard.type",
        summary: "Type any Unicode text exactly, optionally pressing Enter after.",
        risk: Risk::Moderate,
        needs: Needs::Input,
        nature: Nature::Acts,
        text: TextEntry::Focused,
        moves_focus: true,
        lands: Lands::Focused,
        outputs: &[
            ("chars", "characters typed"),
            ("submit", "Enter pressed after"),
        ],
        params: Ty::Object(vec![
            text("the text"),
            Field::def(
                "submit",
                Ty::Bool,
                json!(false),
                "press Enter after the text",
            ),
            Field::def(
                "interval_ms",
                Ty::int(0, 1000),
                json!(INTERVAL_MS),
                "pause between characters",
            ),
        ]),
        examples: vec![
            json!({"text": "hello, world"}),
            json!({"text": "query", "submit": true}),
        ],
        check: no_check,
        runs: Runs::Alone(&KeyboardType),
    }
}
