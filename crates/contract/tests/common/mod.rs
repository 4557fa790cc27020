//! Shared helpers of the integration tests: the fixtures live in the shared folder beside
//! the repository and are read in place, never copied.

#![allow(dead_code)]

use std::path::PathBuf;

use serde_json::Value;

/// `shared/fixtures`, found relative to this crate.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures")
}

/// The text of `shared/fixtures/<relative>`.
pub fn fixture_text(relative: &str) -> String {
    let path = fixtures_dir().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// `shared/fixtures/<relative>` parsed as JSON (member order kept).
pub fn fixture_json(relative: &str) -> Value {
    serde_json::from_str(&fixture_text(relative))
        .unwrap_or_else(|e| panic!("parse {relative}: {e}"))
}
