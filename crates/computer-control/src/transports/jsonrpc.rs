//! JSON-RPC 2.0 framing shared by every JSON-RPC transport (PROTOCOL §1): requests,
//! notifications, batches and the protocol-level error codes.

use std::panic::{AssertUnwindSafe, catch_unwind};

use serde::ser::{Serialize, SerializeStruct, Serializer};
use serde_json::{Value, json};

use cc_engine::Engine;
use cc_protocol::Envelope;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;

/// A protocol-level error response.
pub fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// An answer owed to the client. A method's envelope is kept as the engine made it and
/// written straight to bytes: building it as a JSON tree first, to write and free, was
/// the largest cost of a round trip after the action itself.
#[derive(Debug, Clone)]
pub enum Answer {
    /// A protocol-level answer (an error), built as a tree.
    Tree(Value),
    /// A method's result.
    Result { id: Value, result: Box<Envelope> },
    /// A batch's answers, in order.
    Batch(Vec<Answer>),
}

impl From<Value> for Answer {
    fn from(v: Value) -> Answer {
        Answer::Tree(v)
    }
}

impl Serialize for Answer {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Answer::Tree(v) => v.serialize(s),
            Answer::Result { id, result } => {
                let mut m = s.serialize_struct("Response", 3)?;
                m.serialize_field("jsonrpc", "2.0")?;
                m.serialize_field("id", id)?;
                m.serialize_field("result", result)?;
                m.end()
            }
            Answer::Batch(items) => items.serialize(s),
        }
    }
}

impl Answer {
    /// The answer's JSON text. A result that cannot be written (it never should) is
    /// answered as the protocol's internal error for the same request, so the client
    /// waiting on it is never left without an answer.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_else(|e| {
            tracing::error!("cannot serialize an answer: {e}");
            let id = match self {
                Answer::Result { id, .. } => id.clone(),
                _ => Value::Null,
            };
            let fallback = error(id, INTERNAL_ERROR, "cannot serialize the result");
            serde_json::to_vec(&fallback).unwrap_or_default()
        })
    }

    /// A result answer.
    pub fn result(id: Value, envelope: Envelope) -> Answer {
        Answer::Result {
            id,
            result: Box::new(envelope),
        }
    }
}

/// Why a message could not be read, and the request id when it could still be found.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    /// The request's id when the message is otherwise well formed (so a client waiting
    /// on it gets its answer), else `null`.
    pub id: Value,
    pub message: String,
}

impl ParseError {
    /// The `-32700` response.
    pub fn response(&self) -> Value {
        error(self.id.clone(), PARSE_ERROR, &self.message)
    }
}

/// Parses one JSON message. A number literal too large for a double (`1e999`) is valid
/// JSON syntax but no number this server can hold: the message is refused as a parse
/// error (`-32700`), never read as some other value, and the answer carries the
/// request's id when the rest of the message is well formed.
pub fn parse(text: &str) -> Result<Value, ParseError> {
    serde_json::from_str(text).map_err(|e| {
        let id = overflowing_numbers_as_null(text)
            .and_then(|fixed| serde_json::from_str::<Value>(&fixed).ok())
            .map(|v| {
                let id = v.get("id").cloned().unwrap_or(Value::Null);
                let message = "parse error: a number literal is too large for a double";
                (id, message.to_string())
            });
        match id {
            Some((id, message)) => ParseError { id, message },
            None => ParseError {
                id: Value::Null,
                message: format!("parse error: {e}"),
            },
        }
    })
}

