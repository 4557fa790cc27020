//! What more than one crate's tests and benchmarks share (dev-only, never published):
//! a private X11 desk (`x11`, feature `x11`: Xvfb, a session bus, openbox and the
//! applications a test starts; `x11_windows`: windows arranged on it through the
//! window manager, and windows no window manager manages), a private headless sway
//! desk (`sway`), a private headless GNOME desk (`gnome`, feature `gnome`), a private
//! Wine desk (`wine`: Xvfb and the Wine prefix where the Windows build runs), and private
//! temporary directories (`temp`). Each desk is private to
//! the test that starts it, so tests run in parallel in one process.
//!
//! Beside them, one check of the whole workspace (`import_circles`, a test only): no
//! crate's modules import each other in a loop.
//!
//! What needs a crate's own binary (`CARGO_BIN_EXE_*` exists only in that crate's
//! tests) stays in that crate's `tests/`.

#[cfg(feature = "gnome")]
pub mod consent;
#[cfg(feature = "gnome")]
pub mod gnome;
#[cfg(feature = "gnome")]
pub mod gnome_monitor;
#[cfg(test)]
mod import_circles;
pub mod sway;
pub mod temp;
pub mod wine;
#[cfg(feature = "x11")]
pub mod x11;
#[cfg(feature = "x11")]
pub mod x11_windows;

pub use temp::TempDir;
