//! The execution receipt: the idempotency record of one `(sessionId, actionId)`, and the
//! only evidence a client gets of what happened.

use serde::{Deserialize, Serialize};

use super::error::ErrorCode;

wire_enum! {
    /// Receipt lifecycle.
    pub enum ReceiptStatus {
        /// Begun, not finished. Found after a crash it means the effect may have happened:
        /// `indeterminate`, never retried.
        Pending = "pending",
        /// Performed. Acknowledges the action ran, not that its effect held: see
        /// `result.verification`.
        Committed = "committed",
        /// Refused before any effect.
        Rejected = "rejected",
        /// Stopped by a revocation or emergency stop.
        Interrupted = "interrupted",
        /// The effect may or may not have happened.
        Indeterminate = "indeterminate",
    }
}

/// Suggested spellings of [`Verification::method`]: how the postcondition was read back.
pub mod verification_method {
    /// An accessibility value or element lookup.
    pub const ACCESSIBILITY: &str = "accessibility";
    /// The window list.
    pub const WINDOW_LIST: &str = "window_list";
    /// The process table.
    pub const PROCESS_TABLE: &str = "process_table";
    /// File metadata and content.
    pub const FILE_CONTENT: &str = "file_content";
}

/// Outcome of the independent read-back of a declared postcondition (**fix** over
/// upstream, which verified but never reported it, so no client could see `Verified`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Verification {
    /// Whether the observed state matched the postcondition.
    pub satisfied: bool,
    /// `sha256:` digest of the observed value, when the postcondition carries a digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_digest: Option<String>,
    /// How the state was read back (see [`verification_method`]).
    pub method: String,
}

/// The receipt's `result`: the tool's result (upstream stores the MCP tool result as is —
/// `content`, `structuredContent`, ...) plus our `verification`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReceiptResult {
    /// Every member other than `verification`, in wire order.
    #[serde(flatten)]
    pub tool_result: serde_json::Map<String, serde_json::Value>,
    /// Postcondition evidence; present when the action declared a postcondition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
}

/// The receipt's `error`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiptError {
    /// Error code; kept as text because upstream stores whatever code its executor raised.
    pub code: String,
    /// Message (upstream's durable store replaces it with a redacted digest).
    pub message: String,
}

impl ReceiptError {
    /// The code as an [`ErrorCode`], when it is one.
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.code.parse().ok()
    }
}

/// An execution receipt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecutionReceipt {
    /// Receipt id.
    pub receipt_id: String,
    /// Session of the action.
    pub session_id: String,
    /// The action.
    pub action_id: String,
    /// The envelope's `argsDigest`: a receipt with another digest describes other work.
    pub action_digest: String,
    /// Attempt number (from 1).
    pub attempt: u32,
    /// Lifecycle state.
    pub status: ReceiptStatus,
    /// Creation (RFC 3339).
    pub created_at: String,
    /// Last change (RFC 3339).
    pub updated_at: String,
    /// The tool result and verification, when the action ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ReceiptResult>,
    /// What went wrong, when something did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ReceiptError>,
}
