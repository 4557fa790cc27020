//! Shared helpers of the integration tests: the upstream fixtures and digest vectors,
//! vendored in `tests/fixtures` (provenance and licences in its `SOURCE.md`).

#![allow(dead_code)]

use std::path::PathBuf;

use serde_json::Value;

/// `tests/fixtures` of this crate.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The text of `tests/fixtures/<relative>`.
pub fn fixture_text(relative: &str) -> String {
    let path = fixtures_dir().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// `tests/fixtures/<relative>` parsed as JSON (member order kept).
pub fn fixture_json(relative: &str) -> Value {
    serde_json::from_str(&fixture_text(relative))
        .unwrap_or_else(|e| panic!("parse {relative}: {e}"))
}