/// Rewrites number literals that overflow a double into `null`; `None` when none do.
fn overflowing_numbers_as_null(text: &str) -> Option<String> {
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
                    out.push_str("null");
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
pub fn handle_message(engine: &Engine, msg: &Value) -> Option<Answer> {
    let Value::Object(m) = msg else {
        return Some(
            error(
                Value::Null,
                INVALID_REQUEST,
                "a request must be a JSON object",
            )
            .into(),
        );
    };
    let id = m.get("id").cloned();
    let valid_id = match &id {
        None | Some(Value::Null) | Some(Value::String(_)) => true,
        Some(Value::Number(_)) => true,
        Some(_) => false,
    };
    if !valid_id {
        return Some(
            error(
                Value::Null,
                INVALID_REQUEST,
                "id must be a string, a number or null",
            )
            .into(),
        );
    }
    let reply_id = id.clone().unwrap_or(Value::Null);
    if m.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some(error(reply_id, INVALID_REQUEST, "jsonrpc must be \"2.0\"").into());
    }
    let Some(method) = m.get("method").and_then(Value::as_str) else {
        return Some(error(reply_id, INVALID_REQUEST, "method must be a string").into());
    };
    let params = m.get("params").cloned().unwrap_or(Value::Null);
    if !(params.is_object() || params.is_null()) {
        // A notification gets no answer, even an error.
        return id.map(|_| error(reply_id, INVALID_PARAMS, "params must be an object").into());
    }
    let outcome = catch_unwind(AssertUnwindSafe(|| engine.call_method(method, &params)));
    let response = match outcome {
        // An internal failure of the engine (a panic on its worker) is the protocol's
        // internal error, not a tool's.
        Ok(Some(envelope)) if is_internal(&envelope) => {
            let message = envelope.error.map(|e| e.message).unwrap_or_default();
            error(reply_id, INTERNAL_ERROR, &message).into()
        }
        Ok(Some(envelope)) => Answer::result(reply_id, envelope),
        Ok(None) => error(
            reply_id,
            METHOD_NOT_FOUND,
            &format!("unknown method {method:?}"),
        )
        .into(),
        Err(_) => {
            tracing::error!("internal error while handling {method}");
            error(reply_id, INTERNAL_ERROR, "internal error").into()
        }
    };
    id.map(|_| response)
}

fn is_internal(envelope: &cc_protocol::Envelope) -> bool {
    envelope
        .error
        .as_ref()
        .and_then(|e| e.data.as_ref())
        .and_then(|d| d.get("internal"))
        == Some(&Value::Bool(true))
}

/// Answers one parsed value: a message or a batch; `None` when nothing is owed.
pub fn handle_value(engine: &Engine, msg: &Value) -> Option<Answer> {
    match msg {
        Value::Array(items) if items.is_empty() => {
            Some(error(Value::Null, INVALID_REQUEST, "empty batch").into())
        }
        Value::Array(items) => {
            let out: Vec<Answer> = items
                .iter()
                .filter_map(|it| handle_message(engine, it))
                .collect();
            (!out.is_empty()).then_some(Answer::Batch(out))
        }
        one => handle_message(engine, one),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A result written straight from the envelope reads as the frame around the
    /// envelope's own JSON, the same bytes a tree of both would give.
    #[test]
    fn a_result_is_written_as_the_frame_around_its_envelope() {
        let engine = Engine::new(
            Box::new(cc_desktop::VirtualDesktop::new(Default::default())),
            cc_engine::config::ConfigStack::new(),
        );
        let envelope = engine.refuse_stopping("wait.pause");
        let tree = json!({"jsonrpc": "2.0", "id": "a", "result": serde_json::to_value(&envelope).unwrap()});
        let one = Answer::result(json!("a"), envelope);
        assert_eq!(one.to_bytes(), serde_json::to_vec(&tree).unwrap());
        let batch = Answer::Batch(vec![
            one.clone(),
            error(json!(2), INVALID_PARAMS, "no").into(),
        ]);
        let read: Value = serde_json::from_slice(&batch.to_bytes()).unwrap();
        assert_eq!(read[0], tree);
        assert_eq!(read[1]["error"]["code"], INVALID_PARAMS);
    }

    #[test]
    fn overflowing_numbers_are_parse_errors_that_keep_the_id() {
        let e = parse(r#"{"id":3,"a":[1e999,-1E+400,"1e999 \" 2e999",1.5,-0]}"#).unwrap_err();
        assert_eq!(e.id, json!(3));
        assert!(e.message.contains("too large"), "{}", e.message);
        assert_eq!(e.response()["error"]["code"], PARSE_ERROR);
        assert_eq!(e.response()["id"], 3);
        // Broken JSON stays broken, with no id.
        assert_eq!(parse(r#"{"id":4,"a":1e999"#).unwrap_err().id, Value::Null);
        assert_eq!(parse("{]").unwrap_err().id, Value::Null);
        assert_eq!(parse("1e999").unwrap_err().id, Value::Null);
        // In a string it is only text; finite numbers are numbers.
        assert_eq!(
            parse(r#"{"a":"1e999","b":1e300}"#).unwrap(),
            json!({"a": "1e999", "b": 1e300})
        );
    }
}
