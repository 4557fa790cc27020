//! Arguments of the governed MCP tools, defined once: the server decodes them with these
//! types and the `adk-computer-use` library builds its requests from them, so the two can
//! never disagree about a member name.
//!
//! Tool arguments are snake_case (GOVERNANCE.md wire rules). The nested contract objects
//! (`target`, `postcondition`, `provenance`) take the snake_case member names too, as the
//! upstream client sends them (`app_id`, `captured_at`, `value_digest`); their camelCase
//! result form is accepted as well, so evidence read from an envelope can be passed back
//! unchanged. A member given in both spellings is refused. A target's `captured_at` is
//! normalised to the wire timestamp form (UTC, milliseconds, `Z`) when it parses, so the
//! envelope and its digest never depend on how the client printed the time.

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::timestamp::{format_timestamp, parse_timestamp};
use crate::types::{
    ActionPostcondition, ActionProvenance, DataLabel, ExecutionMode, LeaseKind, TargetEvidence,
    WindowId,
};

/// `start_session`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct StartSession {
    /// What the session is for, shown to the operator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objective: Option<String>,
    /// Groups the sessions of cooperating agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_group_id: Option<String>,
}

/// `get_session`, `pause_session`, `resume_session`, `stop_session`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SessionRef {
    /// The session.
    pub session_id: String,
    /// Why (pause and stop journal it with their event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `get_session_events`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct GetEvents {
    /// The session.
    pub session_id: String,
    /// Only events after this sequence (0: from the start).
    #[serde(default)]
    pub after_sequence: u64,
    /// Largest page, 1..=[`MAX_PAGE`](crate::limits::MAX_PAGE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = crate::limits::MAX_PAGE)))]
    pub limit: Option<u32>,
}

/// `get_execution_capabilities`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct GetCapabilities {
    /// A plain tool, or an upstream observation name.
    pub tool: String,
    /// The application asked about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_id: Option<String>,
}

/// `acquire_control_lease`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AcquireLease {
    /// The session.
    pub session_id: String,
    /// The agent holding the lease.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Cooperative or exclusive (exclusive needs foreground).
    pub kind: LeaseKind,
    /// The mode the lease authorizes.
    pub mode: ExecutionMode,
    /// Lifetime, 1..=[`MAX_TTL_MS`](crate::limits::MAX_TTL_MS) ms.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = crate::limits::MAX_TTL_MS)))]
    pub ttl_ms: u64,
    /// Actions it covers, 1..=[`MAX_ACTION_BUDGET`](crate::limits::MAX_ACTION_BUDGET); the lease is revoked once they are spent.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = crate::limits::MAX_ACTION_BUDGET)))]
    pub action_budget: u32,
    /// Applications it is bounded to (empty: any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub app_ids: Vec<String>,
    /// Windows it is bounded to (empty: any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub window_ids: Vec<WindowId>,
    /// Displays it is bounded to (empty: any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub display_ids: Vec<String>,
}

/// `release_control_lease`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ReleaseLease {
    /// The session.
    pub session_id: String,
    /// The lease.
    pub lease_id: String,
}

/// `reserve_target`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ReserveTarget {
    /// The session.
    pub session_id: String,
    /// The planned action (its `action_id`).
    pub intent_id: String,
    /// The group of cooperating agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_group_id: Option<String>,
    /// The agent planning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The application reserved.
    pub app_id: String,
    /// The window reserved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_id: Option<WindowId>,
    /// Lifetime, 1..=[`MAX_TTL_MS`](crate::limits::MAX_TTL_MS) ms.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = crate::limits::MAX_TTL_MS)))]
    pub ttl_ms: u64,
}

/// `release_target_reservation`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ReleaseReservation {
    /// The session.
    pub session_id: String,
    /// The reservation.
    pub reservation_id: String,
}

/// `emergency_stop`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct EmergencyStop {
    /// Why, journaled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `get_follow_ups`: a page of the session's steering instructions after a cursor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct GetFollowUps {
    /// The session.
    pub session_id: String,
    /// Only follow-ups after this sequence (0: from the start).
    #[serde(default)]
    pub after_sequence: u64,
    /// Largest page, 1..=[`MAX_PAGE`](crate::limits::MAX_PAGE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = crate::limits::MAX_PAGE)))]
    pub limit: Option<u32>,
}

/// `submit_follow_up`: one steering instruction for a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SubmitFollowUp {
    /// The session.
    pub session_id: String,
    /// The instruction, 1..=[`MAX_INSTRUCTION_CHARS`](crate::limits::MAX_INSTRUCTION_CHARS) characters.
    #[cfg_attr(feature = "schema", schemars(length(min = 1, max = crate::limits::MAX_INSTRUCTION_CHARS)))]
    pub instruction: String,
}

