//! [`LocalToolClient`]: the in-process kernel as a [`ToolCaller`] — the same tool names,
//! arguments and result shapes as the MCP transport of `computer-control`, with no
//! process boundary.

use std::sync::Arc;

use base64::Engine as _;
use cc_engine::tools::tools;
use cc_governance::{GOVERNED_TOOLS, Governance, governed_tool, mcp_tool_name, resolve_tool};
use serde_json::{Map, Value, json};

use crate::error::ComputerUseError;
use crate::governed::{
    INVALID_RESPONSE, ToolCaller, ToolImage, ToolListing, ToolReply, tool_error,
};
use crate::runtime::RuntimeResult;

/// The governed kernel (and its engine) called directly.
#[derive(Clone)]
pub struct LocalToolClient {
    governance: Arc<Governance>,
}

impl std::fmt::Debug for LocalToolClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalToolClient")
            .field("principal", &self.governance.principal())
            .finish_non_exhaustive()
    }
}

impl LocalToolClient {
    /// A caller over an opened kernel.
    pub fn new(governance: Governance) -> Self {
        Self {
            governance: Arc::new(governance),
        }
    }

    /// The kernel underneath.
    pub fn governance(&self) -> &Governance {
        &self.governance
    }
}

impl ToolCaller for LocalToolClient {
    async fn call_tool(
        &self,
        tool: &'static str,
        arguments: Map<String, Value>,
    ) -> RuntimeResult<ToolReply> {
        // The kernel and the engine block (SQLite, the worker thread): off the executor.
        let governance = self.governance.clone();
        tokio::task::spawn_blocking(move || dispatch(&governance, tool, Value::Object(arguments)))
            .await
            .map_err(|e| ComputerUseError::Runtime {
                operation: tool,
                code: None,
                message: format!("the in-process call did not finish: {e}"),
            })?
    }

    async fn list_tools(&self) -> RuntimeResult<ToolListing> {
        let plain = tools().iter().map(|t| mcp_tool_name(t.name));
        let governed = GOVERNED_TOOLS.iter().map(|t| t.name.to_string());
        Ok(ToolListing {
            tools: plain.chain(governed).collect(),
            server: json!({
                "name": "computer-control (in process)",
                "principalId": self.governance.principal(),
            }),
        })
    }
}

/// One call, as the MCP transport dispatches it: governed tools to the kernel, plain
/// tools (by MCP-safe or dotted name) to the engine, which starts its session on demand.
fn dispatch(
    governance: &Governance,
    tool: &'static str,
    arguments: Value,
) -> RuntimeResult<ToolReply> {
    if governed_tool(tool).is_some() {
        return match governance.call(tool, &arguments) {
            Some(Ok(value)) => reply(tool, value, None),
            Some(Err(e)) => Err(tool_error(
                tool,
                &serde_json::to_value(&e)
                    .unwrap_or_else(|_| json!({"error": "execution_failed", "message": e.message})),
            )),
            None => Err(no_tool(tool)),
        };
    }
    let def = resolve_tool(tool).ok_or_else(|| no_tool(tool))?;
    let engine = governance.engine();
    // This in-process edge makes the typed call once; the engine runs it as it is.
    let call = engine
        .prepare(def.name, &arguments)
        .map_err(|e| tool_error(tool, &engine_error(Some(e))))?;
    let mut env = engine.run(call.clone());
    if env.error.as_ref().map(|e| e.code) == Some(cc_protocol::ErrorCode::NotStarted) {
        let started = engine.start(&json!({}));
        if !started.ok {
            return Err(tool_error(tool, &engine_error(started.error)));
        }
        env = engine.run(call);
    }
    if !env.ok {
        return Err(tool_error(tool, &engine_error(env.error)));
    }
    let mut result = env.result.unwrap_or_else(|| json!({}));
    let image = match result
        .as_object_mut()
        .and_then(|m| m.shift_remove("data_url"))
    {
        Some(url) => Some(decode_data_url(tool, &url)?),
        None => None,
    };
    reply(tool, result, image)
}

fn reply(
    tool: &'static str,
    structured: Value,
    image: Option<ToolImage>,
) -> RuntimeResult<ToolReply> {
    let raw = serde_json::to_string(&structured).map_err(|e| ComputerUseError::Runtime {
        operation: tool,
        code: Some(INVALID_RESPONSE.into()),
        message: format!("the result does not serialize: {e}"),
    })?;
    Ok(ToolReply {
        structured,
        raw,
        image,
    })
}

/// The engine's error as the contract's `{error, message, details}`.
fn engine_error(error: Option<cc_protocol::ToolError>) -> Value {
    match error {
        Some(e) => {
            json!({"error": e.code, "message": e.message, "details": e.data.unwrap_or_else(|| json!({}))})
        }
        None => {
            json!({"error": "driver_failed", "message": "the engine answered no error", "details": {}})
        }
    }
}

/// `data:<mime>;base64,<data>` as an image.
fn decode_data_url(tool: &'static str, url: &Value) -> RuntimeResult<ToolImage> {
    let invalid = |message: String| ComputerUseError::Runtime {
        operation: tool,
        code: Some(INVALID_RESPONSE.into()),
        message,
    };
    let (mime, data) = url
        .as_str()
        .and_then(|u| u.strip_prefix("data:"))
        .and_then(|rest| rest.split_once(";base64,"))
        .ok_or_else(|| invalid("the capture's data_url is not a base64 data URL".into()))?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.as_bytes())
        .map_err(|e| invalid(format!("the capture's data_url is not base64: {e}")))?;
    Ok(ToolImage {
        mime_type: mime.to_string(),
        bytes,
    })
}

fn no_tool(tool: &'static str) -> ComputerUseError {
    ComputerUseError::Runtime {
        operation: tool,
        code: Some("invalid_arguments".into()),
        message: format!("no tool {tool:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_urls_decode_and_garbage_is_refused() {
        let image = decode_data_url("screen_capture", &json!("data:image/png;base64,AAEC"))
            .expect("an image");
        assert_eq!(image.mime_type, "image/png");
        assert_eq!(image.bytes, vec![0, 1, 2]);
        for bad in [
            json!("image/png;AAEC"),
            json!("data:image/png;base64,%%%"),
            json!(3),
        ] {
            assert!(decode_data_url("screen_capture", &bad).is_err(), "{bad}");
        }
    }
}
