//! The audit-export envelope of `get_session_events` (upstream v8
//! `audit-export.schema.json`): `{schema_uri, schema_digest, events, next_sequence}`.
//!
//! `schema_digest` is, as upstream computes it, the SHA-256 of the schema printed by
//! `JSON.stringify` — insertion order, no whitespace — so the object below keeps the
//! upstream key order exactly (serde_json's `preserve_order` is on in the workspace).

use cc_contract::{SessionEvent, sha256_hex};
use serde_json::{Value, json};

/// The schema's URI (also its `$id`).
pub const AUDIT_SCHEMA_URI: &str = "computer://audit/schema";

/// The audit-export JSON Schema, key order as upstream.
pub fn audit_schema() -> Value {
    let hex64 = json!({"type": "string", "pattern": "^[a-f0-9]{64}$"});
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": AUDIT_SCHEMA_URI,
        "title": "Computer Use v8 Audit Export",
        "type": "object",
        "additionalProperties": false,
        "required": ["schema_uri", "schema_digest", "events", "next_sequence"],
        "properties": {
            "schema_uri": {"const": AUDIT_SCHEMA_URI},
            "schema_digest": hex64,
            "next_sequence": {"type": "integer", "minimum": 0},
            "events": {
                "type": "array",
                "maxItems": cc_contract::limits::MAX_PAGE,
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["schemaVersion", "eventId", "sequence", "sessionId", "type", "at", "payload"],
                    "properties": {
                        "schemaVersion": {"const": 1},
                        "eventId": {"type": "string", "minLength": 1},
                        "sequence": {"type": "integer", "minimum": 1},
                        "sessionId": {"type": "string", "minLength": 1},
                        "actionId": {"type": "string", "minLength": 1},
                        "type": {"type": "string", "minLength": 1},
                        "at": {"type": "string", "format": "date-time"},
                        "principalId": {"type": "string", "minLength": 1},
                        "payload": {"type": "object"},
                        "integrity": {
                            "type": "object",
                            "additionalProperties": false,
                            "required": ["previousHash", "hash"],
                            "properties": {
                                "previousHash": hex64,
                                "hash": hex64,
                            },
                        },
                    },
                },
            },
        },
    })
}

/// SHA-256 of the schema as `JSON.stringify` prints it.
pub fn audit_schema_digest() -> String {
    sha256_hex(&audit_schema().to_string())
}

/// One page of the export. `next_sequence` is the sequence of the last event returned
/// (the `after_sequence` of the next page), or `after` when the page is empty.
pub fn export(events: &[SessionEvent], after: u64) -> Value {
    let next = events.last().map_or(after, |e| e.sequence);
    json!({
        "schema_uri": AUDIT_SCHEMA_URI,
        "schema_digest": audit_schema_digest(),
        "events": events,
        "next_sequence": next,
    })
}

/// Every session of a journal, of every principal, with its whole chain of events:
/// what the operator channel's `GET /journal` hands an auditor (the fleet plane), who
/// verifies each chain with [`crate::verify_chain`] without trusting the desk's word.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SessionJournal {
    /// The session as stored (its state, principal, budgets).
    pub session: cc_contract::Session,
    /// Its events from sequence 1, in order.
    pub events: Vec<SessionEvent>,
}

impl crate::Governance {
    /// The whole journal, oldest session first: the operator's view spans every
    /// principal, like [`crate::Governance::pending_approvals`].
    pub fn export_journal(&self) -> crate::GovResult<Vec<SessionJournal>> {
        let conn = self.conn();
        let sessions: Vec<cc_contract::Session> =
            crate::store::get_all(&conn, "SELECT data FROM sessions ORDER BY rowid", [])?;
        sessions
            .into_iter()
            .map(|session| {
                let events = crate::store::events(&conn, &session.session_id, 0, u32::MAX)?;
                Ok(SessionJournal { session, events })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The digest of upstream's `fixtures/v8/audit-export.schema.json`, printed
    /// compactly in file order (as `JSON.stringify(AUDIT_EXPORT_SCHEMA)` does).
    #[test]
    fn the_schema_digest_is_upstreams() {
        assert_eq!(
            audit_schema_digest(),
            "40467dbec9a612b7e754523b376485dacc5fc0e99c5e41e6473ba6940f5831d9"
        );
    }
}
