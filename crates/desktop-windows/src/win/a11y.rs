//! Accessibility through MSAA, where the system has no UI Automation (Wine) or UI
//! Automation cannot read a window (`uia.rs`), one object per window: a top-level
//! window and its child windows (standard controls are windows), each read with
//! `AccessibleObjectFromWindow(OBJID_CLIENT)`. Where the proxy reports only a generic
//! client (Wine has no Button proxy) the window class says the role. Handles are
//! `hwnd:<hex>`; a password edit's value is never read.

use cc_desktop::{DriverError, ElementHandle, ElementInfo, RawNode, SemanticAction};
use cc_protocol::{PhysicalRect, Role, StateFlag};
use windows::Win32::Foundation::HWND;
use windows::Win32::System::Com::{COINIT_MULTITHREADED, CoInitializeEx};
use windows::Win32::System::Variant::VARIANT;
use windows::Win32::UI::Accessibility::{AccessibleObjectFromWindow, IAccessible};
use windows::Win32::UI::Input::KeyboardAndMouse::IsWindowEnabled;
use windows::Win32::UI::WindowsAndMessaging::{
    BM_CLICK, BM_GETCHECK, GUITHREADINFO, GW_CHILD, GW_HWNDNEXT, GWL_STYLE, GetForegroundWindow,
    GetGUIThreadInfo, GetWindow, GetWindowLongW, GetWindowThreadProcessId, IsWindow,
    IsWindowVisible, OBJID_CLIENT, SendMessageW, WM_GETTEXT, WM_GETTEXTLENGTH, WM_SETTEXT,
};
use windows::core::{BSTR, Interface};

use super::toplevel::{class_name, hwnd, id, window_rect};
use super::variant::int;
use crate::msaa_roles::{ES_PASSWORD, ES_READONLY, class_role, role as msaa_role, states};

/// Joins this thread to COM (the driver may be opened on one thread and driven on
/// another); a second call on the same thread is harmless.
pub fn com_init() {
    // SAFETY: no pointers; an already initialised thread answers S_FALSE or
    // RPC_E_CHANGED_MODE, both fine for calling out-of-process MSAA proxies.
    let _ = unsafe { CoInitializeEx(None, COINIT_MULTITHREADED) };
}

fn handle_of(h: HWND) -> ElementHandle {
    ElementHandle(format!("hwnd:{:x}", id(h)))
}

/// The window a handle names, if the handle is one of ours and the window lives.
pub fn parse(handle: &ElementHandle) -> Option<HWND> {
    let hex = handle.0.strip_prefix("hwnd:")?;
    let h = hwnd(u64::from_str_radix(hex, 16).ok()?);
    // SAFETY: a plain query on a handle value.
    unsafe { IsWindow(Some(h)) }.as_bool().then_some(h)
}

fn accessible(h: HWND) -> Option<IAccessible> {
    let mut ptr: *mut std::ffi::c_void = std::ptr::null_mut();
    // SAFETY: `ptr` receives an IAccessible reference we take ownership of below.
    unsafe {
        AccessibleObjectFromWindow(h, OBJID_CLIENT.0 as u32, &IAccessible::IID, &mut ptr).ok()?;
        (!ptr.is_null()).then(|| IAccessible::from_raw(ptr))
    }
}

fn style(h: HWND) -> u32 {
    // SAFETY: a plain query.
    unsafe { GetWindowLongW(h, GWL_STYLE) as u32 }
}

fn window_text(h: HWND) -> String {
    // SAFETY: WM_GETTEXT into a buffer of the length passed (plus the NUL).
    unsafe {
        let len = SendMessageW(h, WM_GETTEXTLENGTH, None, None).0.max(0) as usize;
        let mut buf = vec![0u16; len + 1];
        let n = SendMessageW(
            h,
            WM_GETTEXT,
            Some(windows::Win32::Foundation::WPARAM(buf.len())),
            Some(windows::Win32::Foundation::LPARAM(buf.as_mut_ptr() as isize)),
        )
        .0
        .max(0) as usize;
        String::from_utf16_lossy(&buf[..n.min(len)])
    }
}

fn is_password(h: HWND) -> bool {
    class_name(h).eq_ignore_ascii_case("edit") && style(h) & ES_PASSWORD != 0
}

