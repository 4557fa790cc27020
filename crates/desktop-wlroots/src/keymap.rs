//! The virtual keyboard's keymap: a US layout from the compositor's own XKB data, plus
//! slot keys bound on demand to any Unicode character the layout lacks.
//!
//! A virtual keyboard has no layout until it uploads one, and the keys it sends are
//! Linux evdev codes interpreted under that keymap. Keys of the protocol vocabulary and
//! ASCII characters use the US layout's keys (so compositor bindings and applications see
//! ordinary keys); other characters get a slot key whose only keysym is the character's
//! Unicode keysym. A text announced before it is typed binds every character it lacks
//! at once (one upload, not one per character); slots are kept while typing goes on (a
//! character typed again reuses its slot), and the plain layout is uploaded again once
//! typing is over.

use cc_protocol::Key;
use cc_protocol::keys::{Modifier, Named, Numpad};

/// Linux evdev codes (`input-event-codes.h`) of the keys this driver presses.
pub mod code {
    pub const ESC: u32 = 1;
    pub const BACKSPACE: u32 = 14;
    pub const TAB: u32 = 15;
    pub const ENTER: u32 = 28;
    pub const LEFTCTRL: u32 = 29;
    pub const LEFTSHIFT: u32 = 42;
    pub const RIGHTSHIFT: u32 = 54;
    pub const KPASTERISK: u32 = 55;
    pub const LEFTALT: u32 = 56;
    pub const SPACE: u32 = 57;
    pub const CAPSLOCK: u32 = 58;
    pub const F1: u32 = 59;
    pub const NUMLOCK: u32 = 69;
    pub const SCROLLLOCK: u32 = 70;
    pub const KP7: u32 = 71;
    pub const KP8: u32 = 72;
    pub const KP9: u32 = 73;
    pub const KPMINUS: u32 = 74;
    pub const KP4: u32 = 75;
    pub const KP5: u32 = 76;
    pub const KP6: u32 = 77;
    pub const KPPLUS: u32 = 78;
    pub const KP1: u32 = 79;
    pub const KP2: u32 = 80;
    pub const KP3: u32 = 81;
    pub const KP0: u32 = 82;
    pub const KPDOT: u32 = 83;
    pub const F11: u32 = 87;
    pub const F12: u32 = 88;
    pub const KPENTER: u32 = 96;
    pub const RIGHTCTRL: u32 = 97;
    pub const KPSLASH: u32 = 98;
    pub const SYSRQ: u32 = 99;
    pub const RIGHTALT: u32 = 100;
    pub const HOME: u32 = 102;
    pub const UP: u32 = 103;
    pub const PAGEUP: u32 = 104;
    pub const LEFT: u32 = 105;
    pub const RIGHT: u32 = 106;
    pub const END: u32 = 107;
    pub const DOWN: u32 = 108;
    pub const PAGEDOWN: u32 = 109;
    pub const INSERT: u32 = 110;
    pub const DELETE: u32 = 111;
    pub const PAUSE: u32 = 119;
    pub const LEFTMETA: u32 = 125;
    pub const RIGHTMETA: u32 = 126;
    pub const COMPOSE: u32 = 127;
    pub const F13: u32 = 183;
}

/// The first slot's evdev code: 200–247 are keys no PC keyboard has (XKB keycodes
/// 208–255, still within X11's range, so Xwayland clients get them too).
const FIRST_SLOT: u32 = 200;
/// How many slots one keymap carries.
pub const SLOTS: usize = 48;

/// The US layout's rows: the unshifted and shifted character of each key, by code.
const ROWS: &[(u32, &str, &str)] = &[
    (2, "1234567890-=", "!@#$%^&*()_+"),
    (16, "qwertyuiop[]", "QWERTYUIOP{}"),
    (30, "asdfghjkl;'`", "ASDFGHJKL:\"~"),
    (43, "\\zxcvbnm,./", "|ZXCVBNM<>?"),
];

/// One key press that types something: the key, and whether shift is held for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stroke {
    pub code: u32,
    pub shift: bool,
}

/// The key that types an ASCII character on the US layout.
fn ascii_stroke(c: char) -> Option<Stroke> {
    match c {
        ' ' => {
            return Some(Stroke {
                code: code::SPACE,
                shift: false,
            });
        }
        '\n' | '\r' => {
            return Some(Stroke {
                code: code::ENTER,
                shift: false,
            });
        }
        '\t' => {
            return Some(Stroke {
                code: code::TAB,
                shift: false,
            });
        }
        '\u{8}' => {
            return Some(Stroke {
                code: code::BACKSPACE,
                shift: false,
            });
        }
        '\u{1b}' => {
            return Some(Stroke {
                code: code::ESC,
                shift: false,
            });
        }
        '\u{7f}' => {
            return Some(Stroke {
                code: code::DELETE,
                shift: false,
            });
        }
        _ => {}
    }
    for (first, lower, upper) in ROWS {
        for (shift, row) in [(false, lower), (true, upper)] {
            if let Some(i) = row.chars().position(|k| k == c) {
                return Some(Stroke {
                    code: first + i as u32,
                    shift,
                });
            }
        }
    }
    None
}

