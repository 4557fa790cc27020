//! The action envelope: the immutable description of one proposed action, produced by
//! `preview_action` and bound by its `argsDigest`.

use serde::{Deserialize, Serialize};

use super::postcondition::ActionPostcondition;
use super::sensitivity::TargetSensitivity;
use super::target::{TargetEvidence, WindowId};

wire_enum! {
    /// Operation-aware risk class of an action; policy decides on it and a grant is bound
    /// to it.
    pub enum ActionClass {
        /// Read-only observation.
        Observe = "observe",
        /// Navigation without persistent effect.
        Navigate = "navigate",
        /// An edit that can be undone.
        EditReversible = "edit_reversible",
        /// Communication leaving the machine.
        CommunicateExternal = "communicate_external",
        /// Signing in or otherwise handling authentication.
        Authentication = "authentication",
        /// Moving money.
        Financial = "financial",
        /// An effect that cannot be undone.
        Destructive = "destructive",
        /// Changing privileges or permissions.
        PrivilegeChange = "privilege_change",
        /// Reading secret material.
        SecretAccess = "secret_access",
    }
}

wire_enum! {
    /// How an action may touch the desktop (`requestedMode`, a lease's `executionMode`, a
    /// grant's `mode`, a capability's `supportedModes`).
    pub enum ExecutionMode {
        /// Observe and preview only; a mutation in shadow mode is blocked.
        Shadow = "shadow",
        /// Proven non-foreground actuation: no focus change, no pointer move.
        Background = "background",
        /// A bounded foreground transaction that may take focus and the pointer.
        Foreground = "foreground",
    }
}

wire_enum! {
    /// Sensitivity label of the data an action handles.
    pub enum DataLabel {
        /// Public data.
        Public = "public",
        /// Private but not secret.
        Private = "private",
        /// Passwords, tokens, keys.
        Credential = "credential",
        /// Payment data.
        Payment = "payment",
        /// Health data.
        Health = "health",
        /// Not known; upstream's default when the caller gives no labels.
        Unknown = "unknown",
    }
}

/// What an action touches, derived by the server from the tool and its arguments. Part of
/// the `argsDigest` (always, as `{}` when empty); omitted from the envelope when empty.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActionResource {
    /// Application the action targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_app_id: Option<String>,
    /// Window the action targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_window_id: Option<WindowId>,
    /// File or directory acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem_path: Option<String>,
    /// Destination of a move or copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem_destination: Option<String>,
    /// Windows registry key acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_path: Option<String>,
    /// Process acted on, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_name: Option<String>,
    /// Process acted on, by id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_id: Option<u32>,
    /// Registrable domain of a browser action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser_domain: Option<String>,
}

impl ActionResource {
    /// True when no field is set (the envelope then omits `resource`).
    pub fn is_empty(&self) -> bool {
        *self == ActionResource::default()
    }
}

/// Where the instruction for an action came from, so policy can treat actions derived
/// from untrusted content (a web page, a document) differently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActionProvenance {
    /// The action follows an instruction found in untrusted content.
    pub untrusted_instruction: bool,
    /// Observations the action was derived from.
    pub source_observation_ids: Vec<String>,
    /// The action moves data across a trust boundary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crosses_data_boundary: Option<bool>,
}

/// One proposed action, as previewed. Immutable: execute re-previews from the same
/// arguments and must reach the same `argsDigest`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActionEnvelope {
    /// Idempotency key of the action within its session.
    pub action_id: String,
    /// Owning session.
    pub session_id: String,
    /// Multi-agent group, when the caller gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_group_id: Option<String>,
    /// The principal the host authenticated (never taken from arguments).
    pub principal_id: String,
    /// The calling agent, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Plain tool the action runs.
    pub tool: String,
    /// Semantic operation (defaults to the tool).
    pub operation: String,
    /// Risk class.
    pub action_class: ActionClass,
    /// Mode the caller asked for.
    pub requested_mode: ExecutionMode,
    /// Fresh evidence of the target, when the action has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetEvidence>,
    /// Value-free sensitivity evidence of the target, when inspected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_sensitivity: Option<TargetSensitivity>,
    /// What the action touches; absent when nothing is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<ActionResource>,
    /// Instruction provenance, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<ActionProvenance>,
    /// Data labels (upstream defaults to `["unknown"]`).
    pub data_labels: Vec<DataLabel>,
    /// Expected state after the action, verified by independent read-back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postcondition: Option<ActionPostcondition>,
    /// The effect can be undone.
    pub reversible: bool,
    /// The effect leaves the machine.
    pub external_side_effect: bool,
    /// When the preview was made (RFC 3339).
    pub proposed_at: String,
    /// After this the envelope is stale (RFC 3339).
    pub expires_at: String,
    /// Bare lowercase hex SHA-256 of the canonical action (see [`crate::digest::args_digest`]).
    pub args_digest: String,
}
