//! Application error codes carried inside the envelope (PROTOCOL §3).

use serde::{Deserialize, Serialize};

/// Every application outcome that is not a success. Protocol-level failures are
/// JSON-RPC errors instead and never appear here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// A call that needs a session came before `session.start`.
    NotStarted,
    /// A second `session.start`.
    AlreadyStarted,
    /// An unknown key, a wrong type or range, or a key that cannot change at runtime.
    InvalidConfig,
    /// No tool of that name.
    UnknownTool,
    /// The arguments failed validation; `data.issues` lists every problem.
    InvalidArguments,
    /// A deny rule matched, or the default rule denies.
    PolicyDenied,
    /// The emergency stop is engaged, or `session.stop` cancelled the queued action.
    SafetyStopped,
    /// The session is in idle standby.
    SafetyStandby,
    /// A confirmation is pending: one decision at a time.
    Busy,
    /// The confirmation id is unknown or already answered.
    ConfirmationNotFound,
    /// The confirmation timed out before a person answered.
    ConfirmationExpired,
    /// The snapshot is not the latest, or its element changed.
    StaleSnapshot,
    /// An element reference whose element is gone or became another element.
    StaleElement,
    /// A selector that matched no element.
    ElementNotFound,
    /// A selector that matched more than one element (the candidates are listed).
    AmbiguousElement,
    /// A coordinate action cited a frame older than the current screen layout.
    StaleFrame,
    /// This platform has no driver, capture or accessibility for the call.
    BackendUnavailable,
    /// The platform call failed; the message says which.
    DriverFailed,
    /// The caller stopped waiting; the action may still have run.
    Timeout,
}

impl ErrorCode {
    /// Every code, in the order of the spec's table (for docs and exhaustive tests).
    pub const ALL: [ErrorCode; 19] = [
        ErrorCode::NotStarted,
        ErrorCode::AlreadyStarted,
        ErrorCode::InvalidConfig,
        ErrorCode::UnknownTool,
        ErrorCode::InvalidArguments,
        ErrorCode::PolicyDenied,
        ErrorCode::SafetyStopped,
        ErrorCode::SafetyStandby,
        ErrorCode::Busy,
        ErrorCode::ConfirmationNotFound,
        ErrorCode::ConfirmationExpired,
        ErrorCode::StaleSnapshot,
        ErrorCode::StaleElement,
        ErrorCode::ElementNotFound,
        ErrorCode::AmbiguousElement,
        ErrorCode::StaleFrame,
        ErrorCode::BackendUnavailable,
        ErrorCode::DriverFailed,
        ErrorCode::Timeout,
    ];

    /// The wire spelling, e.g. `"stale_frame"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NotStarted => "not_started",
            ErrorCode::AlreadyStarted => "already_started",
            ErrorCode::InvalidConfig => "invalid_config",
            ErrorCode::UnknownTool => "unknown_tool",
            ErrorCode::InvalidArguments => "invalid_arguments",
            ErrorCode::PolicyDenied => "policy_denied",
            ErrorCode::SafetyStopped => "safety_stopped",
            ErrorCode::SafetyStandby => "safety_standby",
            ErrorCode::Busy => "busy",
            ErrorCode::ConfirmationNotFound => "confirmation_not_found",
            ErrorCode::ConfirmationExpired => "confirmation_expired",
            ErrorCode::StaleSnapshot => "stale_snapshot",
            ErrorCode::StaleElement => "stale_element",
            ErrorCode::ElementNotFound => "element_not_found",
            ErrorCode::AmbiguousElement => "ambiguous_element",
            ErrorCode::StaleFrame => "stale_frame",
            ErrorCode::BackendUnavailable => "backend_unavailable",
            ErrorCode::DriverFailed => "driver_failed",
            ErrorCode::Timeout => "timeout",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_spelling_matches_serde() {
        for code in ErrorCode::ALL {
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, serde_json::Value::String(code.as_str().into()));
        }
    }
}
