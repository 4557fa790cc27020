//! Session lifecycle: start, get, pause, resume, stop, and the event export.

use cc_contract::limits::MAX_PAGE;
use cc_contract::{
    ErrorCode, ExecutionReceipt, ReceiptError, ReceiptStatus, ReservationState, Session,
    SessionState,
};
use rusqlite::{Transaction, params};
use serde_json::{Value, json};

use crate::args::{GetEvents, SessionRef, StartSession};
use crate::error::{GovResult, db, fail_with, invalid};
use crate::kernel::Governance;
use crate::owned_session::load_owned;
use crate::store::{self, append_event, to_json};
use crate::util::{new_id, ts};

fn save(tx: &Transaction<'_>, session: &Session) -> GovResult<()> {
    tx.execute(
        "INSERT INTO sessions (session_id, principal_id, data) VALUES (?1, ?2, ?3)
         ON CONFLICT(session_id) DO UPDATE SET data = excluded.data",
        params![session.session_id, session.principal_id, to_json(session)?],
    )
    .map_err(db)?;
    Ok(())
}

impl Governance {
    /// `start_session`: a new running session owned by the host's principal.
    pub fn start_session(&self, a: &StartSession) -> GovResult<Session> {
        let at = ts(self.now());
        let session = Session {
            session_id: new_id("ses"),
            principal_id: self.principal.clone(),
            execution_group_id: a.execution_group_id.clone(),
            objective: a.objective.clone(),
            state: SessionState::Running,
            revision: 1,
            created_at: at.clone(),
            updated_at: at,
            waiting_reason: None,
            recovered: None,
            completion: None,
        };
        self.with_tx(|tx| {
            save(tx, &session)?;
            append_event(
                tx,
                &session.session_id,
                None,
                "session.started",
                Some(&self.principal),
                json!({"state": "running", "objective": session.objective}),
            )?;
            Ok(())
        })?;
        Ok(session)
    }

    /// `get_session`.
    pub fn get_session(&self, session_id: &str) -> GovResult<Session> {
        load_owned(&self.conn(), session_id, &self.principal)
    }

    /// `pause_session`: running → paused_by_user; the reason is journaled with the event
    /// and kept as the session's `waitingReason`.
    pub fn pause_session(&self, a: &SessionRef) -> GovResult<Session> {
        self.transition(
            &a.session_id,
            &[SessionState::Running],
            SessionState::PausedByUser,
            a.reason.as_deref(),
        )
    }

    /// `resume_session`: paused → running.
    pub fn resume_session(&self, session_id: &str) -> GovResult<Session> {
        self.transition(
            session_id,
            &[SessionState::PausedByUser, SessionState::PausedByPolicy],
            SessionState::Running,
            None,
        )
    }

    /// `stop_session`: any live state → stopped; the session's active leases are
    /// revoked (`session_stopped`) and its reservations cancelled, in the same
    /// transaction.
    pub fn stop_session(&self, a: &SessionRef) -> GovResult<Session> {
        let live = [
            SessionState::Created,
            SessionState::Running,
            SessionState::WaitingForUser,
            SessionState::PausedByUser,
            SessionState::PausedByPolicy,
            SessionState::Stopping,
        ];
        self.transition(
            &a.session_id,
            &live,
            SessionState::Stopped,
            a.reason.as_deref(),
        )
    }

    fn transition(
        &self,
        session_id: &str,
        from: &[SessionState],
        to: SessionState,
        reason: Option<&str>,
    ) -> GovResult<Session> {
        self.with_tx(|tx| {
            let mut session = load_owned(tx, session_id, &self.principal)?;
            if !from.contains(&session.state) {
                return Err(fail_with(
                    ErrorCode::SessionNotRunning,
                    format!(
                        "session {session_id} is {}; cannot become {}",
                        session.state.as_str(),
                        to.as_str()
                    ),
                    json!({"state": session.state.as_str()}),
                ));
            }
            let previous = session.state;
            session.state = to;
            if to == SessionState::Running {
                session.waiting_reason = None;
            } else if to == SessionState::PausedByUser {
                session.waiting_reason = reason.map(str::to_string);
            }
            session.revision += 1;
            session.updated_at = ts(self.now());
            save(tx, &session)?;
            if to == SessionState::Stopped {
                crate::leases::revoke_all(tx, Some(session_id), "session_stopped")?;
                crate::reservations::end_all(
                    tx,
                    session_id,
                    ReservationState::Cancelled,
                    "session_stopped",
                )?;
            }
            append_event(
                tx,
                session_id,
                None,
                &format!("session.{}", event_name(to)),
                Some(&self.principal),
                json!({"from": previous.as_str(), "state": to.as_str(), "reason": reason}),
            )?;
            Ok(session)
        })
    }

