//! Input through one virtual pointer and one virtual keyboard, created at connect and
//! kept for the session: a device created per action loses its first event (the seat
//! gains the device, and clients bind it, too late).
//!
//! What this driver holds down is tracked here, so `release_all` lets go of exactly
//! that, and the plain layout is uploaded again once typing is over. Nothing here waits
//! for the compositor: keymaps and keys are queued in order and flushed, typed
//! characters at the pace [`crate::pacing`] sets.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use cc_desktop::{Axis, Button, DriverError, HeldInputs, Pace};
use cc_protocol::{Key, PhysicalRect};
use wayland_client::Proxy as _;
use wayland_client::protocol::wl_pointer;
use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1;
use wayland_protocols_wlr::virtual_pointer::v1::client::zwlr_virtual_pointer_v1::ZwlrVirtualPointerV1;

use crate::client::Client;
use crate::keymap::{self, Plan, Slots, code};
use crate::pacing::Pacer;

/// Linux button codes.
const BTN_LEFT: u32 = 0x110;
const BTN_RIGHT: u32 = 0x111;
const BTN_MIDDLE: u32 = 0x112;
/// Scroll distance of one wheel notch, as libinput reports it.
const NOTCH: f64 = 15.0;
/// How long a new virtual device needs before its first event reaches clients.
const SETTLE: Duration = Duration::from_millis(120);
/// The slots go back to the plain layout once typing paused this long.
const RESTORE_AFTER: Duration = Duration::from_millis(150);

/// XKB modifier masks of the "complete" compatibility map with the pc symbols.
const SHIFT_MASK: u32 = 1;
const CTRL_MASK: u32 = 4;
const ALT_MASK: u32 = 8;
const SUPER_MASK: u32 = 64;

fn button_code(b: Button) -> u32 {
    match b {
        Button::Left => BTN_LEFT,
        Button::Right => BTN_RIGHT,
        Button::Middle => BTN_MIDDLE,
    }
}

fn modifier_mask(code: u32) -> u32 {
    match code {
        code::LEFTSHIFT | code::RIGHTSHIFT => SHIFT_MASK,
        code::LEFTCTRL | code::RIGHTCTRL => CTRL_MASK,
        code::LEFTALT | code::RIGHTALT => ALT_MASK,
        code::LEFTMETA | code::RIGHTMETA => SUPER_MASK,
        _ => 0,
    }
}

fn unavailable(what: &str) -> DriverError {
    DriverError::Unavailable(format!("the compositor offers no {what}"))
}

/// The session's virtual devices and what they hold.
pub struct Input {
    pointer: Option<ZwlrVirtualPointerV1>,
    keyboard: Option<ZwpVirtualKeyboardV1>,
    slots: Slots,
    /// The uploaded keymap carries slots that the plain layout lacks.
    slots_uploaded: bool,
    /// What the announced text still lacks beyond the bound slots could need: its
    /// characters without a key, in first-use order (see [`Input::prepare`]).
    upcoming: Vec<char>,
    last_typed: Option<Instant>,
    keys: Vec<(u32, Key)>,
    buttons: Vec<Button>,
    /// Where the virtual pointer was last moved (Wayland does not tell clients where
    /// the pointer is).
    pub position: (i32, i32),
    start: Instant,
    pacer: Pacer,
}

impl Input {
    /// Creates the pointer and the keyboard, uploads the plain layout, and waits until
    /// the seat has them.
    pub fn new(c: &mut Client) -> Result<Input, DriverError> {
        let mut input = Input {
            pointer: c.new_pointer(),
            keyboard: c.new_keyboard(),
            slots: Slots::default(),
            slots_uploaded: false,
            upcoming: Vec::new(),
            last_typed: None,
            keys: Vec::new(),
            buttons: Vec::new(),
            position: (0, 0),
            start: Instant::now(),
            pacer: Pacer::new(Instant::now()),
        };
        if input.keyboard.is_some() {
            input.upload(c, false)?;
        }
        if input.pointer.is_some() || input.keyboard.is_some() {
            c.roundtrip()?;
            std::thread::sleep(SETTLE);
        }
        Ok(input)
    }

    /// True when both devices exist.
    pub fn available(&self) -> (bool, bool) {
        (self.pointer.is_some(), self.keyboard.is_some())
    }

    fn time(&self) -> u32 {
        self.start.elapsed().as_millis() as u32
    }

    fn pointer(&self) -> Result<&ZwlrVirtualPointerV1, DriverError> {
        self.pointer
            .as_ref()
            .ok_or_else(|| unavailable("zwlr_virtual_pointer_manager_v1"))
    }

