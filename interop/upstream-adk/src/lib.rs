//! The harness of the interoperability tests: the real `computer-control` binary, spoken
//! to by the published upstream client exactly as its users would — an rmcp client (a
//! child process over stdio, or Streamable HTTP with a bearer token) handed to
//! `adk_tool::McpToolset`, and `adk_computer_use::ComputerUseMcpRuntime` over it.
//!
//! The binary is the one the main test build made: `COMPUTER_CONTROL_BIN` names it
//! (`scripts/test.sh` sets it to `target/debug/computer-control`). Nothing here builds it.
//!
//! What the tests add on their own is what a person or a planner would: the proposal for
//! the sign-in form of the virtual desktop, and the operator's approval on the operator
//! channel (`--operator-listen`).

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use adk_computer_use::{ComputerUseMcpConfig, ComputerUseMcpRuntime, TraceCorrelation};
use adk_tool::McpToolset;
use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncBufReadExt, BufReader};

/// The principal the server acts for (`--principal-id`), which the upstream runtime
/// checks every preview, lease and follow-up against.
pub const PRINCIPAL: &str = "upstream-interop";
/// The operator token of the operator channel.
pub const OPERATOR_TOKEN: &str = "interop-operator-token-0123456789abcdef01234";
/// The agent token of `--transport mcp-http`.
pub const AGENT_TOKEN: &str = "interop-agent-token-fedcba9876543210fedcba987";
/// Text that the server's policy sends to a person (a `confirm` rule).
pub const NEEDS_APPROVAL: &str = "Grace";

/// Liveness bound for starts, calls and waits (never a timing assertion).
pub const LIMIT: Duration = Duration::from_secs(60);

/// The upstream toolset, as its users build it.
pub type Toolset = Arc<McpToolset<()>>;
/// The upstream runtime over it.
pub type Runtime = ComputerUseMcpRuntime<()>;

/// The server binary of the main build.
pub fn server_binary() -> PathBuf {
    let path = std::env::var_os("COMPUTER_CONTROL_BIN")
        .map(PathBuf::from)
        .expect(
            "COMPUTER_CONTROL_BIN must name the computer-control binary (scripts/test.sh sets it \
         to target/debug/computer-control after building the workspace)",
        );
    assert!(
        path.is_file(),
        "COMPUTER_CONTROL_BIN={} is not a file",
        path.display()
    );
    path
}

/// A running server and the upstream toolset connected to it.
pub struct Server {
    /// The upstream MCP toolset.
    pub toolset: Toolset,
    /// `http://127.0.0.1:PORT` of the operator channel.
    pub operator: String,
    /// The server process when it is not the toolset's own child (Streamable HTTP).
    _child: Option<tokio::process::Child>,
    _dir: tempfile::TempDir,
}

/// The server's config: the two tokens, and a policy that asks a person before the
/// text [`NEEDS_APPROVAL`] is typed anywhere.
fn config() -> Value {
    json!({
        "http": {"token": AGENT_TOKEN, "operator_token": OPERATOR_TOKEN},
        "safety": {"rules": [{
            "match": {"tool": "keyboard.type",
                      "argument": {"name": "text", "matcher": "contains", "value": NEEDS_APPROVAL}},
            "effect": "confirm"
        }]}
    })
}

fn command(transport: &str, dir: &tempfile::TempDir) -> tokio::process::Command {
    let path = dir.path().join("config.json");
    std::fs::write(&path, config().to_string()).expect("write the config");
    let mut cmd = tokio::process::Command::new(server_binary());
    cmd.args(["serve", "--transport", transport, "--platform", "virtual"])
        .arg("--journal")
        .arg(dir.path().join("journal.db"))
        .args(["--principal-id", PRINCIPAL])
        .arg("--config")
        .arg(&path)
        .args(["--operator-listen", "127.0.0.1:0"])
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env_remove("COMPUTER_CONTROL_PRINCIPAL")
        .env_remove("COMPUTER_CONTROL_JOURNAL")
        .env("COMPUTER_CONTROL_LOG", "warn")
        .env("XDG_RUNTIME_DIR", dir.path())
        .env("XDG_STATE_HOME", dir.path())
        .kill_on_drop(true);
    cmd
}

/// Reads stderr lines until every prefix has been announced; returns the values.
async fn announced<R>(stderr: R, prefixes: &'static [&'static str]) -> Vec<String>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            for (i, p) in prefixes.iter().enumerate() {
                if let Some(v) = line.strip_prefix(p) {
                    let _ = tx.send((i, v.trim().to_string()));
                }
            }
            eprintln!("server: {line}");
        }
    });
    let mut got = vec![None; prefixes.len()];
    while got.iter().any(Option::is_none) {
        let (i, v) = tokio::time::timeout(LIMIT, rx.recv())
            .await
            .expect("the server announced its listeners in time")
            .expect("the server announced its listeners before exiting");
        got[i] = Some(v);
    }
    got.into_iter().flatten().collect()
}

