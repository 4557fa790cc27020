//! The crate's one integration-test binary: each file of `tests/` is a module of it, so
//! the crate and its dependencies are linked once.

mod support;

mod approvals;
mod envelope;
mod error_codes;
mod governed;
mod limits_in_docs;
mod preview_expiry;
mod principals;
mod schedules;
mod upstream_wire;
