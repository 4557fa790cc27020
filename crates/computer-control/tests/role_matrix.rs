//! The role matrix: every JSON-RPC method, every tool, every HTTP route and every MCP
//! tool, called with no token, the agent's token, an `http.agents` principal's token
//! and the operator's token, on each listener that serves it, against the expected
//! outcome. Each table must cover exactly what the server exposes (the engine's
//! `METHODS`, the manifest's `http_routes`, `tools.list`, MCP `tools/list`), so a new
//! method, route or tool fails this test until someone decides who may reach it.

use crate::governed_http_support;
use crate::mcp_http_support;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::Duration;

use governed_http_support::{Agent, agent, call};
use mcp_http_support::{AGENT, AGENT_B_TOKEN, OPERATOR, TempDir, serve_command, tokens_config};
use serde_json::{Value, json};

/// What a caller meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Out {
    /// 401: no valid token.
    Unauth,
    /// 403: a valid token whose role may not do this.
    Forbidden,
    /// The request reached its handler (any answer but 401/403/404).
    Served,
    /// 404 with no body: this listener does not serve it.
    Absent,
}
use Out::*;

/// The four callers, in the order of every row's outcomes.
const CALLERS: [Option<&str>; 4] = [None, Some(AGENT), Some(AGENT_B_TOKEN), Some(OPERATOR)];
const CALLER_NAMES: [&str; 4] = ["no token", "agent", "http.agents principal", "operator"];

/// Everyone with a token may; nobody without.
const TOKEN: [Out; 4] = [Unauth, Served, Served, Served];
/// The operator only.
const OPERATOR_ONLY: [Out; 4] = [Unauth, Forbidden, Forbidden, Served];
/// No token needed.
const PUBLIC: [Out; 4] = [Served, Served, Served, Served];
/// The console's sign-in and sign-out take no bearer token but need the page's Origin,
/// which no caller here sends: refused for everyone (http_operator_trust signs in).
const SIGN_IN: [Out; 4] = [Forbidden, Forbidden, Forbidden, Forbidden];
const ABSENT: [Out; 4] = [Absent, Absent, Absent, Absent];

/// JSON-RPC methods on `/rpc` of `--transport http`, with the params that decide the
/// outcome where the effect matters (engaging the stop is anyone's, releasing it the
/// operator's; an agent configures only its own preferences).
fn method_rows() -> Vec<(&'static str, Value, [Out; 4])> {
    vec![
        ("system.status", json!({}), TOKEN),
        ("tools.list", json!({}), TOKEN),
        ("session.start", json!({}), TOKEN),
        (
            "session.start",
            json!({"capture": {"grayscale": true}}),
            TOKEN,
        ),
        // The canvas is the space of the operator's rules.
        (
            "session.start",
            json!({"capture": {"default_width": 800}}),
            OPERATOR_ONLY,
        ),
        (
            "session.configure",
            json!({"capture": {"default_width": "auto"}}),
            OPERATOR_ONLY,
        ),
        ("session.start", json!({"safety": {}}), OPERATOR_ONLY),
        (
            "session.start",
            json!({"capture": {"redact_sensitive": false}}),
            OPERATOR_ONLY,
        ),
        (
            "session.configure",
            json!({"a11y": {"max_name_len": 80}}),
            TOKEN,
        ),
        (
            "session.configure",
            json!({"safety": {"rules": []}}),
            OPERATOR_ONLY,
        ),
        (
            "session.configure",
            json!({"capture": {"redact_sensitive": false}}),
            OPERATOR_ONLY,
        ),
        (
            "session.configure",
            json!({"runtime": {"max_wait_ms": 1}}),
            OPERATOR_ONLY,
        ),
        (
            "tools.call",
            json!({"tool": "wait.pause", "arguments": {"ms": 0}}),
            TOKEN,
        ),
        ("tools.call_batch", json!({"items": []}), TOKEN),
        ("control.panic", json!({"on": true}), TOKEN),
        ("control.panic", json!({"on": false}), OPERATOR_ONLY),
        ("session.resume", json!({}), OPERATOR_ONLY),
        (
            "session.confirm",
            json!({"request_id": "cfm-x", "approve": true}),
            OPERATOR_ONLY,
        ),
        (
            "session.confirm",
            json!({"request_id": "cfm-x", "approve": false}),
            OPERATOR_ONLY,
        ),
        ("session.stop", json!({}), TOKEN),
    ]
}

