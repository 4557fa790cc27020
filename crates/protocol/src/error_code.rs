//! Application error codes carried inside the envelope (PROTOCOL §3).

use serde::{Deserialize, Serialize};

/// Every application outcome that is not a success. Protocol-level failures are
/// JSON-RPC errors instead and never appear here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    NotStarted,
    AlreadyStarted,
    InvalidConfig,
    UnknownTool,
    InvalidArguments,
    PolicyDenied,
    SafetyStopped,
    SafetyStandby,
    Busy,
    ConfirmationNotFound,
    ConfirmationExpired,
    StaleSnapshot,
    /// An element reference whose element is gone or became another element.
    StaleElement,
    /// A selector that matched no element.
    ElementNotFound,
    /// A selector that matched more than one element (the candidates are listed).
    AmbiguousElement,
    StaleFrame,
    BackendUnavailable,
    DriverFailed,
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
