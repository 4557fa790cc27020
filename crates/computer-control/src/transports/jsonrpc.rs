//! JSON-RPC 2.0 framing shared by every JSON-RPC transport (PROTOCOL §1): requests,
//! notifications, batches and the protocol-level error codes.

use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::{Value, json};

use cc_engine::Engine;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;

/// A protocol-level error response.
pub fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Parses one JSON message. A number literal too large for a double (`1e999`) is valid
/// JSON syntax; instead of failing the whole message (and losing its `id`), such a
/// literal is read as the string `"Infinity"` (or `"-Infinity"`), which argument
/// validation then refuses as not finite (PROTOCOL §3), answering the request.
pub fn parse(text: &str) -> Result<Value, serde_json::Error> {
    match serde_json::from_str(text) {
        Ok(v) => Ok(v),
        Err(e) => match overflowing_numbers_as_strings(text) {
            Some(fixed) => serde_json::from_str(&fixed).map_err(|_| e),
            None => Err(e),
        },
    }
}

/// Rewrites number literals that overflow a double into strings; `None` when none do.
fn overflowing_numbers_as_strings(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut out = String::new();
    let (mut i, mut copied, mut in_string) = (0, 0, false);
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                b'\\' => i += 2,
                b'"' => {
                    in_string = false;
                    i += 1;
                }
                _ => i += 1,
            }
            continue;
        }
        match c {
            b'"' => {
                in_string = true;
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                i += 1;
                while i < b.len() && matches!(b[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')
                {
                    i += 1;
                }
                if let Ok(f) = text[start..i].parse::<f64>()
                    && f.is_infinite()
                {
                    out.push_str(&text[copied..start]);
                    out.push_str(if f < 0.0 {
                        "\"-Infinity\""
                    } else {
                        "\"Infinity\""
                    });
                    copied = i;
                }
            }
            _ => i += 1,
        }
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// Methods that never wait for the worker: a transport may run them inline, so an
/// emergency stop or an approval is never queued behind a running action.
pub fn is_control(message: &Value) -> bool {
    matches!(
        message.get("method").and_then(Value::as_str),
        Some(
            "control.panic"
                | "session.confirm"
                | "system.status"
                | "tools.list"
                | "session.configure"
                | "session.resume"
        )
    )
}

/// Answers one parsed message; `None` for a notification.
pub fn handle_message(engine: &Engine, msg: &Value) -> Option<Value> {
    let Value::Object(m) = msg else {
        return Some(error(
            Value::Null,
            INVALID_REQUEST,
            "a request must be a JSON object",
        ));
    };
    let id = m.get("id").cloned();
    let valid_id = match &id {
        None | Some(Value::Null) | Some(Value::String(_)) => true,
        Some(Value::Number(_)) => true,
        Some(_) => false,
    };
    if !valid_id {
        return Some(error(
            Value::Null,
            INVALID_REQUEST,
            "id must be a string, a number or null",
        ));
    }
    let reply_id = id.clone().unwrap_or(Value::Null);
    if m.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some(error(reply_id, INVALID_REQUEST, "jsonrpc must be \"2.0\""));
    }
    let Some(method) = m.get("method").and_then(Value::as_str) else {
        return Some(error(reply_id, INVALID_REQUEST, "method must be a string"));
    };
    let params = m.get("params").cloned().unwrap_or(Value::Null);
    if !(params.is_object() || params.is_null()) {
        // A notification gets no answer, even an error.
        return id.map(|_| error(reply_id, INVALID_PARAMS, "params must be an object"));
    }
    let outcome = catch_unwind(AssertUnwindSafe(|| engine.call_method(method, &params)));
    let response = match outcome {
        Ok(Some(envelope)) => match serde_json::to_value(&envelope) {
            Ok(v) => json!({"jsonrpc": "2.0", "id": reply_id, "result": v}),
            Err(e) => error(
                reply_id,
                INTERNAL_ERROR,
                &format!("cannot serialize the result: {e}"),
            ),
        },
        Ok(None) => error(
            reply_id,
            METHOD_NOT_FOUND,
            &format!("unknown method {method:?}"),
        ),
        Err(_) => {
            tracing::error!("internal error while handling {method}");
            error(reply_id, INTERNAL_ERROR, "internal error")
        }
    };
    id.map(|_| response)
}

/// Answers one parsed value: a message or a batch; `None` when nothing is owed.
pub fn handle_value(engine: &Engine, msg: &Value) -> Option<Value> {
    match msg {
        Value::Array(items) if items.is_empty() => {
            Some(error(Value::Null, INVALID_REQUEST, "empty batch"))
        }
        Value::Array(items) => {
            let out: Vec<Value> = items
                .iter()
                .filter_map(|it| handle_message(engine, it))
                .collect();
            (!out.is_empty()).then_some(Value::Array(out))
        }
        one => handle_message(engine, one),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflowing_numbers_become_strings() {
        let v = parse(r#"{"id":3,"a":[1e999,-1E+400,"1e999 \" 2e999",1.5,-0]}"#).unwrap();
        assert_eq!(
            v,
            json!({"id": 3, "a": ["Infinity", "-Infinity", "1e999 \" 2e999", 1.5, -0.0]})
        );
        assert!(parse(r#"{"a":1e999"#).is_err(), "still broken JSON");
        assert!(parse("{]").is_err());
        assert_eq!(parse("1e999").unwrap(), json!("Infinity"));
    }
}
