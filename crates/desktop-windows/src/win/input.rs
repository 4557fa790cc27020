//! SendInput: the pointer in absolute virtual-desk coordinates, keys by virtual key,
//! text as Unicode code units; what is held is remembered so it can be let go.

use cc_desktop::{Axis, Button, DriverError, HeldInputs};
use cc_protocol::{Key, PhysicalRect};
use windows::Win32::Foundation::POINT;
use windows::Win32::UI::Input::KeyboardAndMouse::{
    GetAsyncKeyState, INPUT, INPUT_0, INPUT_KEYBOARD, INPUT_MOUSE, KEYBD_EVENT_FLAGS, KEYBDINPUT,
    KEYEVENTF_EXTENDEDKEY, KEYEVENTF_KEYUP, KEYEVENTF_UNICODE, MOUSE_EVENT_FLAGS,
    MOUSEEVENTF_ABSOLUTE, MOUSEEVENTF_HWHEEL, MOUSEEVENTF_LEFTDOWN, MOUSEEVENTF_LEFTUP,
    MOUSEEVENTF_MIDDLEDOWN, MOUSEEVENTF_MIDDLEUP, MOUSEEVENTF_MOVE, MOUSEEVENTF_RIGHTDOWN,
    MOUSEEVENTF_RIGHTUP, MOUSEEVENTF_VIRTUALDESK, MOUSEEVENTF_WHEEL, MOUSEINPUT, SendInput,
    VIRTUAL_KEY,
};
use windows::Win32::UI::WindowsAndMessaging::{
    GetCursorPos, GetSystemMetrics, SM_CXVIRTUALSCREEN, SM_CYVIRTUALSCREEN, SM_XVIRTUALSCREEN,
    SM_YVIRTUALSCREEN,
};

use crate::keys::{
    SHORTCUT_MODIFIERS, Typed, VirtualKey, someone_else_holds_a_modifier, typed, virtual_key,
};

/// One notch of a wheel (`WHEEL_DELTA`).
const WHEEL_DELTA: i32 = 120;

fn send(inputs: &[INPUT]) -> Result<(), DriverError> {
    // SAFETY: a slice of initialised INPUT structures and their size.
    let sent = unsafe { SendInput(inputs, std::mem::size_of::<INPUT>() as i32) };
    if sent as usize == inputs.len() {
        Ok(())
    } else {
        Err(DriverError::Failed(format!(
            "SendInput took {sent} of {} events (another desktop, or a window of higher integrity, has the input)",
            inputs.len()
        )))
    }
}

fn mouse(dx: i32, dy: i32, data: i32, flags: MOUSE_EVENT_FLAGS) -> INPUT {
    INPUT {
        r#type: INPUT_MOUSE,
        Anonymous: INPUT_0 {
            mi: MOUSEINPUT {
                dx,
                dy,
                mouseData: data as u32,
                dwFlags: flags,
                time: 0,
                dwExtraInfo: 0,
            },
        },
    }
}

fn keyboard(vk: u16, scan: u16, flags: KEYBD_EVENT_FLAGS) -> INPUT {
    INPUT {
        r#type: INPUT_KEYBOARD,
        Anonymous: INPUT_0 {
            ki: KEYBDINPUT {
                wVk: VIRTUAL_KEY(vk),
                wScan: scan,
                dwFlags: flags,
                time: 0,
                dwExtraInfo: 0,
            },
        },
    }
}

fn vk_event(k: VirtualKey, down: bool) -> INPUT {
    let mut flags = KEYBD_EVENT_FLAGS(0);
    if k.extended {
        flags |= KEYEVENTF_EXTENDEDKEY;
    }
    if !down {
        flags |= KEYEVENTF_KEYUP;
    }
    keyboard(k.vk, 0, flags)
}

/// The virtual screen, as the system measures it now.
pub fn virtual_screen() -> PhysicalRect {
    // SAFETY: plain metric queries.
    unsafe {
        PhysicalRect {
            x: GetSystemMetrics(SM_XVIRTUALSCREEN),
            y: GetSystemMetrics(SM_YVIRTUALSCREEN),
            width: GetSystemMetrics(SM_CXVIRTUALSCREEN).max(1) as u32,
            height: GetSystemMetrics(SM_CYVIRTUALSCREEN).max(1) as u32,
        }
    }
}

pub fn pointer() -> Result<(i32, i32), DriverError> {
    let mut p = POINT::default();
    // SAFETY: an out-pointer to a local.
    unsafe { GetCursorPos(&mut p) }
        .map_err(|e| DriverError::Failed(format!("GetCursorPos: {e}")))?;
    Ok((p.x, p.y))
}

