//! The emergency hotkey: a passive key grab on the root window, so the combination
//! reaches this driver whatever window has focus. The grab is repeated with the lock
//! modifiers (Caps Lock, Num Lock) that would otherwise make it miss. Auto-repeat is
//! filtered so that holding the keys fires once.
//!
//! Ctrl+Alt+F1…F12 are VT-switch keys in the standard XKB keymap: the server consumes
//! them (`SwitchScreen`) before any grab sees them. When the hotkey is such a
//! combination, the `XF86Switch_VT_n` keysym is taken off that one key while the grab
//! is held (so the hotkey works and does not switch the console away), and put back
//! when the grab is released.

use cc_protocol::Key;
use cc_protocol::keys::ModifierFamily;
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{ConnectionExt as _, GrabMode, ModMask};

use super::connection::{Conn, cerr};
use super::keymap::{self, Keymap, sym};
use cc_desktop::DriverError;

/// A grabbed combination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Grab {
    mods: u16,
    code: u8,
}

/// The hotkey's state.
#[derive(Debug, Default)]
pub(super) struct Hotkey {
    keys: Vec<Key>,
    grab: Option<Grab>,
    /// Why the last grab failed, for `check`.
    pub error: Option<String>,
    down: bool,
    last_release: Option<u32>,
    /// The keycode whose VT-switch keysym was removed, and its original keysyms.
    vt_patch: Option<(u8, Vec<u32>)>,
}

/// `XF86Switch_VT_1` … `XF86Switch_VT_12`.
fn is_vt_switch(keysym: u32) -> bool {
    (0x1008_fe01..=0x1008_fe0c).contains(&keysym)
}

/// The modifier bits and the one non-modifier key of a combination.
fn resolve(keymap: &Keymap, keys: &[Key]) -> Result<Grab, DriverError> {
    let mut mods = 0u16;
    let mut main = None;
    for &k in keys {
        match k.modifier_family() {
            Some(family) => {
                let bit = match family {
                    ModifierFamily::Shift => Some(ModMask::SHIFT),
                    ModifierFamily::Ctrl => Some(ModMask::CONTROL),
                    ModifierFamily::Alt => keymap
                        .modifier_of_keysyms(&[sym::ALT_L, sym::ALT_R, sym::META_L, sym::META_R])
                        .or(Some(ModMask::M1)),
                    ModifierFamily::Win => keymap
                        .modifier_of_keysyms(&[sym::SUPER_L, sym::SUPER_R])
                        .or(Some(ModMask::M4)),
                };
                mods |= bit.map(u16::from).unwrap_or(0);
            }
            None => {
                if main.replace(k).is_some() {
                    return Err(DriverError::Failed(
                        "a hotkey has exactly one non-modifier key".into(),
                    ));
                }
            }
        }
    }
    let main = main.ok_or_else(|| {
        DriverError::Failed("a hotkey needs one non-modifier key (e.g. ctrl+alt+f12)".into())
    })?;
    let found = keymap
        .find_any(&keymap::key_keysyms(main))
        .filter(|f| !f.spare)
        .ok_or_else(|| {
            DriverError::Failed(format!(
                "the keyboard layout has no key {} for the hotkey",
                main.name()
            ))
        })?;
    Ok(Grab {
        mods,
        code: found.code,
    })
}

/// The lock-modifier variants grabbed besides the plain combination.
fn lock_variants(keymap: &Keymap) -> Vec<u16> {
    let lock = u16::from(ModMask::LOCK);
    let num = keymap
        .modifier_of_keysyms(&[sym::NUM_LOCK])
        .map(u16::from)
        .unwrap_or(u16::from(ModMask::M2));
    vec![0, lock, num, lock | num]
}

impl Hotkey {
    /// True when the combination is grabbed.
    pub fn active(&self) -> bool {
        self.grab.is_some()
    }

    /// Replaces the grabbed combination. On failure (BadAccess: another client holds
    /// it) nothing stays grabbed and the reason is kept for `check`.
    pub fn set(
        &mut self,
        conn: &Conn,
        keymap: &mut Keymap,
        keys: &[Key],
    ) -> Result<(), DriverError> {
        self.release(conn, keymap);
        self.keys = keys.to_vec();
        let result = self.grab_current(conn, keymap);
        self.error = result.as_ref().err().map(ToString::to_string);
        result
    }

