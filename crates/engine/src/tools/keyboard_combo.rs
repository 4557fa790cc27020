//! `keyboard.combo`: keys pressed in order and released in reverse (a shortcut).

use cc_protocol::keys::{ModifierFamily, Named};
use cc_protocol::{Description, Key, Risk, ToolError};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef, no_check};
use super::describe::{Judged, key_label};
use super::exec::{Exec, drv};
use super::fields::key_names;
use crate::spec::{Field, Ty};

/// Keys are released at once unless a call holds them.
const HOLD_MS: u64 = 0;

#[derive(Debug, Clone, Deserialize, Serialize)]
pub(crate) struct Args {
    #[serde(deserialize_with = "keys", serialize_with = "key_names")]
    keys: Vec<Key>,
    hold_ms: u64,
}

impl Args {
    /// `keys` pressed in order, each held `hold_ms` (`None`: released at once) before
    /// they are released in reverse.
    pub(crate) fn new(keys: Vec<Key>, hold_ms: Option<u64>) -> Args {
        Args {
            keys,
            hold_ms: hold_ms.unwrap_or(HOLD_MS),
        }
    }
}

fn keys<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Key>, D::Error> {
    Vec::<String>::deserialize(d)?
        .iter()
        .map(|n| Key::parse(n).map_err(serde::de::Error::custom))
        .collect()
}

/// True when a combo reaches the OS shell or the ctrl+alt family (task managers,
/// session switches): a win/super/meta key, or ctrl with alt.
pub(crate) fn reaches_shell(keys: &[Key]) -> bool {
    let f: Vec<ModifierFamily> = keys.iter().filter_map(|k| k.modifier_family()).collect();
    f.contains(&ModifierFamily::Win)
        || (f.contains(&ModifierFamily::Ctrl) && f.contains(&ModifierFamily::Alt))
}

/// True when a combo pastes the clipboard at the focus: ctrl+v (ctrl+shift+v in
/// terminals) or shift+insert.
pub(crate) fn pastes(keys: &[Key]) -> bool {
    let f: Vec<ModifierFamily> = keys.iter().filter_map(|k| k.modifier_family()).collect();
    (f.contains(&ModifierFamily::Ctrl) && keys.contains(&Key::Char('v')))
        || (f.contains(&ModifierFamily::Shift) && keys.contains(&Key::Named(Named::Insert)))
}

/// What well-known combinations usually do, so their risk is plain to the person asked
/// (modifiers by family: `lwin` reads as `win`).
const USUAL_EFFECTS: &[(&str, &str)] = &[
    ("win+r", "Opens the Run dialog, which can start any program or command."),
    ("win+x", "Opens the power-user menu (terminal, settings, shutdown)."),
    ("win+l", "Locks the screen."),
    ("win+d", "Shows the desktop, hiding every window."),
    ("win+e", "Opens the file manager."),
    ("win+i", "Opens the system settings."),
    ("win", "Opens the start menu or launcher."),
    ("ctrl+alt+delete", "Opens the security screen (lock, sign out, task manager)."),
    ("ctrl+alt+t", "Opens a terminal on many Linux desktops."),
    ("ctrl+shift+esc", "Opens the task manager."),
    ("alt+f4", "Closes the active window (may discard unsaved work)."),
    ("ctrl+alt+backspace", "May kill the graphical session on some Linux systems."),
    ("alt+f2", "Opens the run-command prompt on many Linux desktops."),
];

/// What a combination usually does, if it is a well-known one.
fn usual_effect(keys: &[Key]) -> Option<&'static str> {
    let combo: Vec<String> = keys
        .iter()
        .map(|k| match k.modifier_family() {
            Some(f) => f.names()[0].to_string(),
            None => k.name(),
        })
        .collect();
    let combo = combo.join("+");
    USUAL_EFFECTS
        .iter()
        .find(|(keys, _)| *keys == combo)
        .map(|(_, effect)| *effect)
}

pub(super) struct KeyboardCombo;

impl Tool for KeyboardCombo {
    type Args = Args;

    fn escalates(&self, a: &Args) -> bool {
        reaches_shell(&a.keys)
    }

    fn pastes(&self, a: &Args) -> bool {
        pastes(&a.keys)
    }

    fn describe(&self, a: &Args, _: &Judged<'_>) -> Description {
        let keys: Vec<String> = a.keys.iter().map(Key::name).collect();
        let labels: Vec<String> = keys.iter().map(|k| key_label(k)).collect();
        Description {
            title: format!("Press {}", labels.join(" + ")),
            effect: usual_effect(&a.keys).map(str::to_string),
            keys,
            detail: Some("in the focused window".into()),
            ..Default::default()
        }
    }

    fn target(&self, _: &Args) -> Target {
        Target::Focused
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        let mut down: Vec<Key> = Vec::with_capacity(a.keys.len());
        let mut failure = None;
        for k in &a.keys {
            if let Err(e) = ex.check_stop().and_then(|_| drv(ex.driver.key(*k, true))) {
                failure = Some(e);
                break;
            }
            down.push(*k);
        }
        // Held with every key down (a vendor's `hold_key`); the stop cuts it short.
        let hold = a.hold_ms.min(ex.config.runtime.max_wait_ms);
        if failure.is_none()
            && hold > 0
            && let Err(e) = ex.sleep_ms(hold)
        {
            failure = Some(e);
        }
        // Release in reverse whatever went down, even after a failure.
        for k in down.iter().rev() {
            if let Err(e) = drv(ex.driver.key(*k, false)) {
                failure.get_or_insert(e);
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(json!({"keys": a.keys.iter().map(Key::name).collect::<Vec<_>>()})),
        }
    }
}

pub(crate) fn def() -> ToolDef {
    ToolDef {
        name: "keyboard.combo",
        summary: "Press keys in order and release them in reverse (a shortcut).",
        risk: Risk::Moderate,
        needs: Needs::Input,
        nature: Nature::Acts,
        text: TextEntry::No,
        moves_focus: true,
        lands: Lands::Focused,
        outputs: &[("keys", "the keys pressed together")],
        params: Ty::Object(vec![
            Field::req(
                "keys",
                Ty::KeyCombo,
                "key names, as a list or \"ctrl+shift+esc\"",
            ),
            Field::def(
                "hold_ms",
                Ty::int(0, 300_000),
                json!(HOLD_MS),
                "how long every key stays down before the release (cut to runtime.max_wait_ms)",
            ),
        ]),
        examples: vec![
            json!({"keys": ["ctrl", "a"]}),
            json!({"keys": "ctrl+shift+esc"}),
            json!({"keys": ["shift"], "hold_ms": 500}),
        ],
        check: no_check,
        runs: Runs::Alone(&KeyboardCombo),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn combo(names: &[&str]) -> Vec<Key> {
        names.iter().map(|n| Key::parse(n).unwrap()).collect()
    }

    #[test]
    fn shell_combos_with_aliases() {
        for high in [
            &["win", "r"][..],
            &["super", "e"],
            &["meta", "x"],
            &["lctrl", "ralt", "delete"],
            &["ctrl", "alt", "t"],
            &["rwin"],
        ] {
            assert!(reaches_shell(&combo(high)), "{high:?}");
        }
        for moderate in [&["ctrl", "c"][..], &["alt", "tab"], &["ctrl", "shift", "esc"]] {
            assert!(!reaches_shell(&combo(moderate)), "{moderate:?}");
        }
    }
}