/// True when typing `c` needs a slot: no key of the US layout types it, and it is not
/// a control character (which no key types).
pub fn needs_slot(c: char) -> bool {
    ascii_stroke(c).is_none() && !c.is_control()
}

/// The characters of `text` that need a slot, each once, in the order they first occur.
pub fn lacking(text: &str) -> Vec<char> {
    let mut out: Vec<char> = Vec::new();
    for c in text.chars().filter(|&c| needs_slot(c)) {
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// The evdev code of a key of the protocol vocabulary.
pub fn key_code(key: Key) -> Option<u32> {
    Some(match key {
        Key::Char(c) => ascii_stroke(c).filter(|s| !s.shift)?.code,
        Key::Function(n @ 1..=10) => code::F1 + u32::from(n - 1),
        Key::Function(11) => code::F11,
        Key::Function(12) => code::F12,
        Key::Function(n @ 13..=24) => code::F13 + u32::from(n - 13),
        Key::Function(_) => return None,
        Key::Named(n) => match n {
            Named::Up => code::UP,
            Named::Down => code::DOWN,
            Named::Left => code::LEFT,
            Named::Right => code::RIGHT,
            Named::Home => code::HOME,
            Named::End => code::END,
            Named::PgUp => code::PAGEUP,
            Named::PgDn => code::PAGEDOWN,
            Named::Insert => code::INSERT,
            Named::Delete => code::DELETE,
            Named::Enter => code::ENTER,
            Named::Esc => code::ESC,
            Named::Tab => code::TAB,
            Named::Space => code::SPACE,
            Named::Backspace => code::BACKSPACE,
            Named::Apps => code::COMPOSE,
            Named::CapsLock => code::CAPSLOCK,
            Named::NumLock => code::NUMLOCK,
            Named::ScrollLock => code::SCROLLLOCK,
            Named::PrintScreen => code::SYSRQ,
            Named::Pause => code::PAUSE,
        },
        Key::Modifier(m) => match m {
            Modifier::Ctrl | Modifier::LCtrl => code::LEFTCTRL,
            Modifier::RCtrl => code::RIGHTCTRL,
            Modifier::Alt | Modifier::LAlt => code::LEFTALT,
            Modifier::RAlt => code::RIGHTALT,
            Modifier::Shift | Modifier::LShift => code::LEFTSHIFT,
            Modifier::RShift => code::RIGHTSHIFT,
            Modifier::Win | Modifier::LWin | Modifier::Super | Modifier::Meta | Modifier::Cmd => {
                code::LEFTMETA
            }
            Modifier::RWin => code::RIGHTMETA,
        },
        Key::Numpad(p) => match p {
            Numpad::Digit(d) => [
                code::KP0,
                code::KP1,
                code::KP2,
                code::KP3,
                code::KP4,
                code::KP5,
                code::KP6,
                code::KP7,
                code::KP8,
                code::KP9,
            ][usize::from(d.min(9))],
            Numpad::Enter => code::KPENTER,
            Numpad::Multiply => code::KPASTERISK,
            Numpad::Add => code::KPPLUS,
            Numpad::Subtract => code::KPMINUS,
            Numpad::Divide => code::KPSLASH,
            Numpad::Decimal => code::KPDOT,
        },
    })
}

/// The characters bound to slot keys, in slot order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Slots {
    chars: Vec<char>,
}

/// How a character is typed under the current (or a new) keymap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// A key of the current keymap.
    Ready(Stroke),
    /// A slot key, after uploading the keymap with this character bound.
    Upload(Stroke),
}

