//! `check_setup`: `computer-control check` as a read-only MCP tool, so a host can show
//! its user what the running server can do on this desktop and how to fix what it
//! cannot (the report of [`crate::check`], schema `check.schema.json`).

use std::sync::Arc;

use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use crate::check;

const DESCRIPTION: &str = "What this server can do on this desktop: platform, display, \
input, capture, accessibility, hotkey, journal and transports, each ok, degraded or missing \
with the reason, the desktop session it found and how, and the blockers with the one next \
step that fixes each. Read-only.";

fn object(v: Value) -> Arc<JsonObject> {
    Arc::new(match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    })
}

/// The tool's declaration: no arguments, the report's schema as output schema.
pub fn tool() -> Tool {
    let input = json!({"type": "object", "properties": {}, "additionalProperties": false});
    let output: Value = serde_json::from_str(check::SCHEMA).unwrap_or_else(|_| json!({}));
    Tool::new(check::TOOL, DESCRIPTION, object(input))
        .with_raw_output_schema(object(output))
        .with_annotations(
            ToolAnnotations::new()
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        )
}

/// Runs the check for the server of `engine` (blocking: call it off the async threads).
pub fn call(engine: &cc_engine::Engine) -> CallToolResult {
    CallToolResult::structured(check::for_server(engine))
}
