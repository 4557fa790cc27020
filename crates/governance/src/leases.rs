//! Control leases: who may act on the desktop, in which mode, for how many actions,
//! until when, and inside which boundaries.

use cc_contract::{
    ControlLease, ErrorCode, ExecutionMode, LeaseBoundaries, LeaseKind, LeaseState, TargetEvidence,
};
use rusqlite::{Connection, Transaction, params};
use serde_json::{Value, json};

use crate::args::{AcquireLease, EmergencyStop, MAX_ACTION_BUDGET, ReleaseLease, check_ttl};
use crate::error::{GovResult, db, fail, fail_with, invalid};
use crate::kernel::{Governance, in_tx, in_tx_keep};
use crate::owned_session::{load_owned, require_running};
use crate::store::{append_event, get_all, get_one, to_json};
use crate::util::{is_past, new_id, ts, ts_after};

/// Why a lease whose action budget is spent was revoked (upstream's reason).
pub(crate) const BUDGET_EXHAUSTED: &str = "action_budget_exhausted";

pub(crate) fn save(tx: &Transaction<'_>, lease: &ControlLease) -> GovResult<()> {
    tx.execute(
        "INSERT INTO leases (lease_id, session_id, state, data) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT(lease_id) DO UPDATE SET state = excluded.state, data = excluded.data",
        params![
            lease.lease_id,
            lease.session_id,
            lease.state.as_str(),
            to_json(lease)?
        ],
    )
    .map_err(db)?;
    Ok(())
}

fn load(conn: &Connection, lease_id: &str) -> GovResult<Option<ControlLease>> {
    get_one(
        conn,
        "SELECT data FROM leases WHERE lease_id = ?1",
        params![lease_id],
    )
}

/// Moves a lease to a terminal state with its event.
fn end(
    tx: &Transaction<'_>,
    lease: &mut ControlLease,
    state: LeaseState,
    reason: Option<&str>,
) -> GovResult<()> {
    lease.state = state;
    lease.revision += 1;
    if state == LeaseState::Revoked {
        lease.revoked_reason = reason.map(str::to_string);
    }
    save(tx, lease)?;
    append_event(
        tx,
        &lease.session_id,
        None,
        &format!("lease.{}", state.as_str()),
        Some(&lease.principal_id),
        json!({"leaseId": lease.lease_id, "reason": reason}),
    )?;
    Ok(())
}

/// Revokes a lease (`action_indeterminate`, `target_boundary_escape`, …).
pub(crate) fn revoke(
    tx: &Transaction<'_>,
    lease: &mut ControlLease,
    reason: &str,
) -> GovResult<()> {
    end(tx, lease, LeaseState::Revoked, Some(reason))
}

/// Revokes every active lease (of one session, or of all): emergency stop, session stop.
pub(crate) fn revoke_all(
    tx: &Transaction<'_>,
    session_id: Option<&str>,
    reason: &str,
) -> GovResult<Vec<String>> {
    let mut leases: Vec<ControlLease> = match session_id {
        Some(s) => get_all(
            tx,
            "SELECT data FROM leases WHERE state = 'active' AND session_id = ?1",
            params![s],
        )?,
        None => get_all(tx, "SELECT data FROM leases WHERE state = 'active'", [])?,
    };
    let mut ids = Vec::new();
    for lease in &mut leases {
        revoke(tx, lease, reason)?;
        ids.push(lease.lease_id.clone());
    }
    Ok(ids)
}

/// Marks active leases whose time is up as expired (lazily, with their events), so the
/// conflict checks only see leases that still hold.
fn expire_due(tx: &Transaction<'_>, at: time::OffsetDateTime) -> GovResult<()> {
    let active: Vec<ControlLease> =
        get_all(tx, "SELECT data FROM leases WHERE state = 'active'", [])?;
    for mut lease in active {
        if is_past(&lease.expires_at, at) {
            end(tx, &mut lease, LeaseState::Expired, Some("ttl"))?;
        }
    }
    Ok(())
}

