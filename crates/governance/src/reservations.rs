//! Target reservations: advisory claims that stop two agents from planning on one
//! target. A reservation never authorizes a mutation (that is the lease's job).

use cc_contract::{ErrorCode, ReservationScope, ReservationState, TargetReservation};
use rusqlite::{Transaction, params};
use serde_json::json;

use crate::args::{ReleaseReservation, ReserveTarget, check_ttl};
use crate::error::{GovResult, db, fail, fail_with};
use crate::kernel::Governance;
use crate::owned_session::{load_owned, require_running};
use crate::store::{append_event, get_all, get_one, to_json};
use crate::util::{is_past, new_id, ts, ts_after};

fn save(tx: &Transaction<'_>, r: &TargetReservation) -> GovResult<()> {
    tx.execute(
        "INSERT INTO reservations (reservation_id, session_id, state, data) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT(reservation_id) DO UPDATE SET state = excluded.state, data = excluded.data",
        params![
            r.reservation_id,
            r.session_id,
            r.state.as_str(),
            to_json(r)?
        ],
    )
    .map_err(db)?;
    Ok(())
}

fn end(
    tx: &Transaction<'_>,
    r: &mut TargetReservation,
    state: ReservationState,
    reason: &str,
) -> GovResult<()> {
    r.state = state;
    r.revision += 1;
    r.terminal_reason = Some(reason.to_string());
    save(tx, r)?;
    append_event(
        tx,
        &r.session_id,
        None,
        &format!("reservation.{}", state.as_str()),
        Some(&r.principal_id),
        json!({"reservationId": r.reservation_id, "reason": reason}),
    )?;
    Ok(())
}

/// Ends every active reservation of a session (session stop).
pub(crate) fn end_all(
    tx: &Transaction<'_>,
    session_id: &str,
    state: ReservationState,
    reason: &str,
) -> GovResult<()> {
    let mut all: Vec<TargetReservation> = get_all(
        tx,
        "SELECT data FROM reservations WHERE state = 'active' AND session_id = ?1",
        params![session_id],
    )?;
    for r in &mut all {
        end(tx, r, state, reason)?;
    }
    Ok(())
}

/// Two scopes overlap when they name the same app (case-insensitively, as upstream:
/// app ids differ in case across platforms) and either leaves the window open or both
/// name the same window.
fn overlaps(a: &ReservationScope, b: &ReservationScope) -> bool {
    a.app_id.eq_ignore_ascii_case(&b.app_id)
        && match (&a.window_id, &b.window_id) {
            (Some(x), Some(y)) => x.same_window(y),
            _ => true,
        }
}

impl Governance {
    /// `reserve_target`: `target_conflict` when another session holds an overlapping
    /// active reservation.
    pub fn reserve_target(&self, a: &ReserveTarget) -> GovResult<TargetReservation> {
        check_ttl("ttl_ms", a.ttl_ms)?;
        self.with_tx(|tx| {
            let session = load_owned(tx, &a.session_id, &self.principal)?;
            require_running(&session)?;
            let at = self.now();
            let scope = ReservationScope {
                app_id: a.app_id.clone(),
                window_id: a.window_id.clone(),
            };
            let active: Vec<TargetReservation> = get_all(
                tx,
                "SELECT data FROM reservations WHERE state = 'active'",
                [],
            )?;
            for mut other in active {
                if is_past(&other.expires_at, at) {
                    end(tx, &mut other, ReservationState::Expired, "ttl")?;
                } else if other.session_id == a.session_id
                    && other.intent_id == a.intent_id
                    && other.scope == scope
                {
                    // The same intent reserved again: the existing reservation (upstream
                    // replays it, so a retried planner call is harmless).
                    return Ok(other);
                } else if other.session_id != a.session_id && overlaps(&other.scope, &scope) {
                    return Err(fail_with(
                        ErrorCode::TargetConflict,
                        "another session has reserved this target",
                        json!({"reservationId": other.reservation_id}),
                    ));
                }
            }
            let r = TargetReservation {
                reservation_id: new_id("res"),
                revision: 1,
                intent_id: a.intent_id.clone(),
                session_id: a.session_id.clone(),
                principal_id: self.principal.clone(),
                execution_group_id: a.execution_group_id.clone(),
                agent_id: a.agent_id.clone(),
                scope,
                state: ReservationState::Active,
                acquired_at: ts(at),
                expires_at: ts_after(at, a.ttl_ms),
                terminal_reason: None,
            };
            save(tx, &r)?;
            append_event(
                tx,
                &r.session_id,
                None,
                "reservation.acquired",
                Some(&self.principal),
                json!({"reservationId": r.reservation_id, "intentId": r.intent_id,
                       "appId": r.scope.app_id, "expiresAt": r.expires_at}),
            )?;
            Ok(r)
        })
    }

    /// `release_target_reservation`.
    pub fn release_reservation(&self, a: &ReleaseReservation) -> GovResult<TargetReservation> {
        self.with_tx(|tx| {
            load_owned(tx, &a.session_id, &self.principal)?;
            let mut r: TargetReservation = get_one(
                tx,
                "SELECT data FROM reservations WHERE reservation_id = ?1",
                params![a.reservation_id],
            )?
            .ok_or_else(|| {
                fail(
                    ErrorCode::ReservationNotActive,
                    format!("no reservation {}", a.reservation_id),
                )
            })?;
            if r.principal_id != self.principal {
                return Err(fail(
                    ErrorCode::PrincipalMismatch,
                    "the reservation belongs to another principal",
                ));
            }
            if r.session_id != a.session_id || r.state != ReservationState::Active {
                return Err(fail(
                    ErrorCode::ReservationNotActive,
                    "the reservation is not active for this session",
                ));
            }
            end(tx, &mut r, ReservationState::Released, "released")?;
            Ok(r)
        })
    }
}
