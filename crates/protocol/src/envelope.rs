//! The result envelope every tool call and method answers with (PROTOCOL §3).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{ErrorCode, SessionState};

/// One answer: `ok` with a `result`, or not `ok` with an `error`. Harnesses branch on
/// `ok` only, so the two halves are never both set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// The one member a harness branches on.
    pub ok: bool,
    /// The tool's result; set exactly when `ok`.
    pub result: Option<Value>,
    /// Why the call failed; set exactly when not `ok`.
    pub error: Option<ToolError>,
    /// Context of the answer.
    pub meta: Meta,
}

/// Why a call failed, in a form a program can branch on (`code`) and a person can read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolError {
    /// What a program branches on.
    pub code: ErrorCode,
    /// What a person reads.
    pub message: String,
    /// Code-specific detail (`invalid_arguments` lists its issues here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// Context of the answer: which tool, how long, the session state after it, and the
/// latest frame number so a model knows which capture its coordinates refer to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// The tool or method answered.
    pub tool: String,
    /// How long the call took, in milliseconds.
    pub duration_ms: u64,
    /// The session state after the call.
    pub state: SessionState,
    /// The latest frame number: coordinates in a later call cite it.
    pub frame: u64,
}

impl Envelope {
    /// A success.
    pub fn success(result: Value, meta: Meta) -> Self {
        Envelope {
            ok: true,
            result: Some(result),
            error: None,
            meta,
        }
    }

    /// A failure.
    pub fn failure(error: ToolError, meta: Meta) -> Self {
        Envelope {
            ok: false,
            result: None,
            error: Some(error),
            meta,
        }
    }

    /// The error code, if this is a failure.
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.error.as_ref().map(|e| e.code)
    }
}

impl ToolError {
    /// An error without data.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// An error with structured data (`data.issues`, `data.rule`, …).
    pub fn with_data(code: ErrorCode, message: impl Into<String>, data: Value) -> Self {
        ToolError {
            code,
            message: message.into(),
            data: Some(data),
        }
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}
