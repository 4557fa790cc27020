//! The keyboard mapping: which keycode (and shift level) produces a keysym, the
//! keysyms of the protocol's key names and of any Unicode character, and the spare
//! keycodes that are bound on demand to characters the layout lacks.
//!
//! Binding a spare keycode changes the server's mapping, and every client re-reads it
//! when it processes the MappingNotify, which may be after a later change. So bindings
//! are kept (a character typed again reuses its keycode), several spares rotate, a
//! spare is only rebound once it has been idle for [`REBIND_AFTER`], and the original
//! (empty) mapping is restored once typing is over.

use std::time::{Duration, Instant};

use cc_protocol::Key;
use cc_protocol::keys::{Modifier, Named, Numpad};
use x11rb::protocol::xproto::{ConnectionExt as _, ModMask};

use super::connection::{Conn, cerr, xerr};
use cc_desktop::DriverError;

/// A spare keycode is not rebound (nor restored) sooner than this after its last use,
/// so that clients have handled the key event under the mapping it was sent with.
pub(super) const REBIND_AFTER: Duration = Duration::from_millis(120);

/// At most this many spare keycodes are used.
const MAX_SPARES: usize = 12;

pub(super) mod sym {
    //! Keysym values (X11 `keysymdef.h`).
    pub const BACKSPACE: u32 = 0xff08;
    pub const TAB: u32 = 0xff09;
    pub const RETURN: u32 = 0xff0d;
    pub const PAUSE: u32 = 0xff13;
    pub const SCROLL_LOCK: u32 = 0xff14;
    pub const ESCAPE: u32 = 0xff1b;
    pub const HOME: u32 = 0xff50;
    pub const LEFT: u32 = 0xff51;
    pub const UP: u32 = 0xff52;
    pub const RIGHT: u32 = 0xff53;
    pub const DOWN: u32 = 0xff54;
    pub const PRIOR: u32 = 0xff55;
    pub const NEXT: u32 = 0xff56;
    pub const END: u32 = 0xff57;
    pub const PRINT: u32 = 0xff61;
    pub const INSERT: u32 = 0xff63;
    pub const MENU: u32 = 0xff67;
    pub const NUM_LOCK: u32 = 0xff7f;
    pub const KP_ENTER: u32 = 0xff8d;
    pub const KP_MULTIPLY: u32 = 0xffaa;
    pub const KP_ADD: u32 = 0xffab;
    pub const KP_SUBTRACT: u32 = 0xffad;
    pub const KP_DECIMAL: u32 = 0xffae;
    pub const KP_DIVIDE: u32 = 0xffaf;
    pub const KP_0: u32 = 0xffb0;
    pub const F1: u32 = 0xffbe;
    pub const SHIFT_L: u32 = 0xffe1;
    pub const SHIFT_R: u32 = 0xffe2;
    pub const CONTROL_L: u32 = 0xffe3;
    pub const CONTROL_R: u32 = 0xffe4;
    pub const CAPS_LOCK: u32 = 0xffe5;
    pub const META_L: u32 = 0xffe7;
    pub const META_R: u32 = 0xffe8;
    pub const ALT_L: u32 = 0xffe9;
    pub const ALT_R: u32 = 0xffea;
    pub const SUPER_L: u32 = 0xffeb;
    pub const SUPER_R: u32 = 0xffec;
    pub const ISO_LEVEL3_SHIFT: u32 = 0xfe03;
    pub const DELETE: u32 = 0xffff;
    pub const SPACE: u32 = 0x20;
}

/// The keysym that types `c`: Latin-1 keysyms equal the code point, `'\n'` is
/// Return, `'\t'` Tab, everything else is a Unicode keysym (`0x01000000 + code point`).
/// `None` for control characters no key types.
pub(super) fn char_keysym(c: char) -> Option<u32> {
    let cp = u32::from(c);
    match c {
        '\n' | '\r' => Some(sym::RETURN),
        '\t' => Some(sym::TAB),
        '\u{8}' => Some(sym::BACKSPACE),
        '\u{1b}' => Some(sym::ESCAPE),
        '\u{7f}' => Some(sym::DELETE),
        _ if c.is_control() => None,
        _ if (0x20..=0x7e).contains(&cp) || (0xa0..=0xff).contains(&cp) => Some(cp),
        _ => Some(0x0100_0000 + cp),
    }
}

