//! Deleting terminal sessions: `delete_session` (one, by id) and `prune_sessions` (the
//! caller's terminal sessions last updated before a time). Everything journaled for the
//! session goes in one transaction: events, receipts, leases, reservations, grants,
//! approval requests and follow-ups. A live session is refused (`session_not_terminal`):
//! stop it first, so nothing it holds can still act.

use cc_contract::limits::{DEFAULT_PAGE, MAX_PAGE};
use cc_contract::{ErrorCode, Session, SessionDeletion, parse_timestamp};
use rusqlite::{Transaction, params};
use serde_json::{Value, json};

use crate::args::{DeleteSession, PruneSessions};
use crate::error::{GovResult, db, fail_with, invalid};
use crate::kernel::Governance;
use crate::owned_session::load_owned;
use crate::store::get_all;

fn confirmed(confirm: bool, tool: &str) -> GovResult<()> {
    if confirm {
        Ok(())
    } else {
        Err(invalid(format!(
            "{tool} deletes for good: pass confirm: true"
        )))
    }
}

/// Removes one session's rows; the caller checked ownership and that it is terminal.
fn delete_in(tx: &Transaction<'_>, session_id: &str) -> GovResult<SessionDeletion> {
    let count = |sql: &str| -> GovResult<u64> {
        tx.execute(sql, params![session_id])
            .map(|n| n as u64)
            .map_err(db)
    };
    // Grants that could still authorize something are the ones revoked by the deletion.
    let revoked_grants: u64 = tx
        .query_row(
            "SELECT COUNT(*) FROM grants WHERE session_id = ?1
             AND json_extract(data, '$.remainingUses') > 0",
            params![session_id],
            |r| r.get(0),
        )
        .map_err(db)?;
    let deleted_events = count("DELETE FROM events WHERE session_id = ?1")?;
    let deleted_receipts = count("DELETE FROM receipts WHERE session_id = ?1")?;
    count("DELETE FROM grants WHERE session_id = ?1")?;
    count("DELETE FROM leases WHERE session_id = ?1")?;
    count("DELETE FROM reservations WHERE session_id = ?1")?;
    count("DELETE FROM approval_requests WHERE session_id = ?1")?;
    count("DELETE FROM previews WHERE session_id = ?1")?;
    count("DELETE FROM follow_ups WHERE session_id = ?1")?;
    count("DELETE FROM sessions WHERE session_id = ?1")?;
    Ok(SessionDeletion {
        session_id: session_id.to_string(),
        deleted: true,
        deleted_events,
        deleted_receipts,
        // This server keeps no evidence frames, and retains nothing after deletion.
        deleted_evidence_frames: Some(0),
        revoked_grants,
        retained_events: 0,
        retention_marker_id: None,
    })
}

fn not_terminal(session: &Session) -> cc_contract::ContractError {
    fail_with(
        ErrorCode::SessionNotTerminal,
        format!(
            "session {} is {}: stop it before deleting it",
            session.session_id,
            session.state.as_str()
        ),
        json!({"state": session.state.as_str()}),
    )
}

impl Governance {
    /// `delete_session{session_id, confirm: true}`: the caller's terminal session, gone.
    pub fn delete_session(&self, a: &DeleteSession) -> GovResult<SessionDeletion> {
        confirmed(a.confirm, "delete_session")?;
        self.with_tx(|tx| {
            let session = load_owned(tx, &a.session_id, &self.principal)?;
            if !session.state.is_terminal() {
                return Err(not_terminal(&session));
            }
            delete_in(tx, &session.session_id)
        })
    }

    /// `prune_sessions{older_than, limit?, confirm: true}`: `{deletions}`, the caller's
    /// terminal sessions last updated before `older_than`, oldest first, at most `limit`.
    /// Other principals' sessions and live ones are never touched.
    pub fn prune_sessions(&self, a: &PruneSessions) -> GovResult<Value> {
        confirmed(a.confirm, "prune_sessions")?;
        let before =
            parse_timestamp(&a.older_than).map_err(|e| invalid(format!("older_than: {e}")))?;
        let limit = a.limit.unwrap_or(DEFAULT_PAGE);
        if limit == 0 || limit > MAX_PAGE {
            return Err(invalid(format!("limit must be in 1..={MAX_PAGE}")));
        }
        let deletions = self.with_tx(|tx| {
            let sessions: Vec<Session> = get_all(
                tx,
                "SELECT data FROM sessions WHERE principal_id = ?1",
                params![self.principal],
            )?;
            let mut due: Vec<(time::OffsetDateTime, String)> = sessions
                .into_iter()
                .filter(|s| s.state.is_terminal())
                .filter_map(|s| {
                    // A session whose time cannot be read is never pruned by age.
                    let at = parse_timestamp(&s.updated_at).ok()?;
                    (at < before).then_some((at, s.session_id))
                })
                .collect();
            due.sort();
            due.into_iter()
                .take(limit as usize)
                .map(|(_, id)| delete_in(tx, &id))
                .collect::<GovResult<Vec<_>>>()
        })?;
        Ok(json!({"deletions": deletions}))
    }
}