    fn keyboard(&self) -> Result<&ZwpVirtualKeyboardV1, DriverError> {
        self.keyboard
            .as_ref()
            .ok_or_else(|| unavailable("zwp_virtual_keyboard_manager_v1"))
    }

    /// Uploads the plain layout, or the layout with the bound slots.
    fn upload(&mut self, c: &Client, with_slots: bool) -> Result<(), DriverError> {
        let kb = self.keyboard()?;
        let text = if with_slots {
            self.slots.keymap()
        } else {
            Slots::default().keymap()
        };
        let fd = rustix::fs::memfd_create("cc-keymap", rustix::fs::MemfdFlags::CLOEXEC)
            .map_err(|e| DriverError::Failed(format!("keymap: {e}")))?;
        let mut file = File::from(fd);
        file.write_all(text.as_bytes())
            .and_then(|_| file.write_all(&[0]))
            .map_err(|e| DriverError::Failed(format!("keymap: {e}")))?;
        // XKB_V1 (1): a NUL-terminated keymap string.
        kb.keymap(1, file.as_fd(), text.len() as u32 + 1);
        self.slots_uploaded = with_slots;
        c.flush()
    }

    /// Moves the pointer to a layout point (inside `bounds`, the layout's box).
    pub fn motion(
        &mut self,
        c: &Client,
        bounds: PhysicalRect,
        x: i32,
        y: i32,
    ) -> Result<(), DriverError> {
        let p = self.pointer()?;
        let rx = (i64::from(x) - i64::from(bounds.x)).clamp(0, i64::from(bounds.width) - 1);
        let ry = (i64::from(y) - i64::from(bounds.y)).clamp(0, i64::from(bounds.height) - 1);
        p.motion_absolute(
            self.time(),
            rx as u32,
            ry as u32,
            bounds.width,
            bounds.height,
        );
        p.frame();
        self.position = (bounds.x + rx as i32, bounds.y + ry as i32);
        c.flush()
    }

    /// Presses or releases a button.
    pub fn button(&mut self, c: &Client, b: Button, down: bool) -> Result<(), DriverError> {
        let p = self.pointer()?;
        let state = if down {
            wl_pointer::ButtonState::Pressed
        } else {
            wl_pointer::ButtonState::Released
        };
        p.button(self.time(), button_code(b), state);
        p.frame();
        if down {
            if !self.buttons.contains(&b) {
                self.buttons.push(b);
            }
        } else {
            self.buttons.retain(|&x| x != b);
        }
        c.flush()
    }

    /// One notch of scroll; `positive` is up or right.
    pub fn scroll(&mut self, c: &Client, axis: Axis, positive: bool) -> Result<(), DriverError> {
        let p = self.pointer()?;
        let (a, sign) = match axis {
            Axis::Vertical => (
                wl_pointer::Axis::VerticalScroll,
                if positive { -1 } else { 1 },
            ),
            Axis::Horizontal => (
                wl_pointer::Axis::HorizontalScroll,
                if positive { 1 } else { -1 },
            ),
        };
        let t = self.time();
        if p.version() >= 2 {
            p.axis_source(wl_pointer::AxisSource::Wheel);
            p.axis_discrete(t, a, NOTCH * f64::from(sign), sign);
        } else {
            p.axis(t, a, NOTCH * f64::from(sign));
        }
        p.frame();
        c.flush()
    }

    fn send_key(&self, code: u32, down: bool) -> Result<(), DriverError> {
        // wl_keyboard key states: 1 pressed, 0 released.
        self.keyboard()?.key(self.time(), code, u32::from(down));
        Ok(())
    }

    fn send_modifiers(&self, extra: u32) -> Result<(), DriverError> {
        let held = self
            .keys
            .iter()
            .fold(extra, |m, (code, _)| m | modifier_mask(*code));
        self.keyboard()?.modifiers(held, 0, 0, 0);
        Ok(())
    }

    /// Presses or releases one key of the vocabulary.
    pub fn key(&mut self, c: &Client, key: Key, down: bool) -> Result<(), DriverError> {
        let code = keymap::key_code(key).ok_or_else(|| {
            DriverError::Failed(format!(
                "no key for {:?} on the virtual keyboard",
                key.name()
            ))
        })?;
        if self.slots_uploaded {
            // Keys go out under the plain layout, which compositor bindings expect.
            self.slots.clear();
            self.upload(c, false)?;
        }
        self.send_key(code, down)?;
        if down {
            if !self.keys.iter().any(|(k, _)| *k == code) {
                self.keys.push((code, key));
            }
        } else {
            self.keys.retain(|(k, _)| *k != code);
        }
        if modifier_mask(code) != 0 {
            self.send_modifiers(0)?;
        }
        self.pacer.flushed();
        c.flush()
    }