/// Whether `target` lies inside the lease's boundaries (an empty list allows all).
fn inside(boundaries: &LeaseBoundaries, target: Option<&TargetEvidence>) -> bool {
    let Some(t) = target else {
        // No target: only an unbounded lease may act.
        return boundaries.app_ids.is_empty()
            && boundaries.window_ids.is_empty()
            && boundaries.display_ids.is_empty();
    };
    let app_ok = boundaries.app_ids.is_empty() || boundaries.app_ids.contains(&t.app_id);
    let window_ok = boundaries.window_ids.is_empty()
        || t.window_id
            .as_ref()
            .is_some_and(|w| boundaries.window_ids.iter().any(|b| b.same_window(w)));
    let display_ok = boundaries.display_ids.is_empty()
        || t.display_id
            .as_ref()
            .is_some_and(|d| boundaries.display_ids.contains(d));
    app_ok && window_ok && display_ok
}

/// Step 4 of the execute pipeline: the lease exists, belongs to this session and
/// principal, is active and unexpired, has budget left, matches the mode, and the
/// target is inside its boundaries. The outer result is storage; the inner one the
/// refusal, whose side effects (expiry, boundary revocation) the caller commits.
pub(crate) fn check_for_action(
    tx: &Transaction<'_>,
    lease_id: &str,
    session_id: &str,
    principal: &str,
    mode: ExecutionMode,
    target: Option<&TargetEvidence>,
    at: time::OffsetDateTime,
) -> GovResult<GovResult<ControlLease>> {
    let Some(mut lease) = load(tx, lease_id)? else {
        return Ok(Err(fail(
            ErrorCode::LeaseNotActive,
            format!("no lease {lease_id}"),
        )));
    };
    if lease.principal_id != principal {
        return Ok(Err(fail(
            ErrorCode::PrincipalMismatch,
            "the lease belongs to another principal",
        )));
    }
    if lease.session_id != session_id {
        return Ok(Err(fail(
            ErrorCode::LeaseConflict,
            "the lease belongs to another session",
        )));
    }
    match lease.state {
        LeaseState::Active => {}
        LeaseState::Revoked => {
            return Ok(Err(fail_with(
                ErrorCode::LeaseRevoked,
                "the lease was revoked",
                json!({"reason": lease.revoked_reason}),
            )));
        }
        LeaseState::Expired => return Ok(Err(fail(ErrorCode::LeaseExpired, "the lease expired"))),
        LeaseState::Released => {
            return Ok(Err(fail(
                ErrorCode::LeaseNotActive,
                "the lease was released",
            )));
        }
    }
    if is_past(&lease.expires_at, at) {
        end(tx, &mut lease, LeaseState::Expired, Some("ttl"))?;
        return Ok(Err(fail(ErrorCode::LeaseExpired, "the lease expired")));
    }
    if lease.actions_used >= lease.action_budget {
        return Ok(Err(fail_with(
            ErrorCode::LeaseNotActive,
            "the lease's action budget is exhausted",
            json!({"reason": "budget_exhausted", "actionBudget": lease.action_budget}),
        )));
    }
    if lease.execution_mode != mode {
        return Ok(Err(fail_with(
            ErrorCode::LeaseConflict,
            "the lease was acquired for another execution mode",
            json!({"leaseMode": lease.execution_mode.as_str(), "mode": mode.as_str()}),
        )));
    }
    if !inside(&lease.boundaries, target) {
        revoke(tx, &mut lease, "target_boundary_escape")?;
        return Ok(Err(fail_with(
            ErrorCode::LeaseRevoked,
            "the target is outside the lease's boundaries",
            json!({"reason": "target_boundary_escape"}),
        )));
    }
    Ok(Ok(lease))
}

/// Step 6: one budget unit.
pub(crate) fn consume(tx: &Transaction<'_>, lease: &mut ControlLease) -> GovResult<()> {
    lease.actions_used += 1;
    lease.revision += 1;
    save(tx, lease)
}

