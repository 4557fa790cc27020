//! Event notifications (PROTOCOL §6).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One event as every transport carries it: stdio wraps it in a JSON-RPC notification,
/// SSE puts it in `data:` with `id: seq`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// The event type (`action.started`, …; see [`EVENT_TYPES`]).
    #[serde(rename = "type")]
    pub kind: String,
    /// The type's own members.
    pub payload: Value,
    /// Per-server monotonic number: gaps tell a subscriber it lost events.
    pub seq: u64,
    /// RFC 3339 wall-clock time of emission.
    pub at: String,
}

/// Every event type with a one-line summary, for `list` and the manifest.
pub const EVENT_TYPES: &[(&str, &str)] = &[
    (
        "session.started",
        "A session started: state, platform, surface, capabilities.",
    ),
    ("session.stopped", "The session ended."),
    ("session.resumed", "The session left stopped or standby."),
    (
        "session.configured",
        "Configuration changed (patch) or the screen layout changed (surface).",
    ),
    ("session.idle", "No action ran for safety.idle_timeout_s."),
    (
        "action.started",
        "An action passed the safety gate and started.",
    ),
    (
        "action.finished",
        "An action finished; carries ok, duration and, for approved actions, the envelope.",
    ),
    ("batch.finished", "A batch finished."),
    (
        "safety.confirmation_requested",
        "A risky action waits for a human decision.",
    ),
    (
        "safety.confirmation_resolved",
        "A pending confirmation was approved or denied.",
    ),
    (
        "safety.confirmation_expired",
        "A pending confirmation timed out and was denied.",
    ),
    (
        "safety.confirmation_notice",
        "A pending confirmation was announced outside the operator channel (an MCP elicitation): acknowledged, or declined or unavailable. Approves nothing.",
    ),
    ("safety.panic_triggered", "The emergency stop engaged."),
    ("safety.panic_released", "The emergency stop was released."),
    (
        "governance.approval_requested",
        "A governed action's confirm decision waits for the operator (arguments redacted).",
    ),
    (
        "governance.approval_resolved",
        "The operator approved (with an exact_action grant) or denied a governed action.",
    ),
];
