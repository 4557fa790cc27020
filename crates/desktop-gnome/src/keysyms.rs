//! Keysyms for Mutter's `NotifyKeyboardKeysym`: Mutter finds the key and the level
//! (Shift) in the current layout itself, and drops a keysym the layout lacks, so only
//! characters every Latin layout has are typed as keys; the rest go through the
//! clipboard (`paste.rs`).

use cc_protocol::Key;
use cc_protocol::keys::{Modifier, Named, Numpad};

pub const RETURN: u32 = 0xff0d;
pub const TAB: u32 = 0xff09;
pub const SHIFT_L: u32 = 0xffe1;
pub const CONTROL_L: u32 = 0xffe3;
pub const V: u32 = 0x76;

/// The keysym that types `c` on any layout (ASCII, Return, Tab); `None` for anything
/// else, which is pasted.
pub fn typed(c: char) -> Option<u32> {
    match c {
        '\n' | '\r' => Some(RETURN),
        '\t' => Some(TAB),
        ' '..='~' => Some(u32::from(c)),
        _ => None,
    }
}

/// The keysym of a named key.
pub fn of_key(key: Key) -> Option<u32> {
    Some(match key {
        Key::Char(c) => typed(c)?,
        Key::Function(n @ 1..=35) => 0xffbe + u32::from(n - 1),
        Key::Function(_) => return None,
        Key::Named(n) => match n {
            Named::Up => 0xff52,
            Named::Down => 0xff54,
            Named::Left => 0xff51,
            Named::Right => 0xff53,
            Named::Home => 0xff50,
            Named::End => 0xff57,
            Named::PgUp => 0xff55,
            Named::PgDn => 0xff56,
            Named::Insert => 0xff63,
            Named::Delete => 0xffff,
            Named::Enter => RETURN,
            Named::Esc => 0xff1b,
            Named::Tab => TAB,
            Named::Space => 0x20,
            Named::Backspace => 0xff08,
            Named::Apps => 0xff67,
            Named::CapsLock => 0xffe5,
            Named::NumLock => 0xff7f,
            Named::ScrollLock => 0xff14,
            Named::PrintScreen => 0xff61,
            Named::Pause => 0xff13,
        },
        Key::Modifier(m) => match m {
            Modifier::Ctrl | Modifier::LCtrl => CONTROL_L,
            Modifier::RCtrl => 0xffe4,
            Modifier::Alt | Modifier::LAlt => 0xffe9,
            Modifier::RAlt => 0xffea,
            Modifier::Shift | Modifier::LShift => SHIFT_L,
            Modifier::RShift => 0xffe2,
            Modifier::Win | Modifier::LWin | Modifier::Super | Modifier::Meta | Modifier::Cmd => {
                0xffeb
            }
            Modifier::RWin => 0xffec,
        },
        Key::Numpad(p) => match p {
            Numpad::Digit(d) => 0xffb0 + u32::from(d.min(9)),
            Numpad::Enter => 0xff8d,
            Numpad::Multiply => 0xffaa,
            Numpad::Add => 0xffab,
            Numpad::Subtract => 0xffad,
            Numpad::Divide => 0xffaf,
            Numpad::Decimal => 0xffae,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_is_typed_and_the_rest_is_not() {
        assert_eq!(typed('a'), Some(0x61));
        assert_eq!(typed('A'), Some(0x41));
        assert_eq!(typed('\n'), Some(RETURN));
        assert_eq!(typed('é'), None);
        assert_eq!(typed('世'), None);
        assert_eq!(typed('\u{7}'), None);
    }

    #[test]
    fn named_keys() {
        let k = |n: &str| of_key(Key::parse(n).unwrap());
        assert_eq!(k("esc"), Some(0xff1b));
        assert_eq!(k("ctrl"), Some(CONTROL_L));
        assert_eq!(k("f12"), Some(0xffc9));
        assert_eq!(k("v"), Some(V));
    }
}