impl Governance {
    /// `acquire_control_lease`.
    pub fn acquire_lease(&self, a: &AcquireLease) -> GovResult<ControlLease> {
        check_ttl("ttl_ms", a.ttl_ms)?;
        if a.action_budget == 0 || a.action_budget > MAX_ACTION_BUDGET {
            return Err(invalid(format!(
                "action_budget must be in 1..={MAX_ACTION_BUDGET}"
            )));
        }
        if a.kind == LeaseKind::Exclusive && a.mode != ExecutionMode::Foreground {
            return Err(fail(
                ErrorCode::ForegroundRequired,
                "an exclusive lease needs the foreground mode",
            ));
        }
        let mut conn = self.conn();
        in_tx_keep(&mut conn, |tx| {
            let session = load_owned(tx, &a.session_id, &self.principal)?;
            if let Err(e) = require_running(&session) {
                return Ok(Err(e));
            }
            let at = self.now();
            expire_due(tx, at)?;
            let active: Vec<ControlLease> =
                get_all(tx, "SELECT data FROM leases WHERE state = 'active'", [])?;
            let clash = active
                .iter()
                .find(|l| a.kind == LeaseKind::Exclusive || l.kind == LeaseKind::Exclusive);
            if let Some(other) = clash {
                return Ok(Err(fail_with(
                    ErrorCode::LeaseConflict,
                    "another lease holds the desktop",
                    json!({"leaseId": other.lease_id, "kind": other.kind.as_str()}),
                )));
            }
            let lease = ControlLease {
                lease_id: new_id("lea"),
                revision: 1,
                session_id: a.session_id.clone(),
                principal_id: self.principal.clone(),
                agent_id: a.agent_id.clone(),
                kind: a.kind,
                execution_mode: a.mode,
                state: LeaseState::Active,
                acquired_at: ts(at),
                expires_at: ts_after(at, a.ttl_ms),
                action_budget: a.action_budget,
                actions_used: 0,
                boundaries: LeaseBoundaries {
                    app_ids: a.app_ids.clone(),
                    window_ids: a.window_ids.clone(),
                    display_ids: a.display_ids.clone(),
                },
                revoked_reason: None,
            };
            save(tx, &lease)?;
            append_event(
                tx,
                &lease.session_id,
                None,
                "lease.acquired",
                Some(&self.principal),
                json!({"leaseId": lease.lease_id, "kind": lease.kind.as_str(),
                       "mode": lease.execution_mode.as_str(), "actionBudget": lease.action_budget,
                       "expiresAt": lease.expires_at}),
            )?;
            Ok(Ok(lease))
        })
    }

    /// `release_control_lease`: only by the owning session and principal (**fix** of
    /// upstream, which never checked who released a lease).
    pub fn release_lease(&self, a: &ReleaseLease) -> GovResult<ControlLease> {
        let mut conn = self.conn();
        in_tx(&mut conn, |tx| {
            load_owned(tx, &a.session_id, &self.principal)?;
            let mut lease = load(tx, &a.lease_id)?.ok_or_else(|| {
                fail(
                    ErrorCode::LeaseNotActive,
                    format!("no lease {}", a.lease_id),
                )
            })?;
            if lease.principal_id != self.principal {
                return Err(fail(
                    ErrorCode::PrincipalMismatch,
                    "the lease belongs to another principal",
                ));
            }
            if lease.session_id != a.session_id {
                return Err(fail(
                    ErrorCode::LeaseConflict,
                    "the lease belongs to another session",
                ));
            }
            // A lease revoked because its budget was spent did all it was taken for: its
            // holder's release is answered with the lease as it stands, not refused.
            if lease.state == LeaseState::Revoked
                && lease.revoked_reason.as_deref() == Some(BUDGET_EXHAUSTED)
            {
                return Ok(lease);
            }
            if lease.state != LeaseState::Active {
                return Err(fail_with(
                    ErrorCode::LeaseNotActive,
                    format!("the lease is {}", lease.state.as_str()),
                    json!({"state": lease.state.as_str()}),
                ));
            }
            end(tx, &mut lease, LeaseState::Released, None)?;
            Ok(lease)
        })
    }

    /// `emergency_stop`: engages the engine's panic first (it pre-empts any action in
    /// flight, before the journal lock is even taken), then revokes every active lease.
    pub fn emergency_stop(&self, a: &EmergencyStop) -> GovResult<Value> {
        let panic = self.engine.panic(&json!({"on": true}));
        let reason = a.reason.clone().unwrap_or_else(|| "emergency_stop".into());
        let revoked = self.with_tx(|tx| revoke_all(tx, None, "emergency_stop"))?;
        tracing::warn!(%reason, revoked = revoked.len(), "governance emergency stop");
        Ok(json!({
            "stopped": true,
            "reason": reason,
            // The stop latches on the server even without an engine session: the next
            // session starts stopped, until a person releases it.
            "panicEngaged": panic.ok,
            "revokedLeaseIds": revoked,
        }))
    }
}
