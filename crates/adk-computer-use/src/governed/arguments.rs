//! The snake_case arguments of the Part A tools, built from what the graph holds.
//!
//! Nested contract objects (`target`, `postcondition`, `provenance`) keep their camelCase
//! wire form, so the server receives exactly the evidence the planner observed.

use cc_contract::{ActionEnvelope, ExecutionMode, LeaseKind};
use serde::Serialize;
use serde_json::{Map, Value};

use super::options::RuntimeOptions;
use crate::error::ComputerUseError;
use crate::runtime::binding::lease::target_axes;
use crate::runtime::{ProposedAction, RuntimeResult};

/// `preview_action` arguments: the proposal, field for field.
pub fn action(operation: &'static str, p: &ProposedAction) -> RuntimeResult<Map<String, Value>> {
    let mut m = Map::new();
    put(&mut m, "session_id", p.session_id.as_str());
    put(&mut m, "action_id", p.action_id.as_str());
    if let Some(attempt) = p.attempt {
        put(&mut m, "attempt", attempt);
    }
    if let Some(group) = &p.execution_group_id {
        put(&mut m, "execution_group_id", group.as_str());
    }
    if let Some(agent) = &p.agent_id {
        put(&mut m, "agent_id", agent.as_str());
    }
    put(&mut m, "tool", p.tool.as_str());
    if let Some(op) = &p.operation {
        put(&mut m, "operation", op.as_str());
    }
    m.insert("arguments".into(), Value::Object(p.arguments.clone()));
    put(&mut m, "mode", p.mode.as_str());
    if let Some(target) = &p.target {
        m.insert("target".into(), json(operation, "target", target)?);
    }
    if let Some(post) = &p.postcondition {
        m.insert(
            "postcondition".into(),
            json(operation, "postcondition", post)?,
        );
    }
    if let Some(labels) = &p.data_labels {
        m.insert(
            "data_labels".into(),
            json(operation, "data_labels", labels)?,
        );
    }
    if let Some(provenance) = &p.provenance {
        m.insert(
            "provenance".into(),
            json(operation, "provenance", provenance)?,
        );
    }
    if let Some(ms) = p.expires_in_ms {
        put(&mut m, "expires_in_ms", ms);
    }
    Ok(m)
}

/// `execute_action` arguments: exactly the previewed proposal plus the lease and, when the
/// approval is a grant, its id.
pub fn execute(
    p: &ProposedAction,
    lease_id: &str,
    approval_grant_id: Option<&str>,
) -> RuntimeResult<Map<String, Value>> {
    let mut m = action("execute_action", p)?;
    put(&mut m, "lease_id", lease_id);
    if let Some(grant) = approval_grant_id {
        put(&mut m, "approval_grant_id", grant);
    }
    Ok(m)
}

/// `acquire_control_lease` arguments for one envelope: its session, agent and mode, and
/// boundaries as narrow as the target allows, so the lease can do nothing else.
/// Foreground needs an exclusive lease; the other modes share the desktop.
pub fn lease(e: &ActionEnvelope, options: &RuntimeOptions) -> RuntimeResult<Map<String, Value>> {
    const OP: &str = "acquire_control_lease";
    let mut m = Map::new();
    put(&mut m, "session_id", e.session_id.as_str());
    if let Some(agent) = &e.agent_id {
        put(&mut m, "agent_id", agent.as_str());
    }
    let kind = if e.requested_mode == ExecutionMode::Foreground {
        LeaseKind::Exclusive
    } else {
        LeaseKind::Cooperative
    };
    put(&mut m, "kind", kind.as_str());
    put(&mut m, "mode", e.requested_mode.as_str());
    put(&mut m, "ttl_ms", options.lease_ttl_ms);
    put(&mut m, "action_budget", options.lease_budget);
    let (app, window, display) = target_axes(e);
    if let Some(app) = app {
        m.insert("app_ids".into(), json(OP, "app_ids", &[app])?);
    }
    if let Some(window) = window {
        m.insert("window_ids".into(), json(OP, "window_ids", &[window])?);
    }
    if let Some(display) = display {
        m.insert("display_ids".into(), json(OP, "display_ids", &[display])?);
    }
    Ok(m)
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
    let mut m = Map::new();
    put(&mut m, "session_id", e.session_id.as_str());
    put(&mut m, "intent_id", e.action_id.as_str());
    if let Some(group) = &e.execution_group_id {
        put(&mut m, "execution_group_id", group.as_str());
    }
    if let Some(agent) = &e.agent_id {
        put(&mut m, "agent_id", agent.as_str());
    }
    put(&mut m, "app_id", app);
    if let Some(window) = window {
        m.insert(
            "window_id".into(),
            json("reserve_target", "window_id", window)?,
        );
    }
    put(&mut m, "ttl_ms", options.reservation_ttl_ms);
    Ok(Some(m))
}

/// `release_target_reservation` arguments.
pub fn release_reservation(session_id: &str, reservation_id: &str) -> Map<String, Value> {
    let mut m = Map::new();
    put(&mut m, "session_id", session_id);
    put(&mut m, "reservation_id", reservation_id);
    m
}

/// `release_control_lease` arguments.
pub fn release_lease(session_id: &str, lease_id: &str) -> Map<String, Value> {
    let mut m = Map::new();
    put(&mut m, "session_id", session_id);
    put(&mut m, "lease_id", lease_id);
    m
}

/// `{session_id}`: `pause_session`, `stop_session`.
pub fn session(session_id: &str) -> Map<String, Value> {
    let mut m = Map::new();
    put(&mut m, "session_id", session_id);
    m
}

fn put(m: &mut Map<String, Value>, key: &str, value: impl Into<Value>) {
    m.insert(key.to_string(), value.into());
}

fn json<T: Serialize + ?Sized>(
    operation: &'static str,
    field: &str,
    value: &T,
) -> RuntimeResult<Value> {
    serde_json::to_value(value).map_err(|e| ComputerUseError::Runtime {
        operation,
        code: Some("invalid_arguments".into()),
        message: format!("`{field}` does not serialize: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn proposal() -> ProposedAction {
        serde_json::from_value(json!({
            "sessionId": "ses-1", "actionId": "act-1", "tool": "pointer_click",
            "arguments": {"x": 3, "y": 4}, "mode": "foreground", "agentId": "agent-a",
            "target": {"platform": "virtual", "appId": "cc-form", "windowId": 7,
                       "observationId": "obs-1", "confidence": 1, "capturedAt": "2026-11-29T10:00:00.000Z"},
            "expiresInMs": 30000
        }))
        .expect("a proposal")
    }

    #[test]
    fn action_arguments_are_snake_case_with_camel_case_evidence() {
        let args = execute(&proposal(), "lease-1", Some("grant-1")).expect("arguments");
        assert_eq!(
            Value::Object(args),
            json!({
                "session_id": "ses-1", "action_id": "act-1", "agent_id": "agent-a",
                "tool": "pointer_click", "arguments": {"x": 3, "y": 4}, "mode": "foreground",
                "target": {"platform": "virtual", "appId": "cc-form", "windowId": 7,
                           "observationId": "obs-1", "confidence": 1,
                           "capturedAt": "2026-11-29T10:00:00.000Z"},
                "expires_in_ms": 30000, "lease_id": "lease-1", "approval_grant_id": "grant-1"
            })
        );
    }
}
