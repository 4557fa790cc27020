//! Governed sessions as `get_session` returns them, and the session records of the v8
//! fixtures (completion, deletion, follow-up).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::target::WindowId;

wire_enum! {
    /// Session lifecycle (upstream's states).
    pub enum SessionState {
        /// Started, nothing run yet.
        Created = "created",
        /// Accepting actions.
        Running = "running",
        /// Waiting for the user (e.g. an approval).
        WaitingForUser = "waiting_for_user",
        /// Paused by the user.
        PausedByUser = "paused_by_user",
        /// Paused by policy.
        PausedByPolicy = "paused_by_policy",
        /// Stopping.
        Stopping = "stopping",
        /// Finished successfully (terminal).
        Completed = "completed",
        /// Finished with a failure (terminal).
        Failed = "failed",
        /// Stopped (terminal).
        Stopped = "stopped",
    }
}

impl SessionState {
    /// Whether no further transition is possible.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            SessionState::Completed | SessionState::Failed | SessionState::Stopped
        )
    }
}

/// One checked postcondition of a completed session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompletionPostcondition {
    /// What was checked.
    pub description: String,
    /// Whether it held.
    pub satisfied: bool,
    /// Digest of the evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_hash: Option<String>,
}

/// Completion evidence of a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionCompletion {
    /// Summary.
    pub summary: String,
    /// Checked postconditions.
    pub postconditions: Vec<CompletionPostcondition>,
    /// Last app acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_app_id: Option<String>,
    /// Last window acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_window_id: Option<WindowId>,
    /// Receipts per status.
    pub action_counts: BTreeMap<String, u64>,
    /// Why the session ended, when not completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// When it ended (RFC 3339).
    pub completed_at: String,
}

/// A governed session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Session {
    /// Session id.
    pub session_id: String,
    /// Owning principal.
    pub principal_id: String,
    /// Multi-agent group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_group_id: Option<String>,
    /// What the session is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objective: Option<String>,
    /// Lifecycle state.
    pub state: SessionState,
    /// Increases on every change.
    pub revision: u64,
    /// Creation (RFC 3339).
    pub created_at: String,
    /// Last change (RFC 3339).
    pub updated_at: String,
    /// Why it waits, in a waiting or paused state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_reason: Option<String>,
    /// Recovered after a restart (and therefore paused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovered: Option<bool>,
    /// Completion evidence, once terminal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion: Option<SessionCompletion>,
}

/// Result of deleting a session's records (upstream).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionDeletion {
    /// Session.
    pub session_id: String,
    /// Whether it was deleted.
    pub deleted: bool,
    /// Events removed.
    pub deleted_events: u64,
    /// Receipts removed.
    pub deleted_receipts: u64,
    /// Evidence frames removed (newer upstream; absent in the older v8 fixture).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_evidence_frames: Option<u64>,
    /// Grants revoked.
    pub revoked_grants: u64,
    /// Events kept in the journal.
    pub retained_events: u64,
    /// Retention marker event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention_marker_id: Option<String>,
}

/// An instruction added to a running session (upstream).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionFollowUp {
    /// Follow-up id.
    pub follow_up_id: String,
    /// Position in the session, from 1.
    pub sequence: u64,
    /// Session.
    pub session_id: String,
    /// Principal that added it.
    pub principal_id: String,
    /// The instruction.
    pub instruction: String,
    /// When it was added (RFC 3339).
    pub created_at: String,
}