    /// Takes the VT-switch keysym off the hotkey's key when the combination would
    /// otherwise switch consoles (see the module doc).
    fn ensure_vt_patch(&mut self, conn: &Conn, keymap: &mut Keymap, grab: Grab) {
        let row = keymap.row_of(grab.code);
        if !row.iter().any(|&k| is_vt_switch(k)) {
            return;
        }
        let ctrl = u16::from(ModMask::CONTROL);
        if grab.mods & ctrl == 0 || grab.mods & !(ctrl | u16::from(ModMask::SHIFT)) == 0 {
            return;
        }
        let patched: Vec<u32> = row
            .iter()
            .map(|&k| if is_vt_switch(k) { 0 } else { k })
            .collect();
        if keymap.write_row(conn, grab.code, &patched).is_ok() {
            match &self.vt_patch {
                Some((code, _)) if *code == grab.code => {}
                _ => self.vt_patch = Some((grab.code, row)),
            }
        }
    }

    /// Puts back the keysyms taken off by [`Hotkey::ensure_vt_patch`], unless someone
    /// changed that key since.
    fn restore_vt_patch(&mut self, conn: &Conn, keymap: &mut Keymap) {
        let Some((code, original)) = self.vt_patch.take() else {
            return;
        };
        let _ = keymap.reread(conn);
        let now = keymap.row_of(code);
        // Ours while nothing on the key came from elsewhere (the server may have
        // rearranged the levels when it rebuilt the key from our core row).
        let ours = !now.iter().any(|&k| is_vt_switch(k))
            && now.iter().all(|k| *k == 0 || original.contains(k));
        if ours {
            let _ = keymap.write_row(conn, code, &original);
        }
    }

    fn grab_current(&mut self, conn: &Conn, keymap: &mut Keymap) -> Result<(), DriverError> {
        let grab = resolve(keymap, &self.keys)?;
        let mut done: Vec<u16> = Vec::new();
        for extra in lock_variants(keymap) {
            let mods = grab.mods | extra;
            if done.contains(&mods) {
                continue;
            }
            let r = conn
                .conn
                .grab_key(
                    false,
                    conn.root,
                    ModMask::from(mods),
                    grab.code,
                    GrabMode::ASYNC,
                    GrabMode::ASYNC,
                )
                .map_err(cerr("GrabKey"))?
                .check();
            if let Err(e) = r {
                for m in done {
                    let _ = conn.conn.ungrab_key(grab.code, conn.root, ModMask::from(m));
                }
                let _ = conn.flush();
                let names: Vec<String> = self.keys.iter().map(Key::name).collect();
                return Err(DriverError::Unavailable(format!(
                    "cannot grab the hotkey {} (another client holds it?): {e}",
                    names.join("+")
                )));
            }
            done.push(mods);
        }
        self.ensure_vt_patch(conn, keymap, grab);
        self.grab = Some(grab);
        self.down = false;
        Ok(())
    }

    /// Lets go of the grab (and of the VT-switch patch).
    pub fn release(&mut self, conn: &Conn, keymap: &mut Keymap) {
        if let Some(g) = self.grab.take() {
            let _ = conn.conn.ungrab_key(g.code, conn.root, ModMask::ANY);
            let _ = conn.flush();
        }
        self.restore_vt_patch(conn, keymap);
    }

    /// After a keyboard mapping change: re-grabs if the key moved, and takes the
    /// VT-switch keysym off again if a new layout brought it back.
    pub fn after_mapping_change(&mut self, conn: &Conn, keymap: &mut Keymap) {
        let Some(g) = self.grab else {
            return;
        };
        match resolve(keymap, &self.keys) {
            Ok(n) if n != g => {
                let keys = self.keys.clone();
                let _ = self.set(conn, keymap, &keys);
            }
            Ok(n) => self.ensure_vt_patch(conn, keymap, n),
            Err(_) => {}
        }
    }

    /// True when `event` is a press of the hotkey (not an auto-repeat).
    pub fn on_event(&mut self, event: &Event) -> bool {
        let Some(g) = self.grab else {
            return false;
        };
        match event {
            Event::KeyPress(e) if e.detail == g.code => {
                // Core auto-repeat sends release+press with the same timestamp;
                // detectable auto-repeat sends presses without releases.
                let repeat = self.down || self.last_release == Some(e.time);
                self.down = true;
                !repeat
            }
            Event::KeyRelease(e) if e.detail == g.code => {
                self.down = false;
                self.last_release = Some(e.time);
                false
            }
            _ => false,
        }
    }
}
