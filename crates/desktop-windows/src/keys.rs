//! The key vocabulary as Windows virtual-key codes, without a desktop.
//!
//! A key goes to SendInput by virtual key; the keys that share a scan code with the
//! keypad (arrows, Home, Insert…) and the right-hand modifiers carry the extended flag,
//! or applications that read scan codes see the keypad key.

use cc_protocol::Key;
use cc_protocol::keys::{Modifier, Named, Numpad};

/// One key as SendInput takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VirtualKey {
    pub vk: u16,
    /// `KEYEVENTF_EXTENDEDKEY`.
    pub extended: bool,
}

const fn plain(vk: u16) -> VirtualKey {
    VirtualKey {
        vk,
        extended: false,
    }
}

const fn ext(vk: u16) -> VirtualKey {
    VirtualKey { vk, extended: true }
}

/// The virtual key a key of the vocabulary presses. Punctuation is the US layout's
/// OEM key; on another layout the same physical key is pressed (a key, unlike typed
/// text, names a position).
pub fn virtual_key(key: Key) -> Option<VirtualKey> {
    Some(match key {
        Key::Char(c) if c.is_ascii_lowercase() || c.is_ascii_digit() => {
            plain(c.to_ascii_uppercase() as u16)
        }
        Key::Char(c) => plain(match c {
            ';' => 0xBA,
            '=' => 0xBB,
            ',' => 0xBC,
            '-' => 0xBD,
            '.' => 0xBE,
            '/' => 0xBF,
            '`' => 0xC0,
            '[' => 0xDB,
            '\\' => 0xDC,
            ']' => 0xDD,
            '\'' => 0xDE,
            _ => return None,
        }),
        Key::Function(n @ 1..=24) => plain(0x70 + n as u16 - 1),
        Key::Function(_) => return None,
        Key::Named(n) => match n {
            Named::Up => ext(0x26),
            Named::Down => ext(0x28),
            Named::Left => ext(0x25),
            Named::Right => ext(0x27),
            Named::Home => ext(0x24),
            Named::End => ext(0x23),
            Named::PgUp => ext(0x21),
            Named::PgDn => ext(0x22),
            Named::Insert => ext(0x2D),
            Named::Delete => ext(0x2E),
            Named::Enter => plain(0x0D),
            Named::Esc => plain(0x1B),
            Named::Tab => plain(0x09),
            Named::Space => plain(0x20),
            Named::Backspace => plain(0x08),
            Named::Apps => ext(0x5D),
            Named::CapsLock => plain(0x14),
            Named::NumLock => ext(0x90),
            Named::ScrollLock => plain(0x91),
            Named::PrintScreen => ext(0x2C),
            Named::Pause => plain(0x13),
        },
        Key::Modifier(m) => match m {
            Modifier::Ctrl | Modifier::LCtrl => plain(0xA2),
            Modifier::RCtrl => ext(0xA3),
            Modifier::Alt | Modifier::LAlt => plain(0xA4),
            Modifier::RAlt => ext(0xA5),
            Modifier::Shift | Modifier::LShift => plain(0xA0),
            Modifier::RShift => plain(0xA1),
            Modifier::Win | Modifier::LWin | Modifier::Super | Modifier::Meta | Modifier::Cmd => {
                ext(0x5B)
            }
            Modifier::RWin => ext(0x5C),
        },
        Key::Numpad(p) => match p {
            Numpad::Digit(d @ 0..=9) => plain(0x60 + d as u16),
            Numpad::Digit(_) => return None,
            Numpad::Enter => ext(0x0D),
            Numpad::Multiply => plain(0x6A),
            Numpad::Add => plain(0x6B),
            Numpad::Subtract => plain(0x6D),
            Numpad::Decimal => plain(0x6E),
            Numpad::Divide => ext(0x6F),
        },
    })
}

/// `RegisterHotKey` modifier bits (`MOD_ALT`, `MOD_CONTROL`, `MOD_SHIFT`, `MOD_WIN`).
pub const MOD_ALT: u32 = 0x1;
pub const MOD_CONTROL: u32 = 0x2;
pub const MOD_SHIFT: u32 = 0x4;
pub const MOD_WIN: u32 = 0x8;

/// A hotkey chord as `RegisterHotKey` takes it: modifier bits and one virtual key.
/// `Err` says why the keys are not one non-modifier key plus modifiers.
pub fn hotkey(keys: &[Key]) -> Result<(u32, u16), String> {
    let mut mods = 0;
    let mut main = None;
    for &k in keys {
        match k {
            Key::Modifier(m) => {
                mods |= match m {
                    Modifier::Ctrl | Modifier::LCtrl | Modifier::RCtrl => MOD_CONTROL,
                    Modifier::Alt | Modifier::LAlt | Modifier::RAlt => MOD_ALT,
                    Modifier::Shift | Modifier::LShift | Modifier::RShift => MOD_SHIFT,
                    _ => MOD_WIN,
                }
            }
            other => {
                if main.is_some() {
                    return Err("a hotkey has exactly one key besides its modifiers".into());
                }
                let vk = virtual_key(other)
                    .ok_or_else(|| format!("{} has no virtual key", other.name()))?;
                main = Some(vk.vk);
            }
        }
    }
    let vk = main.ok_or("a hotkey needs one key besides its modifiers")?;
    Ok((mods, vk))
}

