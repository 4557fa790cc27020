//! The crate's one integration-test binary: each file of `tests/` is a module of it, so
//! the crate and its dependencies are linked once. The desks come from `cc-test-kit`.

mod wlroots_driver;
mod wlroots_stacking;