pub fn motion(x: i32, y: i32) -> Result<(), DriverError> {
    let screen = virtual_screen();
    let (dx, dy) = crate::dpi::absolute(screen, x, y).ok_or_else(|| {
        DriverError::Failed(format!(
            "({x}, {y}) is outside the virtual screen {screen:?}"
        ))
    })?;
    send(&[mouse(
        dx,
        dy,
        0,
        MOUSEEVENTF_MOVE | MOUSEEVENTF_ABSOLUTE | MOUSEEVENTF_VIRTUALDESK,
    )])
}

/// How long a typed character waits for a person's modifier to go up before it is
/// typed anyway (a key held down for good must not stall typing for ever).
const MODIFIER_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// The shortcut modifiers down on the keyboard now, whoever pressed them.
fn modifiers_down() -> Vec<u16> {
    SHORTCUT_MODIFIERS
        .into_iter()
        // SAFETY: a plain query.
        .filter(|vk| unsafe { GetAsyncKeyState(i32::from(*vk)) } as u16 & 0x8000 != 0)
        .collect()
}

/// Keys and buttons pressed through this driver and not yet released.
#[derive(Default)]
pub struct Held {
    keys: Vec<(Key, VirtualKey)>,
    buttons: Vec<Button>,
}

impl Held {
    pub fn button(&mut self, button: Button, down: bool) -> Result<(), DriverError> {
        let flags = match (button, down) {
            (Button::Left, true) => MOUSEEVENTF_LEFTDOWN,
            (Button::Left, false) => MOUSEEVENTF_LEFTUP,
            (Button::Middle, true) => MOUSEEVENTF_MIDDLEDOWN,
            (Button::Middle, false) => MOUSEEVENTF_MIDDLEUP,
            (Button::Right, true) => MOUSEEVENTF_RIGHTDOWN,
            (Button::Right, false) => MOUSEEVENTF_RIGHTUP,
        };
        send(&[mouse(0, 0, 0, flags)])?;
        self.buttons.retain(|b| *b != button);
        if down {
            self.buttons.push(button);
        }
        Ok(())
    }

    pub fn scroll(&mut self, axis: Axis, positive: bool) -> Result<(), DriverError> {
        let delta = if positive { WHEEL_DELTA } else { -WHEEL_DELTA };
        let flags = match axis {
            Axis::Vertical => MOUSEEVENTF_WHEEL,
            Axis::Horizontal => MOUSEEVENTF_HWHEEL,
        };
        send(&[mouse(0, 0, delta, flags)])
    }

    pub fn key(&mut self, key: Key, down: bool) -> Result<(), DriverError> {
        let vk = virtual_key(key)
            .ok_or_else(|| DriverError::Failed(format!("{} has no virtual key", key.name())))?;
        send(&[vk_event(vk, down)])?;
        self.keys.retain(|(k, _)| *k != key);
        if down {
            self.keys.push((key, vk));
        }
        Ok(())
    }

    /// Types `c` once no one else holds Ctrl, Alt or Win, waiting up to
    /// [`MODIFIER_WAIT`]: a character typed under a person's modifier is a shortcut
    /// (Alt+H opens a Help menu), and a person pressing the emergency chord holds two
    /// of them until its last key lands.
    pub fn type_char(&mut self, c: char) -> Result<(), DriverError> {
        let ours: Vec<u16> = self.keys.iter().map(|(_, vk)| vk.vk).collect();
        let deadline = std::time::Instant::now() + MODIFIER_WAIT;
        while someone_else_holds_a_modifier(&modifiers_down(), &ours)
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        match typed(c) {
            Typed::Key(vk) => send(&[vk_event(vk, true), vk_event(vk, false)]),
            Typed::Units(units) => {
                let mut events = Vec::with_capacity(units.len() * 2);
                for u in &units {
                    events.push(keyboard(0, *u, KEYEVENTF_UNICODE));
                }
                for u in &units {
                    events.push(keyboard(0, *u, KEYEVENTF_UNICODE | KEYEVENTF_KEYUP));
                }
                send(&events)
            }
        }
    }

    pub fn release_all(&mut self) -> Result<(), DriverError> {
        let mut result = Ok(());
        for (_, vk) in std::mem::take(&mut self.keys).into_iter().rev() {
            if let Err(e) = send(&[vk_event(vk, false)]) {
                result = Err(e);
            }
        }
        for b in std::mem::take(&mut self.buttons) {
            let mut h = Held::default();
            if let Err(e) = h.button(b, false) {
                result = Err(e);
            }
        }
        result
    }

    pub fn snapshot(&self) -> HeldInputs {
        HeldInputs {
            keys: self.keys.iter().map(|(k, _)| k.name()).collect(),
            buttons: self.buttons.clone(),
        }
    }
}