impl Slots {
    /// True when no slot is bound (the keymap is the plain layout).
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.chars.is_empty()
    }

    /// Forgets every slot (the plain layout is uploaded again).
    pub fn clear(&mut self) {
        self.chars.clear();
    }

    /// True when `c` has a slot.
    pub fn contains(&self, c: char) -> bool {
        self.chars.contains(&c)
    }

    /// Binds exactly these characters (at most [`SLOTS`], the first ones), replacing
    /// every earlier slot.
    pub fn bind(&mut self, chars: &[char]) {
        self.chars.clear();
        self.chars.extend(chars.iter().take(SLOTS));
    }

    /// How to type `c`; `None` for control characters no key types. A full set of
    /// slots starts over (the caller releases held slot keys before uploading).
    pub fn plan(&mut self, c: char) -> Option<Plan> {
        if let Some(s) = ascii_stroke(c) {
            return Some(Plan::Ready(s));
        }
        if c.is_control() {
            return None;
        }
        if let Some(i) = self.chars.iter().position(|&k| k == c) {
            return Some(Plan::Ready(slot_stroke(i)));
        }
        if self.chars.len() >= SLOTS {
            self.chars.clear();
        }
        self.chars.push(c);
        Some(Plan::Upload(slot_stroke(self.chars.len() - 1)))
    }

    /// The keymap text to upload: the US layout plus the bound slots.
    pub fn keymap(&self) -> String {
        let mut slots_codes = String::new();
        let mut slots_syms = String::new();
        for (i, c) in self.chars.iter().enumerate() {
            let xkb = FIRST_SLOT + i as u32 + 8;
            slots_codes.push_str(&format!("    <CCS{i}> = {xkb};\n"));
            slots_syms.push_str(&format!(
                "    key <CCS{i}> {{ [ U{:04X} ] }};\n",
                u32::from(*c)
            ));
        }
        format!(
            "xkb_keymap {{\n\
             xkb_keycodes \"cc\" {{\n    include \"evdev+aliases(qwerty)\"\n{slots_codes}}};\n\
             xkb_types \"cc\" {{ include \"complete\" }};\n\
             xkb_compatibility \"cc\" {{ include \"complete\" }};\n\
             xkb_symbols \"cc\" {{\n    include \"pc+us+inet(evdev)\"\n{slots_syms}}};\n\
             }};\n"
        )
    }
}

fn slot_stroke(i: usize) -> Stroke {
    Stroke {
        code: FIRST_SLOT + i as u32,
        shift: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_goes_through_the_us_layout() {
        let mut s = Slots::default();
        assert_eq!(
            s.plan('a'),
            Some(Plan::Ready(Stroke {
                code: 30,
                shift: false
            }))
        );
        assert_eq!(
            s.plan('A'),
            Some(Plan::Ready(Stroke {
                code: 30,
                shift: true
            }))
        );
        assert_eq!(
            s.plan('?'),
            Some(Plan::Ready(Stroke {
                code: 53,
                shift: true
            }))
        );
        assert_eq!(
            s.plan('\n'),
            Some(Plan::Ready(Stroke {
                code: code::ENTER,
                shift: false
            }))
        );
        assert!(s.is_empty(), "no slot for ASCII");
    }

    #[test]
    fn other_characters_get_a_slot_once() {
        let mut s = Slots::default();
        let first = s.plan('é');
        assert_eq!(
            first,
            Some(Plan::Upload(Stroke {
                code: 200,
                shift: false
            }))
        );
        assert_eq!(
            s.plan('世'),
            Some(Plan::Upload(Stroke {
                code: 201,
                shift: false
            }))
        );
        assert_eq!(
            s.plan('é'),
            Some(Plan::Ready(Stroke {
                code: 200,
                shift: false
            }))
        );
        let km = s.keymap();
        assert!(km.contains("<CCS0> = 208;"), "{km}");
        assert!(km.contains("key <CCS1> { [ U4E16 ] };"), "{km}");
        assert_eq!(s.plan('\u{1}'), None, "control characters are not typed");
    }

    #[test]
    fn a_text_binds_what_the_layout_lacks_once() {
        assert_eq!(
            lacking("héllo wörld 世界 ✓ é\u{1}"),
            ['é', 'ö', '世', '界', '✓']
        );
        assert!(lacking("plain ASCII\n\t").is_empty());
        let mut s = Slots::default();
        s.bind(&lacking("é世✓ü".repeat(25).as_str()));
        for (i, c) in ['é', '世', '✓', 'ü'].into_iter().enumerate() {
            assert_eq!(s.plan(c), Some(Plan::Ready(slot_stroke(i))), "{c}");
        }
        let km = s.keymap();
        assert!(km.contains("key <CCS3> { [ U00FC ] };"), "{km}");
        let many: Vec<char> = (0..SLOTS as u32 + 5)
            .map(|i| char::from_u32(0x4e00 + i).unwrap())
            .collect();
        s.bind(&many);
        assert!(s.contains('\u{4e00}'));
        assert!(!s.contains(many[SLOTS]), "only the first SLOTS are bound");
    }

    #[test]
    fn a_full_set_of_slots_starts_over() {
        let mut s = Slots::default();
        for i in 0..SLOTS as u32 {
            s.plan(char::from_u32(0x4e00 + i).unwrap());
        }
        assert_eq!(
            s.plan('✓'),
            Some(Plan::Upload(Stroke {
                code: 200,
                shift: false
            }))
        );
    }

    #[test]
    fn vocabulary_keys_have_codes() {
        let k = |n: &str| key_code(Key::parse(n).unwrap());
        assert_eq!(k("ctrl"), Some(code::LEFTCTRL));
        assert_eq!(k("f12"), Some(code::F12));
        assert_eq!(k("f13"), Some(code::F13));
        assert_eq!(k("a"), Some(30));
        assert_eq!(k("enter"), Some(code::ENTER));
        assert_eq!(k("numpad5"), Some(code::KP5));
    }
}
