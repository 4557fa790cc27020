//! The Win32 side of the driver. Every call into the system is here, and only here
//! may the crate use `unsafe` (FFI: the workspace denies it elsewhere; scripts/test.sh
//! lists the files allowed to). Each block says why its call is sound.
#![allow(unsafe_code)]

pub mod a11y;
pub mod capture;
pub mod clipboard;
pub mod desk_thread;
pub mod dxgi;
pub mod input;
pub mod monitors;
pub mod toplevel;
pub mod uia;
pub mod variant;

/// Wide NUL-terminated text for a `PCWSTR`.
pub fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(std::iter::once(0)).collect()
}

/// The text of a UTF-16 buffer up to its first NUL.
pub fn from_wide(buf: &[u16]) -> String {
    let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    String::from_utf16_lossy(&buf[..end])
}