    /// `get_session_events`: one page of the journal as the upstream audit-export
    /// envelope. Events keep their `previousHash`/`hash` links, so the client verifies
    /// the chain itself ([`crate::verify_chain`] from sequence 1).
    pub fn get_session_events(&self, a: &GetEvents) -> GovResult<Value> {
        let limit = a.limit.unwrap_or(MAX_PAGE);
        if limit == 0 || limit > MAX_PAGE {
            return Err(invalid(format!("limit must be in 1..={MAX_PAGE}")));
        }
        let conn = self.conn();
        load_owned(&conn, &a.session_id, &self.principal)?;
        let page = store::events(&conn, &a.session_id, a.after_sequence, limit)?;
        Ok(crate::audit::export(&page, a.after_sequence))
    }

    /// Operator/audit helper: recomputes the session's whole chain from the stored
    /// events. `Err(sequence)` names the first event that does not verify.
    pub fn verify_session_chain(&self, session_id: &str) -> GovResult<Result<(), u64>> {
        let conn = self.conn();
        load_owned(&conn, session_id, &self.principal)?;
        let all = store::events(&conn, session_id, 0, u32::MAX)?;
        Ok(store::verify_chain(&all))
    }
}

fn event_name(state: SessionState) -> &'static str {
    match state {
        SessionState::Running => "resumed",
        SessionState::PausedByUser | SessionState::PausedByPolicy => "paused",
        SessionState::Stopped => "stopped",
        _ => "updated",
    }
}

/// What [`Governance::recover`] changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Recovery {
    /// Sessions that were running and are now `paused_by_policy`, `recovered: true`.
    pub paused_session_ids: Vec<String>,
    /// Leases that were active and are now revoked (`server_restart`).
    pub revoked_lease_ids: Vec<String>,
    /// Receipts left `pending` by a crash mid-flight, now `indeterminate`: the effect
    /// may or may not have happened, so the action is never retried.
    pub indeterminate_receipt_ids: Vec<String>,
}

impl Governance {
    /// Startup recovery, called once by the server before it serves (not by
    /// [`Governance::open`], so a second handle on the same journal never disturbs a
    /// live one). Nothing is deleted: every running session is paused
    /// (`paused_by_policy`, `recovered: true`, `waitingReason: server_restart`) and
    /// every active lease revoked, each with its event — an agent must look again,
    /// resume and take a new lease instead of acting on a pre-crash plan. A receipt
    /// left `pending` (the process died between receipt begin and commit) becomes
    /// `indeterminate` with an `action.indeterminate` event, so executing it again
    /// replays that receipt and never acts.
    pub fn recover(&self) -> GovResult<Recovery> {
        self.with_tx(|tx| {
            let revoked = crate::leases::revoke_all(tx, None, "server_restart")?;
            let indeterminate = self.settle_pending(tx)?;
            let sessions: Vec<Session> = crate::store::get_all(tx, "SELECT data FROM sessions", [])?;
            let mut paused = Vec::new();
            for mut session in sessions {
                if session.state != SessionState::Running {
                    continue;
                }
                session.state = SessionState::PausedByPolicy;
                session.recovered = Some(true);
                session.waiting_reason = Some("server_restart".into());
                session.revision += 1;
                session.updated_at = ts(self.now());
                save(tx, &session)?;
                append_event(
                    tx,
                    &session.session_id,
                    None,
                    "session.recovered",
                    Some(&session.principal_id),
                    json!({"from": "running", "state": "paused_by_policy", "reason": "server_restart"}),
                )?;
                paused.push(session.session_id);
            }
            Ok(Recovery {
                paused_session_ids: paused,
                revoked_lease_ids: revoked,
                indeterminate_receipt_ids: indeterminate,
            })
        })
    }
}

impl Governance {
    /// Recovery of receipts a crash left `pending`: each becomes `indeterminate`
    /// (`server_restart`) with its event, in the recovery transaction.
    fn settle_pending(&self, tx: &Transaction<'_>) -> GovResult<Vec<String>> {
        let pending: Vec<ExecutionReceipt> = crate::store::get_all(
            tx,
            "SELECT data FROM receipts WHERE json_extract(data, '$.status') = 'pending'",
            [],
        )?;
        let mut ids = Vec::with_capacity(pending.len());
        for mut receipt in pending {
            receipt.status = ReceiptStatus::Indeterminate;
            receipt.updated_at = ts(self.now());
            receipt.error = Some(ReceiptError {
                code: ErrorCode::Indeterminate.as_str().into(),
                message: "the server stopped while this action was in flight; its effect is \
                          unknown and it is never retried"
                    .into(),
            });
            store::save_receipt(tx, &receipt)?;
            append_event(
                tx,
                &receipt.session_id,
                Some(&receipt.action_id),
                "action.indeterminate",
                Some(&self.principal),
                json!({"receiptId": receipt.receipt_id, "status": "indeterminate",
                       "reason": "server_restart"}),
            )?;
            ids.push(receipt.receipt_id);
        }
        Ok(ids)
    }
}
