//! The governed tools' limits have one home, `cc_contract::limits`; the documents that
//! quote them are checked here, so a changed limit fails until its documents follow.

use std::path::Path;

use cc_contract::limits::{DEFAULT_TTL_MS, MAX_ACTION_BUDGET, MAX_PAGE, MAX_TTL_MS};
use cc_governance::approvals::DEFAULT_GRANT_TTL_MS;

/// A document of the repository, with every run of whitespace made one space (quotes
/// may wrap across lines).
fn document(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn governance_md_quotes_the_contract_limits() {
    let doc = document("docs/GOVERNANCE.md");
    for quote in [
        format!("ttl_ms` (≤ {MAX_TTL_MS}), `action_budget` (≤ {MAX_ACTION_BUDGET})"),
        format!("actionBudget (1–{MAX_ACTION_BUDGET})"),
        format!("limit` (at most {MAX_PAGE})"),
        format!("expires_in_ms` (default {DEFAULT_TTL_MS}, at most {MAX_TTL_MS})"),
        format!("`ttl_ms` (default {DEFAULT_GRANT_TTL_MS}, at most {MAX_TTL_MS})"),
    ] {
        assert!(
            doc.contains(&quote),
            "docs/GOVERNANCE.md does not say {quote:?}"
        );
    }
}

#[test]
fn readme_quotes_the_grant_lifetime() {
    let doc = document("README.md");
    let quote = format!("`ttl_ms` (default {DEFAULT_GRANT_TTL_MS}, at most {MAX_TTL_MS})");
    assert!(doc.contains(&quote), "README.md does not say {quote:?}");
}
