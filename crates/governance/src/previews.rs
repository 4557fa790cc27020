//! The envelope each action was last previewed as, by `(sessionId, actionId)`, kept in
//! the journal (table `previews`).
//!
//! Two rules rest on it. Execute refuses an expired envelope (GOVERNANCE.md Part A,
//! execute step 1): execute re-previews from its own arguments, so the envelope it
//! builds is always fresh, and only the record of the preview the agent was shown can
//! expire. And a preview is idempotent: the same action previewed again with the same
//! arguments while its envelope is valid answers that envelope unchanged (same
//! `proposedAt`, `expiresAt`), which is what lets a client re-preview after an approval
//! and still execute the envelope it holds. Both must survive a restart, so the record
//! is in the journal, not in memory.
//!
//! A new record is committed without an `fsync` of its own ([`save`]): the WAL keeps it
//! across a killed process, and the next fully synced commit — at the latest the
//! `pending` receipt an execute writes before any effect — puts it on disk. An
//! idempotent preview writes nothing. Records live as long as their session: pruning an
//! expired one would turn its action into one never previewed.

use cc_contract::{ActionEnvelope, PolicyVerdict, parse_timestamp};
use rusqlite::{Connection, OptionalExtension, params};
use time::OffsetDateTime;

use crate::error::{GovResult, db};
use crate::kernel::in_tx;
use crate::store::{from_json, to_json};

/// One remembered preview envelope.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Remembered {
    pub envelope: ActionEnvelope,
    /// The policy decision it showed (the operator channel answers `not_confirm` for
    /// an action previewed only as `allow` or `deny`).
    pub decision: PolicyVerdict,
    /// `envelope.expiresAt` parsed; an expiry that cannot be read counts as long past.
    pub expires: OffsetDateTime,
}

impl Remembered {
    /// Whether `fresh` (a preview built just now) is this envelope again: equal in every
    /// member but the times of the preview itself (`proposedAt`, `expiresAt`, and when
    /// the sensitivity was observed), and still valid at `now`.
    pub fn answers(&self, fresh: &ActionEnvelope, now: OffsetDateTime) -> bool {
        self.expires > now && without_times(&self.envelope) == without_times(fresh)
    }
}

fn without_times(e: &ActionEnvelope) -> ActionEnvelope {
    let mut e = e.clone();
    e.proposed_at = String::new();
    e.expires_at = String::new();
    if let Some(s) = e.target_sensitivity.as_mut() {
        s.observed_at = String::new();
    }
    e
}

/// The latest preview of `(session, action)`, if the journal holds one.
pub(crate) fn load(
    conn: &Connection,
    session_id: &str,
    action_id: &str,
) -> GovResult<Option<Remembered>> {
    // Cached: every preview and every execute looks its action up here.
    let row: Option<(String, String)> = conn
        .prepare_cached(
            "SELECT decision, envelope FROM previews WHERE session_id = ?1 AND action_id = ?2",
        )
        .and_then(|mut stmt| {
            stmt.query_row(params![session_id, action_id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()
        })
        .map_err(db)?;
    row.map(|(decision, envelope)| {
        let envelope: ActionEnvelope = from_json(&envelope)?;
        Ok(Remembered {
            decision: serde_json::from_value(serde_json::Value::String(decision))
                .map_err(crate::error::storage)?,
            expires: parse_timestamp(&envelope.expires_at).unwrap_or(OffsetDateTime::UNIX_EPOCH),
            envelope,
        })
    })
    .transpose()
}

/// Records `envelope` as the latest preview of its action, replacing any earlier one,
/// in a commit that is not synced on its own (see the module documentation).
pub(crate) fn save(
    conn: &mut Connection,
    envelope: &ActionEnvelope,
    decision: PolicyVerdict,
) -> GovResult<()> {
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(db)?;
    let written = in_tx(conn, |tx| {
        tx.execute(
            "INSERT INTO previews (session_id, action_id, action_digest, decision, envelope)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT(session_id, action_id) DO UPDATE SET
                 action_digest = excluded.action_digest, decision = excluded.decision,
                 envelope = excluded.envelope",
            params![
                envelope.session_id,
                envelope.action_id,
                envelope.args_digest,
                decision.as_str(),
                to_json(envelope)?
            ],
        )
        .map_err(db)?;
        Ok(())
    });
    // Every other commit of the journal stays fully synced, whatever happened above.
    let restored = conn.pragma_update(None, "synchronous", "FULL").map_err(db);
    written.and(restored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn envelope(proposed: &str, expires: &str) -> ActionEnvelope {
        serde_json::from_value(json!({
            "actionId": "a", "sessionId": "s", "principalId": "p", "tool": "pointer.click",
            "operation": "pointer.click", "actionClass": "edit_reversible",
            "requestedMode": "foreground", "dataLabels": [], "reversible": true,
            "externalSideEffect": false, "proposedAt": proposed, "expiresAt": expires,
            "argsDigest": "0".repeat(64)
        }))
        .expect("an envelope")
    }

    fn at(s: &str) -> OffsetDateTime {
        parse_timestamp(s).expect("a time")
    }

    #[test]
    fn a_record_round_trips_and_the_latest_preview_replaces_the_earlier() {
        let dir = tempfile::tempdir().expect("dir");
        let mut conn = crate::store::open(&dir.path().join("j.db")).expect("journal");
        assert_eq!(load(&conn, "s", "a").expect("load"), None);
        let first = envelope("2026-11-29T10:00:00.000Z", "2026-11-29T10:01:00.000Z");
        save(&mut conn, &first, PolicyVerdict::Allow).expect("save");
        let second = envelope("2026-11-29T10:02:00.000Z", "2026-11-29T10:03:00.000Z");
        save(&mut conn, &second, PolicyVerdict::Confirm).expect("save");
        let r = load(&conn, "s", "a").expect("load").expect("a record");
        assert_eq!(r.envelope, second);
        assert_eq!(r.decision, PolicyVerdict::Confirm);
        assert_eq!(r.expires, at("2026-11-29T10:03:00.000Z"));
        assert_eq!(load(&conn, "s", "b").expect("load"), None);
        // Every later commit is fully synced again.
        let sync: i64 = conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .expect("pragma");
        assert_eq!(sync, 2, "FULL");
    }

    #[test]
    fn only_the_same_valid_envelope_is_answered_again() {
        let stored = Remembered {
            envelope: envelope("2026-11-29T10:00:00.000Z", "2026-11-29T10:01:00.000Z"),
            decision: PolicyVerdict::Allow,
            expires: at("2026-11-29T10:01:00.000Z"),
        };
        let fresh = envelope("2026-11-29T10:00:30.000Z", "2026-11-29T10:01:30.000Z");
        assert!(stored.answers(&fresh, at("2026-11-29T10:00:30.000Z")));
        // Expired: a new preview renews it.
        assert!(!stored.answers(&fresh, at("2026-11-29T10:01:00.000Z")));
        // Anything but the times differs: another envelope.
        let mut other = fresh.clone();
        other.agent_id = Some("someone-else".into());
        assert!(!stored.answers(&other, at("2026-11-29T10:00:30.000Z")));
        let mut other = fresh;
        other.args_digest = "1".repeat(64);
        assert!(!stored.answers(&other, at("2026-11-29T10:00:30.000Z")));
    }
}
