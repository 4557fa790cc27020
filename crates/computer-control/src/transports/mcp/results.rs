//! Tool results on the MCP wire: successes as `structuredContent` (a capture's pixels
//! as an image block), failures as `isError: true` with `{error, message, details}`
//! (GOVERNANCE.md wire rules) for governed and plain tools alike.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use cc_contract::ContractError;
use cc_protocol::ToolError;

/// A plain tool's success. A capture's `data_url` becomes an MCP image block (what a
/// model client renders) instead of a base64 string inside the JSON; the rest of the
/// result stays structured.
pub fn plain(mut result: Value) -> CallToolResult {
    let image = result
        .as_object_mut()
        .and_then(|m| m.shift_remove("data_url"))
        .and_then(|url| split_data_url(url.as_str()?));
    // An action's `observe` capture is an image block too, after the action's own.
    let observed = result
        .pointer_mut("/observation/capture")
        .and_then(Value::as_object_mut)
        .and_then(|m| m.shift_remove("data_url"))
        .and_then(|url| split_data_url(url.as_str()?));
    let mut out = CallToolResult::structured(result);
    for (mime, data) in image.into_iter().chain(observed) {
        out.content.push(ContentBlock::image(data, mime));
    }
    out
}

/// A governed tool's success. `execute_action`'s `output` of a capture gives its pixels
/// as an image block beside `{receipt, replay, output}`, as a plain capture does.
pub fn governed(mut result: Value) -> CallToolResult {
    let image = result
        .get_mut("output")
        .and_then(Value::as_object_mut)
        .and_then(|m| m.shift_remove("data_url"))
        .and_then(|url| split_data_url(url.as_str()?));
    let mut out = CallToolResult::structured(result);
    if let Some((mime, data)) = image {
        out.content.push(ContentBlock::image(data, mime));
    }
    out
}

/// A plain tool's failure (the engine's envelope error).
pub fn envelope_error(error: Option<ToolError>) -> CallToolResult {
    let body = error.map(|e| {
        json!({"error": e.code, "message": e.message, "details": e.data.unwrap_or_else(|| json!({}))})
    });
    CallToolResult::structured_error(body.unwrap_or_else(|| {
        json!({"error": "driver_failed", "message": "the engine answered no error", "details": {}})
    }))
}

/// A governed tool's failure.
pub fn contract_error(e: &ContractError) -> CallToolResult {
    CallToolResult::structured_error(serde_json::to_value(e).unwrap_or_else(
        |_| json!({"error": "execution_failed", "message": e.message, "details": {}}),
    ))
}

/// `data:<mime>;base64,<data>` → `(mime, data)`.
fn split_data_url(url: &str) -> Option<(String, String)> {
    let rest = url.strip_prefix("data:")?;
    let (mime, data) = rest.split_once(";base64,")?;
    Some((mime.to_string(), data.to_string()))
}
