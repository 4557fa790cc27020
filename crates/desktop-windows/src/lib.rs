//! The Windows desktop driver: DXGI Desktop Duplication capture with GDI where the
//! system has none, SendInput pointer,
//! keys and any Unicode text with per-monitor DPI awareness, top-level windows with
//! their executables, a `RegisterHotKey` emergency chord heard on a thread of its own,
//! the clipboard, launching programs, indicator banners, and accessibility through UI
//! Automation where the system has it (`uia_tree.rs` walks, `win/uia.rs` reads), MSAA
//! where it does not (Wine) or for a window UI Automation cannot read (`win/a11y.rs`).
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
pub mod tree_limits;
pub mod tree_source;
pub mod uia_model;
pub mod uia_tree;

#[cfg(windows)]
mod driver;
#[cfg(windows)]
mod win;

#[cfg(windows)]
pub use driver::{PLATFORM, WindowsDesktop};
pub use report::WindowsReport;
pub use tree_source::TreeSource;

/// The default emergency hotkey (PROTOCOL §5.4), registered at open.
pub const DEFAULT_HOTKEY: &str = "ctrl+alt+f12";
