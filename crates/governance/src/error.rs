//! Errors of the governed tools: always a contract [`ContractError`] so the transport can
//! answer `{error, message, details}` without translating anything.

use cc_contract::{ContractError, ErrorCode};
use serde_json::{Map, Value};

/// The result of every kernel operation.
pub type GovResult<T> = Result<T, ContractError>;

/// A contract error with no details.
pub fn fail(code: ErrorCode, message: impl Into<String>) -> ContractError {
    ContractError::new(code, message)
}

/// A contract error with details (a JSON object; anything else is dropped).
pub fn fail_with(code: ErrorCode, message: impl Into<String>, details: Value) -> ContractError {
    let mut e = ContractError::new(code, message);
    if let Value::Object(map) = details {
        e.details = map;
    }
    e
}

/// Storage failures are not the caller's fault, but the contract has no storage code:
/// they surface as `execution_failed` with the cause, and are logged.
pub fn storage(e: impl std::fmt::Display) -> ContractError {
    tracing::error!("governance journal: {e}");
    let mut details = Map::new();
    details.insert("cause".into(), Value::String(e.to_string()));
    ContractError {
        error: ErrorCode::ExecutionFailed,
        message: format!("the governance journal failed: {e}"),
        details,
        receipt: None,
    }
}

/// Converts a rusqlite error (so `?` works inside the store).
pub fn db(e: rusqlite::Error) -> ContractError {
    storage(e)
}

/// An `invalid_arguments` error.
pub fn invalid(message: impl Into<String>) -> ContractError {
    fail(ErrorCode::InvalidArguments, message)
}
