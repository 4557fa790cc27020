//! The arguments of the Part A tools, built from what the graph holds as the contract's
//! typed arguments ([`cc_contract::args`]): the same types the server decodes, so a
//! member name can never differ between the two. Nested evidence goes in its snake_case
//! argument form, the canonical wire form upstream clients send too.

use cc_contract::args::{
    AcquireLease, ActionArgs, ReleaseLease, ReleaseReservation, ReserveTarget, SessionRef,
};
use cc_contract::{ActionEnvelope, ExecutionMode, LeaseKind};
use serde::Serialize;
use serde_json::{Map, Value};

use super::options::RuntimeOptions;
use crate::error::ComputerUseError;
use crate::runtime::binding::lease::target_axes;
use crate::runtime::{ProposedAction, RuntimeResult};

/// `preview_action` arguments: the proposal, field for field.
pub fn action(operation: &'static str, p: &ProposedAction) -> RuntimeResult<Map<String, Value>> {
    object(operation, p)
}

/// `execute_action` arguments: exactly the previewed proposal plus the lease and, when the
/// approval is a grant, its id.
pub fn execute(
    p: &ProposedAction,
    lease_id: &str,
    approval_grant_id: Option<&str>,
) -> RuntimeResult<Map<String, Value>> {
    let args = ActionArgs {
        lease_id: Some(lease_id.to_string()),
        approval_grant_id: approval_grant_id.map(str::to_string),
        ..p.clone()
    };
    object("execute_action", &args)
}

/// `acquire_control_lease` arguments for one envelope: its session, agent and mode, and
/// boundaries as narrow as the target allows, so the lease can do nothing else.
/// Foreground needs an exclusive lease; the other modes share the desktop.
pub fn lease(e: &ActionEnvelope, options: &RuntimeOptions) -> RuntimeResult<Map<String, Value>> {
    let kind = if e.requested_mode == ExecutionMode::Foreground {
        LeaseKind::Exclusive
    } else {
        LeaseKind::Cooperative
    };
    let (app, window, display) = target_axes(e);
    let args = AcquireLease {
        session_id: e.session_id.clone(),
        agent_id: e.agent_id.clone(),
        kind,
        mode: e.requested_mode,
        ttl_ms: options.lease_ttl_ms,
        action_budget: options.lease_budget,
        app_ids: app.map(str::to_string).into_iter().collect(),
        window_ids: window.cloned().into_iter().collect(),
        display_ids: display.map(str::to_string).into_iter().collect(),
    };
    object("acquire_control_lease", &args)
}

/// `reserve_target` arguments: the intent is the action, the scope its target's app and
/// window. `None` when the envelope names no app: there is nothing to reserve.
pub fn reserve(
    e: &ActionEnvelope,
    options: &RuntimeOptions,
) -> RuntimeResult<Option<Map<String, Value>>> {
    let (app, window, _) = target_axes(e);
    let Some(app) = app else {
        return Ok(None);
    };
    let args = ReserveTarget {
        session_id: e.session_id.clone(),
        intent_id: e.action_id.clone(),
        execution_group_id: e.execution_group_id.clone(),
        agent_id: e.agent_id.clone(),
        app_id: app.to_string(),
        window_id: window.cloned(),
        ttl_ms: options.reservation_ttl_ms,
    };
    object("reserve_target", &args).map(Some)
}

/// `release_target_reservation` arguments.
pub fn release_reservation(session_id: &str, reservation_id: &str) -> Map<String, Value> {
    infallible(&ReleaseReservation {
        session_id: session_id.to_string(),
        reservation_id: reservation_id.to_string(),
    })
}

/// `release_control_lease` arguments.
pub fn release_lease(session_id: &str, lease_id: &str) -> Map<String, Value> {
    infallible(&ReleaseLease {
        session_id: session_id.to_string(),
        lease_id: lease_id.to_string(),
    })
}

/// `{session_id}`: `pause_session`, `stop_session`.
pub fn session(session_id: &str) -> Map<String, Value> {
    infallible(&SessionRef {
        session_id: session_id.to_string(),
        reason: None,
    })
}

/// Typed arguments as the JSON object a tool call takes.
fn object<T: Serialize>(operation: &'static str, args: &T) -> RuntimeResult<Map<String, Value>> {
    match serde_json::to_value(args) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err(unserializable(operation, format!("not an object: {other}"))),
        Err(e) => Err(unserializable(operation, e.to_string())),
    }
}

/// Arguments made of strings only, which always serialize to an object.
fn infallible<T: Serialize>(args: &T) -> Map<String, Value> {
    match serde_json::to_value(args) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

fn unserializable(operation: &'static str, message: String) -> ComputerUseError {
    ComputerUseError::Runtime {
        operation,
        code: Some("invalid_arguments".into()),
        message: format!("the arguments do not serialize: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn proposal() -> ProposedAction {
        serde_json::from_value(json!({
            "session_id": "ses-1", "action_id": "act-1", "tool": "pointer_click",
            "arguments": {"x": 3, "y": 4}, "mode": "foreground", "agent_id": "agent-a",
            "target": {"platform": "virtual", "appId": "cc-form", "windowId": 7,
                       "observationId": "obs-1", "confidence": 1, "capturedAt": "2026-11-29T10:00:00.000Z"},
            "expires_in_ms": 30000
        }))
        .expect("a proposal")
    }

    #[test]
    fn action_arguments_are_snake_case_down_to_the_evidence() {
        let args = execute(&proposal(), "lease-1", Some("grant-1")).expect("arguments");
        assert_eq!(
            Value::Object(args.clone()),
            json!({
                "session_id": "ses-1", "action_id": "act-1", "agent_id": "agent-a",
                "tool": "pointer_click", "arguments": {"x": 3, "y": 4}, "mode": "foreground",
                "target": {"platform": "virtual", "app_id": "cc-form", "window_id": 7,
                           "observation_id": "obs-1", "confidence": 1,
                           "captured_at": "2026-11-29T10:00:00.000Z"},
                "expires_in_ms": 30000, "lease_id": "lease-1", "approval_grant_id": "grant-1"
            })
        );
        // What the server decodes is exactly what was proposed.
        let decoded: ActionArgs = serde_json::from_value(Value::Object(args)).expect("decodes");
        assert_eq!(decoded.target, proposal().target);
    }
}
