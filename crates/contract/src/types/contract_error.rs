//! The structured error an `isError: true` result of a governed tool carries: a code, a
//! message, details, and the stored receipt when a replay did not commit.

use serde::{Deserialize, Serialize};

use super::error::ErrorCode;
use super::receipt::ExecutionReceipt;

/// The structured content (and text) of an MCP `isError: true` result of a governed tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContractError {
    /// Code.
    pub error: ErrorCode,
    /// Human-readable message.
    pub message: String,
    /// Code-specific data (ids, the blocker, ...); `{}` when there is none.
    #[serde(default)]
    pub details: serde_json::Map<String, serde_json::Value>,
    /// The stored receipt, when the error is a replayed receipt that did not commit
    /// (`{error: <status>, receipt}`, as upstream answers it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<Box<ExecutionReceipt>>,
}

impl ContractError {
    /// An error without details.
    pub fn new(error: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            error,
            message: message.into(),
            details: serde_json::Map::new(),
            receipt: None,
        }
    }
}
