//! What flows through a [`ComputerUseRuntime`](super::ComputerUseRuntime) besides the
//! contract's own types: the proposed action, observations kept as digests, and the
//! preview kept byte for byte.

use cc_contract::{
    ActionPostcondition, ActionPreview, ActionProvenance, DataLabel, ExecutionMode, TargetEvidence,
    sha256_hex,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{ComputerUseError, ResponseObject};

/// An action as the planner proposes it: the arguments of `preview_action` (GOVERNANCE.md
/// Part A, "Action arguments"). Kept in checkpointed state because the envelope does not
/// carry the plain tool's `arguments`, and execute must send exactly what was previewed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposedAction {
    /// The runtime session.
    pub session_id: String,
    /// Deterministic per thread and node, so a retried execute replays its receipt.
    pub action_id: String,
    /// Retry counter of this action id (1 first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// Groups actions of one plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_group_id: Option<String>,
    /// The agent acting within the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The plain tool (`pointer.click`, `a11y.activate`, ...).
    pub tool: String,
    /// The tool's operation, when it has several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// The plain tool's arguments.
    #[serde(default)]
    pub arguments: Map<String, Value>,
    /// Requested execution mode.
    pub mode: ExecutionMode,
    /// Evidence of the target observed when planning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetEvidence>,
    /// What must hold after the effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postcondition: Option<ActionPostcondition>,
    /// Labels of the data the action touches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_labels: Option<Vec<DataLabel>>,
    /// Where the instruction came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<ActionProvenance>,
    /// Lifetime of the envelope (≤ 300 000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in_ms: Option<u64>,
}

/// A preview exactly as the runtime returned it: the raw JSON text, its SHA-256 and the
/// decoded value. The graph's append-only preview channel stores these, and approval and
/// execute compare raw bytes and hash, not a re-serialisation that could hide a change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreviewRecord {
    /// The proposal the preview answers.
    pub proposal: ProposedAction,
    /// The runtime's JSON text of the `ActionPreview`.
    pub raw: String,
    /// Lowercase hex SHA-256 of `raw`.
    pub sha256: String,
}

impl PreviewRecord {
    /// Records a preview from the runtime's raw JSON text.
    pub fn new(proposal: ProposedAction, raw: String) -> Result<Self, ComputerUseError> {
        let record = Self {
            sha256: sha256_hex(&raw),
            proposal,
            raw,
        };
        record.preview()?;
        Ok(record)
    }

    /// Decodes the preview, after checking that `raw` still hashes to `sha256`.
    pub fn preview(&self) -> Result<ActionPreview, ComputerUseError> {
        let actual = sha256_hex(&self.raw);
        if actual != self.sha256 {
            return Err(ComputerUseError::IdentityMismatch {
                object: ResponseObject::Envelope,
                field: "previewSha256",
                expected: Some(self.sha256.clone()),
                actual: Some(actual),
            });
        }
        serde_json::from_str(&self.raw).map_err(|e| ComputerUseError::Runtime {
            operation: "preview_action",
            code: Some("invalid_response".into()),
            message: format!("the preview does not decode: {e}"),
        })
    }
}

/// What the runtime can do, as discovered before planning.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeCapabilities {
    /// Names of the tools the runtime serves.
    pub tools: Vec<String>,
    /// True when the governed tools of Part A are among them.
    pub governed: bool,
    /// The runtime's own description (`get_execution_capabilities`, server info), kept
    /// for the planner.
    #[serde(default)]
    pub detail: Value,
}

/// A screenshot, kept in state as its digest only (observations are evidence, and pixels
/// in a checkpoint would make it large and leak what was on screen).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VisualObservation {
    /// `sha256:` + hex of the encoded image bytes.
    pub digest: String,
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// The runtime's frame id, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<String>,
    /// The encoded image, for the planner of this run only: never checkpointed.
    #[serde(skip)]
    pub image: Option<Vec<u8>>,
}

/// An accessibility snapshot, kept in state as its digest only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SemanticObservation {
    /// `sha256:` + hex of the snapshot's JSON text.
    pub digest: String,
    /// Number of nodes.
    pub node_count: usize,
    /// The snapshot, for the planner of this run only: never checkpointed.
    #[serde(skip)]
    pub tree: Option<Value>,
}
