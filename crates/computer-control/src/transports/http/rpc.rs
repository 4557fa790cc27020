//! `POST /rpc`: one JSON-RPC request or a batch, with exactly the semantics of the stdio
//! transport (it reuses [`jsonrpc::handle_value`]); a request owing no answer (only
//! notifications) gets `204 No Content`.

use axum::Extension;
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::roles::{self, Role};
use super::{AppState, bytes_response, json_response};
use crate::transports::jsonrpc::{self, INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR};

/// JSON-RPC server-defined error (the -32000..-32099 range): the token's role may not
/// call this method. Sent with HTTP 403; nothing of the request ran.
pub const FORBIDDEN: i64 = -32003;

/// The handler.
pub async fn rpc(
    State(st): State<AppState>,
    Extension(role): Extension<Role>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(b) => b,
        Err(rej) if rej.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return json_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                &jsonrpc::error(
                    Value::Null,
                    INVALID_REQUEST,
                    "request body larger than 10 MiB",
                ),
            );
        }
        Err(rej) => {
            return json_response(
                rej.status(),
                &jsonrpc::error(
                    Value::Null,
                    INVALID_REQUEST,
                    &format!("cannot read the body: {rej}"),
                ),
            );
        }
    };
    let msg: Value = match std::str::from_utf8(&body) {
        Err(_) => {
            return ok(jsonrpc::error(
                Value::Null,
                PARSE_ERROR,
                "parse error: the body is not valid UTF-8",
            ));
        }
        Ok(text) => match jsonrpc::parse(text) {
            Ok(v) => v,
            Err(e) => return ok(e.response()),
        },
    };
    // The whole request is refused when any part of it is not the caller's to send, so
    // a batch never half-runs.
    if let Some(r) = roles::refusal(role, &msg) {
        let id = if msg.is_array() { Value::Null } else { r.id };
        return json_response(
            StatusCode::FORBIDDEN,
            &json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": FORBIDDEN,
                "message": format!("forbidden: {}", r.why),
                "data": {"method": r.method, "role": role.as_str(), "required_role": "operator"},
            }}),
        );
    }
    // Control methods never wait for the worker: run inline, so an emergency stop never
    // waits for a free blocking thread. Everything else may block for as long as an
    // action takes, so it goes to the blocking pool.
    let engine = st.engine.clone();
    let answer = if !msg.is_array() && jsonrpc::is_control(&msg) {
        jsonrpc::handle_message(&engine, &msg)
    } else {
        match tokio::task::spawn_blocking(move || jsonrpc::handle_value(&engine, &msg)).await {
            Ok(a) => a,
            Err(e) => {
                tracing::error!("an /rpc call failed: {e}");
                Some(jsonrpc::error(Value::Null, INTERNAL_ERROR, "internal error").into())
            }
        }
    };
    match answer {
        Some(a) => bytes_response(StatusCode::OK, a.to_bytes()),
        None => StatusCode::NO_CONTENT.into_response(),
    }
}

fn ok(v: Value) -> Response {
    json_response(StatusCode::OK, &v)
}
