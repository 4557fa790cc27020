//! The safety gate: the one choke point every action passes, once per attempt and once
//! per batch item, whatever transport it came from (PROTOCOL §5).

use std::time::Duration;

use cc_protocol::{ErrorCode, Risk, SessionState, ToolError};
use serde_json::json;

use crate::approval::Approval;
use crate::assess::{Assessment, Outcome};
use crate::clock::{Clock, random_hex, rfc3339};
use crate::events::EventBus;
use crate::session::{Pending, Shared};
use crate::tools::ToolCall;

/// What the gate decided.
#[derive(Debug)]
pub enum Decision {
    /// Run it now.
    Run,
    /// Refused, with the envelope's error.
    Reject(ToolError),
    /// Parked until a human answers.
    Confirm {
        request_id: String,
        risk: Risk,
        reason: String,
    },
}

/// One action as the gate sees it.
pub(crate) struct Request<'a> {
    /// The call, typed; what runs once approved.
    pub call: &'a ToolCall,
    /// What the rules, the risk and the desktop say about it (secrets redacted in
    /// `shown`, for events).
    pub assessment: &'a Assessment,
    /// The approval this run carries, if any: it lifts a `confirm` outcome, nothing
    /// else.
    pub approved: Option<&'a Approval>,
    /// An item of a batch that already passed the gate as a whole: it is not `busy`
    /// (the batch is the action in flight), and if it needs a confirmation the batch
    /// did not get (the desktop changed since, e.g. a password field took the focus),
    /// it is refused rather than parked.
    pub batch_item: bool,
    pub epoch: u64,
}

/// Decides, and on `Confirm` records the pending confirmation and emits its event.
pub(crate) fn decide(
    shared: &mut Shared,
    bus: &EventBus,
    clock: &dyn Clock,
    stop_flag: bool,
    req: &Request<'_>,
) -> Decision {
    let epoch = shared.epoch;
    let Some(session) = shared.session.as_mut() else {
        return Decision::Reject(ToolError::new(
            ErrorCode::NotStarted,
            "no session; call session.start first",
        ));
    };
    if session.stopping || req.epoch != epoch {
        return Decision::Reject(ToolError::new(
            ErrorCode::SafetyStopped,
            "the session is stopping; the action was not run",
        ));
    }
    if session.state == SessionState::Stopped || stop_flag {
        return Decision::Reject(ToolError::new(
            ErrorCode::SafetyStopped,
            "the emergency stop is active; release it with control.panic {on:false} or session.resume",
        ));
    }
    if session.state == SessionState::Standby {
        return Decision::Reject(ToolError::new(
            ErrorCode::SafetyStandby,
            "the session is in idle standby; call session.resume",
        ));
    }
    let busy = |p: &Pending| {
        Decision::Reject(ToolError::with_data(
            ErrorCode::Busy,
            format!(
                "a confirmation is pending ({}); answer it first",
                p.request_id
            ),
            json!({"request_id": p.request_id}),
        ))
    };
    if let Some(p) = &session.pending {
        let observe =
            session.config.config().safety.observe_while_confirming && req.assessment.observation;
        // Only the answer to that very confirmation is not `busy`; an operator grant
        // is a new action and waits its turn like any other.
        let answers_it = req.approved.is_some_and(Approval::is_confirmation);
        if !answers_it && !req.batch_item && !observe {
            return busy(p);
        }
    }
    let assessed = req.assessment;
    let reason = match assessed.outcome.clone() {
        Outcome::Deny {
            rule: Some(i),
            reason,
        } => {
            // The rule as configured when the action was judged.
            let rule = assessed.config.policy().rule_json(i);
            return Decision::Reject(ToolError::with_data(
                ErrorCode::PolicyDenied,
                reason,
                json!({"rule": {"index": i, "rule": rule}}),
            ));
        }
        Outcome::Deny { rule: None, reason } => {
            let rule = if req.assessment.verdict.console {
                "protect_console"
            } else {
                "default_rule"
            };
            return Decision::Reject(ToolError::with_data(
                ErrorCode::PolicyDenied,
                reason,
                json!({"rule": rule}),
            ));
        }
        Outcome::Allow { .. } => return Decision::Run,
        Outcome::Confirm { .. } if req.approved.is_some() => return Decision::Run,
        Outcome::Confirm { reason } => reason,
    };
    if req.batch_item {
        return Decision::Reject(ToolError::with_data(
            ErrorCode::PolicyDenied,
            format!(
                "{reason}, but the batch was not confirmed (the desktop changed since it was gated); run it on its own"
            ),
            json!({"rule": "confirmation", "risk": assessed.risk, "reason": reason}),
        ));
    }
    // One confirmation at a time: an observation let through while another is
    // pending never replaces it.
    if let Some(p) = &session.pending {
        return busy(p);
    }
    let timeout_s = session.config.config().safety.confirm_timeout_s;
    let request_id = format!("cfm-{}", random_hex(6));
    let expires_at = rfc3339(clock.wall() + Duration::from_secs_f64(timeout_s));
    let landing = assessed.landing();
    let description = assessed.description();
    bus.emit(
        "safety.confirmation_requested",
        json!({
            "request_id": request_id,
            "tool": req.call.name(),
            "arguments": crate::bounded::bounded(&assessed.shown),
            "description": crate::bounded::into_bounded(json!(description)),
            "risk": assessed.risk,
            "reason": reason,
            "landing": landing,
            "expires_at": expires_at,
            "timeout_s": timeout_s,
        }),
    );
    session.pending = Some(Pending {
        request_id: request_id.clone(),
        call: req.call.clone(),
        shown_arguments: assessed.shown.clone(),
        description,
        risk: assessed.risk,
        reason: reason.clone(),
        landing,
        expires_at,
        deadline: clock.now() + Duration::from_secs_f64(timeout_s),
    });
    Decision::Confirm {
        request_id,
        risk: assessed.risk,
        reason,
    }
}

/// Expires a pending confirmation whose deadline passed: auto-deny, remembered 300 s.
/// Called by the worker's tick and before any answer is taken, under the same lock, so
/// an answer racing the deadline gets exactly one outcome.
pub fn expire_due(shared: &mut Shared, bus: &EventBus, clock: &dyn Clock) {
    let now = clock.now();
    shared.expired.retain(|_, at| {
        now.saturating_duration_since(*at) < Duration::from_secs(crate::session::EXPIRED_MEMORY_S)
    });
    let Some(session) = shared.session.as_mut() else {
        return;
    };
    if session.pending.as_ref().is_some_and(|p| p.deadline <= now)
        && let Some(p) = session.pending.take()
    {
        session.last_activity = now;
        bus.emit(
            "safety.confirmation_expired",
            json!({"request_id": p.request_id}),
        );
        shared.expired.insert(p.request_id, now);
    }
}

/// Cancels a pending confirmation (panic, stop).
pub fn cancel_pending(shared: &mut Shared, bus: &EventBus, reason: &str) {
    if let Some(p) = shared.session.as_mut().and_then(|s| s.pending.take()) {
        bus.emit(
            "safety.confirmation_resolved",
            json!({"request_id": p.request_id, "approve": false, "tool": p.call.name(), "reason": reason}),
        );
    }
}
