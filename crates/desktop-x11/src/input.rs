//! Input injection through XTest `FakeInput`, and the bookkeeping of what this driver
//! holds down so that `release_all` can let go of exactly that.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use cc_protocol::Key;
use x11rb::protocol::xproto::{
    BUTTON_PRESS_EVENT, BUTTON_RELEASE_EVENT, ConnectionExt as _, KEY_PRESS_EVENT,
    KEY_RELEASE_EVENT, MOTION_NOTIFY_EVENT,
};
use x11rb::protocol::xtest::ConnectionExt as _;

use super::connection::{Conn, cerr, xerr};
use super::keymap::{self, Keymap};
use cc_desktop::{Axis, Button, DriverError, HeldInputs};

/// The X button number of a pointer button.
pub(super) fn button_number(b: Button) -> u8 {
    match b {
        Button::Left => 1,
        Button::Middle => 2,
        Button::Right => 3,
    }
}

/// The X button of one scroll notch: 4 up, 5 down, 6 left, 7 right.
pub(super) fn scroll_button(axis: Axis, positive: bool) -> u8 {
    match (axis, positive) {
        (Axis::Vertical, true) => 4,
        (Axis::Vertical, false) => 5,
        (Axis::Horizontal, false) => 6,
        (Axis::Horizontal, true) => 7,
    }
}

/// Queues one fake event. `FakeInput` has no reply, so nothing waits here: a gesture
/// is flushed when it holds something down ([`flush`]) and waited for once when it is
/// complete ([`sync`]), one round trip per click or typed character instead of one
/// per event. An X error on an unchecked request (none is expected: the values are
/// checked here) arrives as an event and is dropped by `poll_events`.
fn fake(conn: &Conn, kind: u8, detail: u8, x: i16, y: i16) -> Result<(), DriverError> {
    if !conn.ext.xtest {
        return Err(DriverError::Unavailable(
            "the X server has no XTest extension: input is impossible".into(),
        ));
    }
    conn.conn
        .xtest_fake_input(kind, detail, 0, conn.root, x, y, 0)
        .map_err(cerr("XTest FakeInput"))?;
    Ok(())
}

/// Sends what is queued, without waiting: the server handles it before anything this
/// connection asks later, and long before another client can look.
fn flush(conn: &Conn) -> Result<(), DriverError> {
    conn.flush()
}

/// Waits until the server processed everything queued (one round trip).
fn sync(conn: &Conn) -> Result<(), DriverError> {
    conn.sync()
}

/// How long the Caps Lock state read at the end of one typed character is trusted for
/// the next one (the read doubles as that character's round trip).
const CAPS_FRESH: Duration = Duration::from_millis(250);

/// How long the pointer read by a click's closing round trip answers for where the
/// pointer is: the tool reads it back at once, and nothing later may take it for a
/// fresh look.
const POINTER_FRESH: Duration = Duration::from_millis(100);

/// Keys and buttons this driver pressed and has not released.
#[derive(Debug, Default)]
pub(super) struct Held {
    /// Canonical key name → keycode pressed.
    keys: BTreeMap<String, u8>,
    buttons: Vec<Button>,
    /// Caps Lock as read at the end of the last typed character, and when.
    caps: Option<(bool, Instant)>,
    /// The pointer as read by the round trip that closed the last click or scroll, and
    /// when; taken by the first look after it ([`Held::pointer`]).
    pointer: Option<((i32, i32), Instant)>,
}

impl Held {
    pub fn snapshot(&self) -> HeldInputs {
        let mut buttons = self.buttons.clone();
        buttons.sort_by_key(|b| button_number(*b));
        HeldInputs {
            keys: self.keys.keys().cloned().collect(),
            buttons,
        }
    }
}

/// Where the pointer is, in root coordinates, asked now. As a round trip it also waits
/// until the server processed everything queued before it.
fn query_position(conn: &Conn) -> Result<(i32, i32), DriverError> {
    let r = query_pointer(conn)?;
    Ok((i32::from(r.root_x), i32::from(r.root_y)))
}

/// One `QueryPointer` round trip: the pointer and the modifier state.
fn query_pointer(conn: &Conn) -> Result<x11rb::protocol::xproto::QueryPointerReply, DriverError> {
    conn.conn
        .query_pointer(conn.root)
        .map_err(cerr("QueryPointer"))?
        .reply()
        .map_err(xerr("QueryPointer"))
}

