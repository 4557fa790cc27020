//! The invariants behind each fuzz target in `fuzz/`. Every check takes the fuzzer's
//! bytes, drives one real component with them, and panics when an invariant breaks
//! (a panic is what libFuzzer reports as a crash). Keeping the checks here, not in the
//! fuzz crate, lets `cargo test` on stable Rust replay every committed corpus
//! (`tests/replay.rs`).

pub mod config_layers;
pub mod contract_canon;
pub mod governed;
pub mod http_auth;
pub mod stdio_line;
pub mod tool_args;

/// A check: panics when the input breaks an invariant.
pub type Check = fn(&[u8]);

/// Every check by its fuzz target's name (the directory of its corpus).
pub const CHECKS: &[(&str, Check)] = &[
    ("stdio_line", stdio_line::check),
    ("tool_args", tool_args::check),
    ("config_layers", config_layers::check),
    ("contract_canon", contract_canon::check),
    ("http_auth", http_auth::check),
    ("governed", governed::check),
];
