//! Vendor key names → the key vocabulary of PROTOCOL §4. Models emit xdotool keysyms
//! (Anthropic: `Return`, `Page_Down`, `KP_0`, `ctrl+s`), upper-case names (OpenAI:
//! `CTRL`, `ENTER`, `ARROWUP`) and Playwright-style names (Gemini: `Control+A`,
//! `PageDown`). Each is mapped case-insensitively; a name that maps to nothing is
//! refused, never guessed.

use cc_protocol::Key;

use crate::tools::call::Built;
use crate::tools::{keyboard_combo, keyboard_press};

/// Names no alias of [`Key::parse`] covers, lower-case.
const ALIASES: &[(&str, &str)] = &[
    ("page_up", "pgup"),
    ("page_down", "pgdn"),
    ("prior", "pgup"),
    ("next", "pgdn"),
    ("control_l", "lctrl"),
    ("control_r", "rctrl"),
    ("ctrl_l", "lctrl"),
    ("ctrl_r", "rctrl"),
    ("alt_l", "lalt"),
    ("alt_r", "ralt"),
    ("shift_l", "lshift"),
    ("shift_r", "rshift"),
    ("super_l", "lwin"),
    ("super_r", "rwin"),
    ("meta_l", "lwin"),
    ("meta_r", "rwin"),
    ("option", "alt"),
    ("command", "cmd"),
    ("controlormeta", "ctrl"),
    ("print", "printscreen"),
    ("minus", "-"),
    ("equal", "="),
    ("comma", ","),
    ("period", "."),
    ("slash", "/"),
    ("semicolon", ";"),
    ("apostrophe", "'"),
    ("quoteright", "'"),
    ("grave", "`"),
    ("quoteleft", "`"),
    ("bracketleft", "["),
    ("bracketright", "]"),
    ("backslash", "\\"),
    ("kp_enter", "numpad_enter"),
    ("kp_add", "numpad_+"),
    ("kp_subtract", "numpad_-"),
    ("kp_multiply", "numpad_*"),
    ("kp_divide", "numpad_/"),
    ("kp_decimal", "numpad_."),
];

/// One vendor key name → our key.
pub(crate) fn map_key(name: &str) -> Result<Key, String> {
    let lower = name.trim().to_ascii_lowercase();
    let candidates = [
        ALIASES
            .iter()
            .find(|(from, _)| *from == lower)
            .map(|(_, to)| (*to).to_string()),
        lower
            .strip_prefix("kp_")
            .filter(|d| d.len() == 1 && d.as_bytes()[0].is_ascii_digit())
            .map(|d| format!("numpad{d}")),
        Some(lower.clone()),
        Some(lower.replace('_', "")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find_map(|c| Key::parse(&c).ok())
        .ok_or_else(|| format!("unknown key name {name:?}"))
}

/// A `+`-joined chord (`ctrl+shift+t`, `Control+A`) → our keys, in order.
pub(crate) fn map_chord(chord: &str) -> Result<Vec<Key>, String> {
    let parts = Key::split_combo(chord);
    if parts.is_empty() || parts.iter().any(|p| p.trim().is_empty()) {
        return Err(format!("{chord:?} is not a key or a +-joined chord"));
    }
    parts.iter().map(|p| map_key(p)).collect()
}

/// One pressed chord as our tool call: a single key is `keyboard.press`, several are
/// `keyboard.combo` (pressed in order, released in reverse).
pub(crate) fn chord_call(mut keys: Vec<Key>) -> Built {
    match (keys.pop(), keys.is_empty()) {
        (Some(key), true) => Built::new(keyboard_press::Args::new(key)),
        (last, _) => {
            keys.extend(last);
            Built::new(keyboard_combo::Args::new(keys, None))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_protocol::keys::Modifier;

    #[test]
    fn each_vendors_names_map_onto_ours() {
        for (vendor, ours) in [
            ("Return", "enter"),
            ("Page_Down", "pgdn"),
            ("KP_0", "numpad0"),
            ("BackSpace", "backspace"),
            ("super", "super"),
            ("CTRL", "ctrl"),
            ("ENTER", "enter"),
            ("ARROWUP", "up"),
            ("ESC", "esc"),
            ("Control", "ctrl"),
            ("PageDown", "pgdn"),
            ("F5", "f5"),
            ("A", "a"),
            ("minus", "-"),
            ("Caps_Lock", "capslock"),
        ] {
            assert_eq!(
                map_key(vendor).map(|k| k.name()),
                Ok(ours.to_string()),
                "{vendor}"
            );
        }
        assert!(map_key("Hyper_Q").is_err());
        assert!(map_key("").is_err());
    }

    #[test]
    fn chords_split_on_plus() {
        let names =
            |c: &str| -> Vec<String> { map_chord(c).unwrap().iter().map(Key::name).collect() };
        assert_eq!(names("ctrl+s"), ["ctrl", "s"]);
        assert_eq!(names("Control+Shift+T"), ["ctrl", "shift", "t"]);
        assert!(map_chord("ctrl+").is_err());
        assert!(map_chord("ctrl+nosuchkey").is_err());
        let a = chord_call(vec![Key::Char('a')]);
        assert_eq!(
            (a.def().name, a.args()),
            ("keyboard.press", &serde_json::json!({"key": "a"}))
        );
        let ca = chord_call(vec![Key::Modifier(Modifier::Ctrl), Key::Char('a')]);
        assert_eq!(ca.def().name, "keyboard.combo");
        assert_eq!(
            ca.args(),
            &serde_json::json!({"keys": ["ctrl", "a"], "hold_ms": 0})
        );
    }
}
