//! The crate's one integration-test binary: each file of `tests/` is a module of it, so
//! the crate and its dependencies are linked once. A file that needs a feature says so
//! in its own `#![cfg]`; the support modules are built for the features their users need.

#[cfg(any(feature = "mcp", feature = "local"))]
mod runtime_support;
#[cfg(any(feature = "mcp", feature = "local"))]
mod server_bin;
#[cfg(feature = "sqlite")]
mod support;

mod binding_props;
mod graph_e2e;
mod graph_restart;
mod graph_rules;
mod graph_x11;
mod local_runtime;
mod mcp_http_runtime;
mod mcp_https;
mod mcp_runtime;
mod verification_props;
