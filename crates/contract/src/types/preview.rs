//! The answer of `preview_action`: the envelope, the capability, the policy decision and
//! whether the action may execute now.

use serde::{Deserialize, Serialize};

use super::action::ActionEnvelope;
use super::capability::ExecutionCapability;

wire_enum! {
    /// The policy's verdict on an envelope.
    pub enum PolicyVerdict {
        /// Executable without approval.
        Allow = "allow",
        /// Needs a human's `exact_action` grant.
        Confirm = "confirm",
        /// Never executable.
        Deny = "deny",
    }
}

wire_enum! {
    /// Why a previewed action is not executable. Declaration order is the order in which
    /// the server checks them (GOVERNANCE.md), so the first that applies is reported and
    /// `Ord` compares by that priority.
    pub enum Blocker {
        /// A mutating tool in shadow mode.
        ShadowMutation = "shadow_mutation",
        /// The capability does not support the requested mode.
        ForegroundRequired = "foreground_required",
        /// Upstream only (never reported by this server): physical input while the OS
        /// cannot tell injected input from the user's. Kept so an upstream preview decodes.
        InputAttributionUnavailable = "input_attribution_unavailable",
        /// The policy denies the action.
        PolicyDenied = "policy_denied",
        /// A targeted tool without target evidence.
        TargetEvidenceRequired = "target_evidence_required",
        /// A postcondition that cannot be verified.
        PostconditionUnavailable = "postcondition_unavailable",
        /// The policy wants confirmation and no valid grant is bound.
        ApprovalRequired = "approval_required",
    }
}

/// The policy decision for an envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyDecision {
    /// Verdict.
    pub decision: PolicyVerdict,
    /// Identifies the policy that decided; a grant is bound to it.
    pub policy_digest: String,
    /// Human-readable reasons.
    pub reasons: Vec<String>,
    /// Grant that satisfies a `confirm`, when one is bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_id: Option<String>,
}

/// Result of `preview_action`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActionPreview {
    /// The bound envelope.
    pub envelope: ActionEnvelope,
    /// The capability selected.
    pub capability: ExecutionCapability,
    /// The policy decision.
    pub policy: PolicyDecision,
    /// True exactly when `blocker` is absent.
    pub executable: bool,
    /// First reason the action may not execute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocker: Option<Blocker>,
}
