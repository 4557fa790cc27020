//! Top-level windows: the list in Z order with pids and executable names, focus, and
//! the window a point reaches as the system hit-tests it.

use cc_desktop::{DriverError, WindowInfo};
use windows::Win32::Foundation::{CloseHandle, HWND, LPARAM, POINT, RECT};
use windows::Win32::System::Threading::{
    AttachThreadInput, GetCurrentThreadId, OpenProcess, PROCESS_NAME_WIN32,
    PROCESS_QUERY_LIMITED_INFORMATION, QueryFullProcessImageNameW,
};
use windows::Win32::UI::WindowsAndMessaging::{
    BringWindowToTop, EnumWindows, GA_ROOT, GWL_EXSTYLE, GetAncestor, GetClassNameW,
    GetDesktopWindow, GetForegroundWindow, GetWindowLongW, GetWindowRect, GetWindowTextW,
    GetWindowThreadProcessId, HWND_TOP, IsIconic, IsWindow, IsWindowVisible, SW_RESTORE,
    SWP_NOMOVE, SWP_NOSIZE, SetForegroundWindow, SetWindowPos, ShowWindow, WS_EX_TOOLWINDOW,
    WindowFromPoint,
};
use windows::core::{BOOL, PWSTR};

use super::desk_thread::INDICATOR_CLASS;

pub fn hwnd(id: u64) -> HWND {
    HWND(id as usize as *mut _)
}

pub fn id(h: HWND) -> u64 {
    h.0 as usize as u64
}

/// Whether a window with this id exists (a handle may outlive its window).
pub fn exists(id: u64) -> bool {
    // SAFETY: a plain query on a handle value.
    unsafe { IsWindow(Some(hwnd(id))) }.as_bool()
}

pub fn class_name(h: HWND) -> String {
    let mut buf = [0u16; 256];
    // SAFETY: a buffer of the length passed.
    let n = unsafe { GetClassNameW(h, &mut buf) };
    String::from_utf16_lossy(&buf[..n.max(0) as usize])
}

pub fn title(h: HWND) -> String {
    let mut buf = vec![0u16; 1024];
    // SAFETY: a buffer of the length passed.
    let n = unsafe { GetWindowTextW(h, &mut buf) };
    String::from_utf16_lossy(&buf[..n.max(0) as usize])
}

pub fn window_rect(h: HWND) -> Option<cc_protocol::PhysicalRect> {
    let mut r = RECT::default();
    // SAFETY: an out-pointer to a local.
    unsafe { GetWindowRect(h, &mut r) }.ok()?;
    Some(super::monitors::rect(r))
}

pub fn pid(h: HWND) -> Option<u32> {
    let mut pid = 0u32;
    // SAFETY: an out-pointer to a local.
    unsafe { GetWindowThreadProcessId(h, Some(&mut pid)) };
    (pid != 0).then_some(pid)
}

/// The executable name of a process, lowercased; `None` when the process cannot be
/// opened (another session, higher integrity).
pub fn app_id(pid: u32) -> Option<String> {
    // SAFETY: the handle is closed below; the buffer and its length go together.
    unsafe {
        let h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, false, pid).ok()?;
        let mut buf = vec![0u16; 1024];
        let mut len = buf.len() as u32;
        let r =
            QueryFullProcessImageNameW(h, PROCESS_NAME_WIN32, PWSTR(buf.as_mut_ptr()), &mut len);
        let _ = CloseHandle(h);
        r.ok()?;
        Some(crate::app_id::from_image_path(&String::from_utf16_lossy(
            &buf[..len as usize],
        )))
    }
}

/// Facts about one top-level window.
pub fn info(h: HWND, foreground: HWND) -> Option<WindowInfo> {
    let rect = window_rect(h)?;
    let pid = pid(h);
    Some(WindowInfo {
        id: id(h),
        app_id: pid.and_then(app_id).unwrap_or_else(|| class_name(h)),
        pid,
        title: title(h),
        rect,
        focused: h == foreground,
    })
}