/// The keysyms a protocol key name may be found under, best first.
pub(super) fn key_keysyms(key: Key) -> Vec<u32> {
    match key {
        Key::Char(c) => char_keysym(c).into_iter().collect(),
        Key::Function(n) => vec![sym::F1 + u32::from(n.saturating_sub(1))],
        Key::Named(n) => vec![match n {
            Named::Up => sym::UP,
            Named::Down => sym::DOWN,
            Named::Left => sym::LEFT,
            Named::Right => sym::RIGHT,
            Named::Home => sym::HOME,
            Named::End => sym::END,
            Named::PgUp => sym::PRIOR,
            Named::PgDn => sym::NEXT,
            Named::Insert => sym::INSERT,
            Named::Delete => sym::DELETE,
            Named::Enter => sym::RETURN,
            Named::Esc => sym::ESCAPE,
            Named::Tab => sym::TAB,
            Named::Space => sym::SPACE,
            Named::Backspace => sym::BACKSPACE,
            Named::Apps => sym::MENU,
            Named::CapsLock => sym::CAPS_LOCK,
            Named::NumLock => sym::NUM_LOCK,
            Named::ScrollLock => sym::SCROLL_LOCK,
            Named::PrintScreen => sym::PRINT,
            Named::Pause => sym::PAUSE,
        }],
        Key::Modifier(m) => match m {
            Modifier::Ctrl | Modifier::LCtrl => vec![sym::CONTROL_L, sym::CONTROL_R],
            Modifier::RCtrl => vec![sym::CONTROL_R, sym::CONTROL_L],
            Modifier::Alt | Modifier::LAlt => vec![sym::ALT_L, sym::META_L, sym::ALT_R],
            Modifier::RAlt => vec![sym::ALT_R, sym::ISO_LEVEL3_SHIFT, sym::ALT_L],
            Modifier::Shift | Modifier::LShift => vec![sym::SHIFT_L, sym::SHIFT_R],
            Modifier::RShift => vec![sym::SHIFT_R, sym::SHIFT_L],
            Modifier::Win | Modifier::LWin | Modifier::Super | Modifier::Meta | Modifier::Cmd => {
                vec![sym::SUPER_L, sym::SUPER_R, sym::META_L]
            }
            Modifier::RWin => vec![sym::SUPER_R, sym::SUPER_L],
        },
        Key::Numpad(p) => vec![match p {
            Numpad::Digit(d) => sym::KP_0 + u32::from(d.min(9)),
            Numpad::Enter => sym::KP_ENTER,
            Numpad::Multiply => sym::KP_MULTIPLY,
            Numpad::Add => sym::KP_ADD,
            Numpad::Subtract => sym::KP_SUBTRACT,
            Numpad::Divide => sym::KP_DIVIDE,
            Numpad::Decimal => sym::KP_DECIMAL,
        }],
    }
}

/// A keycode this driver may bind to a keysym the layout lacks.
#[derive(Debug, Clone)]
struct Spare {
    code: u8,
    bound: Option<u32>,
    last_used: Option<Instant>,
    /// Held down by `key()`: never rebound while held.
    pinned: bool,
}

/// Where a keysym was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Found {
    pub code: u8,
    /// Shift is needed (the keysym is on the second level).
    pub shift: bool,
    /// The keycode is one of our spares.
    pub spare: bool,
}

/// The server's keyboard mapping as last read, plus our spare bindings.
pub(super) struct Keymap {
    min: u8,
    per: usize,
    syms: Vec<u32>,
    /// Modifier mapping: 8 rows of `per_mod` keycodes.
    mods: Vec<u8>,
    per_mod: usize,
    spares: Vec<Spare>,
    read_at: Instant,
}

/// How long a read mapping is trusted before it is read again (another client may
/// have changed the layout; MappingNotify also marks it stale).
const REREAD: Duration = Duration::from_secs(2);

impl Keymap {
    /// Reads the mapping and picks the spare keycodes: those without any keysym.
    pub fn read(conn: &Conn) -> Result<Keymap, DriverError> {
        let mut km = Keymap {
            min: conn.min_keycode,
            per: 0,
            syms: Vec::new(),
            mods: Vec::new(),
            per_mod: 0,
            spares: Vec::new(),
            read_at: Instant::now(),
        };
        km.reread(conn)?;
        let count = km.count();
        // From the top: low keycodes are the ones real keyboards use.
        for i in (0..count).rev() {
            let code = km.min as usize + i;
            if !(9..=255).contains(&code) {
                continue;
            }
            if km.row(i).iter().all(|&s| s == 0) {
                km.spares.push(Spare {
                    code: code as u8,
                    bound: None,
                    last_used: None,
                    pinned: false,
                });
                if km.spares.len() == MAX_SPARES {
                    break;
                }
            }
        }
        Ok(km)
    }

    fn count(&self) -> usize {
        self.syms.len().checked_div(self.per).unwrap_or(0)
    }

    fn row(&self, i: usize) -> &[u32] {
        self.syms
            .get(i * self.per..(i + 1) * self.per)
            .unwrap_or(&[])
    }

