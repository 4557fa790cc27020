//! Key names (PROTOCOL §4): one case-insensitive vocabulary for every platform.
//!
//! Parsing is the only way to get a [`Key`], so a driver never sees a name it has to
//! guess at.

use std::fmt;

/// Modifier keys. The unsided names (`Ctrl`, `Alt`, `Shift`, `Win`) press the left key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Modifier {
    /// Control (presses the left one).
    Ctrl,
    /// Left control.
    LCtrl,
    /// Right control.
    RCtrl,
    /// Alt (presses the left one).
    Alt,
    /// Left alt.
    LAlt,
    /// Right alt (AltGr on many layouts).
    RAlt,
    /// Shift (presses the left one).
    Shift,
    /// Left shift.
    LShift,
    /// Right shift.
    RShift,
    /// The Windows/super key (presses the left one).
    Win,
    /// Left Windows/super key.
    LWin,
    /// Right Windows/super key.
    RWin,
    /// Another name of `Win`.
    Super,
    /// Another name of `Win`.
    Meta,
    /// Another name of `Win` (macOS habits).
    Cmd,
}

/// The families a modifier belongs to, for risk escalation and rule matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModifierFamily {
    /// Any control key.
    Ctrl,
    /// Any alt key.
    Alt,
    /// Any shift key.
    Shift,
    /// win, lwin, rwin, super, meta, cmd: the keys that reach the OS shell.
    Win,
}

/// Named non-character keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Named {
    /// Arrow up.
    Up,
    /// Arrow down.
    Down,
    /// Arrow left.
    Left,
    /// Arrow right.
    Right,
    /// Home.
    Home,
    /// End.
    End,
    /// Page up.
    PgUp,
    /// Page down.
    PgDn,
    /// Insert.
    Insert,
    /// Delete (forward).
    Delete,
    /// Enter/Return.
    Enter,
    /// Escape.
    Esc,
    /// Tab.
    Tab,
    /// The space bar.
    Space,
    /// Backspace.
    Backspace,
    /// The context-menu key.
    Apps,
    /// Caps lock.
    CapsLock,
    /// Num lock.
    NumLock,
    /// Scroll lock.
    ScrollLock,
    /// Print screen.
    PrintScreen,
    /// Pause/break.
    Pause,
}

/// Keys of the numeric keypad.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Numpad {
    /// A digit key, 0–9.
    Digit(u8),
    /// The keypad's enter.
    Enter,
    /// `*`.
    Multiply,
    /// `+`.
    Add,
    /// `-`.
    Subtract,
    /// `/`.
    Divide,
    /// The decimal separator.
    Decimal,
}

/// One physical key, by its canonical name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    /// A letter (lowercase), a digit or one of ``; , - . / ` [ \ ] ' =``.
    Char(char),
    /// F1–F24.
    Function(u8),
    /// A named non-character key.
    Named(Named),
    /// A modifier.
    Modifier(Modifier),
    /// A keypad key (distinct from the main block's: applications tell them apart).
    Numpad(Numpad),
}

/// A name that is not a key of the vocabulary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyParseError {
    /// The name as given, for the error message.
    pub name: String,
}

impl fmt::Display for KeyParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown key name {:?}", self.name)
    }
}

impl std::error::Error for KeyParseError {}

const PUNCTUATION: &str = ";,-./`[\\]'=";

const NAMED: &[(&str, Named)] = &[
    ("up", Named::Up),
    ("down", Named::Down),
    ("left", Named::Left),
    ("right", Named::Right),
    ("home", Named::Home),
    ("end", Named::End),
    ("pgup", Named::PgUp),
    ("pgdn", Named::PgDn),
    ("insert", Named::Insert),
    ("delete", Named::Delete),
    ("enter", Named::Enter),
    ("esc", Named::Esc),
    ("tab", Named::Tab),
    ("space", Named::Space),
    ("backspace", Named::Backspace),
    ("apps", Named::Apps),
    ("capslock", Named::CapsLock),
    ("numlock", Named::NumLock),
    ("scrolllock", Named::ScrollLock),
    ("printscreen", Named::PrintScreen),
    ("pause", Named::Pause),
];

