//! The operator channel beside MCP (`serve --transport mcp|mcp-http --operator-listen
//! HOST:PORT`): the real binary, the agent as a real MCP client (the official SDK over
//! the child's stdio, or over Streamable HTTP), the operator as a real HTTP client.
//!
//! A click whose policy decision is `confirm` waits for the operator; the operator
//! approves it on the channel with the operator token, and the agent's same
//! `execute_action` then commits with its postcondition satisfied. The channel refuses
//! a missing or wrong token (401), the agent's token (403), a foreign Host or Origin
//! (403), and never serves `/mcp`; over stdio, stdout carries MCP JSON-RPC and nothing
//! else. Bad `--operator-listen` uses fail the start with a clear message.

use crate::governed_http_support;
use crate::http_support;

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governed_http_support::{
    Agent, agent, click, confirm_clicks_config, form, now, ok, refused, session,
};
use http_support::{TempDir, client};
use rmcp::ServiceExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// `http.token`: the agent's token for HTTP transports (none exists over stdio unless
/// configured; configured, it is refused on the operator channel).
const AGENT: &str = "op-agent-token-0123456789abcdef0123456789ab";
/// `http.operator_token`.
const OPERATOR: &str = "op-operator-token-fedcba9876543210fedcba98";

/// Liveness bound for the server's start and exit (never a timing assertion).
const LIMIT: Duration = Duration::from_secs(60);

fn tokens() -> Value {
    json!({"http": {"token": AGENT, "operator_token": OPERATOR}})
}

/// The base command: `serve --transport <t> --platform virtual`, a private journal,
/// token-file directory and state directory, the config written to `dir`.
fn command(transport: &str, dir: &TempDir, config: &Value) -> tokio::process::Command {
    let path = dir.0.join("config.json");
    std::fs::write(&path, config.to_string()).expect("write the config");
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_computer-control"));
    cmd.args(["serve", "--transport", transport, "--platform", "virtual"])
        .arg("--journal")
        .arg(dir.0.join("journal.db"))
        .arg("--config")
        .arg(&path)
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env_remove("COMPUTER_CONTROL_PRINCIPAL")
        .env_remove("COMPUTER_CONTROL_JOURNAL")
        // Info logs on: they must all go to stderr, never into the MCP stream.
        .env("COMPUTER_CONTROL_LOG", "info")
        .env("XDG_RUNTIME_DIR", &dir.0)
        .env("XDG_STATE_HOME", &dir.0)
        .kill_on_drop(true);
    cmd
}

/// Every stderr line so far.
type Lines = Arc<Mutex<Vec<String>>>;
/// `(index of the prefix, the rest of the line)` of each announced line.
type Announced = tokio::sync::mpsc::UnboundedReceiver<(usize, String)>;

/// Collects stderr lines; sends the value after each `prefix` that appears.
fn read_stderr(
    child: &mut tokio::process::Child,
    prefixes: &'static [&'static str],
) -> (Lines, Announced) {
    let stderr = child.stderr.take().expect("stderr");
    let lines = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let sink = lines.clone();
    tokio::spawn(async move {
        let mut r = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = r.next_line().await {
            for (i, p) in prefixes.iter().enumerate() {
                if let Some(v) = line.strip_prefix(p) {
                    let _ = tx.send((i, v.trim().to_string()));
                }
            }
            sink.lock().unwrap().push(line);
        }
    });
    (lines, rx)
}

/// Waits for the values of every prefix (in any order), by index.
async fn announced(rx: &mut Announced, n: usize, stderr: &Lines) -> Vec<String> {
    let mut got = vec![String::new(); n];
    let mut left = n;
    while left > 0 {
        match tokio::time::timeout(LIMIT, rx.recv()).await {
            Ok(Some((i, v))) => {
                if got[i].is_empty() {
                    left -= 1;
                }
                got[i] = v;
            }
            _ => panic!(
                "the server did not start; stderr:\n{}",
                stderr.lock().unwrap().join("\n")
            ),
        }
    }
    got
}

/// `serve --transport mcp --operator-listen 127.0.0.1:0` with an MCP client on its
/// stdio. Every stdout line the client reads is recorded on the way.
struct StdioServer {
    child: tokio::process::Child,
    agent: Agent,
    /// `http://127.0.0.1:PORT` of the operator channel.
    operator: String,
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<Vec<String>>>,
    dir: TempDir,
}

