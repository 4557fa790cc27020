//! The Windows desktop driver: DXGI Desktop Duplication capture with GDI where the
//! system has none, SendInput pointer,
//! keys and any Unicode text with per-monitor DPI awareness, top-level windows with
//! their executables, a `RegisterHotKey` emergency chord heard on a thread of its own,
//! the clipboard, launching programs, indicator banners, and accessibility through
//! MSAA (UI Automation is probed, not yet walked: `win/uia.rs`).
//!
//! The coordinate, key, role and naming logic is plain code in its own modules, built
//! and unit-tested on every platform; the system calls are in `win/`, built on Windows
//! only (tested under Wine here, see docs/TESTING.md).

pub mod app_id;
pub mod capture_path;
pub mod dpi;
pub mod keys;
pub mod msaa_roles;
pub mod report;
pub mod uia_model;

#[cfg(windows)]
mod driver;
#[cfg(windows)]
mod win;

#[cfg(windows)]
pub use driver::{PLATFORM, WindowsDesktop};
pub use report::WindowsReport;

/// The default emergency hotkey (PROTOCOL §5.4), registered at open.
pub const DEFAULT_HOTKEY: &str = "ctrl+alt+f12";
