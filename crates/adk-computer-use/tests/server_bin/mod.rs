//! Where the end-to-end tests find the real `computer-control` server.
//!
//! A binary crate cannot be a dev-dependency, and a test must not run cargo itself: a
//! nested `cargo build -p computer-control` resolves other features than the workspace
//! build, so it recompiles the server while the tests run and rewrites the binary other
//! test processes are executing. `cargo test --workspace` (what `scripts/test.sh` runs)
//! builds `target/debug/computer-control` before any test starts, because the
//! `computer-control` package has integration tests; running this crate's tests alone
//! needs `cargo build -p computer-control` first. `COMPUTER_CONTROL_BIN` names another
//! binary.

use std::path::{Path, PathBuf};

/// The server binary, or a panic that says how to build it.
pub fn server_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("COMPUTER_CONTROL_BIN") {
        return PathBuf::from(path);
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"));
    let binary = target.join("debug").join("computer-control");
    assert!(
        binary.exists(),
        "no computer-control binary at {}: run `cargo build -p computer-control` first \
         (`cargo test --workspace` builds it), or set COMPUTER_CONTROL_BIN",
        binary.display()
    );
    binary
}
