//! What the driver found about this Windows desktop, for `computer-control check`: a
//! plain value so the check's wording is unit-tested on every platform.

use crate::capture_path::PathChoice;
use crate::tree_source::TreeSource;

/// What `computer-control check` reports about this desktop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowsReport {
    /// The process is per-monitor DPI aware (v2, or v1 where the system has no v2):
    /// every coordinate is physical.
    pub dpi_aware: bool,
    /// Monitors on the desktop.
    pub monitors: usize,
    /// The emergency hotkey registration, or why it failed.
    pub hotkey: Result<(), String>,
    /// The accessibility API the tree is read through: UI Automation, or MSAA and why
    /// (Wine has no UI Automation).
    pub tree_source: TreeSource,
    /// The capture path in use (Desktop Duplication or GDI), and why GDI when it is.
    pub capture: PathChoice,
}