/// Every tool, by `tools.call` on `/rpc`: the role never decides a tool (the safety
/// gate does, the same for everyone).
const TOOLS: &[&str] = &[
    "screen.capture",
    "pointer.move",
    "pointer.position",
    "pointer.click",
    "pointer.drag",
    "pointer.scroll",
    "keyboard.press",
    "keyboard.combo",
    "keyboard.type",
    "wait.pause",
    "wait.for",
    "a11y.snapshot",
    "a11y.activate",
    "a11y.input",
    "window.list",
    "window.focus",
    "clipboard.read",
    "clipboard.write",
    "app.launch",
    "batch.execute",
];

/// Every vendor vocabulary, by `tools.call` on `/rpc`: translated into the tools above,
/// so the gate decides, never the role.
const VOCABULARIES: &[&str] = &["anthropic.computer", "openai.computer", "gemini.computer"];

/// Every MCP tool on `/mcp`; approving is never one of them.
const MCP_TOOLS: &[&str] = &[
    "screen_capture",
    "pointer_move",
    "pointer_position",
    "pointer_click",
    "pointer_drag",
    "pointer_scroll",
    "keyboard_press",
    "keyboard_combo",
    "keyboard_type",
    "wait_pause",
    "wait_for",
    "a11y_snapshot",
    "a11y_activate",
    "a11y_input",
    "window_list",
    "window_focus",
    "clipboard_read",
    "clipboard_write",
    "app_launch",
    "batch_execute",
    "anthropic_computer",
    "openai_computer",
    "gemini_computer",
    "start_session",
    "get_session",
    "pause_session",
    "resume_session",
    "stop_session",
    "preview_action",
    "execute_action",
    "get_execution_capabilities",
    "acquire_control_lease",
    "release_control_lease",
    "reserve_target",
    "release_target_reservation",
    "get_session_events",
    "emergency_stop",
    "get_follow_ups",
    "submit_follow_up",
    "check_setup",
    "delete_session",
    "prune_sessions",
];

/// Which listener a route row is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum L {
    Http,
    McpHttp,
    Operator,
}

/// `(listener, method, path, outcomes)`: every route of the manifest on every
/// listener, and 404 where a listener does not serve it.
fn route_rows() -> Vec<(L, &'static str, &'static str, [Out; 4])> {
    let mut rows = Vec::new();
    for (l, token, operator) in [
        (L::Http, TOKEN, OPERATOR_ONLY),
        (L::Operator, OPERATOR_ONLY, OPERATOR_ONLY),
    ] {
        rows.extend([
            (l, "GET", "/health", PUBLIC),
            (l, "GET", "/", PUBLIC),
            (l, "GET", "/console/app.js", PUBLIC),
            (l, "GET", "/console/style.css", PUBLIC),
            (l, "POST", "/console/login", SIGN_IN),
            (l, "POST", "/console/logout", SIGN_IN),
            (l, "POST", "/rpc", token),
            (l, "GET", "/events", token),
            (l, "GET", "/frame", token),
            (l, "GET", "/whoami", token),
            (l, "GET", "/approvals", operator),
            (l, "POST", "/approvals/approve", operator),
            (l, "POST", "/approvals/deny", operator),
            (l, "GET", "/journal", operator),
        ]);
    }
    rows.push((L::Http, "ANY", "/mcp", TOKEN));
    rows.push((L::Operator, "ANY", "/mcp", ABSENT));
    rows.push((L::McpHttp, "GET", "/health", PUBLIC));
    rows.push((L::McpHttp, "ANY", "/mcp", TOKEN));
    for path in [
        "/",
        "/console/app.js",
        "/console/style.css",
        "/console/login",
        "/console/logout",
        "/rpc",
        "/events",
        "/frame",
        "/whoami",
        "/approvals",
        "/approvals/approve",
        "/approvals/deny",
        "/journal",
    ] {
        let method = if matches!(
            path,
            "/rpc"
                | "/approvals/approve"
                | "/approvals/deny"
                | "/console/login"
                | "/console/logout"
        ) {
            "POST"
        } else {
            "GET"
        };
        rows.push((L::McpHttp, method, path, ABSENT));
    }
    rows
}

