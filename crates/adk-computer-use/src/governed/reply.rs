//! Reading tool answers: the contract error shape, and typed members of a result.
//!
//! Both are where a bad response becomes a structured error instead of a panic: a server
//! may send anything, so every shape is checked and a misfit is `invalid_response`.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ComputerUseError;
use crate::runtime::RuntimeResult;

/// The code of a response that does not have the contract's shape (mirrors
/// [`PreviewRecord::preview`](crate::runtime::PreviewRecord::preview)).
pub const INVALID_RESPONSE: &str = "invalid_response";

/// A response that does not have the shape the contract promises.
pub fn invalid_response(operation: &'static str, message: impl Into<String>) -> ComputerUseError {
    ComputerUseError::Runtime {
        operation,
        code: Some(INVALID_RESPONSE.into()),
        message: message.into(),
    }
}

/// A tool error `{error, message, details}` as [`ComputerUseError::Runtime`] with the
/// contract code, so a graph can route on `lease_expired` versus `approval_required`.
/// The details, when there are any, are appended to the message rather than lost.
pub fn tool_error(operation: &'static str, body: &Value) -> ComputerUseError {
    let Some(code) = body.get("error").and_then(Value::as_str) else {
        return invalid_response(
            operation,
            format!("an error without an `error` code: {}", short(body)),
        );
    };
    let mut message = body
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("(no message)")
        .to_string();
    if let Some(details) = body.get("details").filter(|d| !is_empty(d)) {
        message = format!("{message} (details: {details})");
    }
    ComputerUseError::Runtime {
        operation,
        code: Some(code.to_string()),
        message,
    }
}

/// The result proper. Some upstream v8 servers wrap it as `{output}` or
/// `{response: {output}}`; computer-control does not. `output` is a wrapper only when it
/// stands alone (beside a `text` copy at most): `execute_action`'s own answer
/// `{receipt, replay, output}` carries an `output` member that is the tool's result.
pub fn payload(result: &Value) -> &Value {
    if let Some(inner) = result.pointer("/response/output") {
        return inner;
    }
    match result.as_object() {
        Some(m) if m.contains_key("output") && m.keys().all(|k| k == "output" || k == "text") => {
            &m["output"]
        }
        _ => result,
    }
}

/// Decodes `result[key]` (the upstream v8 shapes: `{session}`, `{lease}`, `{reservation}`,
/// `{receipt}`) as `T`, looking through a [`payload`] wrapper; a payload without `key` must
/// be the object itself (some servers answer it bare).
pub fn member<T: DeserializeOwned>(
    operation: &'static str,
    result: &Value,
    key: &'static str,
) -> RuntimeResult<T> {
    let payload = payload(result);
    match payload.get(key) {
        Some(value) => decode(operation, key, value.clone()),
        None => serde_json::from_value(payload.clone()).map_err(|e| {
            invalid_response(
                operation,
                format!("the result has no `{key}` and is not one itself: {e}"),
            )
        }),
    }
}

/// The id of what a tool issued (`lease.leaseId`, `reservation.reservationId`), read
/// without decoding the rest: what the server holds must be released even when its answer
/// is refused or does not decode.
pub fn issued_id(result: &Value, key: &str, field: &str) -> Option<String> {
    let payload = payload(result);
    payload
        .get(key)
        .unwrap_or(payload)
        .get(field)
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// The session id a session tool answered for (`session.sessionId`, or a bare
/// `sessionId`).
pub fn session_id(result: &Value) -> Option<&str> {
    let payload = payload(result);
    payload
        .pointer("/session/sessionId")
        .or_else(|| payload.get("sessionId"))
        .and_then(Value::as_str)
}

/// Decodes `value` as `T`, naming what it was meant to be when it does not fit.
pub fn decode<T: DeserializeOwned>(
    operation: &'static str,
    what: &str,
    value: Value,
) -> RuntimeResult<T> {
    serde_json::from_value(value)
        .map_err(|e| invalid_response(operation, format!("`{what}` does not decode: {e}")))
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// At most 200 characters of a value, for messages.
fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn contract_error_keeps_its_code_and_details() {
        let err = tool_error(
            "acquire_control_lease",
            &json!({"error": "lease_conflict", "message": "held", "details": {"leaseId": "l1"}}),
        );
        assert_eq!(
            err,
            ComputerUseError::Runtime {
                operation: "acquire_control_lease",
                code: Some("lease_conflict".into()),
                message: r#"held (details: {"leaseId":"l1"})"#.into(),
            }
        );
    }

    #[test]
    fn error_without_a_code_is_an_invalid_response() {
        let err = tool_error("stop_session", &json!({"message": "no"}));
        assert!(matches!(
            err,
            ComputerUseError::Runtime { code: Some(ref c), .. } if c == INVALID_RESPONSE
        ));
    }

    #[test]
    fn wrapped_and_bare_results_are_read() {
        let lease = json!({"leaseId": "l1"});
        for result in [
            json!({"lease": lease}),
            json!({"output": {"lease": lease}}),
            json!({"response": {"output": {"lease": lease}}}),
            lease.clone(),
        ] {
            let got: Value = member("acquire_control_lease", &result, "lease").expect("a lease");
            assert_eq!(got, lease, "{result}");
        }
        assert_eq!(
            session_id(&json!({"output": {"sessionId": "s1"}})),
            Some("s1")
        );
        assert_eq!(
            session_id(&json!({"session": {"sessionId": "s2"}})),
            Some("s2")
        );
        assert_eq!(session_id(&json!({"session": {}})), None);
    }

    #[test]
    fn an_execute_answer_keeps_its_receipt_beside_the_tools_output() {
        let receipt = json!({"receiptId": "r1"});
        for result in [
            json!({"receipt": receipt, "replay": false, "output": {"windows": []}}),
            json!({"output": {"receipt": receipt, "replay": true}, "text": ["…"]}),
        ] {
            let got: Value = member("execute_action", &result, "receipt").expect("a receipt");
            assert_eq!(got, receipt, "{result}");
        }
    }

    #[test]
    fn missing_or_misshapen_member_is_an_invalid_response() {
        let missing: RuntimeResult<String> = member("start_session", &json!({}), "session");
        let wrong: RuntimeResult<String> =
            member("start_session", &json!({"session": 3}), "session");
        for err in [missing.expect_err("missing"), wrong.expect_err("wrong")] {
            assert!(matches!(
                err,
                ComputerUseError::Runtime { operation: "start_session", code: Some(ref c), .. }
                    if c == INVALID_RESPONSE
            ));
        }
    }
}