impl StdioServer {
    async fn start(config: Value) -> StdioServer {
        let dir = TempDir::new();
        let mut child = command("mcp", &dir, &config)
            .args(["--operator-listen", "127.0.0.1:0"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn computer-control");
        let (stderr, mut rx) = read_stderr(
            &mut child,
            &["computer-control: operator channel listening on "],
        );
        let operator = announced(&mut rx, 1, &stderr).await.remove(0);
        // The tee: the server's stdout, line by line, recorded, then handed to the SDK.
        let server_out = child.stdout.take().expect("stdout");
        let (mut to_client, client_in) = tokio::io::duplex(1 << 20);
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let sink = stdout.clone();
        tokio::spawn(async move {
            let mut r = BufReader::new(server_out).lines();
            while let Ok(Some(line)) = r.next_line().await {
                sink.lock().unwrap().push(line.clone());
                if to_client
                    .write_all(format!("{line}\n").as_bytes())
                    .await
                    .is_err()
                {
                    break;
                }
            }
        });
        let server_in = child.stdin.take().expect("stdin");
        let agent = tokio::time::timeout(LIMIT, ().serve((client_in, server_in)))
            .await
            .expect("initialize in time")
            .expect("initialize");
        StdioServer {
            child,
            agent,
            operator,
            stdout,
            stderr,
            dir,
        }
    }

    fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }

    /// Closes the MCP stream (the client's end) and waits for the exit.
    async fn close(mut self) -> (std::process::ExitStatus, Vec<String>, String, TempDir) {
        self.agent.cancel().await.expect("close the MCP client");
        let status = tokio::time::timeout(LIMIT, self.child.wait())
            .await
            .expect("exits once stdin closes")
            .expect("wait");
        let stderr = self.stderr.lock().unwrap().join("\n");
        let stdout = self.stdout.lock().unwrap().clone();
        (status, stdout, stderr, self.dir)
    }
}

/// `(status, JSON body or Null)` of a request on `base`.
async fn send(
    base: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    headers: &[(&str, String)],
    body: Option<Value>,
) -> (u16, Value) {
    let c = client();
    let url = format!("{base}{path}");
    let mut req = match method {
        "POST" => c.post(url),
        _ => c.get(url),
    };
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    for (k, v) in headers {
        req = req.header(*k, v.as_str());
    }
    if let Some(b) = body {
        req = req
            .header("content-type", "application/json")
            .body(b.to_string());
    }
    let res = req.send().await.expect("request");
    let status = res.status().as_u16();
    let bytes = res.bytes().await.expect("body");
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// The operator's pending approvals.
async fn pending(base: &str) -> Vec<Value> {
    let (status, body) = send(base, "GET", "/approvals", Some(OPERATOR), &[], None).await;
    assert_eq!(status, 200, "{body}");
    body["approvals"].as_array().expect("approvals").clone()
}

/// Every operator route, as `(method, path, body)`.
fn operator_routes() -> Vec<(&'static str, &'static str, Option<Value>)> {
    let rpc = json!({"jsonrpc": "2.0", "id": 1, "method": "system.status"});
    let decision = json!({"session_id": "ses-x", "action_id": "a1"});
    vec![
        ("GET", "/approvals", None),
        ("POST", "/approvals/approve", Some(decision.clone())),
        ("POST", "/approvals/deny", Some(decision)),
        ("POST", "/rpc", Some(rpc)),
        ("GET", "/events", None),
        ("GET", "/frame", None),
        ("GET", "/whoami", None),
    ]
}

/// The guards of the channel: 401 without a valid token, 403 for the agent's token and
/// for a foreign Host or Origin, `/mcp` not served, `/health` and the console public.
async fn check_guards(base: &str, agent_token: &str) {
    let port = base.rsplit(':').next().expect("port").to_string();
    for (method, path, body) in operator_routes() {
        for token in [None, Some("wrong-token"), Some(&OPERATOR[1..])] {
            let (status, err) = send(base, method, path, token, &[], body.clone()).await;
            assert_eq!(status, 401, "{method} {path} with {token:?}: {err}");
            assert_eq!(err["error"], "unauthorized", "{err}");
        }
        let (status, err) = send(base, method, path, Some(agent_token), &[], body.clone()).await;
        assert_eq!(status, 403, "{method} {path} with the agent token: {err}");
        assert_eq!(err["error"], "forbidden", "{err}");
        assert!(
            err["message"].as_str().unwrap().contains("operator token"),
            "{err}"
        );
    }
    let host = [("host", format!("attacker.example:{port}"))];
    let (status, err) = send(base, "GET", "/approvals", Some(OPERATOR), &host, None).await;
    assert_eq!(
        (status, err["error"].clone()),
        (403, json!("bad_host")),
        "{err}"
    );
    let origin = [("origin", "http://attacker.example".to_string())];
    let (status, err) = send(base, "GET", "/approvals", Some(OPERATOR), &origin, None).await;
    assert_eq!(
        (status, err["error"].clone()),
        (403, json!("bad_origin")),
        "{err}"
    );
    // The agent's endpoint is not here, whoever asks.
    let (status, _) = send(base, "POST", "/mcp", Some(OPERATOR), &[], Some(json!({}))).await;
    assert_eq!(status, 404, "no /mcp on the operator channel");
    let (status, health) = send(base, "GET", "/health", None, &[], None).await;
    assert_eq!(status, 200, "{health}");
    assert_eq!(health["ok"], true);
    let res = client()
        .get(format!("{base}/"))
        .send()
        .await
        .expect("console");
    assert_eq!(res.status().as_u16(), 200);
    let ct = res.headers()["content-type"].to_str().unwrap().to_string();
    assert!(ct.starts_with("text/html"), "{ct}");
    let (status, who) = send(base, "GET", "/whoami", Some(OPERATOR), &[], None).await;
    assert_eq!(
        (status, who["role"].clone()),
        (200, json!("operator")),
        "{who}"
    );
}

/// Reads the channel's `/events` until `needle` appears (the replay ring holds it).
async fn events_contain(base: &str, needle: &str) {
    let mut res = client()
        .get(format!("{base}/events"))
        .bearer_auth(OPERATOR)
        .send()
        .await
        .expect("GET /events");
    assert_eq!(res.status().as_u16(), 200);
    let mut text = String::new();
    while !text.contains(needle) {
        let chunk = tokio::time::timeout(LIMIT, res.chunk())
            .await
            .unwrap_or_else(|_| panic!("no {needle} on /events; got:\n{text}"))
            .expect("read /events")
            .unwrap_or_else(|| panic!("/events ended before {needle}; got:\n{text}"));
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
}

/// The agent previews a `confirm` click and is refused; the operator (only) approves on
/// `operator`; the same execute commits with its postcondition satisfied.
async fn approve_and_commit(a: &Agent, operator: &str, agent_token: &str) {
    let (sid, lid) = session(a).await;
    let (window, submit) = form(a).await;
    let at = now();
    let a1 = click(&window, submit, &sid, &lid, "a1", 0, &at);

    let preview = ok(a, "preview_action", a1.clone()).await;
    assert_eq!(preview["policy"]["decision"], "confirm", "{preview}");
    assert_eq!(preview["blocker"], "approval_required");
    let e = refused(a, "execute_action", a1.clone()).await;
    assert_eq!(e["error"], "approval_required", "{e}");
    assert_eq!(e["details"]["approvalStatus"], "pending", "{e}");

    let list = pending(operator).await;
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0]["sessionId"], sid.as_str());
    assert_eq!(list[0]["actionId"], "a1");
    assert_eq!(list[0]["tool"], "pointer.click");
    assert_eq!(list[0]["argsDigest"], preview["envelope"]["argsDigest"]);

    // Nobody but the operator decides: every guard holds, nothing is decided.
    check_guards(operator, agent_token).await;
    let tools = a.list_all_tools().await.expect("tools/list");
    assert!(
        tools
            .iter()
            .all(|t| !t.name.contains("approv") && !t.name.contains("grant")),
        "no MCP tool approves"
    );
    assert_eq!(pending(operator).await.len(), 1, "nothing was decided");

    let (status, approved) = send(
        operator,
        "POST",
        "/approvals/approve",
        Some(OPERATOR),
        &[],
        Some(json!({"session_id": sid, "action_id": "a1", "args_digest": list[0]["argsDigest"]})),
    )
    .await;
    assert_eq!(status, 200, "{approved}");
    assert_eq!(approved["status"], "approved");
    assert_eq!(approved["grant"]["scope"], "exact_action");
    assert!(pending(operator).await.is_empty());

    let receipt = ok(a, "execute_action", a1).await["receipt"].clone();
    assert_eq!(receipt["status"], "committed", "{receipt}");
    assert_eq!(
        receipt["result"]["verification"]["satisfied"], true,
        "{receipt}"
    );
    events_contain(operator, "governance.approval_resolved").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_the_operator_approves_on_the_channel_and_the_execute_commits() {
    let s = StdioServer::start(confirm_clicks_config(tokens())).await;
    assert!(
        s.operator.starts_with("http://127.0.0.1:"),
        "{}",
        s.operator
    );
    approve_and_commit(&s.agent, &s.operator, AGENT).await;
    // The operator's /rpc reaches the same engine the agent drives.
    let (status, rpc) = send(
        &s.operator,
        "POST",
        "/rpc",
        Some(OPERATOR),
        &[],
        Some(json!({"jsonrpc": "2.0", "id": 7, "method": "system.status"})),
    )
    .await;
    assert_eq!(status, 200, "{rpc}");
    assert_eq!(rpc["result"]["ok"], true, "{rpc}");
    let actions = rpc["result"]["result"]["action_count"].as_u64();
    assert!(actions.is_some_and(|n| n > 0), "the agent's actions: {rpc}");

    let operator = s.operator.clone();
    let (status, stdout, stderr, _dir) = s.close().await;
    assert!(status.success(), "{status:?}; stderr:\n{stderr}");
    // The MCP stream stayed clean: every stdout line is a JSON-RPC 2.0 message, and
    // the console's address (and every log line) went to stderr.
    assert!(!stdout.is_empty());
    for line in &stdout {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("a non-JSON line on stdout ({e}): {line:?}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
    }
    assert!(
        stderr.contains(&format!(
            "computer-control: operator console at {operator}/"
        )),
        "{stderr}"
    );
    assert!(
        !stderr.contains("generated agent token"),
        "both tokens configured: {stderr}"
    );
    assert!(
        !stderr.contains(OPERATOR) && !stderr.contains(AGENT),
        "tokens never on stderr"
    );
}

/// Without an operator token handed in, the channel would admit nobody, and a
/// generated one would be readable by the agent (docs/SECURITY.md): the start fails
/// and says how to hand one in, writing nothing.
#[test]
fn without_an_operator_token_the_channel_does_not_start() {
    for transport in ["mcp", "mcp-http"] {
        let dir = TempDir::new();
        let (code, stdout, stderr) = run(
            &[
                "serve",
                "--transport",
                transport,
                "--platform",
                "virtual",
                "--port",
                "0",
                "--operator-listen",
                "127.0.0.1:0",
            ],
            &dir,
        );
        assert_eq!(code, Some(2), "{transport}: {stderr}");
        assert!(
            stderr.contains("--operator-listen needs an operator token handed in"),
            "{transport}: {stderr}"
        );
        assert!(stdout.is_empty(), "{transport}: {stdout}");
        let written: Vec<_> = std::fs::read_dir(&dir.0)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("computer-control-http-"))
            .collect();
        assert!(written.is_empty(), "{transport}: {written:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_sigterm_stops_the_channel() {
    let mut s = StdioServer::start(confirm_clicks_config(tokens())).await;
    // An operator watching /events must not hold the exit.
    let events = client()
        .get(format!("{}/events", s.operator))
        .bearer_auth(OPERATOR)
        .send()
        .await
        .expect("GET /events");
    assert_eq!(events.status().as_u16(), 200);
    let pid = s.child.id().expect("pid").to_string();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(kill.success());
    let status = tokio::time::timeout(LIMIT, s.child.wait())
        .await
        .expect("exits after SIGTERM")
        .expect("wait");
    assert!(status.success(), "{status:?}; stderr:\n{}", s.stderr_text());
    drop(events);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beside_mcp_http_the_operator_approves_on_its_own_port() {
    let dir = TempDir::new();
    let mut child = command("mcp-http", &dir, &confirm_clicks_config(tokens()))
        .args(["--port", "0", "--operator-listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn computer-control");
    let (stderr, mut rx) = read_stderr(
        &mut child,
        &[
            "computer-control: operator channel listening on ",
            "computer-control: http listening on ",
        ],
    );
    let urls = announced(&mut rx, 2, &stderr).await;
    let (operator, base) = (&urls[0], &urls[1]);
    assert_ne!(operator, base, "two listeners");

    // The agent's port has no operator side, even for the operator token.
    let (status, _) = send(base, "GET", "/approvals", Some(OPERATOR), &[], None).await;
    assert_eq!(status, 404, "no /approvals beside /mcp");
    let a = agent(base, AGENT).await;
    approve_and_commit(&a, operator, AGENT).await;
    a.cancel().await.expect("close the MCP session");

    // SIGTERM stops both listeners and the process exits cleanly.
    let pid = child.id().expect("pid").to_string();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(kill.success());
    let status = tokio::time::timeout(LIMIT, child.wait())
        .await
        .expect("exits after SIGTERM")
        .expect("wait");
    let text = stderr.lock().unwrap().join("\n");
    assert!(status.success(), "{status:?}; stderr:\n{text}");
    assert!(
        text.contains(&format!(
            "computer-control: operator console at {operator}/"
        )),
        "{text}"
    );
}

/// Runs the binary to its end with stdin closed: `(exit code, stdout, stderr)`.
fn run(args: &[&str], dir: &TempDir) -> (Option<i32>, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_computer-control"))
        .args(args)
        .arg("--journal")
        .arg(dir.0.join("journal.db"))
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env("XDG_RUNTIME_DIR", &dir.0)
        .env("XDG_STATE_HOME", &dir.0)
        .stdin(Stdio::null())
        .output()
        .expect("run computer-control");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn operator_listen_is_refused_beside_other_transports() {
    let dir = TempDir::new();
    for transport in ["stdio", "http"] {
        let (code, stdout, stderr) = run(
            &[
                "serve",
                "--transport",
                transport,
                "--platform",
                "virtual",
                "--operator-listen",
                "0",
            ],
            &dir,
        );
        assert_eq!(code, Some(2), "{transport}: {stderr}");
        assert!(
            stderr.contains("--operator-listen is for --transport mcp or mcp-http"),
            "{transport}: {stderr}"
        );
        assert!(stdout.is_empty(), "{stdout}");
    }
}

#[test]
fn bad_operator_listen_addresses_are_refused_with_the_reason() {
    let dir = TempDir::new();
    for (value, why) in [
        ("nonsense", "expected HOST:PORT or PORT"),
        ("127.0.0.1:99999", "is not a port"),
        (":8767", "the host is empty"),
        ("::1:8767", "needs brackets"),
    ] {
        let (code, stdout, stderr) = run(
            &[
                "serve",
                "--transport",
                "mcp",
                "--platform",
                "virtual",
                "--operator-listen",
                value,
            ],
            &dir,
        );
        assert_eq!(code, Some(2), "{value}: {stderr}");
        assert!(
            stderr.contains("--operator-listen") && stderr.contains(why),
            "{value}: {stderr}"
        );
        assert!(stdout.is_empty(), "{value}: {stdout}");
    }
}

#[test]
fn a_busy_operator_port_fails_the_start_before_any_mcp_message() {
    let dir = TempDir::new();
    let busy = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let at = format!("127.0.0.1:{}", busy.local_addr().unwrap().port());
    for transport in ["mcp", "mcp-http"] {
        let (code, stdout, stderr) = run(
            &[
                "serve",
                "--transport",
                transport,
                "--platform",
                "virtual",
                "--port",
                "0",
                "--operator-listen",
                &at,
            ],
            &dir,
        );
        assert_eq!(code, Some(2), "{transport}: {stderr}");
        assert!(
            stderr.contains(&format!("cannot listen on --operator-listen {at}")),
            "{transport}: {stderr}"
        );
        assert!(stdout.is_empty(), "{transport}: {stdout}");
    }
}