/// `serve --transport mcp-http --operator-listen` or `serve --transport http`: the
/// base URLs of its listeners.
struct Served {
    child: Child,
    bases: Vec<String>,
    _dir: TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(transport: &str, extra: &[&str], prefixes: &'static [&'static str]) -> Served {
    let dir = TempDir::new();
    let config = dir.0.join("config.json");
    std::fs::write(&config, tokens_config().to_string()).unwrap();
    let mut child = serve_command(transport, &dir, &config)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn computer-control");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            for (i, p) in prefixes.iter().enumerate() {
                if let Some(v) = line.strip_prefix(p) {
                    let _ = tx.send((i, v.trim().to_string()));
                }
            }
        }
    });
    let mut bases = vec![String::new(); prefixes.len()];
    for _ in 0..prefixes.len() {
        let (i, v) = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the server announces its listeners");
        bases[i] = v;
    }
    Served {
        child,
        bases,
        _dir: dir,
    }
}

fn client() -> reqwest::Client {
    // With every workspace feature on, reqwest's rustls comes without a crypto provider
    // (the client library's `rustls` feature installs its own at run time): install ring's
    // once, before any client is built.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

/// The outcome of one HTTP request (an SSE stream is judged by its status line).
async fn outcome(
    base: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &Value,
) -> (Out, String) {
    let url = format!("{base}{path}");
    let mut req = match method {
        "GET" => client().get(&url),
        _ => client()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string()),
    };
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let res = req.send().await.expect("request");
    let status = res.status().as_u16();
    let text = if path == "/events" {
        String::new()
    } else {
        res.text().await.unwrap_or_default()
    };
    let out = match status {
        401 => Unauth,
        403 => Forbidden,
        // A handler's own 404 (an unknown approval) says why; an unrouted path is bare.
        404 if text.is_empty() => Absent,
        _ => Served,
    };
    (out, format!("{status} {text}"))
}

/// The body a route row sends: a JSON-RPC call, an MCP initialize, an approval.
fn body_for(path: &str) -> Value {
    match path {
        "/rpc" => json!({"jsonrpc": "2.0", "id": 1, "method": "system.status"}),
        "/mcp" => json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "role-matrix", "version": "1"}}}),
        _ => json!({"session_id": "ses-none", "action_id": "a1"}),
    }
}

/// One JSON-RPC call with the operator's token.
async fn op(base: &str, method: &str, params: Value) -> (Out, String) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    outcome(base, "POST", "/rpc", Some(OPERATOR), &body).await
}

fn manifest() -> Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_computer-control"))
        .arg("manifest")
        .output()
        .expect("run manifest");
    serde_json::from_slice(&out.stdout).expect("manifest JSON")
}