/// What one window says about itself, MSAA first, the window's own facts where MSAA is
/// silent.
struct Facts {
    role: Role,
    name: String,
    value: Option<String>,
    states: Vec<StateFlag>,
    rect: Option<PhysicalRect>,
    password: bool,
}

fn facts(h: HWND, top: bool) -> Facts {
    let class = class_name(h);
    let style = style(h);
    let acc = accessible(h);
    let me = VARIANT::from(0i32);
    // SAFETY: calls on a live COM object with a child id of "self".
    let (mrole, mname, mvalue, mstate) = unsafe {
        match &acc {
            Some(a) => (
                a.get_accRole(&me).ok().and_then(|v| int(&v)),
                a.get_accName(&me).ok().map(|b| b.to_string()),
                a.get_accValue(&me).ok().map(|b| b.to_string()),
                a.get_accState(&me).ok().and_then(|v| int(&v)),
            ),
            None => (None, None, None, None),
        }
    };
    let generic = |r: Role| matches!(r, Role::Pane | Role::Custom | Role::Window);
    let mut role = mrole.map(msaa_role).unwrap_or(Role::Custom);
    if top {
        role = if role == Role::Dialog {
            Role::Dialog
        } else {
            Role::Window
        };
    } else if generic(role) {
        role = class_role(&class, style).unwrap_or(Role::Pane);
    }
    let password = is_password(h) || mstate.is_some_and(|s| s as u32 & 0x2000_0000 != 0);
    let mut bits = mstate.map(|s| s as u32).unwrap_or(0);
    // SAFETY: plain queries.
    unsafe {
        if !IsWindowEnabled(h).as_bool() {
            bits |= 0x1;
        }
        if !IsWindowVisible(h).as_bool() {
            bits |= 0x8000;
        }
    }
    if class.eq_ignore_ascii_case("edit") && style & ES_READONLY != 0 {
        bits |= 0x40;
    }
    if matches!(role, Role::Checkbox | Role::Radiobutton) && class.eq_ignore_ascii_case("button") {
        bits |= button_check_bits(h);
    }
    if password {
        bits |= 0x2000_0000;
    }
    if focused_window() == Some(h) {
        bits |= 0x4;
    }
    let name = mname.filter(|n| !n.is_empty()).unwrap_or_else(|| {
        if role == Role::Edit {
            String::new()
        } else {
            window_text(h)
        }
    });
    let value = if password {
        None
    } else if role == Role::Edit {
        Some(mvalue.unwrap_or_else(|| window_text(h)))
    } else {
        mvalue.filter(|v| !v.is_empty())
    };
    Facts {
        role,
        name,
        value,
        states: states(bits, role == Role::Edit),
        rect: window_rect(h),
        password,
    }
}

/// A standard check or radio button's state as MSAA bits (`CHECKED`, `MIXED`), read
/// with `BM_GETCHECK`: Wine's generic client object reports no check state.
fn button_check_bits(h: HWND) -> u32 {
    // SAFETY: a message without pointers to a live window.
    let check = unsafe { SendMessageW(h, BM_GETCHECK, None, None) }.0;
    crate::msaa_roles::check_bits(check)
}

/// The window with keyboard focus in the foreground thread (another process's too).
fn focused_window() -> Option<HWND> {
    // SAFETY: a sized out-structure and plain queries.
    unsafe {
        let fg = GetForegroundWindow();
        let thread = GetWindowThreadProcessId(fg, None);
        let mut info = GUITHREADINFO {
            cbSize: std::mem::size_of::<GUITHREADINFO>() as u32,
            ..Default::default()
        };
        GetGUIThreadInfo(thread, &mut info).ok()?;
        (!info.hwndFocus.is_invalid()).then_some(info.hwndFocus)
    }
}

pub fn focused_is_password() -> bool {
    focused_window().is_some_and(is_password)
}

fn children(h: HWND) -> Vec<HWND> {
    let mut out = Vec::new();
    // SAFETY: walking sibling links of live windows; a window that closes mid-walk
    // ends the walk.
    unsafe {
        let mut c = GetWindow(h, GW_CHILD).ok();
        while let Some(child) = c {
            out.push(child);
            c = GetWindow(child, GW_HWNDNEXT).ok();
        }
    }
    out
}