impl Server {
    /// `serve --transport mcp` as the toolset's child process, with the operator channel.
    pub async fn stdio() -> Server {
        let dir = tempfile::tempdir().expect("temp dir");
        let (transport, stderr) = TokioChildProcess::builder(command("mcp", &dir))
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn computer-control");
        let stderr = stderr.expect("stderr");
        let operator = announced(
            stderr,
            &["computer-control: operator channel listening on "],
        )
        .await
        .remove(0);
        let client = tokio::time::timeout(LIMIT, ().serve(transport))
            .await
            .expect("initialize in time")
            .expect("initialize");
        Server {
            toolset: Arc::new(McpToolset::new(client).with_name("computer-control")),
            operator,
            _child: None,
            _dir: dir,
        }
    }

    /// `serve --transport mcp-http --port 0`, reached with `token` as the bearer.
    pub async fn http(token: &str) -> Result<Server, String> {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut child = command("mcp-http", &dir)
            .args(["--port", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn computer-control");
        let stderr = child.stderr.take().expect("stderr");
        let urls = announced(
            stderr,
            &[
                "computer-control: operator channel listening on ",
                "computer-control: mcp endpoint at ",
            ],
        )
        .await;
        let config = StreamableHttpClientTransportConfig::with_uri(urls[1].clone())
            .auth_header(token.to_string());
        let client = tokio::time::timeout(
            LIMIT,
            ().serve(StreamableHttpClientTransport::from_config(config)),
        )
        .await
        .expect("initialize in time")
        .map_err(|e| e.to_string())?;
        Ok(Server {
            toolset: Arc::new(McpToolset::new(client).with_name("computer-control")),
            operator: urls[0].clone(),
            _child: Some(child),
            _dir: dir,
        })
    }

    /// Calls a tool through the upstream toolset; the `{output}` wrapper removed.
    pub async fn call(&self, tool: &str, arguments: Value) -> Value {
        let args = arguments.as_object().cloned().unwrap_or_default();
        let v = self
            .toolset
            .call_tool_value(tool, args)
            .await
            .unwrap_or_else(|e| panic!("{tool}: {e}"));
        output(v)
    }

    /// `start_session` as upstream's examples call it; the session id.
    pub async fn start_session(&self, objective: &str) -> String {
        let started = self
            .call("start_session", json!({"objective": objective}))
            .await;
        started["session"]["sessionId"]
            .as_str()
            .expect("start_session returns session.sessionId")
            .to_string()
    }

    /// An upstream runtime bound to one session, aimed at one app and window.
    pub fn runtime(&self, session_id: &str, capability_tool: &str, window: &Window) -> Runtime {
        ComputerUseMcpRuntime::new(
            self.toolset.clone(),
            ComputerUseMcpConfig {
                session_id: session_id.to_string(),
                expected_principal_id: PRINCIPAL.to_string(),
                capability_tool: capability_tool.to_string(),
                target_app: Some(window.bundle_id.clone()),
                target_window_id: Some(window.window_id),
                correlation: TraceCorrelation {
                    adk_session_id: Some("interop".into()),
                    adk_invocation_id: Some("interop-invocation".into()),
                    adk_graph_thread_id: None,
                    trace_id: None,
                },
            },
        )
    }

    /// A runtime with no target yet (to bootstrap evidence, as upstream's examples do).
    pub fn bootstrap(&self, session_id: &str) -> Runtime {
        ComputerUseMcpRuntime::new(
            self.toolset.clone(),
            ComputerUseMcpConfig {
                session_id: session_id.to_string(),
                expected_principal_id: PRINCIPAL.to_string(),
                capability_tool: "pointer_click".into(),
                target_app: None,
                target_window_id: None,
                correlation: TraceCorrelation::default(),
            },
        )
    }

    /// The session's journal, as upstream's `SessionEvent`s.
    pub async fn events(&self, session_id: &str) -> Vec<adk_computer_use::SessionEvent> {
        let page = self
            .call(
                "get_session_events",
                json!({"session_id": session_id, "after_sequence": 0, "limit": 1000}),
            )
            .await;
        serde_json::from_value(page["events"].clone()).expect("upstream decodes our events")
    }

    /// The operator's side: waits for the action's pending approval, approves it with
    /// the digest the person was shown, and returns the grant as the channel answered it.
    pub async fn approve(&self, session_id: &str, action_id: &str, args_digest: &str) -> Value {
        let client = reqwest::Client::new();
        let pending = tokio::time::timeout(LIMIT, async {
            loop {
                let list = operator(&client, &self.operator, "GET", "/approvals", None).await;
                if let Some(item) = list["approvals"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .chain(list.as_array().into_iter().flatten())
                    .find(|a| a["actionId"] == action_id || a["action_id"] == action_id)
                {
                    return item.clone();
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
        .await
        .expect("the action waits for the operator");
        assert_eq!(
            pending["argsDigest"], args_digest,
            "the person sees the digest: {pending}"
        );
        let body = json!({"session_id": session_id, "action_id": action_id,
                          "args_digest": args_digest, "ttl_ms": 120_000});
        let decided = operator(
            &client,
            &self.operator,
            "POST",
            "/approvals/approve",
            Some(body),
        )
        .await;
        assert_eq!(decided["status"], "approved", "{decided}");
        decided["grant"].clone()
    }
}

/// One operator request with the operator token; the JSON answer.
async fn operator(
    client: &reqwest::Client,
    base: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> Value {
    let url = format!("{base}{path}");
    let mut req = match method {
        "POST" => client.post(url),
        _ => client.get(url),
    }
    .header("authorization", format!("Bearer {OPERATOR_TOKEN}"));
    if let Some(b) = body {
        req = req
            .header("content-type", "application/json")
            .body(b.to_string());
    }
    let res = tokio::time::timeout(LIMIT, req.send())
        .await
        .expect("operator answer in time")
        .expect("operator request");
    let bytes = res.bytes().await.expect("operator body");
    serde_json::from_slice(&bytes).unwrap_or(Value::Null)
}

/// Unwraps upstream's `{output}` / `{response: {output}}` envelope, as its examples do.
pub fn output(value: Value) -> Value {
    value
        .get("response")
        .and_then(|v| v.get("output"))
        .or_else(|| value.get("output"))
        .cloned()
        .unwrap_or(value)
}

/// The sign-in window as upstream reads a window of `list_windows`.
#[derive(Debug, Clone)]
pub struct Window {
    pub window_id: u64,
    pub bundle_id: String,
    pub pid: u64,
    pub bounds: Value,
}

/// Finds the sign-in window through `list_windows` in shadow mode (no lease), as
/// upstream's `live_form` example finds its window.
pub async fn sign_in_window(bootstrap: &Runtime) -> Window {
    let observed = bootstrap
        .observe_tool("list_windows", json!({}))
        .await
        .expect("list_windows through the shadow facade");
    let windows = output(observed)["output"]["windows"].clone();
    let w = windows
        .as_array()
        .expect("windows")
        .iter()
        .find(|w| w["title"] == "Sign in")
        .unwrap_or_else(|| panic!("the sign-in window in {windows}"))
        .clone();
    Window {
        window_id: w["windowId"].as_u64().expect("windowId"),
        bundle_id: w["bundleId"].as_str().expect("bundleId").to_string(),
        pid: w["pid"].as_u64().expect("pid"),
        bounds: w["bounds"].clone(),
    }
}

/// The centre of a node `(role, name)` of `get_ui_tree` (rects are `[x0, y0, x1, y1]`).
pub async fn centre_of(bootstrap: &Runtime, window: &Window, role: &str, name: &str) -> (i64, i64) {
    let observed = bootstrap
        .observe_tool("get_ui_tree", json!({"window_id": window.window_id}))
        .await
        .expect("get_ui_tree through the shadow facade");
    let tree = output(observed)["output"]["tree"].clone();
    let node = find(&tree, role, name).unwrap_or_else(|| panic!("{role} {name} in {tree}"));
    let r = &node["rect"];
    let at = |i: usize| r[i].as_i64().expect("rect");
    ((at(0) + at(2)) / 2, (at(1) + at(3)) / 2)
}

/// The first node of `(role, name)` in a tree (a node or a list of them).
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

/// `sha256:` + hex of the value, the postcondition digest of the contract.
pub fn value_digest(value: &str) -> String {
    let hex: String = Sha256::digest(value.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// Now, printed as chrono's `to_rfc3339` prints it (nanoseconds and `+00:00`), which is
/// what upstream's examples put in `captured_at`.
pub fn captured_now() -> String {
    let t = time::OffsetDateTime::now_utc();
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:09}+00:00",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.nanosecond()
    )
}

/// A proposal shaped like upstream's examples: snake_case members, nested evidence
/// snake_case too, `captured_at` from chrono.
pub fn proposal(
    action_id: &str,
    tool: &str,
    arguments: Value,
    window: &Window,
    postcondition: Value,
) -> Value {
    json!({
        "action_id": action_id,
        "expires_in_ms": 120_000,
        "agent_id": "upstream-graph",
        "tool": tool,
        "arguments": arguments,
        "mode": "foreground",
        "data_labels": ["public"],
        "target": {
            "platform": "linux",
            "app_id": window.bundle_id,
            "pid": window.pid,
            "window_id": window.window_id,
            "bounds": window.bounds,
            "observation_id": format!("obs-{action_id}"),
            "confidence": 1.0,
            "captured_at": captured_now(),
        },
        "postcondition": postcondition,
    })
}

/// The tool arguments of a proposal, as a map (for `observe_tool` and friends).
pub fn map(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}
