//! The clipboard as Unicode text (`CF_UNICODETEXT`), its owner's executable, and the
//! mark password managers set to keep a copy out of clipboard monitors.

use std::sync::atomic::{AtomicU32, Ordering};

use cc_desktop::{ClipboardContent, DriverError};
use windows::Win32::Foundation::{GlobalFree, HANDLE, HGLOBAL};
use windows::Win32::System::DataExchange::{
    CloseClipboard, EmptyClipboard, GetClipboardData, GetClipboardOwner,
    GetClipboardSequenceNumber, IsClipboardFormatAvailable, OpenClipboard,
    RegisterClipboardFormatW, SetClipboardData,
};
use windows::Win32::System::Memory::{GMEM_MOVEABLE, GlobalAlloc, GlobalLock, GlobalUnlock};
use windows::core::PCWSTR;

const CF_UNICODETEXT: u32 = 13;
/// How `clipboard.read` names this server's own copy (as the X11 driver does).
const SELF_OWNER: &str = "computer-control";
/// The format a password manager adds to say "do not record this copy".
const SECRET_FORMAT: &str = "ExcludeClipboardContentFromMonitorProcessing";

/// The clipboard, opened for the life of the value (another program may hold it for a
/// moment: a few tries).
struct Open;

impl Open {
    fn new() -> Result<Open, DriverError> {
        let mut last = String::new();
        for _ in 0..20 {
            // SAFETY: no owner window; closed in Drop.
            match unsafe { OpenClipboard(None) } {
                Ok(()) => return Ok(Open),
                Err(e) => last = e.to_string(),
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        Err(DriverError::Failed(format!(
            "the clipboard is held by another program: {last}"
        )))
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        // SAFETY: we opened it.
        let _ = unsafe { CloseClipboard() };
    }
}

fn secret_format() -> u32 {
    let name = super::wide(SECRET_FORMAT);
    // SAFETY: a NUL-terminated name alive for the call.
    unsafe { RegisterClipboardFormatW(PCWSTR(name.as_ptr())) }
}

pub fn read() -> Result<ClipboardContent, DriverError> {
    let _open = Open::new()?;
    // SAFETY: the clipboard is open; the data handle is locked while read and not kept.
    unsafe {
        let owner_window = GetClipboardOwner().ok();
        let owner = owner_window
            .and_then(super::toplevel::pid)
            .and_then(super::toplevel::app_id)
            .or_else(|| owner_window.map(|h| format!("{:#x}", super::toplevel::id(h))));
        let owner = owner_of(
            GetClipboardSequenceNumber(),
            OUR_COPY.load(Ordering::SeqCst),
            owner,
        );
        let fmt = secret_format();
        if fmt != 0 && IsClipboardFormatAvailable(fmt).is_ok() {
            return Ok(ClipboardContent {
                text: None,
                owner,
                secret: true,
            });
        }
        if IsClipboardFormatAvailable(CF_UNICODETEXT).is_err() {
            return Ok(ClipboardContent {
                text: None,
                owner,
                secret: false,
            });
        }
        let data = GetClipboardData(CF_UNICODETEXT)
            .map_err(|e| DriverError::Failed(format!("GetClipboardData: {e}")))?;
        let global = HGLOBAL(data.0);
        let ptr = GlobalLock(global) as *const u16;
        if ptr.is_null() {
            return Err(DriverError::Failed(
                "the clipboard text cannot be locked".into(),
            ));
        }
        let size = windows::Win32::System::Memory::GlobalSize(global) / 2;
        let units = std::slice::from_raw_parts(ptr, size);
        let text = super::from_wide(units);
        let _ = GlobalUnlock(global);
        Ok(ClipboardContent {
            text: Some(text),
            owner,
            secret: false,
        })
    }
}

/// The clipboard's sequence number right after this process's last write: the copy
/// is still ours while it has not moved. A write opens the clipboard without an owner
/// window (the worker thread has none), so `GetClipboardOwner` cannot tell.
static OUR_COPY: AtomicU32 = AtomicU32::new(0);

/// The owner to report for the clipboard at `sequence` whose owner window is `owner`.
fn owner_of(sequence: u32, ours: u32, owner: Option<String>) -> Option<String> {
    if sequence != 0 && sequence == ours {
        Some(SELF_OWNER.to_string())
    } else {
        owner
    }
}

pub fn write(text: &str) -> Result<(), DriverError> {
    put(text)?;
    // SAFETY: a plain query.
    OUR_COPY.store(unsafe { GetClipboardSequenceNumber() }, Ordering::SeqCst);
    Ok(())
}

fn put(text: &str) -> Result<(), DriverError> {
    let units = super::wide(text);
    let _open = Open::new()?;
    // SAFETY: the clipboard is open; the global block holds `units` whole and belongs
    // to the system once SetClipboardData succeeds (freed here only if it fails).
    unsafe {
        EmptyClipboard().map_err(|e| DriverError::Failed(format!("EmptyClipboard: {e}")))?;
        let global = GlobalAlloc(GMEM_MOVEABLE, units.len() * 2)
            .map_err(|e| DriverError::Failed(format!("GlobalAlloc: {e}")))?;
        let ptr = GlobalLock(global) as *mut u16;
        if ptr.is_null() {
            let _ = GlobalFree(Some(global));
            return Err(DriverError::Failed(
                "the clipboard block cannot be locked".into(),
            ));
        }
        std::ptr::copy_nonoverlapping(units.as_ptr(), ptr, units.len());
        let _ = GlobalUnlock(global);
        if let Err(e) = SetClipboardData(CF_UNICODETEXT, Some(HANDLE(global.0))) {
            let _ = GlobalFree(Some(global));
            return Err(DriverError::Failed(format!("SetClipboardData: {e}")));
        }
    }
    Ok(())
}