fn node(h: HWND, depth: usize, budget: &mut usize) -> Option<RawNode> {
    if *budget == 0 {
        return None;
    }
    *budget -= 1;
    let top = depth == 0;
    let f = facts(h, top);
    let mut kids = Vec::new();
    if depth < crate::tree_limits::MAX_DEPTH {
        for c in children(h) {
            match node(c, depth + 1, budget) {
                Some(n) => kids.push(n),
                None => break,
            }
        }
    }
    Some(RawNode {
        handle: handle_of(h),
        role: f.role,
        name: f.name,
        value: f.value,
        states: f.states,
        rect: f.rect,
        window_id: top.then(|| id(h)),
        children: kids,
    })
}

/// The tree of one top-level window, taking a node of `budget` per window object;
/// `None` once the budget is spent.
pub fn window_tree(window: u64, budget: &mut usize) -> Option<RawNode> {
    com_init();
    node(hwnd(window), 0, budget)
}

fn root_of(h: HWND) -> u64 {
    use windows::Win32::UI::WindowsAndMessaging::{GA_ROOT, GetAncestor};
    // SAFETY: a plain query.
    id(unsafe { GetAncestor(h, GA_ROOT) })
}

pub fn element(handle: &ElementHandle) -> Option<ElementInfo> {
    com_init();
    let h = parse(handle)?;
    let top = root_of(h) == id(h);
    let f = facts(h, top);
    let mut actions = Vec::new();
    if matches!(f.role, Role::Button | Role::Checkbox | Role::Radiobutton) {
        actions.push(SemanticAction::Invoke);
    }
    if matches!(f.role, Role::Checkbox) {
        actions.push(SemanticAction::Toggle);
    }
    Some(ElementInfo {
        role: f.role,
        name: f.name,
        window_id: Some(root_of(h)),
        rect: f.rect,
        settable_text: f.role == Role::Edit && f.states.contains(&StateFlag::Editable),
        states: f.states,
        value: f.value.filter(|_| !f.password),
        actions,
    })
}

pub fn perform(handle: &ElementHandle, action: SemanticAction) -> Result<(), DriverError> {
    com_init();
    let h = parse(handle).ok_or_else(|| DriverError::Failed("the element is gone".into()))?;
    if action == SemanticAction::Select {
        return Err(DriverError::Unavailable(
            "MSAA selection is not supported by this driver".into(),
        ));
    }
    let me = VARIANT::from(0i32);
    // SAFETY: a call on a live COM object with the "self" child id.
    let done = accessible(h).is_some_and(|a| unsafe { a.accDoDefaultAction(&me) }.is_ok());
    if done {
        return Ok(());
    }
    // Without an MSAA default action (Wine), a standard button is pressed the way its
    // own proxy would: BM_CLICK.
    if class_name(h).eq_ignore_ascii_case("button") {
        // SAFETY: a message without pointers to a live window.
        unsafe { SendMessageW(h, BM_CLICK, None, None) };
        return Ok(());
    }
    Err(DriverError::Unavailable(format!(
        "the element ({}) has no default action",
        class_name(h)
    )))
}

pub fn set_text(handle: &ElementHandle, text: &str) -> Result<(), DriverError> {
    com_init();
    let h = parse(handle).ok_or_else(|| DriverError::Failed("the element is gone".into()))?;
    let me = VARIANT::from(0i32);
    let bstr = BSTR::from(text);
    // SAFETY: a call on a live COM object; the BSTR lives across the call.
    let via_msaa = accessible(h).is_some_and(|a| unsafe { a.put_accValue(&me, &bstr) }.is_ok());
    if via_msaa {
        return Ok(());
    }
    if !class_name(h).eq_ignore_ascii_case("edit") {
        return Err(DriverError::Unavailable(
            "the element takes no text through MSAA".into(),
        ));
    }
    let wide = super::wide(text);
    // SAFETY: WM_SETTEXT with a NUL-terminated buffer alive for the (synchronous) call.
    let ok = unsafe {
        SendMessageW(
            h,
            WM_SETTEXT,
            None,
            Some(windows::Win32::Foundation::LPARAM(wide.as_ptr() as isize)),
        )
    };
    if ok.0 == 0 {
        return Err(DriverError::Failed(
            "the edit control refused the text".into(),
        ));
    }
    Ok(())
}
