//! Input schemas of the governed tools (GOVERNANCE.md Part A), derived from the typed
//! arguments in `cc_contract::args` — the one definition the server decodes and the
//! client library sends — so a schema cannot drift from either. Arguments are
//! snake_case; the nested evidence objects (`target`, `postcondition`, `provenance`)
//! are objects whose members the server reads in either case.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Value, json};

use cc_governance::governed_tool;

use cc_contract::args::{
    AcquireLease, ActionArgs, DeleteSession, EmergencyStop, GetCapabilities, GetEvents,
    GetFollowUps, PruneSessions, ReleaseLease, ReleaseReservation, ReserveTarget, SessionRef,
    StartSession, SubmitFollowUp,
};

/// The JSON Schema of `T`, self-contained (every subschema inlined: some hosts do not
/// resolve `$ref`), without the draft marker and the Rust type's name.
fn schema_of<T: JsonSchema>() -> Value {
    let schema = SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<T>();
    let mut v = schema.to_value();
    if let Some(m) = v.as_object_mut() {
        m.remove("$schema");
        m.remove("title");
    }
    v
}

/// `T`'s schema with `members` required beyond what the type requires.
fn requiring<T: JsonSchema>(members: &[&str]) -> Value {
    let mut v = schema_of::<T>();
    let required = v["required"].as_array().cloned().unwrap_or_default();
    let mut required: Vec<Value> = required;
    for m in members {
        if !required.iter().any(|r| r == m) {
            required.push(json!(m));
        }
    }
    v["required"] = Value::Array(required);
    v
}

/// `(name, description, input schema)` of every governed tool, the description from
/// its table entry (`cc_contract::tools`).
pub fn governed_tools() -> Vec<(&'static str, &'static str, Value)> {
    inputs()
        .into_iter()
        .map(|(name, schema)| {
            let summary = governed_tool(name).map_or("", |t| t.summary);
            (name, summary, schema)
        })
        .collect()
}

/// `(name, input schema)` of every governed tool.
fn inputs() -> Vec<(&'static str, Value)> {
    vec![
        ("start_session", schema_of::<StartSession>()),
        ("get_session", session_only()),
        ("pause_session", schema_of::<SessionRef>()),
        ("resume_session", session_only()),
        ("stop_session", schema_of::<SessionRef>()),
        ("get_session_events", schema_of::<GetEvents>()),
        ("get_execution_capabilities", schema_of::<GetCapabilities>()),
        ("preview_action", schema_of::<ActionArgs>()),
        (
            "execute_action",
            // `lease_id` is required too unless the mode is `shadow`: the server says so.
            requiring::<ActionArgs>(&["action_id"]),
        ),
        ("acquire_control_lease", schema_of::<AcquireLease>()),
        ("release_control_lease", schema_of::<ReleaseLease>()),
        ("reserve_target", schema_of::<ReserveTarget>()),
        (
            "release_target_reservation",
            schema_of::<ReleaseReservation>(),
        ),
        ("get_follow_ups", schema_of::<GetFollowUps>()),
        ("submit_follow_up", schema_of::<SubmitFollowUp>()),
        (
            "delete_session",
            // `confirm` defaults to false, which the server refuses: required here.
            requiring::<DeleteSession>(&["confirm"]),
        ),
        ("prune_sessions", requiring::<PruneSessions>(&["confirm"])),
        ("emergency_stop", schema_of::<EmergencyStop>()),
    ]
}

/// `get_session` and `resume_session` take only the session (a reason would be
/// refused by neither, but means nothing to them).
fn session_only() -> Value {
    let mut v = schema_of::<SessionRef>();
    if let Some(props) = v["properties"].as_object_mut() {
        props.remove("reason");
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_contract::limits;
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

    fn schema(tool: &str) -> Value {
        governed_tools()
            .into_iter()
            .find(|(name, _, _)| *name == tool)
            .map(|(_, _, s)| s)
            .unwrap_or_else(|| panic!("no schema for {tool}"))
    }

    /// The bounds the server enforces are the bounds the schemas publish, each
    /// self-contained (no `$ref` a host would have to resolve) and closed.
    #[test]
    fn schemas_carry_the_contracts_bounds_inlined_and_closed() {
        for (name, _, s) in governed_tools() {
            let text = s.to_string();
            assert!(!text.contains("$ref"), "{name}: {text}");
            assert_eq!(s["type"], "object", "{name}");
            assert_eq!(s["additionalProperties"], false, "{name}");
        }
        let lease = schema("acquire_control_lease");
        assert_eq!(lease["properties"]["ttl_ms"]["minimum"], 1);
        assert_eq!(lease["properties"]["ttl_ms"]["maximum"], limits::MAX_TTL_MS);
        assert_eq!(
            lease["properties"]["action_budget"]["maximum"],
            limits::MAX_ACTION_BUDGET
        );
        let kinds = lease["properties"]["kind"].to_string();
        assert!(
            kinds.contains("cooperative") && kinds.contains("exclusive"),
            "{kinds}"
        );
        let modes = lease["properties"]["mode"].to_string();
        for m in ["shadow", "background", "foreground"] {
            assert!(modes.contains(m), "{modes}");
        }
        assert_eq!(
            schema("get_session_events")["properties"]["limit"]["maximum"],
            limits::MAX_PAGE
        );
        let follow = schema("submit_follow_up");
        assert_eq!(follow["properties"]["instruction"]["minLength"], 1);
        assert_eq!(
            follow["properties"]["instruction"]["maxLength"],
            limits::MAX_INSTRUCTION_CHARS
        );
        for tool in ["delete_session", "prune_sessions"] {
            let s = schema(tool);
            assert_eq!(s["properties"]["confirm"]["const"], true, "{tool}");
            assert!(
                s["required"]
                    .as_array()
                    .unwrap()
                    .contains(&json!("confirm"))
            );
        }
        assert_eq!(
            schema("prune_sessions")["properties"]["older_than"]["format"],
            "date-time"
        );
        let required = |tool: &str| -> Vec<String> {
            let mut r: Vec<String> = schema(tool)["required"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            r.sort();
            r
        };
        assert_eq!(required("preview_action"), ["mode", "session_id", "tool"]);
        assert_eq!(
            required("execute_action"),
            ["action_id", "mode", "session_id", "tool"]
        );
        assert_eq!(
            required("acquire_control_lease"),
            ["action_budget", "kind", "mode", "session_id", "ttl_ms"]
        );
        // Documentation travels with the type: a member's doc comment is its description.
        let preview = schema("preview_action");
        assert!(
            preview["properties"]["target"]["description"]
                .as_str()
                .is_some_and(|d| d.contains("snake_case")),
            "{preview}"
        );
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