/// What typing one character sends: Enter and Tab as their keys (an edit control
/// takes a typed `'\n'` as nothing), everything else as UTF-16 code units with
/// `KEYEVENTF_UNICODE`, a surrogate pair for characters beyond the BMP, so any text
/// arrives whatever the keyboard layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Typed {
    Key(VirtualKey),
    Units(Vec<u16>),
}

/// How `c` is typed.
pub fn typed(c: char) -> Typed {
    match c {
        '\n' | '\r' => Typed::Key(plain(0x0D)),
        '\t' => Typed::Key(plain(0x09)),
        c => {
            let mut buf = [0u16; 2];
            Typed::Units(c.encode_utf16(&mut buf).to_vec())
        }
    }
}

/// `VK_CONTROL`, `VK_MENU` and `VK_LWIN`/`VK_RWIN`: the modifiers that turn a typed
/// character into a shortcut (Alt opens a menu by its mnemonic, Ctrl+W closes a tab).
pub const SHORTCUT_MODIFIERS: [u16; 4] = [0x11, 0x12, 0x5B, 0x5C];

/// The shortcut modifier a virtual key is one side of (`VK_LCONTROL` is `VK_CONTROL`).
fn modifier_of(vk: u16) -> Option<u16> {
    match vk {
        0x11 | 0xA2 | 0xA3 => Some(0x11),
        0x12 | 0xA4 | 0xA5 => Some(0x12),
        0x5B | 0x5C => Some(vk),
        _ => None,
    }
}

/// Whether a shortcut modifier is down on the keyboard (`down`, of
/// [`SHORTCUT_MODIFIERS`]) that this driver does not hold itself (`ours`, the virtual
/// keys it pressed): a person's, as when the emergency chord is being pressed.
pub fn someone_else_holds_a_modifier(down: &[u16], ours: &[u16]) -> bool {
    down.iter()
        .any(|d| !ours.iter().any(|o| modifier_of(*o) == Some(*d)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(name: &str) -> Key {
        Key::parse(name).unwrap()
    }

    #[test]
    fn letters_digits_and_punctuation_are_their_us_keys() {
        assert_eq!(virtual_key(parse("a")), Some(plain(b'A' as u16)));
        assert_eq!(virtual_key(parse("7")), Some(plain(b'7' as u16)));
        assert_eq!(virtual_key(parse(";")), Some(plain(0xBA)));
        assert_eq!(virtual_key(parse("f1")), Some(plain(0x70)));
        assert_eq!(virtual_key(parse("f24")), Some(plain(0x87)));
    }

    #[test]
    fn navigation_keys_and_right_modifiers_are_extended() {
        for name in ["up", "home", "delete", "rctrl", "ralt", "win", "numpad_/"] {
            let Ok(key) = Key::parse(name) else { continue };
            assert!(virtual_key(key).unwrap().extended, "{name}");
        }
        assert!(!virtual_key(parse("ctrl")).unwrap().extended);
        assert!(!virtual_key(parse("enter")).unwrap().extended);
    }

    #[test]
    fn every_key_of_the_vocabulary_has_a_virtual_key() {
        for name in Key::all_names() {
            let key = parse(&name);
            assert!(virtual_key(key).is_some(), "{name}");
        }
    }

    #[test]
    fn hotkeys_are_modifiers_plus_one_key() {
        let keys: Vec<Key> = ["ctrl", "alt", "f12"].iter().map(|k| parse(k)).collect();
        assert_eq!(hotkey(&keys), Ok((MOD_CONTROL | MOD_ALT, 0x7B)));
        let two: Vec<Key> = ["ctrl", "a", "b"].iter().map(|k| parse(k)).collect();
        assert!(hotkey(&two).unwrap_err().contains("exactly one key"));
        let none: Vec<Key> = ["ctrl", "shift"].iter().map(|k| parse(k)).collect();
        assert!(hotkey(&none).unwrap_err().contains("needs one key"));
    }

    #[test]
    fn a_modifier_down_is_someone_elses_unless_the_driver_pressed_it() {
        assert!(!someone_else_holds_a_modifier(&[], &[]));
        assert!(someone_else_holds_a_modifier(&[0x12], &[]));
        // The driver's own left Ctrl holds VK_CONTROL down; Alt is still a person's.
        assert!(!someone_else_holds_a_modifier(&[0x11], &[0xA2]));
        assert!(someone_else_holds_a_modifier(&[0x11, 0x12], &[0xA2]));
        assert!(!someone_else_holds_a_modifier(&[0x5C], &[0x5C]));
        assert!(someone_else_holds_a_modifier(&[0x5B], &[0x5C, 0x41]));
    }

    #[test]
    fn text_is_utf16_units_and_line_breaks_are_keys() {
        assert_eq!(typed('é'), Typed::Units(vec![0xE9]));
        assert_eq!(typed('世'), Typed::Units(vec![0x4E16]));
        assert_eq!(typed('😀'), Typed::Units(vec![0xD83D, 0xDE00]));
        assert_eq!(typed('\n'), Typed::Key(plain(0x0D)));
        assert_eq!(typed('\t'), Typed::Key(plain(0x09)));
    }
}