/// `delete_session`: removes a terminal session's journal. `confirm` must be `true`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct DeleteSession {
    /// The session (stopped, or otherwise terminal).
    pub session_id: String,
    /// Must be `true`: deletion cannot be undone.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(extend("const" = true)))]
    pub confirm: bool,
}

/// `prune_sessions`: deletes the caller's terminal sessions last updated before a time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PruneSessions {
    /// RFC 3339 time: sessions last updated before it are deleted.
    #[cfg_attr(feature = "schema", schemars(extend("format" = "date-time")))]
    pub older_than: String,
    /// At most this many, 1..=[`MAX_PAGE`](crate::limits::MAX_PAGE) (default [`DEFAULT_PAGE`](crate::limits::DEFAULT_PAGE)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = crate::limits::MAX_PAGE)))]
    pub limit: Option<u32>,
    /// Must be `true`: deletion cannot be undone.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(extend("const" = true)))]
    pub confirm: bool,
}

/// `preview_action` and `execute_action`. Execute requires `action_id`, and `lease_id`
/// unless the mode is `shadow` (an observation needs no lease and can change nothing).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ActionArgs {
    /// The session.
    pub session_id: String,
    /// The action's idempotency key (execute replays its receipt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action_id: Option<String>,
    /// The client's attempt number, recorded in the receipt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub attempt: Option<u32>,
    /// The group of cooperating agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_group_id: Option<String>,
    /// The agent acting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// A plain tool (`pointer.click` or `pointer_click`) or an upstream observation name.
    pub tool: String,
    /// The semantic operation (default: the tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// The tool's own arguments.
    #[serde(default)]
    pub arguments: Map<String, Value>,
    /// Shadow (observe), background or foreground.
    pub mode: ExecutionMode,
    /// The observed target, snake_case (camelCase accepted).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "snake_case_form::serialize",
        deserialize_with = "snake_case_form::deserialize"
    )]
    #[cfg_attr(feature = "schema", schemars(with = "Option<Map<String, Value>>"))]
    pub target: Option<TargetEvidence>,
    /// The expected state afterwards, snake_case (camelCase accepted).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "snake_case_form::serialize",
        deserialize_with = "snake_case_form::deserialize"
    )]
    #[cfg_attr(feature = "schema", schemars(with = "Option<Map<String, Value>>"))]
    pub postcondition: Option<ActionPostcondition>,
    /// Data sensitivity labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data_labels: Vec<DataLabel>,
    /// Where the instruction came from, snake_case (camelCase accepted).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "snake_case_form::serialize",
        deserialize_with = "snake_case_form::deserialize"
    )]
    #[cfg_attr(feature = "schema", schemars(with = "Option<Map<String, Value>>"))]
    pub provenance: Option<ActionProvenance>,
    /// Envelope lifetime, 1..=[`MAX_TTL_MS`](crate::limits::MAX_TTL_MS) ms (default
    /// [`DEFAULT_TTL_MS`](crate::limits::DEFAULT_TTL_MS)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = crate::limits::MAX_TTL_MS)))]
    pub expires_in_ms: Option<u64>,
    /// The operator's grant for a `confirm` decision (found by digest when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_grant_id: Option<String>,
    /// The control lease (execute; not for shadow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_id: Option<String>,
}

/// A contract object whose argument form differs from its result form only by the case
/// of its member names, with what the argument form normalises.
pub trait ArgumentForm: Serialize + DeserializeOwned {
    /// Brings a decoded argument to its canonical value (no-op unless overridden).
    fn normalized(self) -> Self {
        self
    }
}

impl ArgumentForm for TargetEvidence {
    /// `captured_at` in the wire timestamp form; an unparseable one is kept as sent, so
    /// execute's revalidation refuses it as `stale_target` with the reason.
    fn normalized(mut self) -> Self {
        if let Ok(at) = parse_timestamp(&self.captured_at) {
            self.captured_at = format_timestamp(at);
        }
        self
    }
}

impl ArgumentForm for ActionPostcondition {}
impl ArgumentForm for ActionProvenance {}

