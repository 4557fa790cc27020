//! Approval requests: the operator's view of `confirm` decisions.
//!
//! Approval is never a model tool (GOVERNANCE.md Part A). Every `confirm` preview (and
//! any later preview of the same action) is recorded here by `(sessionId, actionId)`
//! with what an operator needs to decide — tool, class, target summary, arguments with
//! secrets redacted, digests, reasons, expiry — and never the raw arguments; the
//! envelope of every preview is kept apart (`previews.rs`). A `confirm` preview
//! without a usable grant is *pending*; the operator channel (console, operator HTTP) lists the pending ones
//! ([`Governance::pending_approvals`](crate::Governance::pending_approvals)) and approves one, which issues an `exact_action`
//! grant with a TTL, or denies it ([`Governance::decide_approval`](crate::Governance::decide_approval)). A decision covers
//! every pending preview of the same session and `argsDigest` (the grant is bound to
//! the digest, not to one preview). The kernel announces requests and decisions on the
//! engine's event bus (`governance.approval_requested` / `_resolved`), so a console
//! updates live.

mod decide;
mod record;

use cc_contract::{ActionClass, Bounds, DataLabel, ExecutionMode, PolicyVerdict, WindowId};
use cc_protocol::Description;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use decide::{ApprovalDecision, ApprovalError, DEFAULT_GRANT_TTL_MS, Decided};

/// Where a request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestStatus {
    /// A `confirm` preview waiting for the operator.
    Pending,
    /// The operator issued a grant for it.
    Approved,
    /// The operator refused it.
    Denied,
    /// Not a `confirm` decision (or a grant already covered it): nothing to approve.
    NotRequired,
}

impl RequestStatus {
    /// The wire (and column) name.
    pub fn as_str(self) -> &'static str {
        match self {
            RequestStatus::Pending => "pending",
            RequestStatus::Approved => "approved",
            RequestStatus::Denied => "denied",
            RequestStatus::NotRequired => "not_required",
        }
    }
}

/// What the target evidence says, reduced to what a person can check (the digests of
/// title and label are replaced by the window's current title, read from the desktop).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetSummary {
    /// The application, as the evidence names it.
    pub app_id: String,
    /// The window, as the evidence names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_id: Option<WindowId>,
    /// The window's title read from the desktop now (the evidence carries only its digest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_title: Option<String>,
    /// The element's role, as the evidence names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Where the element was on screen when planned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Bounds>,
}

/// One remembered preview as the operator sees it. Holds no secret: the arguments are
/// redacted when recorded, and the raw ones are never stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    /// The governed session.
    pub session_id: String,
    /// Who the session acts for (the grant is issued to this principal).
    pub principal_id: String,
    /// The action, within its session.
    pub action_id: String,
    /// Whether it waits, was decided, or needs no decision.
    pub status: RequestStatus,
    /// The preview's policy verdict (only `confirm` can be approved).
    pub decision: PolicyVerdict,
    /// The plain tool it runs.
    pub tool: String,
    /// The semantic operation (the tool's name when none was given).
    pub operation: String,
    /// How the contract classes the action.
    pub action_class: ActionClass,
    /// Shadow, background or foreground.
    pub mode: ExecutionMode,
    /// The target as a person can check it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetSummary>,
    /// The plain tool's arguments, secret text replaced by `[redacted]`.
    pub arguments: Value,
    /// What the action does, in the words its tool gives the operator (the console
    /// shows it), its text redacted as `arguments` redacts it.
    #[serde(default)]
    pub description: Description,
    /// The sensitivity labels the agent declared.
    pub data_labels: Vec<DataLabel>,
    /// The digest the grant binds; passing it back refuses an approval of changed arguments.
    pub args_digest: String,
    /// The digest of the policy that judged it; a grant is void under another policy.
    pub policy_digest: String,
    /// Why the verdict is what it is, as the gate said.
    pub reasons: Vec<String>,
    /// When it was previewed (wire timestamp).
    pub requested_at: String,
    /// The preview envelope's expiry: after it the request can no longer be decided.
    pub expires_at: String,
    /// The grant an approval issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_id: Option<String>,
    /// When it was approved or denied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<String>,
    /// The operator's reason for a denial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Bus event: a `confirm` preview now waits for the operator (payload: the request).
pub const EVENT_REQUESTED: &str = "governance.approval_requested";
/// Bus event: the operator approved or denied a request.
pub const EVENT_RESOLVED: &str = "governance.approval_resolved";
