//! Vendor key names → the key vocabulary of PROTOCOL §4. Models emit xdotool keysyms
//! (Anthropic: `Return`, `Page_Down`, `KP_0`, `ctrl+s`), upper-case names (OpenAI:
//! `CTRL`, `ENTER`, `ARROWUP`) and Playwright-style names (Gemini: `Control+A`,
//! `PageDown`). Each is mapped case-insensitively; a name that maps to nothing is
//! refused, never guessed.

use cc_protocol::Key;

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

/// One vendor key name → our canonical name.
pub(crate) fn map_key(name: &str) -> Result<String, String> {
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
        .find_map(|c| Key::parse(&c).ok().map(|k| k.name()))
        .ok_or_else(|| format!("unknown key name {name:?}"))
}

/// A `+`-joined chord (`ctrl+shift+t`, `Control+A`) → our names, in order.
pub(crate) fn map_chord(chord: &str) -> Result<Vec<String>, String> {
    let parts = Key::split_combo(chord);
    if parts.is_empty() || parts.iter().any(|p| p.trim().is_empty()) {
        return Err(format!("{chord:?} is not a key or a +-joined chord"));
    }
    parts.iter().map(|p| map_key(p)).collect()
}

/// One pressed chord as our tool call: a single key is `keyboard.press`, several are
/// `keyboard.combo` (pressed in order, released in reverse).
pub(crate) fn chord_call(keys: Vec<String>) -> (&'static str, serde_json::Value) {
    if keys.len() == 1 {
        ("keyboard.press", serde_json::json!({"key": keys[0]}))
    } else {
        ("keyboard.combo", serde_json::json!({"keys": keys}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert_eq!(map_key(vendor).as_deref(), Ok(ours), "{vendor}");
        }
        assert!(map_key("Hyper_Q").is_err());
        assert!(map_key("").is_err());
    }

    #[test]
    fn chords_split_on_plus() {
        assert_eq!(map_chord("ctrl+s").unwrap(), ["ctrl", "s"]);
        assert_eq!(
            map_chord("Control+Shift+T").unwrap(),
            ["ctrl", "shift", "t"]
        );
        assert!(map_chord("ctrl+").is_err());
        assert!(map_chord("ctrl+nosuchkey").is_err());
        assert_eq!(chord_call(vec!["a".into()]).0, "keyboard.press");
        assert_eq!(
            chord_call(vec!["ctrl".into(), "a".into()]).0,
            "keyboard.combo"
        );
    }
}
