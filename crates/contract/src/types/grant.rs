//! Approval grants: a human's bounded approval of a `confirm` decision, issued on the
//! operator channel (never by a model tool). Schema: `approval-grant.schema.json`.

use serde::{Deserialize, Serialize};

use super::action::{ActionClass, ExecutionMode};

wire_enum! {
    /// What a grant covers.
    pub enum GrantScope {
        /// Exactly one action digest (what this server issues).
        ExactAction = "exact_action",
        /// An operation within a session (upstream; bound by `scopeDigest`).
        SessionOperation = "session_operation",
    }
}

/// An approval grant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovalGrant {
    /// Grant id.
    pub grant_id: String,
    /// Coverage.
    pub scope: GrantScope,
    /// Principal the grant is for.
    pub principal_id: String,
    /// Session the grant is for.
    pub session_id: String,
    /// The approved `argsDigest` (64 lowercase hex).
    pub action_digest: String,
    /// Digest of the approved scope (64 lowercase hex).
    pub scope_digest: String,
    /// Policy that asked for confirmation; a policy change voids the grant.
    pub policy_digest: String,
    /// Approved tool.
    pub tool: String,
    /// Approved operation.
    pub operation: String,
    /// Approved risk class.
    pub action_class: ActionClass,
    /// Approved mode.
    pub mode: ExecutionMode,
    /// Issue time (RFC 3339).
    pub issued_at: String,
    /// Expiry (RFC 3339).
    pub expires_at: String,
    /// Uses left, 0..=100.
    pub remaining_uses: u32,
    /// Actions that consumed it (distinct, at most 100).
    pub consumed_by_action_ids: Vec<String>,
}
