//! Input schemas of the governed tools (GOVERNANCE.md Part A). Arguments are
//! snake_case; the nested evidence objects (`target`, `postcondition`, `provenance`)
//! are the contract's camelCase objects, passed back as received.

use serde_json::{Value, json};

fn obj(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

fn s() -> Value {
    json!({"type": "string"})
}

fn strings() -> Value {
    json!({"type": "array", "items": {"type": "string"}})
}

fn mode() -> Value {
    json!({"type": "string", "enum": ["shadow", "background", "foreground"]})
}

fn ttl() -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": 300_000})
}

fn session_only() -> Value {
    obj(json!({"session_id": s()}), &["session_id"])
}

/// `preview_action` / `execute_action` arguments (`execute` requires `action_id` and
/// `lease_id`).
fn action(execute: bool) -> Value {
    let props = json!({
        "session_id": s(),
        "action_id": s(),
        "attempt": {"type": "integer", "minimum": 1},
        "execution_group_id": s(),
        "agent_id": s(),
        "tool": {"type": "string", "description": "a plain tool (pointer.click or pointer_click, …) or an upstream observation: snapshot, get_ui_tree, list_windows"},
        "operation": s(),
        "arguments": {"type": "object"},
        "mode": mode(),
        "target": {"type": "object", "description": "TargetEvidence, snake_case members (camelCase accepted)"},
        "postcondition": {"type": "object", "description": "ActionPostcondition, tagged by kind, snake_case members (camelCase accepted)"},
        "data_labels": {"type": "array", "items": {"type": "string",
            "enum": ["public", "private", "credential", "payment", "health", "unknown"]}},
        "provenance": {"type": "object"},
        "expires_in_ms": ttl(),
        "approval_grant_id": s(),
        "lease_id": s(),
    });
    if execute {
        // `lease_id` is required unless the mode is `shadow`.
        obj(props, &["session_id", "action_id", "tool", "mode"])
    } else {
        obj(props, &["session_id", "tool", "mode"])
    }
}

