//! An MCP `CallToolResult` as a [`ToolReply`] or a structured error.
//!
//! The contract's results travel as `structuredContent` with the same JSON as text; its
//! errors as `isError: true` with `{error, message, details}`. The text block is kept as
//! the raw JSON when it says the same as the structured content, so a preview is recorded
//! in the very bytes the server produced.

use base64::Engine as _;
use rmcp::model::CallToolResult;
use serde_json::Value;

use crate::error::ComputerUseError;
use crate::governed::{INVALID_RESPONSE, ToolImage, ToolReply, tool_error};
use crate::runtime::RuntimeResult;

/// Reads the answer of `tool`.
pub fn reply_from_result(tool: &'static str, result: CallToolResult) -> RuntimeResult<ToolReply> {
    let text = result
        .content
        .iter()
        .find_map(|c| c.as_text())
        .map(|t| t.text.clone());
    let from_text = text
        .as_deref()
        .and_then(|t| serde_json::from_str::<Value>(t).ok());
    let structured = result.structured_content.clone().or(from_text.clone());

    if result.is_error == Some(true) {
        return Err(match structured {
            Some(body) => tool_error(tool, &body),
            // An error in prose only: no contract code to route on.
            None => ComputerUseError::Runtime {
                operation: tool,
                code: None,
                message: text.unwrap_or_else(|| "the tool failed without a message".into()),
            },
        });
    }

    let Some(structured) = structured else {
        return Err(invalid(
            tool,
            "the result has no structured content and no JSON text",
        ));
    };
    let raw = match (text, from_text) {
        (Some(text), Some(parsed)) if parsed == structured => text,
        _ => serde_json::to_string(&structured)
            .map_err(|e| invalid(tool, format!("the result does not serialize: {e}")))?,
    };
    let image = match result.content.iter().find_map(|c| c.as_image()) {
        Some(block) => Some(ToolImage {
            mime_type: block.mime_type.clone(),
            bytes: base64::engine::general_purpose::STANDARD
                .decode(block.data.as_bytes())
                .map_err(|e| invalid(tool, format!("the image block is not base64: {e}")))?,
        }),
        None => None,
    };
    Ok(ToolReply {
        structured,
        raw,
        image,
    })
}

fn invalid(tool: &'static str, message: impl Into<String>) -> ComputerUseError {
    ComputerUseError::Runtime {
        operation: tool,
        code: Some(INVALID_RESPONSE.into()),
        message: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock;
    use serde_json::json;

    fn code(err: &ComputerUseError) -> Option<&str> {
        match err {
            ComputerUseError::Runtime { code, .. } => code.as_deref(),
            _ => None,
        }
    }

    #[test]
    fn structured_error_keeps_the_contract_code() {
        let result = CallToolResult::structured_error(
            json!({"error": "session_not_found", "message": "no session", "details": {}}),
        );
        let err = reply_from_result("get_session", result).expect_err("an error");
        assert_eq!(code(&err), Some("session_not_found"));
    }

    #[test]
    fn prose_error_has_no_code() {
        let result = CallToolResult::error(vec![ContentBlock::text("boom")]);
        let err = reply_from_result("preview_action", result).expect_err("an error");
        assert_eq!(
            err,
            ComputerUseError::Runtime {
                operation: "preview_action",
                code: None,
                message: "boom".into()
            }
        );
    }

    #[test]
    fn the_servers_text_is_the_raw_json() {
        let mut result = CallToolResult::structured(json!({"b": 1, "a": 2}));
        result.content = vec![ContentBlock::text("{ \"b\": 1, \"a\": 2 }")];
        let reply = reply_from_result("preview_action", result).expect("a reply");
        assert_eq!(reply.raw, "{ \"b\": 1, \"a\": 2 }");
    }

    #[test]
    fn text_that_disagrees_with_the_structured_content_is_not_kept() {
        let mut result = CallToolResult::structured(json!({"a": 2}));
        result.content = vec![ContentBlock::text("{\"a\": 3}")];
        let reply = reply_from_result("preview_action", result).expect("a reply");
        assert_eq!(reply.raw, "{\"a\":2}");
    }

    #[test]
    fn a_result_without_json_is_an_invalid_response() {
        let result = CallToolResult::success(vec![ContentBlock::text("hello")]);
        let err = reply_from_result("start_session", result).expect_err("no JSON");
        assert_eq!(code(&err), Some(INVALID_RESPONSE));
    }

    #[test]
    fn an_image_that_is_not_base64_is_an_invalid_response() {
        let mut result = CallToolResult::structured(json!({"width": 1, "height": 1}));
        result.content.push(ContentBlock::image("%%%", "image/png"));
        let err = reply_from_result("screen_capture", result).expect_err("bad image");
        assert_eq!(code(&err), Some(INVALID_RESPONSE));
    }
}
