//! The driver's view of a top-level window, which accessible top-levels are matched to.

use cc_desktop::WindowInfo;
use cc_protocol::PhysicalRect;

/// A top-level window with what accessibility matching needs besides `WindowInfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toplevel {
    /// What `Driver::windows` reports for it.
    pub info: WindowInfo,
    /// The client area (without the window manager's frame), in physical pixels.
    pub client: PhysicalRect,
}
