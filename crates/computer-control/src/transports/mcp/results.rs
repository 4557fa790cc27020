//! Tool results on the MCP wire: successes as `structuredContent` (a capture's pixels
//! as an image block), failures as `isError: true` with `{error, message, details}`
//! (GOVERNANCE.md wire rules) for governed and plain tools alike.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use cc_contract::ContractError;
use cc_engine::Vocabulary;
use cc_protocol::{Envelope, ToolError};

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

/// A vocabulary's answer. Anthropic's `{content, is_error}` becomes the MCP content
/// itself (its text and image blocks are MCP's), its structured copy naming the image
/// block instead of repeating its bytes; OpenAI's and Gemini's items are the
/// structured content, with the screenshot also as an image block that hosts render
/// (the text block names it rather than repeating its bytes). A failure is the
/// vendor's error answer where it has one (Anthropic: `is_error` with text), else
/// `{error, message, details}` as for plain tools.
pub fn vocabulary(voc: &Vocabulary, env: Envelope) -> CallToolResult {
    let anthropic = voc.vendor == "anthropic";
    if !env.ok {
        let vendor = env
            .error
            .as_ref()
            .and_then(|e| e.data.as_ref())
            .and_then(|d| d.get("vendor_result"))
            .cloned();
        return match (anthropic, vendor) {
            (true, Some(v)) => CallToolResult::error(anthropic_blocks(&v)),
            _ => envelope_error(env.error),
        };
    }
    let result = env.result.unwrap_or_else(|| json!({}));
    if anthropic {
        // The content is the answer itself (no JSON text block a harness would forward
        // to the model); the structured copy names the image instead of repeating it.
        let mut shown = result.clone();
        for block in shown["content"].as_array_mut().into_iter().flatten() {
            if let Some(data) = block.pointer_mut("/source/data") {
                *data = json!(IMAGE_ELSEWHERE);
            }
        }
        let mut out = CallToolResult::success(anthropic_blocks(&result));
        out.structured_content = Some(shown);
        return out;
    }
    let mut shown = result.clone();
    let image = match voc.vendor {
        "openai" => shown
            .pointer_mut("/output/image_url")
            .map(|u| std::mem::replace(u, json!(IMAGE_ELSEWHERE)))
            .and_then(|url| split_data_url(url.as_str()?)),
        _ => shown.pointer_mut("/parts/0/inline_data").and_then(|d| {
            let mime = d["mime_type"].as_str()?.to_string();
            let data = std::mem::replace(&mut d["data"], json!(IMAGE_ELSEWHERE));
            Some((mime, data.as_str()?.to_string()))
        }),
    };
    let mut content = vec![ContentBlock::text(shown.to_string())];
    if let Some((mime, data)) = image {
        content.push(ContentBlock::image(data, mime));
    }
    let mut out = CallToolResult::success(content);
    out.structured_content = Some(result);
    out
}

/// What the text block says in place of the screenshot's bytes.
const IMAGE_ELSEWHERE: &str = "(the image content block)";

/// Anthropic's content blocks as MCP's: text to text, base64 images to images.
fn anthropic_blocks(v: &Value) -> Vec<ContentBlock> {
    v["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| match b["type"].as_str()? {
            "text" => Some(ContentBlock::text(b["text"].as_str()?.to_string())),
            "image" => Some(ContentBlock::image(
                b["source"]["data"].as_str()?.to_string(),
                b["source"]["media_type"].as_str()?.to_string(),
            )),
            _ => None,
        })
        .collect()
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