/// The exposed set must be exactly the table's.
fn same<T: Ord + std::fmt::Debug + Clone>(
    what: &str,
    exposed: impl IntoIterator<Item = T>,
    table: impl IntoIterator<Item = T>,
) {
    let exposed: BTreeSet<T> = exposed.into_iter().collect();
    let table: BTreeSet<T> = table.into_iter().collect();
    let missing: Vec<_> = exposed.difference(&table).cloned().collect();
    let stale: Vec<_> = table.difference(&exposed).cloned().collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "{what}: exposed but not in the role matrix: {missing:?}; in the matrix but not exposed: {stale:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_method_tool_route_and_mcp_tool_against_every_role() {
    // The tables cover exactly what the server exposes.
    same(
        "methods",
        cc_engine::METHODS.iter().copied(),
        method_rows().iter().map(|r| r.0),
    );
    let m = manifest();
    let listeners = |l: L| match l {
        L::Http => "http",
        L::McpHttp => "mcp-http",
        L::Operator => "operator",
    };
    let exposed_routes: Vec<(String, String, String)> = m["http_routes"]
        .as_array()
        .expect("http_routes")
        .iter()
        .flat_map(|r| {
            let (method, path) = (r["method"].as_str().unwrap(), r["path"].as_str().unwrap());
            r["listeners"].as_array().unwrap().iter().map(move |l| {
                (
                    l.as_str().unwrap().to_string(),
                    method.to_string(),
                    path.to_string(),
                )
            })
        })
        .collect();
    let rows = route_rows();
    same(
        "http routes",
        exposed_routes,
        rows.iter()
            .filter(|r| r.3 != ABSENT)
            .map(|r| (listeners(r.0).to_string(), r.1.to_string(), r.2.to_string())),
    );

    let http = start("http", &[], &["computer-control: http listening on "]);
    let mcp_http = start(
        "mcp-http",
        &["--operator-listen", "127.0.0.1:0"],
        &[
            "computer-control: http listening on ",
            "computer-control: operator channel listening on ",
        ],
    );
    let base = |l: L| match l {
        L::Http => http.bases[0].clone(),
        L::McpHttp => mcp_http.bases[0].clone(),
        L::Operator => mcp_http.bases[1].clone(),
    };

    // Routes.
    let mut failures = Vec::new();
    for (l, method, path, expected) in &rows {
        for (i, token) in CALLERS.iter().enumerate() {
            let (got, detail) = outcome(&base(*l), method, path, *token, &body_for(path)).await;
            if got != expected[i] {
                failures.push(format!(
                    "{l:?} {method} {path} as {}: expected {:?}, got {got:?} ({detail})",
                    CALLER_NAMES[i], expected[i]
                ));
            }
        }
    }

    // JSON-RPC methods on /rpc: 403 for a refused role, an answer otherwise; on the
    // operator listener, the operator's alone.
    for (l, operator_listener) in [(L::Http, false), (L::Operator, true)] {
        for (method, params, expected) in method_rows() {
            let expected = if operator_listener {
                OPERATOR_ONLY
            } else {
                expected
            };
            for (i, token) in CALLERS.iter().enumerate() {
                let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
                let (got, detail) = outcome(&base(l), "POST", "/rpc", *token, &body).await;
                if got != expected[i] {
                    failures.push(format!(
                        "{l:?} {method} {params} as {}: expected {:?}, got {got:?} ({detail})",
                        CALLER_NAMES[i], expected[i]
                    ));
                }
            }
        }
    }

    // Tools through tools.call: the gate decides, never the role.
    let http_base = base(L::Http);
    op(&http_base, "control.panic", json!({"on": false})).await;
    op(&http_base, "session.start", json!({})).await;
    let (_, listed) = op(&http_base, "tools.list", json!({})).await;
    let listed: Value = serde_json::from_str(listed.split_once(' ').unwrap().1).unwrap();
    let names = listed["result"]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string());
    same("tools", names, TOOLS.iter().map(|t| t.to_string()));
    let vocabularies = listed["result"]["result"]["vocabularies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string());
    same(
        "vocabularies",
        vocabularies,
        VOCABULARIES.iter().map(|t| t.to_string()),
    );
    for (l, expected) in [(L::Http, TOKEN), (L::Operator, OPERATOR_ONLY)] {
        for tool in TOOLS.iter().chain(VOCABULARIES) {
            for (i, token) in CALLERS.iter().enumerate() {
                let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools.call",
                                  "params": {"tool": tool, "arguments": {}}});
                let (got, detail) = outcome(&base(l), "POST", "/rpc", *token, &body).await;
                if got != expected[i] {
                    failures.push(format!(
                        "{l:?} tools.call {tool} as {}: expected {:?}, got {got:?} ({detail})",
                        CALLER_NAMES[i], expected[i]
                    ));
                }
            }
        }
    }

    // MCP tools on both /mcp endpoints, for every token (no token cannot initialize:
    // the route rows above show the 401). Each call is answered by its tool.
    for l in [L::Http, L::McpHttp] {
        for token in [AGENT, AGENT_B_TOKEN, OPERATOR] {
            let a: Agent = agent(&base(l), token).await;
            let tools = a.list_all_tools().await.expect("tools/list");
            same(
                "mcp tools",
                tools.iter().map(|t| t.name.to_string()),
                MCP_TOOLS.iter().map(|t| t.to_string()),
            );
            for tool in MCP_TOOLS {
                // A tool result (success or the tool's own error), never a refusal
                // of the caller: the MCP endpoint has no operator tool to refuse.
                let r = call(&a, tool, json!({})).await;
                let text = format!("{r:?}");
                if text.contains("forbidden") || text.contains("operator token") {
                    failures.push(format!("{l:?} MCP {tool} with {token}: refused: {text}"));
                }
            }
            a.cancel().await.expect("close");
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Over stdio the harness speaks for its person: every method is answered, none is
/// refused (there are no tokens on a pipe the host itself opened).
#[test]
fn over_stdio_every_method_is_the_hosts() {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_computer-control"))
        .args(["serve", "--platform", "virtual"])
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env("COMPUTER_CONTROL_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().unwrap();
    let rows = method_rows();
    for (i, (method, params, _)) in rows.iter().enumerate() {
        let line = json!({"jsonrpc": "2.0", "id": i, "method": method, "params": params});
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().expect("exit");
    let answers: Vec<Value> = out
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .filter(|v: &Value| v.get("id").is_some())
        .collect();
    assert_eq!(answers.len(), rows.len(), "{answers:?}");
    for a in &answers {
        assert!(a.get("result").is_some(), "refused over stdio: {a}");
    }
}