/// `snake_case` → `camelCase` (`app_id` → `appId`).
fn to_camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `camelCase` → `snake_case` (`appId` → `app_id`).
fn to_snake(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Decodes one contract object from its argument form.
///
/// # Errors
/// A member given twice (in both spellings), or whatever the contract type refuses.
pub fn from_argument<T: ArgumentForm>(value: Value) -> Result<T, String> {
    let Value::Object(members) = value else {
        return serde_json::from_value::<T>(value).map_err(|e| e.to_string());
    };
    let mut camel = Map::with_capacity(members.len());
    for (key, member) in members {
        let name = to_camel(&key);
        if camel.contains_key(&name) {
            return Err(format!(
                "member `{key}` is given twice (snake_case and camelCase)"
            ));
        }
        camel.insert(name, member);
    }
    serde_json::from_value::<T>(Value::Object(camel))
        .map(ArgumentForm::normalized)
        .map_err(|e| e.to_string())
}

/// Encodes one contract object in its argument form (snake_case member names).
///
/// # Errors
/// Only if the object does not serialize.
pub fn to_argument<T: ArgumentForm>(value: &T) -> Result<Value, String> {
    match serde_json::to_value(value).map_err(|e| e.to_string())? {
        Value::Object(members) => Ok(Value::Object(
            members
                .into_iter()
                .map(|(k, v)| (to_snake(&k), v))
                .collect(),
        )),
        other => Ok(other),
    }
}

/// serde adapters for an optional contract object in its argument form.
mod snake_case_form {
    use super::*;

    pub fn serialize<T: ArgumentForm, S: Serializer>(
        value: &Option<T>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(v) => to_argument(v)
                .map_err(serde::ser::Error::custom)?
                .serialize(serializer),
            None => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, T: ArgumentForm, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<T>, D::Error> {
        match Option::<Value>::deserialize(deserializer)? {
            None | Some(Value::Null) => Ok(None),
            Some(v) => from_argument(v).map(Some).map_err(D::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn upstream_shaped() -> Value {
        json!({
            "session_id": "ses-1", "action_id": "a1", "tool": "keyboard_type",
            "arguments": {"text": "Ada"}, "mode": "foreground", "data_labels": ["public"],
            "target": {"platform": "linux", "app_id": "cc-form", "pid": 7, "window_id": 3,
                       "bounds": {"x": 1, "y": 2, "width": 3, "height": 4},
                       "observation_id": "obs", "confidence": 1.0,
                       "captured_at": "2026-12-01T20:13:18.123456789+00:00"},
            "postcondition": {"kind": "ui_element", "role": "text", "label": "Name",
                              "exists": true, "value_digest": "sha256:00"}
        })
    }

    #[test]
    fn snake_case_members_are_canonical_and_capture_time_is_normalised() {
        let a: ActionArgs = serde_json::from_value(upstream_shaped()).expect("decodes");
        let t = a.target.as_ref().expect("target");
        assert_eq!(t.app_id, "cc-form");
        assert_eq!(t.window_id, Some(WindowId::Number(3)));
        assert_eq!(t.captured_at, "2026-12-01T20:13:18.123Z");
        assert!(matches!(
            a.postcondition,
            Some(ActionPostcondition::UiElement { value_digest: Some(ref d), .. }) if d == "sha256:00"
        ));
        // And back: the library sends exactly this form.
        let back = serde_json::to_value(&a).expect("encodes");
        assert_eq!(back["target"]["app_id"], "cc-form");
        assert_eq!(back["postcondition"]["value_digest"], "sha256:00");
        assert!(back["target"].get("appId").is_none());
    }

    #[test]
    fn camel_case_members_are_accepted_too() {
        let mut v = upstream_shaped();
        v["target"] = json!({"platform": "linux", "appId": "cc-form", "observationId": "o",
                             "confidence": 1, "capturedAt": "2026-12-01T20:13:18.100Z"});
        v["postcondition"] = json!({"kind": "window", "windowId": 3, "exists": true});
        let a: ActionArgs = serde_json::from_value(v).expect("decodes");
        assert_eq!(a.target.expect("target").observation_id, "o");
    }

    #[test]
    fn a_member_in_both_spellings_or_an_unknown_one_is_refused() {
        let mut v = upstream_shaped();
        v["target"]["appId"] = json!("other");
        let e = serde_json::from_value::<ActionArgs>(v).expect_err("refused");
        assert!(e.to_string().contains("given twice"), "{e}");
        let mut v = upstream_shaped();
        v["target"]["app_name"] = json!("x");
        assert!(serde_json::from_value::<ActionArgs>(v).is_err());
        let mut v = upstream_shaped();
        v["lease"] = json!("x");
        assert!(serde_json::from_value::<ActionArgs>(v).is_err());
    }

    #[test]
    fn an_unparseable_capture_time_is_kept_for_revalidation_to_refuse() {
        let mut v = upstream_shaped();
        v["target"]["captured_at"] = json!("yesterday");
        let a: ActionArgs = serde_json::from_value(v).expect("decodes");
        assert_eq!(a.target.expect("target").captured_at, "yesterday");
    }

    #[test]
    fn case_conversion_round_trips() {
        for k in [
            "app_id",
            "observation_id",
            "platform",
            "source_observation_ids",
        ] {
            assert_eq!(to_snake(&to_camel(k)), k);
        }
    }
}
