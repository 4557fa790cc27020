//! Shared by the runtime end-to-end tests: the real `computer-control` binary, the sign-in
//! form scenario on its virtual desktop, and a wrapper around a real caller that records
//! every call and can rewrite one answer (the real server is honest, so a foreign lease or
//! receipt has to be made by hand).

#![allow(dead_code)] // each test uses its own subset

pub mod scenario;
pub use crate::server_bin::server_binary;

use std::sync::{Arc, Mutex};

use adk_computer_use::governed::{ToolCaller, ToolListing, ToolReply};
use adk_computer_use::runtime::{ProposedAction, RuntimeResult};
use cc_contract::{ExecutionMode, format_timestamp, value_digest};
use serde_json::{Map, Value, json};

/// `computer-control serve --transport mcp --platform virtual --journal <journal>`.
pub fn serve_command(journal: &std::path::Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(server_binary());
    cmd.args([
        "serve",
        "--transport",
        "mcp",
        "--platform",
        "virtual",
        "--journal",
    ])
    .arg(journal)
    .env_remove("COMPUTER_CONTROL_CONFIG")
    .env_remove("COMPUTER_CONTROL_PRINCIPAL")
    .env("COMPUTER_CONTROL_LOG", "warn")
    .kill_on_drop(true);
    cmd
}

/// The sign-in form as observed through a caller: its window and the centre of Submit.
pub struct Form {
    pub window: Value,
    pub submit: (i64, i64),
}

/// Reads the form through plain tools of the same caller the runtime uses.
pub async fn observe_form(caller: &impl ToolCaller) -> Form {
    let list = caller
        .call_tool("window_list", Map::new())
        .await
        .expect("window_list")
        .structured;
    let window = list["windows"]
        .as_array()
        .expect("windows")
        .iter()
        .find(|w| w["app_id"] == "cc-form")
        .expect("the form window")
        .clone();
    let mut args = Map::new();
    args.insert("window".into(), window["id"].clone());
    args.insert("level".into(), json!("full"));
    let snap = caller
        .call_tool("a11y_snapshot", args)
        .await
        .expect("a11y_snapshot")
        .structured;
    let r = &find(&snap["tree"], "button", "Submit").expect("Submit")["rect"];
    let at = |i: usize| r[i].as_i64().expect("rect");
    Form {
        submit: ((at(0) + at(2)) / 2, (at(1) + at(3)) / 2),
        window,
    }
}

/// The first node of `(role, name)` in a snapshot's tree (a node or a list of them).
pub fn find<'a>(n: &'a Value, role: &str, name: &str) -> Option<&'a Value> {
    if let Some(items) = n.as_array() {
        return items.iter().find_map(|c| find(c, role, name));
    }
    if n["role"] == role && n["name"] == name {
        return Some(n);
    }
    n["children"]
        .as_array()?
        .iter()
        .find_map(|c| find(c, role, name))
}

/// A governed click on Submit whose postcondition is the status bar's new value.
pub fn click_submit(form: &Form, session_id: &str, action_id: &str) -> ProposedAction {
    let w = &form.window;
    serde_json::from_value(json!({
        "session_id": session_id,
        "action_id": action_id,
        "tool": "pointer_click",
        "arguments": {"x": form.submit.0, "y": form.submit.1},
        "mode": ExecutionMode::Foreground.as_str(),
        "target": {
            "platform": "virtual", "appId": "cc-form", "pid": w["pid"], "windowId": w["id"],
            "bounds": w["rect"], "observationId": "obs-1", "confidence": 1,
            "capturedAt": format_timestamp(time::OffsetDateTime::now_utc()),
        },
        "postcondition": {"kind": "ui_element", "role": "statusbar", "label": "Status",
                          "exists": true, "valueDigest": value_digest("Submitted: ")},
        "expires_in_ms": 120000,
    }))
    .expect("a proposal")
}

/// One rewrite of the answers of one tool.
pub type Rewrite = Box<dyn Fn(&mut Value) + Send + Sync>;

/// A real caller, wrapped: every call is recorded, and the answers of one tool may be
/// rewritten (structured content and raw text together, as a lying server would send).
pub struct Recording<C> {
    pub inner: C,
    pub calls: Arc<Mutex<Vec<String>>>,
    rewrite: Option<(&'static str, Rewrite)>,
}

impl<C> Recording<C> {
    /// Records only.
    pub fn new(inner: C) -> Self {
        Self {
            inner,
            calls: Arc::default(),
            rewrite: None,
        }
    }

    /// Records, and rewrites every answer of `tool`.
    pub fn rewriting(inner: C, tool: &'static str, rewrite: Rewrite) -> Self {
        Self {
            inner,
            calls: Arc::default(),
            rewrite: Some((tool, rewrite)),
        }
    }

    /// The tools called so far, in order.
    pub fn calls(&self) -> Vec<String> {
        self.calls.lock().expect("calls").clone()
    }
}

impl<C: ToolCaller> ToolCaller for Recording<C> {
    async fn call_tool(
        &self,
        tool: &'static str,
        arguments: Map<String, Value>,
    ) -> RuntimeResult<ToolReply> {
        self.calls.lock().expect("calls").push(tool.to_string());
        let mut reply = self.inner.call_tool(tool, arguments).await?;
        if let Some((target, rewrite)) = &self.rewrite
            && *target == tool
        {
            rewrite(&mut reply.structured);
            reply.raw = reply.structured.to_string();
        }
        Ok(reply)
    }

    async fn list_tools(&self) -> RuntimeResult<ToolListing> {
        self.inner.list_tools().await
    }
}
