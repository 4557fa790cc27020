//! `keyboard.press`: one key, pressed and released.

use cc_protocol::keys::ModifierFamily;
use cc_protocol::{Description, Key, Risk, ToolError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef, no_check};
use super::describe::{Judged, key_label};
use super::exec::{Exec, drv};
use super::fields::{key, key_name};
use crate::spec::{Field, Ty};

#[derive(Debug, Clone, Deserialize, Serialize)]
pub(crate) struct Args {
    #[serde(deserialize_with = "key", serialize_with = "key_name")]
    key: Key,
}

impl Args {
    /// One key, pressed and released.
    pub(crate) fn new(key: Key) -> Args {
        Args { key }
    }
}

pub(super) struct KeyboardPress;

impl Tool for KeyboardPress {
    type Args = Args;

    /// A lone win key opens the shell's launcher: as risky as a win combo.
    fn escalates(&self, a: &Args) -> bool {
        a.key.modifier_family() == Some(ModifierFamily::Win)
    }

    fn describe(&self, a: &Args, _: &Judged<'_>) -> Description {
        let name = a.key.name();
        Description {
            title: format!("Press {}", key_label(&name)),
            keys: vec![name],
            detail: Some("in the focused window".into()),
            ..Default::default()
        }
    }

    fn target(&self, _: &Args) -> Target {
        Target::Focused
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        ex.check_stop()?;
        drv(ex.driver.key(a.key, true))?;
        drv(ex.driver.key(a.key, false))?;
        Ok(json!({"key": a.key.name()}))
    }
}

pub(crate) fn def() -> ToolDef {
    ToolDef {
        name: "keyboard.press",
        summary: "Press and release one key.",
        risk: Risk::Moderate,
        needs: Needs::Input,
        nature: Nature::Acts,
        text: TextEntry::No,
        moves_focus: true,
        lands: Lands::Focused,
        outputs: &[("key", "the key pressed")],
        params: Ty::Object(vec![Field::req("key", Ty::KeyName, "a key name")]),
        examples: vec![json!({"key": "enter"})],
        check: no_check,
        runs: Runs::Alone(&KeyboardPress),
    }
}