    /// Readies the keymap for `text`: every character it lacks is bound to a slot in
    /// ONE upload sent ahead of its keys (the compositor handles requests in order, so
    /// no round trip is needed before typing). A text with more such characters than
    /// there are slots binds the first ones now and the next ones when typing reaches
    /// them.
    pub fn prepare(&mut self, c: &Client, text: &str, pace: Pace) -> Result<(), DriverError> {
        self.keyboard()?;
        self.pacer.announce(text.chars().count(), pace);
        self.upcoming = keymap::lacking(text);
        let first: Vec<char> = self.upcoming.iter().take(keymap::SLOTS).copied().collect();
        if first.is_empty()
            || (self.slots_uploaded && first.iter().all(|&ch| self.slots.contains(ch)))
        {
            return Ok(());
        }
        self.slots.bind(&first);
        self.last_typed = Some(Instant::now());
        self.upload(c, true)
    }

    /// Types one character: a key of the US layout (with shift when needed), or a slot
    /// key bound to the character in a newly uploaded keymap. Announced back-to-back
    /// characters are queued and leave in batches, at the pacer's rate.
    pub fn type_char(&mut self, c: &Client, ch: char) -> Result<(), DriverError> {
        self.keyboard()?;
        if keymap::needs_slot(ch)
            && !self.slots.contains(ch)
            && let Some(i) = self.upcoming.iter().position(|&u| u == ch)
        {
            // An announced text with more characters than slots: the next batch.
            let batch: Vec<char> = self.upcoming[i..].to_vec();
            self.slots.bind(&batch);
            self.upload(c, true)?;
        }
        let plan = self.slots.plan(ch).ok_or_else(|| {
            DriverError::Failed(format!("no key types the control character {:?}", ch))
        })?;
        let stroke = match plan {
            Plan::Ready(s) => {
                if s.code >= 200 && !self.slots_uploaded {
                    self.upload(c, true)?;
                }
                s
            }
            Plan::Upload(s) => {
                self.upload(c, true)?;
                s
            }
        };
        self.last_typed = Some(Instant::now());
        let shift_held = self
            .keys
            .iter()
            .any(|(k, _)| modifier_mask(*k) == SHIFT_MASK);
        let add_shift = stroke.shift && !shift_held;
        if add_shift {
            self.send_key(code::LEFTSHIFT, true)?;
            self.send_modifiers(SHIFT_MASK)?;
        }
        self.send_key(stroke.code, true)?;
        self.send_key(stroke.code, false)?;
        if add_shift {
            self.send_key(code::LEFTSHIFT, false)?;
            self.send_modifiers(0)?;
        }
        if !self.pacer.typed() {
            return Ok(());
        }
        let wait = self.pacer.send(Instant::now());
        c.flush()?;
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
        Ok(())
    }

    /// Uploads the plain layout again once typing has paused (or now, with `force`).
    pub fn restore_layout(&mut self, c: &Client, force: bool) -> Result<(), DriverError> {
        if !self.slots_uploaded {
            return Ok(());
        }
        let idle = self.last_typed.is_none_or(|t| t.elapsed() >= RESTORE_AFTER);
        if !(force || idle) {
            return Ok(());
        }
        self.slots.clear();
        self.upcoming.clear();
        self.upload(c, false)
    }

    /// Releases every key and button this driver holds, and clears the modifiers.
    pub fn release_all(&mut self, c: &Client) -> Result<(), DriverError> {
        let mut first_err = None;
        let keys: Vec<u32> = self.keys.drain(..).rev().map(|(k, _)| k).collect();
        for code in keys {
            if let Err(e) = self.send_key(code, false) {
                first_err.get_or_insert(e);
            }
        }
        if self.keyboard.is_some()
            && let Err(e) = self.send_modifiers(0)
        {
            first_err.get_or_insert(e);
        }
        for b in std::mem::take(&mut self.buttons) {
            if let Err(e) = self.button(c, b, false) {
                first_err.get_or_insert(e);
            }
        }
        self.pacer.flushed();
        if let Err(e) = c.flush() {
            first_err.get_or_insert(e);
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// What this driver holds down.
    pub fn held(&self) -> HeldInputs {
        HeldInputs {
            keys: self.keys.iter().map(|(_, k)| k.name()).collect(),
            buttons: self.buttons.clone(),
        }
    }

    /// Destroys the devices (after `release_all`).
    pub fn close(&mut self) {
        if let Some(p) = self.pointer.take() {
            p.destroy();
        }
        if let Some(k) = self.keyboard.take() {
            k.destroy();
        }
    }
}