unsafe extern "system" fn collect(h: HWND, data: LPARAM) -> BOOL {
    // SAFETY: `data` is the `&mut Vec` `list` passed, alive for the enumeration.
    let out = unsafe { &mut *(data.0 as *mut Vec<HWND>) };
    out.push(h);
    true.into()
}

/// Whether a window is one a person sees as an application window: visible, not a
/// tool window, not this driver's indicator, with an area.
fn listed(h: HWND) -> bool {
    // SAFETY: plain queries on a window handle (a stale one answers false/0).
    unsafe {
        if !IsWindowVisible(h).as_bool() {
            return false;
        }
        let ex = GetWindowLongW(h, GWL_EXSTYLE) as u32;
        if ex & WS_EX_TOOLWINDOW.0 != 0 {
            return false;
        }
    }
    if class_name(h).starts_with(INDICATOR_CLASS) {
        return false;
    }
    window_rect(h).is_some_and(|r| r.width > 0 && r.height > 0)
}

/// Top-level windows, topmost first (EnumWindows goes in Z order).
pub fn list() -> Result<Vec<WindowInfo>, DriverError> {
    let mut handles: Vec<HWND> = Vec::new();
    // SAFETY: the callback only pushes into `handles`, which outlives the call.
    unsafe { EnumWindows(Some(collect), LPARAM(&mut handles as *mut _ as isize)) }
        .map_err(|e| DriverError::Failed(format!("EnumWindows: {e}")))?;
    // SAFETY: a plain query.
    let fg = unsafe { GetForegroundWindow() };
    Ok(handles
        .into_iter()
        .filter(|h| listed(*h))
        .filter_map(|h| info(h, fg))
        .collect())
}

/// The window if it exists and is on screen (visible, not minimized).
pub fn shown(id: u64) -> Option<WindowInfo> {
    let h = hwnd(id);
    // SAFETY: plain queries on a handle value.
    let on_screen = unsafe {
        IsWindow(Some(h)).as_bool() && IsWindowVisible(h).as_bool() && !IsIconic(h).as_bool()
    };
    if !on_screen || !listed(h) {
        return None;
    }
    // SAFETY: a plain query.
    info(h, unsafe { GetForegroundWindow() })
}

/// Restores, raises and focuses a window. Windows lets a background process take the
/// foreground only in some cases; joining the foreground thread's input state for the
/// call is the documented way around the lock for an input-injecting tool.
pub fn focus(id: u64) -> Result<(), DriverError> {
    let h = hwnd(id);
    // SAFETY: calls on a window handle value; AttachThreadInput is undone below.
    unsafe {
        if !IsWindow(Some(h)).as_bool() {
            return Err(DriverError::Failed(format!("no window {id:#x}")));
        }
        if IsIconic(h).as_bool() {
            let _ = ShowWindow(h, SW_RESTORE);
        }
        if !SetForegroundWindow(h).as_bool() {
            let fg = GetForegroundWindow();
            let fg_thread = GetWindowThreadProcessId(fg, None);
            let me = GetCurrentThreadId();
            let attached = fg_thread != 0 && AttachThreadInput(me, fg_thread, true).as_bool();
            let _ = SetForegroundWindow(h);
            if attached {
                let _ = AttachThreadInput(me, fg_thread, false);
            }
        }
        let _ = BringWindowToTop(h);
        let _ = SetWindowPos(h, Some(HWND_TOP), 0, 0, 0, 0, SWP_NOMOVE | SWP_NOSIZE);
        if GetForegroundWindow() != h {
            return Err(DriverError::Failed(format!(
                "window {id:#x} did not take the foreground (the system's foreground lock refused it)"
            )));
        }
    }
    Ok(())
}

/// The top-level window a click at (x, y) reaches, as the system hit-tests it.
pub fn at(x: i32, y: i32) -> Option<WindowInfo> {
    // SAFETY: plain queries.
    unsafe {
        let child = WindowFromPoint(POINT { x, y });
        if child.is_invalid() {
            return None;
        }
        let root = GetAncestor(child, GA_ROOT);
        if root.is_invalid() || root == GetDesktopWindow() {
            return None;
        }
        if class_name(root).starts_with(INDICATOR_CLASS) {
            return None;
        }
        info(root, GetForegroundWindow())
    }
}
