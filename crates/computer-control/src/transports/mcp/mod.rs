//! The MCP transport (`serve --transport mcp`, stdio) over the official SDK.
//!
//! Two families of tools share one list: the plain tools of PROTOCOL.md under
//! MCP-safe names (`pointer.click` → `pointer_click`; input schemas generated from the
//! engine's tool specs) and the governed tools of GOVERNANCE.md Part A. Both are thin
//! mappings: plain tools go to `Engine::call_tool` (so the safety gate applies), the
//! governed ones to `Governance::call`. Engine and journal calls block, so each runs on
//! tokio's blocking pool.

mod schemas;

use std::sync::Arc;

use anyhow::Context;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

use cc_engine::Engine;
use cc_engine::tools::tools;
use cc_governance::{GOVERNED_TOOLS, Governance, mcp_tool_name, resolve_tool};

/// The MCP server: the engine and the governed kernel over it.
#[derive(Clone)]
pub struct McpServer {
    engine: Engine,
    governance: Arc<Governance>,
}

impl McpServer {
    /// A server over an engine and its governance kernel.
    pub fn new(engine: Engine, governance: Governance) -> Self {
        McpServer {
            engine,
            governance: Arc::new(governance),
        }
    }

    /// Every tool: the plain ones (MCP-safe names), then the governed ones.
    fn tool_list() -> Vec<Tool> {
        let plain = tools().iter().map(|t| {
            Tool::new(
                mcp_tool_name(t.name),
                t.summary,
                as_object(cc_engine::spec::to_json_schema(&t.params)),
            )
        });
        let governed = schemas::governed_tools()
            .into_iter()
            .map(|(name, description, schema)| Tool::new(name, description, as_object(schema)));
        plain.chain(governed).collect()
    }

    /// Runs one call (blocking): governed first, then plain; `None` for an unknown name.
    fn dispatch(&self, name: &str, arguments: Value) -> Option<CallToolResult> {
        if GOVERNED_TOOLS.contains(&name) {
            let out = self.governance.call(name, &arguments)?;
            return Some(match out {
                Ok(v) => CallToolResult::structured(v),
                Err(e) => CallToolResult::structured_error(
                    serde_json::to_value(&e)
                        .unwrap_or_else(|_| json!({"error": "execution_failed"})),
                ),
            });
        }
        let def = resolve_tool(name)?;
        let env = self.engine.call_tool(def.name, &arguments);
        Some(if env.ok {
            plain_result(env.result.unwrap_or_else(|| json!({})))
        } else {
            let error = env.error.map(|e| {
                json!({"error": e.code, "message": e.message, "details": e.data.unwrap_or_else(|| json!({}))})
            });
            CallToolResult::structured_error(
                error.unwrap_or_else(|| json!({"error": "driver_failed"})),
            )
        })
    }
}

/// A plain tool's success. A capture's `data_url` becomes an MCP image block (what a
/// model client renders) instead of a base64 string inside the JSON; the rest of the
/// result stays structured.
fn plain_result(mut result: Value) -> CallToolResult {
    let image = result
        .as_object_mut()
        .and_then(|m| m.shift_remove("data_url"))
        .and_then(|url| split_data_url(url.as_str()?));
    let mut out = CallToolResult::structured(result);
    if let Some((mime, data)) = image {
        out.content.push(ContentBlock::image(data, mime));
    }
    out
}

/// `data:<mime>;base64,<data>` → `(mime, data)`.
fn split_data_url(url: &str) -> Option<(String, String)> {
    let rest = url.strip_prefix("data:")?;
    let (mime, data) = rest.split_once(";base64,")?;
    Some((mime.to_string(), data.to_string()))
}

/// A JSON Schema as the SDK's object type (a non-object schema becomes `{}`).
fn as_object(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(JsonObject::new()),
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "computer-control",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "Governed desktop automation. Plain tools act through the safety gate; \
                 governed tools (start_session, preview_action, execute_action, …) add \
                 sessions, leases, receipts and a hash-chained journal.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(Self::tool_list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let server = self.clone();
        let lookup = name.clone();
        let out = tokio::task::spawn_blocking(move || server.dispatch(&lookup, arguments))
            .await
            .map_err(|e| ErrorData::internal_error(format!("tool task failed: {e}"), None))?;
        match out {
            Some(result) => Ok(result.into()),
            None => Err(ErrorData::invalid_params(format!("no tool {name:?}"), None)),
        }
    }
}

/// Serves MCP on stdin/stdout until the client closes it.
pub fn serve(engine: Engine, governance: Governance) -> anyhow::Result<()> {
    // A previous server on this journal may have died mid-session: pause what it ran
    // and revoke its leases before any client can act (nothing is deleted).
    let recovery = governance
        .recover()
        .map_err(|e| anyhow::anyhow!("governance recovery: {}", e.message))?;
    if !recovery.paused_session_ids.is_empty() || !recovery.revoked_lease_ids.is_empty() {
        tracing::warn!(?recovery, "recovered governed sessions from the journal");
    }
    // Plain tools need an engine session; a governed call would start it anyway.
    let started = engine.start(&json!({}));
    if !started.ok {
        tracing::warn!(?started.error, "the engine session did not start");
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("tokio runtime")?;
    rt.block_on(async move {
        let running = McpServer::new(engine, governance)
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| anyhow::anyhow!("MCP initialize: {e}"))?;
        running.waiting().await.context("MCP service")?;
        anyhow::Ok(())
    })
}
