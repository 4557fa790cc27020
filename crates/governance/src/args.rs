//! Arguments of the governed tools (MCP arguments are snake_case; the nested contract
//! objects `target`, `postcondition` and `provenance` keep their camelCase wire form,
//! so a client passes back exactly the evidence objects it received).

use cc_contract::{
    ActionPostcondition, ActionProvenance, DataLabel, ExecutionMode, LeaseKind, TargetEvidence,
    WindowId,
};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::{GovResult, invalid};

/// Longest lease, reservation or envelope lifetime (GOVERNANCE.md Part A).
pub const MAX_TTL_MS: u64 = 300_000;
/// Largest lease budget.
pub const MAX_BUDGET: u32 = 10_000;
/// Default envelope lifetime when `expires_in_ms` is absent.
pub const DEFAULT_EXPIRES_MS: u64 = 60_000;

/// Decodes tool arguments, mapping serde's message to `invalid_arguments`.
pub fn parse<T: DeserializeOwned>(args: &Value) -> GovResult<T> {
    let args = if args.is_null() {
        Value::Object(Map::new())
    } else {
        args.clone()
    };
    serde_json::from_value(args).map_err(|e| invalid(format!("invalid arguments: {e}")))
}

/// `start_session`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartSession {
    pub objective: Option<String>,
    pub execution_group_id: Option<String>,
}

/// `get_session`, `pause_session`, `resume_session`, `stop_session`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionRef {
    pub session_id: String,
    /// `stop_session` only: why.
    pub reason: Option<String>,
}

/// `get_session_events`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetEvents {
    pub session_id: String,
    #[serde(default)]
    pub after_sequence: u64,
    pub limit: Option<u32>,
}

/// `acquire_control_lease`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AcquireLease {
    pub session_id: String,
    pub agent_id: Option<String>,
    pub kind: LeaseKind,
    pub mode: ExecutionMode,
    pub ttl_ms: u64,
    pub action_budget: u32,
    #[serde(default)]
    pub app_ids: Vec<String>,
    #[serde(default)]
    pub window_ids: Vec<WindowId>,
    #[serde(default)]
    pub display_ids: Vec<String>,
}

/// `release_control_lease`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReleaseLease {
    pub session_id: String,
    pub lease_id: String,
}

/// `reserve_target`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReserveTarget {
    pub session_id: String,
    pub intent_id: String,
    pub execution_group_id: Option<String>,
    pub agent_id: Option<String>,
    pub app_id: String,
    pub window_id: Option<WindowId>,
    pub ttl_ms: u64,
}

/// `release_target_reservation`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReleaseReservation {
    pub session_id: String,
    pub reservation_id: String,
}

/// `emergency_stop`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmergencyStop {
    pub reason: Option<String>,
}

/// `preview_action` and `execute_action` (execute requires `action_id` and `lease_id`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionArgs {
    pub session_id: String,
    pub action_id: Option<String>,
    pub attempt: Option<u32>,
    pub execution_group_id: Option<String>,
    pub agent_id: Option<String>,
    pub tool: String,
    pub operation: Option<String>,
    #[serde(default)]
    pub arguments: Map<String, Value>,
    pub mode: ExecutionMode,
    pub target: Option<TargetEvidence>,
    pub postcondition: Option<ActionPostcondition>,
    #[serde(default)]
    pub data_labels: Vec<DataLabel>,
    pub provenance: Option<ActionProvenance>,
    pub expires_in_ms: Option<u64>,
    pub approval_grant_id: Option<String>,
    pub lease_id: Option<String>,
}

/// Checks a TTL is in `1..=MAX_TTL_MS`.
pub fn check_ttl(field: &str, ttl_ms: u64) -> GovResult<()> {
    if ttl_ms == 0 || ttl_ms > MAX_TTL_MS {
        return Err(invalid(format!("{field} must be in 1..={MAX_TTL_MS}")));
    }
    Ok(())
}
