//! The crate's one integration-test binary: each file of `tests/` is a module of it, so
//! the crate and its dependencies are linked once.

mod common;

mod contract;
mod fixtures;
mod number_props;
mod vectors;