    /// Reads the keyboard and modifier mappings from the server.
    pub fn reread(&mut self, conn: &Conn) -> Result<(), DriverError> {
        let count = conn.max_keycode.saturating_sub(conn.min_keycode) + 1;
        let km = conn
            .conn
            .get_keyboard_mapping(conn.min_keycode, count)
            .map_err(cerr("GetKeyboardMapping"))?;
        let mm = conn
            .conn
            .get_modifier_mapping()
            .map_err(cerr("GetModifierMapping"))?;
        let km = km.reply().map_err(xerr("GetKeyboardMapping"))?;
        let mm = mm.reply().map_err(xerr("GetModifierMapping"))?;
        self.per = usize::from(km.keysyms_per_keycode);
        self.syms = km.keysyms;
        self.per_mod = mm.keycodes.len() / 8;
        self.mods = mm.keycodes;
        self.read_at = Instant::now();
        // A spare that someone else bound is no longer ours to use (or to restore).
        let per = self.per;
        let min = usize::from(self.min);
        let syms = &self.syms;
        self.spares.retain(|s| {
            let start = (usize::from(s.code).saturating_sub(min)) * per;
            let first = syms.get(start).copied().unwrap_or(0);
            first == s.bound.unwrap_or(0)
        });
        Ok(())
    }

    /// Re-reads when the mapping is old (cheap: two requests).
    pub fn refresh_if_stale(&mut self, conn: &Conn) -> Result<(), DriverError> {
        if self.read_at.elapsed() >= REREAD {
            self.reread(conn)?;
        }
        Ok(())
    }

    /// Marks the mapping as stale (on MappingNotify).
    pub fn invalidate(&mut self) {
        self.read_at = Instant::now() - REREAD;
    }

    /// Finds a keysym on the first two levels of any keycode (first level first).
    pub fn find(&self, keysym: u32) -> Option<Found> {
        if keysym == 0 {
            return None;
        }
        for level in 0..self.per.min(2) {
            for i in 0..self.count() {
                if self.row(i).get(level) == Some(&keysym) {
                    let code = (usize::from(self.min) + i).min(255) as u8;
                    return Some(Found {
                        code,
                        shift: level == 1,
                        spare: self.spares.iter().any(|s| s.code == code),
                    });
                }
            }
        }
        None
    }

    /// The first keycode producing any of `keysyms` (at any level).
    pub fn find_any(&self, keysyms: &[u32]) -> Option<Found> {
        keysyms.iter().find_map(|&k| self.find(k))
    }

    /// The keycode of the left shift key.
    pub fn shift_code(&self) -> Option<u8> {
        self.find_any(&[sym::SHIFT_L, sym::SHIFT_R]).map(|f| f.code)
    }

    /// The modifier bit (e.g. `Mod1` for Alt) a keycode belongs to.
    pub fn modifier_of(&self, code: u8) -> Option<ModMask> {
        if self.per_mod == 0 || code == 0 {
            return None;
        }
        let row = self.mods.iter().position(|&c| c == code)? / self.per_mod;
        Some(ModMask::from(1u16 << row))
    }

    /// The modifier bit of the first keysym found among `keysyms`.
    pub fn modifier_of_keysyms(&self, keysyms: &[u32]) -> Option<ModMask> {
        keysyms
            .iter()
            .filter_map(|&k| self.find(k))
            .find_map(|f| self.modifier_of(f.code))
    }