/// `(name, description, input schema)` of every governed tool.
pub fn governed_tools() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        (
            "start_session",
            "Start a governed session for the host's principal.",
            obj(json!({"objective": s(), "execution_group_id": s()}), &[]),
        ),
        ("get_session", "Read a session.", session_only()),
        (
            "pause_session",
            "Pause a running session; the reason is journaled.",
            obj(json!({"session_id": s(), "reason": s()}), &["session_id"]),
        ),
        ("resume_session", "Resume a paused session.", session_only()),
        (
            "stop_session",
            "Stop a session; its leases are revoked, its reservations cancelled.",
            obj(json!({"session_id": s(), "reason": s()}), &["session_id"]),
        ),
        (
            "get_session_events",
            "Export the session's hash-chained journal.",
            obj(
                json!({"session_id": s(), "after_sequence": {"type": "integer", "minimum": 0},
                       "limit": {"type": "integer", "minimum": 1, "maximum": 1000}}),
                &["session_id"],
            ),
        ),
        (
            "get_execution_capabilities",
            "What a plain tool can do on this backend.",
            obj(json!({"tool": s(), "app_id": s()}), &["tool"]),
        ),
        (
            "preview_action",
            "Preview a governed action: envelope, capability, policy, blocker.",
            action(false),
        ),
        (
            "execute_action",
            "Execute a governed action under a control lease; answers its receipt.",
            action(true),
        ),
        (
            "acquire_control_lease",
            "Acquire a control lease (budget, TTL, boundaries).",
            obj(
                json!({"session_id": s(), "agent_id": s(),
                       "kind": {"type": "string", "enum": ["cooperative", "exclusive"]},
                       "mode": mode(), "ttl_ms": ttl(),
                       "action_budget": {"type": "integer", "minimum": 1, "maximum": 10_000},
                       "app_ids": strings(), "window_ids": {"type": "array"}, "display_ids": strings()}),
                &["session_id", "kind", "mode", "ttl_ms", "action_budget"],
            ),
        ),
        (
            "release_control_lease",
            "Release a control lease.",
            obj(
                json!({"session_id": s(), "lease_id": s()}),
                &["session_id", "lease_id"],
            ),
        ),
        (
            "reserve_target",
            "Reserve a target (advisory; never authorizes a mutation).",
            obj(
                json!({"session_id": s(), "intent_id": s(), "execution_group_id": s(),
                       "agent_id": s(), "app_id": s(), "window_id": {}, "ttl_ms": ttl()}),
                &["session_id", "intent_id", "app_id", "ttl_ms"],
            ),
        ),
        (
            "release_target_reservation",
            "Release a target reservation.",
            obj(
                json!({"session_id": s(), "reservation_id": s()}),
                &["session_id", "reservation_id"],
            ),
        ),
        (
            "get_follow_ups",
            "Read the session's follow-up instructions after a cursor.",
            obj(
                json!({"session_id": s(), "after_sequence": {"type": "integer", "minimum": 0},
                       "limit": {"type": "integer", "minimum": 1, "maximum": 1000}}),
                &["session_id"],
            ),
        ),
        (
            "submit_follow_up",
            "Add a follow-up instruction to a live session.",
            obj(
                json!({"session_id": s(), "instruction": {"type": "string", "minLength": 1, "maxLength": 10_000}}),
                &["session_id", "instruction"],
            ),
        ),
        (
            "delete_session",
            "Delete a terminal session's journal (confirm must be true).",
            obj(
                json!({"session_id": s(), "confirm": {"type": "boolean", "const": true}}),
                &["session_id", "confirm"],
            ),
        ),
        (
            "prune_sessions",
            "Delete the caller's terminal sessions last updated before a time (confirm must be true).",
            obj(
                json!({"older_than": {"type": "string", "format": "date-time"},
                       "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
                       "confirm": {"type": "boolean", "const": true}}),
                &["older_than", "confirm"],
            ),
        ),
        (
            "emergency_stop",
            "Engage the panic and revoke every active lease.",
            obj(json!({"reason": s()}), &[]),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_contract::args::*;
    use cc_contract::{ExecutionMode, LeaseKind, WindowId};
    use serde::Serialize;

    /// The members a typed argument object sends when every optional one is given.
    fn members<T: Serialize>(args: &T) -> Vec<String> {
        let mut keys: Vec<String> = serde_json::to_value(args)
            .expect("serializes")
            .as_object()
            .expect("an object")
            .keys()
            .cloned()
            .collect();
        keys.sort();
        keys
    }

    fn some() -> Option<String> {
        Some("x".into())
    }

    /// Every governed tool's published schema names exactly the members of its typed
    /// arguments in `cc_contract::args` (the one definition the server decodes and the
    /// library sends), so the schema cannot drift from either.
    #[test]
    fn each_schema_lists_exactly_its_typed_arguments() {
        let action = ActionArgs {
            session_id: "s".into(),
            action_id: some(),
            attempt: Some(1),
            execution_group_id: some(),
            agent_id: some(),
            tool: "t".into(),
            operation: some(),
            arguments: serde_json::Map::new(),
            mode: ExecutionMode::Shadow,
            target: None,
            postcondition: None,
            data_labels: vec![cc_contract::DataLabel::Public],
            provenance: None,
            expires_in_ms: Some(1),
            approval_grant_id: some(),
            lease_id: some(),
        };
        let mut action_members = members(&action);
        action_members.extend(["target", "postcondition", "provenance"].map(String::from));
        action_members.sort();
        let expected: Vec<(&str, Vec<String>)> = vec![
            (
                "start_session",
                members(&StartSession {
                    objective: some(),
                    execution_group_id: some(),
                }),
            ),
            (
                "stop_session",
                members(&SessionRef {
                    session_id: "s".into(),
                    reason: some(),
                }),
            ),
            (
                "pause_session",
                members(&SessionRef {
                    session_id: "s".into(),
                    reason: some(),
                }),
            ),
            (
                "get_session_events",
                members(&GetEvents {
                    session_id: "s".into(),
                    after_sequence: 1,
                    limit: Some(1),
                }),
            ),
            (
                "get_execution_capabilities",
                members(&GetCapabilities {
                    tool: "t".into(),
                    app_id: some(),
                }),
            ),
            ("preview_action", action_members.clone()),
            ("execute_action", action_members),
            (
                "acquire_control_lease",
                members(&AcquireLease {
                    session_id: "s".into(),
                    agent_id: some(),
                    kind: LeaseKind::Exclusive,
                    mode: ExecutionMode::Foreground,
                    ttl_ms: 1,
                    action_budget: 1,
                    app_ids: vec!["a".into()],
                    window_ids: vec![WindowId::Number(1)],
                    display_ids: vec!["d".into()],
                }),
            ),
            (
                "release_control_lease",
                members(&ReleaseLease {
                    session_id: "s".into(),
                    lease_id: "l".into(),
                }),
            ),
            (
                "reserve_target",
                members(&ReserveTarget {
                    session_id: "s".into(),
                    intent_id: "i".into(),
                    execution_group_id: some(),
                    agent_id: some(),
                    app_id: "a".into(),
                    window_id: Some(WindowId::Number(1)),
                    ttl_ms: 1,
                }),
            ),
            (
                "release_target_reservation",
                members(&ReleaseReservation {
                    session_id: "s".into(),
                    reservation_id: "r".into(),
                }),
            ),
            ("emergency_stop", members(&EmergencyStop { reason: some() })),
            (
                "get_follow_ups",
                members(&GetFollowUps {
                    session_id: "s".into(),
                    after_sequence: 1,
                    limit: Some(1),
                }),
            ),
            (
                "submit_follow_up",
                members(&SubmitFollowUp {
                    session_id: "s".into(),
                    instruction: "i".into(),
                }),
            ),
            (
                "delete_session",
                members(&DeleteSession {
                    session_id: "s".into(),
                    confirm: true,
                }),
            ),
            (
                "prune_sessions",
                members(&PruneSessions {
                    older_than: "t".into(),
                    limit: Some(1),
                    confirm: true,
                }),
            ),
        ];
        let schemas = governed_tools();
        for (tool, want) in expected {
            let (_, _, schema) = schemas
                .iter()
                .find(|(name, _, _)| *name == tool)
                .unwrap_or_else(|| panic!("no schema for {tool}"));
            let mut got: Vec<String> = schema["properties"]
                .as_object()
                .expect("properties")
                .keys()
                .cloned()
                .collect();
            got.sort();
            assert_eq!(got, want, "{tool}");
        }
    }
}