/// Waits for the server (one round trip) and reads whether Caps Lock is on (so a
/// letter's case flips).
fn sync_caps(conn: &Conn) -> Result<bool, DriverError> {
    let r = query_pointer(conn)?;
    Ok(u16::from(r.mask) & u16::from(x11rb::protocol::xproto::KeyButMask::LOCK) != 0)
}

impl Held {
    /// Moves the pointer to root coordinates. The server clamps XTest motion into the
    /// screen itself, so this needs no geometry round trip; it is flushed, not waited
    /// for (the press or release that follows is).
    pub fn motion(&mut self, conn: &Conn, x: i32, y: i32) -> Result<(), DriverError> {
        self.pointer = None;
        let cx = x.clamp(0, i32::from(i16::MAX));
        let cy = y.clamp(0, i32::from(i16::MAX));
        fake(conn, MOTION_NOTIFY_EVENT, 0, cx as i16, cy as i16)?;
        flush(conn)
    }

    /// Where the pointer is, in root coordinates. Right after a click or a scroll it is
    /// where the round trip that closed it found the pointer, once: a click reads its
    /// position back without asking the server a second time, behind whatever the
    /// clicked application drew meanwhile.
    pub fn pointer(&mut self, conn: &Conn) -> Result<(i32, i32), DriverError> {
        match self.pointer.take() {
            Some((at, when)) if when.elapsed() < POINTER_FRESH => Ok(at),
            _ => query_position(conn),
        }
    }

    /// Waits for the server to process what is queued, reading the pointer as it does.
    fn sync_pointer(&mut self, conn: &Conn) -> Result<(), DriverError> {
        let at = query_position(conn)?;
        self.pointer = Some((at, Instant::now()));
        Ok(())
    }

    pub fn button(&mut self, conn: &Conn, b: Button, down: bool) -> Result<(), DriverError> {
        let kind = if down {
            BUTTON_PRESS_EVENT
        } else {
            BUTTON_RELEASE_EVENT
        };
        self.pointer = None;
        fake(conn, kind, button_number(b), 0, 0)?;
        // A press is sent; the release that completes the click is waited for.
        if down {
            flush(conn)?
        } else {
            self.sync_pointer(conn)?
        }
        self.buttons.retain(|x| *x != b);
        if down {
            self.buttons.push(b);
        }
        Ok(())
    }

    pub fn scroll(&mut self, conn: &Conn, axis: Axis, positive: bool) -> Result<(), DriverError> {
        let n = scroll_button(axis, positive);
        self.pointer = None;
        fake(conn, BUTTON_PRESS_EVENT, n, 0, 0)?;
        fake(conn, BUTTON_RELEASE_EVENT, n, 0, 0)?;
        self.sync_pointer(conn)
    }

    /// Presses or releases one key by its keysym in the current layout; a key the
    /// layout lacks is bound to a spare keycode first.
    pub fn key(
        &mut self,
        conn: &Conn,
        keymap: &mut Keymap,
        key: Key,
        down: bool,
    ) -> Result<(), DriverError> {
        let name = key.name();
        // Our own Caps Lock press changes what the next character needs.
        self.caps = None;
        self.pointer = None;
        if !down {
            // Release what was pressed under this name, even if the mapping changed.
            let code = match self.keys.get(&name) {
                Some(c) => *c,
                None => self.code_for(conn, keymap, key)?,
            };
            fake(conn, KEY_RELEASE_EVENT, code, 0, 0)?;
            sync(conn)?;
            self.keys.remove(&name);
            keymap.pin(code, false);
            return Ok(());
        }
        let code = self.code_for(conn, keymap, key)?;
        fake(conn, KEY_PRESS_EVENT, code, 0, 0)?;
        flush(conn)?;
        keymap.pin(code, true);
        self.keys.insert(name, code);
        Ok(())
    }

    fn code_for(&self, conn: &Conn, keymap: &mut Keymap, key: Key) -> Result<u8, DriverError> {
        keymap.refresh_if_stale(conn)?;
        let syms = keymap::key_keysyms(key);
        if let Some(f) = keymap.find_any(&syms) {
            return Ok(f.code);
        }
        let first = syms
            .first()
            .copied()
            .ok_or_else(|| DriverError::Failed(format!("no keysym for key {}", key.name())))?;
        keymap.bind(conn, first)
    }

