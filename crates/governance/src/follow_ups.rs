//! Follow-ups: steering instructions a host adds to a live session and the agent reads
//! with a monotonic cursor (`submit_follow_up`, `get_follow_ups`). Each belongs to the
//! session's principal; the instruction text stays out of the event journal.

use cc_contract::limits::{DEFAULT_PAGE, MAX_INSTRUCTION_CHARS, MAX_PAGE};
use cc_contract::{ErrorCode, SessionFollowUp};
use rusqlite::params;
use serde_json::{Value, json};

use crate::args::{GetFollowUps, SubmitFollowUp};
use crate::error::{GovResult, db, fail_with, invalid};
use crate::kernel::Governance;
use crate::owned_session::load_owned;
use crate::store::{append_event, get_all, to_json};
use crate::util::{new_id, ts};

impl Governance {
    /// `submit_follow_up`: appends one instruction to a session that is not terminal.
    pub fn submit_follow_up(&self, a: &SubmitFollowUp) -> GovResult<SessionFollowUp> {
        let chars = a.instruction.chars().count();
        if a.instruction.trim().is_empty() || chars > MAX_INSTRUCTION_CHARS {
            return Err(invalid(format!(
                "instruction must be 1..={MAX_INSTRUCTION_CHARS} characters, not blank"
            )));
        }
        self.with_tx(|tx| {
            let session = load_owned(tx, &a.session_id, &self.principal)?;
            if session.state.is_terminal() {
                return Err(fail_with(
                    ErrorCode::SessionNotRunning,
                    format!(
                        "session {} is {}",
                        session.session_id,
                        session.state.as_str()
                    ),
                    json!({"state": session.state.as_str()}),
                ));
            }
            let last: u64 = tx
                .query_row(
                    "SELECT COALESCE(MAX(sequence), 0) FROM follow_ups WHERE session_id = ?1",
                    params![a.session_id],
                    |r| r.get(0),
                )
                .map_err(db)?;
            let follow_up = SessionFollowUp {
                follow_up_id: new_id("fup"),
                sequence: last + 1,
                session_id: a.session_id.clone(),
                principal_id: self.principal.clone(),
                instruction: a.instruction.clone(),
                created_at: ts(self.now()),
            };
            tx.execute(
                "INSERT INTO follow_ups (session_id, sequence, data) VALUES (?1, ?2, ?3)",
                params![a.session_id, follow_up.sequence, to_json(&follow_up)?],
            )
            .map_err(db)?;
            append_event(
                tx,
                &a.session_id,
                None,
                "follow_up.submitted",
                Some(&self.principal),
                json!({"followUpId": follow_up.follow_up_id, "sequence": follow_up.sequence}),
            )?;
            Ok(follow_up)
        })
    }

    /// `get_follow_ups`: `{follow_ups, next_sequence}`, the instructions after
    /// `after_sequence` in order; `next_sequence` is the cursor for the next page.
    pub fn get_follow_ups(&self, a: &GetFollowUps) -> GovResult<Value> {
        let limit = a.limit.unwrap_or(DEFAULT_PAGE);
        if limit == 0 || limit > MAX_PAGE {
            return Err(invalid(format!("limit must be in 1..={MAX_PAGE}")));
        }
        let conn = self.conn();
        load_owned(&conn, &a.session_id, &self.principal)?;
        let page: Vec<SessionFollowUp> = get_all(
            &conn,
            "SELECT data FROM follow_ups WHERE session_id = ?1 AND sequence > ?2
             ORDER BY sequence LIMIT ?3",
            params![
                a.session_id,
                i64::try_from(a.after_sequence).unwrap_or(i64::MAX),
                limit
            ],
        )?;
        let next = page.last().map_or(a.after_sequence, |f| f.sequence);
        Ok(json!({"follow_ups": page, "next_sequence": next}))
    }
}
