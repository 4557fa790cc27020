//! The crate's one integration-test binary: each file of `tests/` is a module of it, so
//! the crate and its dependencies are linked once.

mod x11_a11y;
mod x11_capture;
mod x11_hotkey;
mod x11_input;
mod x11_layout;
mod x11_qt;
mod x11_stacking;