    /// Binds a spare keycode to `keysym` (or reuses the one already bound to it).
    /// Waits, if needed, until the least recently used spare may be rebound.
    pub fn bind(&mut self, conn: &Conn, keysym: u32) -> Result<u8, DriverError> {
        if let Some(s) = self.spares.iter_mut().find(|s| s.bound == Some(keysym)) {
            s.last_used = Some(Instant::now());
            return Ok(s.code);
        }
        let pick = self
            .spares
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.pinned)
            .min_by_key(|(_, s)| (s.bound.is_some(), s.last_used))
            .map(|(i, _)| i)
            .ok_or_else(|| {
                DriverError::Failed(format!(
                    "no spare keycode to bind keysym {keysym:#x} (the keyboard mapping is full)"
                ))
            })?;
        if let Some(t) = self.spares[pick].last_used {
            let idle = t.elapsed();
            if idle < REBIND_AFTER {
                std::thread::sleep(REBIND_AFTER - idle);
            }
        }
        let code = self.spares[pick].code;
        self.set_row(conn, code, keysym)?;
        let s = &mut self.spares[pick];
        s.bound = Some(keysym);
        s.last_used = Some(Instant::now());
        Ok(code)
    }

    /// Writes one keycode's keysyms: `keysym` on both shift levels (so shift and caps
    /// lock do not matter), or nothing.
    fn set_row(&mut self, conn: &Conn, code: u8, keysym: u32) -> Result<(), DriverError> {
        let mut row = vec![0u32; self.per.max(2)];
        row[0] = keysym;
        row[1] = keysym;
        self.write_row(conn, code, &row)
    }

    /// The keysyms of one keycode as last read.
    pub fn row_of(&self, code: u8) -> Vec<u32> {
        let i = usize::from(code).saturating_sub(usize::from(self.min));
        if usize::from(code) < usize::from(self.min) {
            return Vec::new();
        }
        self.row(i).to_vec()
    }

    /// Replaces one keycode's keysyms on the server (and in the cache).
    pub fn write_row(&mut self, conn: &Conn, code: u8, row: &[u32]) -> Result<(), DriverError> {
        let per = row.len();
        if per == 0 || per > 255 || usize::from(code) < usize::from(self.min) {
            return Err(DriverError::Failed(format!("cannot map keycode {code}")));
        }
        conn.conn
            .change_keyboard_mapping(1, code, per as u8, row)
            .map_err(cerr("ChangeKeyboardMapping"))?
            .check()
            .map_err(xerr("ChangeKeyboardMapping"))?;
        if self.per == per {
            let start = (usize::from(code) - usize::from(self.min)) * per;
            if let Some(dst) = self.syms.get_mut(start..start + per) {
                dst.copy_from_slice(row);
            }
        }
        Ok(())
    }

    /// Marks a spare as used now (when it is pressed or released).
    pub fn touch(&mut self, code: u8) {
        if let Some(s) = self.spares.iter_mut().find(|s| s.code == code) {
            s.last_used = Some(Instant::now());
        }
    }

    /// Pins or unpins a spare held down by `key()`.
    pub fn pin(&mut self, code: u8, pinned: bool) {
        if let Some(s) = self.spares.iter_mut().find(|s| s.code == code) {
            s.pinned = pinned;
            s.last_used = Some(Instant::now());
        }
    }

    /// Restores the empty mapping of bound spares that have been idle long enough (or
    /// all of them, waiting as needed, with `wait`). Returns how many stay bound.
    pub fn restore(&mut self, conn: &Conn, wait: bool) -> Result<usize, DriverError> {
        let mut left = 0;
        for i in 0..self.spares.len() {
            let s = self.spares[i].clone();
            if s.bound.is_none() || s.pinned {
                left += usize::from(s.bound.is_some());
                continue;
            }
            let idle = s.last_used.map_or(REBIND_AFTER, |t| t.elapsed());
            if idle < REBIND_AFTER {
                if !wait {
                    left += 1;
                    continue;
                }
                std::thread::sleep(REBIND_AFTER - idle);
            }
            self.set_row(conn, s.code, 0)?;
            self.spares[i].bound = None;
        }
        Ok(left)
    }

    /// Number of spare keycodes available for binding.
    pub fn spare_count(&self) -> usize {
        self.spares.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_map_to_keysyms() {
        assert_eq!(char_keysym('a'), Some(0x61));
        assert_eq!(char_keysym('~'), Some(0x7e));
        assert_eq!(char_keysym('é'), Some(0xe9));
        assert_eq!(char_keysym('\u{a0}'), Some(0xa0));
        assert_eq!(char_keysym('€'), Some(0x0100_20ac));
        assert_eq!(char_keysym('日'), Some(0x0100_65e5));
        assert_eq!(char_keysym('🎉'), Some(0x0101_f389));
        assert_eq!(char_keysym('\n'), Some(sym::RETURN));
        assert_eq!(char_keysym('\t'), Some(sym::TAB));
        assert_eq!(char_keysym('\u{1}'), None);
        assert_eq!(char_keysym('\u{85}'), None);
    }

    #[test]
    fn key_names_map_to_keysyms() {
        let k = |s: &str| key_keysyms(Key::parse(s).unwrap());
        assert_eq!(k("f1"), [0xffbe]);
        assert_eq!(k("f12"), [0xffc9]);
        assert_eq!(k("f24"), [0xffd5]);
        assert_eq!(k("enter"), [sym::RETURN]);
        assert_eq!(k("a"), [0x61]);
        assert_eq!(k("ctrl")[0], sym::CONTROL_L);
        assert_eq!(k("rctrl")[0], sym::CONTROL_R);
        assert_eq!(k("win")[0], sym::SUPER_L);
        assert_eq!(k("numpad7"), [0xffb7]);
        assert_eq!(k("numpad_enter"), [sym::KP_ENTER]);
        assert_eq!(k("pgdn"), [sym::NEXT]);
    }
}