    /// Types one character: press and release of its key, with shift when it sits
    /// on the shifted level, or of a spare keycode bound to it.
    pub fn type_char(
        &mut self,
        conn: &Conn,
        keymap: &mut Keymap,
        c: char,
    ) -> Result<(), DriverError> {
        let keysym = keymap::char_keysym(c).ok_or_else(|| {
            DriverError::Failed(format!(
                "no key types the control character U+{:04X}",
                u32::from(c)
            ))
        })?;
        keymap.refresh_if_stale(conn)?;
        let (code, mut shift, spare) = match keymap.find(keysym) {
            Some(f) => (f.code, f.shift, f.spare),
            None => (keymap.bind(conn, keysym)?, false, true),
        };
        let has_case = c.to_lowercase().ne(c.to_uppercase());
        if !spare && has_case {
            let caps = match self.caps {
                Some((on, at)) if at.elapsed() < CAPS_FRESH => on,
                _ => sync_caps(conn)?,
            };
            if caps {
                shift = !shift;
            }
        }
        let shift_code = if shift {
            Some(keymap.shift_code().ok_or_else(|| {
                DriverError::Failed("the keyboard mapping has no shift key".into())
            })?)
        } else {
            None
        };
        // Shift, press, release, unshift go out together; queuing cannot fail halfway
        // short of a broken connection, which leaves nothing held on the server.
        let queued = (|| {
            if let Some(s) = shift_code {
                fake(conn, KEY_PRESS_EVENT, s, 0, 0)?;
            }
            fake(conn, KEY_PRESS_EVENT, code, 0, 0)?;
            fake(conn, KEY_RELEASE_EVENT, code, 0, 0)?;
            if let Some(s) = shift_code {
                fake(conn, KEY_RELEASE_EVENT, s, 0, 0)?;
            }
            Ok(())
        })();
        if spare {
            keymap.touch(code);
        }
        queued?;
        // One round trip per character: it waits for the server and reads Caps Lock
        // for the next character.
        let caps = sync_caps(conn)?;
        self.caps = Some((caps, Instant::now()));
        Ok(())
    }

    /// Releases every key and button this driver holds (keys in reverse name order,
    /// then buttons), reporting the first failure after trying them all.
    pub fn release_all(&mut self, conn: &Conn, keymap: &mut Keymap) -> Result<(), DriverError> {
        let mut first_err = None;
        let keys: Vec<(String, u8)> = self.keys.iter().map(|(k, c)| (k.clone(), *c)).collect();
        for (name, code) in keys.into_iter().rev() {
            match fake(conn, KEY_RELEASE_EVENT, code, 0, 0) {
                Ok(()) => {
                    self.keys.remove(&name);
                    keymap.pin(code, false);
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        for b in self.buttons.clone() {
            if let Err(e) = self.button(conn, b, false) {
                first_err.get_or_insert(e);
            }
        }
        if let Err(e) = sync(conn) {
            first_err.get_or_insert(e);
        }
        if first_err.is_some() && !conn.ext.xtest {
            // Nothing could have been pressed without XTest.
            self.keys.clear();
            self.buttons.clear();
            return Ok(());
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Keycodes held, for a last-chance release on drop.
    pub fn held_codes(&self) -> Vec<u8> {
        self.keys.values().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buttons_and_notches_have_x_numbers() {
        assert_eq!(button_number(Button::Left), 1);
        assert_eq!(button_number(Button::Middle), 2);
        assert_eq!(button_number(Button::Right), 3);
        assert_eq!(scroll_button(Axis::Vertical, true), 4);
        assert_eq!(scroll_button(Axis::Vertical, false), 5);
        assert_eq!(scroll_button(Axis::Horizontal, false), 6);
        assert_eq!(scroll_button(Axis::Horizontal, true), 7);
    }

    #[test]
    fn held_inputs_are_sorted() {
        let mut h = Held::default();
        h.keys.insert("shift".into(), 50);
        h.keys.insert("ctrl".into(), 37);
        h.buttons = vec![Button::Right, Button::Left];
        let s = h.snapshot();
        assert_eq!(s.keys, ["ctrl", "shift"]);
        assert_eq!(s.buttons, [Button::Left, Button::Right]);
    }
}