/// Common spellings accepted for convenience; the canonical name is what is reported.
const ALIASES: &[(&str, &str)] = &[
    ("escape", "esc"),
    ("return", "enter"),
    ("pageup", "pgup"),
    ("pagedown", "pgdn"),
    ("del", "delete"),
    ("ins", "insert"),
    ("control", "ctrl"),
    ("lcontrol", "lctrl"),
    ("rcontrol", "rctrl"),
    ("arrowup", "up"),
    ("arrowdown", "down"),
    ("arrowleft", "left"),
    ("arrowright", "right"),
    ("menu", "apps"),
    ("prtsc", "printscreen"),
    ("windows", "win"),
];

const MODIFIERS: &[(&str, Modifier)] = &[
    ("ctrl", Modifier::Ctrl),
    ("lctrl", Modifier::LCtrl),
    ("rctrl", Modifier::RCtrl),
    ("alt", Modifier::Alt),
    ("lalt", Modifier::LAlt),
    ("ralt", Modifier::RAlt),
    ("shift", Modifier::Shift),
    ("lshift", Modifier::LShift),
    ("rshift", Modifier::RShift),
    ("win", Modifier::Win),
    ("lwin", Modifier::LWin),
    ("rwin", Modifier::RWin),
    ("super", Modifier::Super),
    ("meta", Modifier::Meta),
    ("cmd", Modifier::Cmd),
];

impl Modifier {
    /// The family, for escalation (`win`+anything, `ctrl`+`alt`) and rule matching.
    pub fn family(self) -> ModifierFamily {
        match self {
            Modifier::Ctrl | Modifier::LCtrl | Modifier::RCtrl => ModifierFamily::Ctrl,
            Modifier::Alt | Modifier::LAlt | Modifier::RAlt => ModifierFamily::Alt,
            Modifier::Shift | Modifier::LShift | Modifier::RShift => ModifierFamily::Shift,
            Modifier::Win
            | Modifier::LWin
            | Modifier::RWin
            | Modifier::Super
            | Modifier::Meta
            | Modifier::Cmd => ModifierFamily::Win,
        }
    }
}

impl ModifierFamily {
    /// Every canonical key name of the family (`win` → `win lwin rwin super meta cmd`).
    pub fn names(self) -> &'static [&'static str] {
        match self {
            ModifierFamily::Ctrl => &["ctrl", "lctrl", "rctrl"],
            ModifierFamily::Alt => &["alt", "lalt", "ralt"],
            ModifierFamily::Shift => &["shift", "lshift", "rshift"],
            ModifierFamily::Win => &["win", "lwin", "rwin", "super", "meta", "cmd"],
        }
    }
}

