//! What flows through a [`ComputerUseRuntime`](super::ComputerUseRuntime) besides the
//! contract's own types: the proposed action, observations kept as digests, and the
//! preview kept byte for byte.

use cc_contract::{ActionPreview, sha256_hex};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ComputerUseError, ResponseObject};

/// An action as the graph proposes it: the arguments of `preview_action`, in the
/// contract's own type, so what is previewed, checkpointed and executed can never
/// differ from what the server decodes by a member. The graph always sets `action_id`
/// (deterministic per thread and node, so a retried execute replays its receipt) and
/// leaves `lease_id` and `approval_grant_id` to execute. Kept in checkpointed state
/// because the envelope does not carry the plain tool's `arguments`, and execute must
/// send exactly what was previewed.
pub type ProposedAction = cc_contract::args::ActionArgs;

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