impl Key {
    /// Parses a key name, case-insensitively, aliases included.
    pub fn parse(name: &str) -> Result<Key, KeyParseError> {
        let err = || KeyParseError {
            name: name.to_string(),
        };
        let lower = name.trim().to_lowercase();
        let canonical = ALIASES
            .iter()
            .find(|(a, _)| *a == lower)
            .map(|(_, c)| *c)
            .unwrap_or(lower.as_str());
        let mut chars = canonical.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || PUNCTUATION.contains(c) {
                return Ok(Key::Char(c));
            }
            return Err(err());
        }
        if let Some((_, n)) = NAMED.iter().find(|(s, _)| *s == canonical) {
            return Ok(Key::Named(*n));
        }
        if let Some((_, m)) = MODIFIERS.iter().find(|(s, _)| *s == canonical) {
            return Ok(Key::Modifier(*m));
        }
        if let Some(rest) = canonical.strip_prefix('f') {
            if let Ok(n) = rest.parse::<u8>()
                && (1..=24).contains(&n)
                && !rest.starts_with('0')
            {
                return Ok(Key::Function(n));
            }
            return Err(err());
        }
        if let Some(rest) = canonical.strip_prefix("numpad") {
            let rest = rest.strip_prefix('_').unwrap_or(rest);
            let pad = match rest {
                "enter" => Numpad::Enter,
                "*" | "multiply" => Numpad::Multiply,
                "+" | "add" => Numpad::Add,
                "-" | "subtract" => Numpad::Subtract,
                "/" | "divide" => Numpad::Divide,
                "." | "decimal" => Numpad::Decimal,
                d if d.len() == 1 && d.as_bytes()[0].is_ascii_digit() => {
                    Numpad::Digit(d.as_bytes()[0] - b'0')
                }
                _ => return Err(err()),
            };
            return Ok(Key::Numpad(pad));
        }
        Err(err())
    }

    /// Splits a combo string such as `"ctrl+shift+esc"` (or `"ctrl+numpad_+"`).
    pub fn split_combo(combo: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let parts: Vec<&str> = combo.split('+').collect();
        let mut i = 0;
        while i < parts.len() {
            let p = parts[i].trim();
            let lower = p.to_lowercase();
            // `numpad_+` and `numpad+` split into ["numpad_", ""]: glue the plus back.
            if (lower == "numpad_" || lower == "numpad")
                && i + 1 < parts.len()
                && parts[i + 1].trim().is_empty()
            {
                out.push(format!("{p}+"));
                i += 2;
                continue;
            }
            out.push(p.to_string());
            i += 1;
        }
        out
    }

    /// The canonical name (`"ctrl"`, `"f5"`, `"numpad_enter"`, `"a"`).
    pub fn name(&self) -> String {
        match self {
            Key::Char(c) => c.to_string(),
            Key::Function(n) => format!("f{n}"),
            Key::Named(n) => NAMED
                .iter()
                .find(|(_, k)| k == n)
                .map(|(s, _)| (*s).to_string())
                .unwrap_or_default(),
            Key::Modifier(m) => MODIFIERS
                .iter()
                .find(|(_, k)| k == m)
                .map(|(s, _)| (*s).to_string())
                .unwrap_or_default(),
            Key::Numpad(p) => match p {
                Numpad::Digit(d) => format!("numpad{d}"),
                Numpad::Enter => "numpad_enter".into(),
                Numpad::Multiply => "numpad_*".into(),
                Numpad::Add => "numpad_+".into(),
                Numpad::Subtract => "numpad_-".into(),
                Numpad::Divide => "numpad_/".into(),
                Numpad::Decimal => "numpad_.".into(),
            },
        }
    }

    /// The modifier family, if this is a modifier.
    pub fn modifier_family(&self) -> Option<ModifierFamily> {
        match self {
            Key::Modifier(m) => Some(m.family()),
            _ => None,
        }
    }

    /// Every canonical key name, for schemas and docs.
    pub fn all_names() -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        v.extend(('a'..='z').map(|c| c.to_string()));
        v.extend(('0'..='9').map(|c| c.to_string()));
        v.extend((1..=24).map(|n| format!("f{n}")));
        v.extend(NAMED.iter().map(|(s, _)| (*s).to_string()));
        v.extend(MODIFIERS.iter().map(|(s, _)| (*s).to_string()));
        v.extend(PUNCTUATION.chars().map(|c| c.to_string()));
        v.extend((0..=9).map(|d| format!("numpad{d}")));
        v.extend(
            [
                "numpad_enter",
                "numpad_*",
                "numpad_+",
                "numpad_-",
                "numpad_/",
                "numpad_.",
            ]
            .iter()
            .map(|s| (*s).to_string()),
        );
        v
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_canonical_name_round_trips() {
        for name in Key::all_names() {
            let key = Key::parse(&name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(key.name(), name);
        }
    }

    #[test]
    fn case_and_aliases() {
        assert_eq!(Key::parse("CTRL").unwrap(), Key::Modifier(Modifier::Ctrl));
        assert_eq!(Key::parse("Escape").unwrap().name(), "esc");
        assert_eq!(Key::parse("F12").unwrap(), Key::Function(12));
        assert_eq!(Key::parse("numpad+").unwrap().name(), "numpad_+");
    }

    #[test]
    fn rejects_unknown() {
        for bad in ["", "f0", "f25", "f01", "ctrlx", "é", "numpad_x", "A1", "+"] {
            assert!(Key::parse(bad).is_err(), "{bad} parsed");
        }
    }

    #[test]
    fn combo_split() {
        assert_eq!(
            Key::split_combo("ctrl+shift+esc"),
            vec!["ctrl", "shift", "esc"]
        );
        assert_eq!(Key::split_combo("ctrl+numpad_+"), vec!["ctrl", "numpad_+"]);
    }

    #[test]
    fn families() {
        for n in ModifierFamily::Win.names() {
            assert_eq!(
                Key::parse(n).unwrap().modifier_family(),
                Some(ModifierFamily::Win)
            );
        }
    }
}
