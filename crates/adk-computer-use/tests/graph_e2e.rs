//! The reference graph end to end against the real `computer-control` server over MCP, on
//! its virtual desktop: a click with a postcondition reaches `Verified`, one without
//! reaches `CommittedUnverified`, and a click the policy wants confirmed is approved on the
//! operator channel (`POST /approvals/approve`, operator token) and then reaches
//! `Verified`, once.
#![cfg(all(feature = "mcp", feature = "sqlite"))]

use crate::runtime_support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use adk_computer_use::checkpoint::SqliteCheckpointer;
use adk_computer_use::governed::{RuntimeOptions, ToolCaller};
use adk_computer_use::graph::{
    ComputerUseGraph, Node, OutcomeKind, PlanError, PlanInput, PlannedAction, ResumeInput,
    RunOutcome,
};
use adk_computer_use::mcp::ComputerUseMcpRuntime;
use adk_computer_use::runtime::SystemClock;
use cc_contract::{ActionPostcondition, ApprovalGrant, PolicyVerdict, ReceiptStatus, value_digest};
use runtime_support::{find, observe_form, serve_command, server_binary};
use serde_json::{Map, Value, json};

const AGENT: &str = "graph-e2e-agent-token-0123456789";
const OPERATOR: &str = "graph-e2e-operator-token-0123456789";

/// `serve --transport mcp` over stdio, journal in `dir`.
async fn stdio_runtime(dir: &Path) -> ComputerUseMcpRuntime {
    ComputerUseMcpRuntime::spawn(
        serve_command(&dir.join("journal.db")),
        RuntimeOptions::default(),
    )
    .await
    .expect("spawn and initialize the server")
}

/// `serve --transport http` with both tokens and a rule that makes clicks wait for the
/// operator; killed on drop.
struct HttpServer {
    child: Child,
    base: String,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http_server(dir: &Path) -> HttpServer {
    let config = json!({
        "http": {"token": AGENT, "operator_token": OPERATOR},
        "safety": {"rules": [{"match": {"tool": "pointer.click"}, "effect": "confirm"}]},
    });
    let path = dir.join("config.json");
    std::fs::write(&path, config.to_string()).expect("config");
    let mut child = Command::new(server_binary())
        .args([
            "serve",
            "--transport",
            "http",
            "--port",
            "0",
            "--platform",
            "virtual",
        ])
        .arg("--config")
        .arg(&path)
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env("COMPUTER_CONTROL_LOG", "warn")
        .env("XDG_STATE_HOME", dir)
        .env("XDG_RUNTIME_DIR", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the HTTP server");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let base = loop {
        let line = lines
            .next()
            .expect("the server exited before listening")
            .expect("stderr line");
        if let Some(url) = line.strip_prefix("computer-control: http listening on ") {
            break url.trim().to_owned();
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    HttpServer { child, base }
}

async fn form_window(runtime: &ComputerUseMcpRuntime) -> Value {
    observe_form(runtime.caller()).await.window
}

/// A planner clicking the centre of `(role, name)` in the observed tree, on the form.
fn click_planner(
    window: Value,
    role: &'static str,
    name: &'static str,
    postcondition: Option<ActionPostcondition>,
) -> impl Fn(&PlanInput<'_>) -> Result<PlannedAction, PlanError> + Send + Sync {
    move |input| {
        let tree = input.semantic.tree.as_ref().ok_or("no tree")?;
        let rect = &find(tree, role, name).ok_or("no such element")?["rect"];
        let at = |i: usize| rect[i].as_i64().ok_or("no rect");
        let mut arguments = Map::new();
        arguments.insert("x".into(), json!((at(0)? + at(2)?) / 2));
        arguments.insert("y".into(), json!((at(1)? + at(3)?) / 2));
        let now = time::OffsetDateTime::now_utc();
        Ok(PlannedAction {
            target: Some(input.window_target("virtual", &window, Some(role), now)?),
            postcondition: postcondition.clone(),
            expires_in_ms: Some(120_000),
            ..PlannedAction::new("pointer_click", arguments)
        })
    }
}

fn submitted() -> Option<ActionPostcondition> {
    Some(ActionPostcondition::UiElement {
        role: Some("statusbar".into()),
        label: Some("Status".into()),
        exists: true,
        value_digest: Some(value_digest("Submitted: ")),
    })
}

fn checkpoints(dir: &Path) -> SqliteCheckpointer {
    SqliteCheckpointer::open(dir.join("graph.db")).expect("checkpoints")
}

fn completed(outcome: RunOutcome) -> adk_computer_use::graph::Completion {
    match outcome {
        RunOutcome::Completed(done) => *done,
        other => panic!("expected a completion, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_with_a_postcondition_is_verified_over_mcp() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runtime = stdio_runtime(dir.path()).await;
    let planner = click_planner(form_window(&runtime).await, "button", "Submit", submitted());
    let graph = ComputerUseGraph::new(
        runtime,
        planner,
        checkpoints(dir.path()),
        Arc::new(SystemClock),
    );

    let done = completed(graph.run("e2e-verified").await.expect("runs"));
    assert_eq!(done.receipt.status, ReceiptStatus::Committed);
    assert_eq!(done.result.outcome, OutcomeKind::Verified, "{done:?}");
    assert!(done.verified && done.committed);
    let evidence = done
        .receipt
        .result
        .as_ref()
        .and_then(|r| r.verification.as_ref())
        .expect("evidence in the receipt");
    assert_eq!(evidence.observed_digest, Some(value_digest("Submitted: ")));

    // Lease and reservation given back, once, without error.
    let state = graph.state("e2e-verified").expect("state").expect("some");
    assert_eq!(state.releases.len(), 2, "{:?}", state.releases);
    assert!(
        state.releases.iter().all(|r| r.error.is_none()),
        "{:?}",
        state.releases
    );
    // A second run reports the same receipt and acts no more.
    let again = completed(graph.run("e2e-verified").await.expect("runs"));
    assert_eq!(again.receipt.receipt_id, done.receipt.receipt_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_without_a_postcondition_is_committed_unverified_over_mcp() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runtime = stdio_runtime(dir.path()).await;
    let planner = click_planner(form_window(&runtime).await, "checkbox", "Remember me", None);
    let graph = ComputerUseGraph::new(
        runtime,
        planner,
        checkpoints(dir.path()),
        Arc::new(SystemClock),
    );

    let done = completed(graph.run("e2e-unverified").await.expect("runs"));
    assert_eq!(done.receipt.status, ReceiptStatus::Committed);
    assert_eq!(done.result.outcome, OutcomeKind::CommittedUnverified);
    assert!(!done.verified && done.committed);
    assert!(
        done.result
            .verification_detail
            .as_deref()
            .is_some_and(|d| d.contains("no postcondition")),
        "{:?}",
        done.result
    );
}

/// The operator's approval over HTTP, as the console sends it.
async fn approve(base: &str, session_id: &str, action_id: &str, digest: &str) -> ApprovalGrant {
    let body = json!({"session_id": session_id, "action_id": action_id, "args_digest": digest, "ttl_ms": 120_000});
    // The `rustls` feature leaves reqwest's rustls without a provider: install ring's.
    #[cfg(feature = "rustls")]
    let _ = rustls::crypto::ring::default_provider().install_default();
    let response = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client")
        .post(format!("{base}/approvals/approve"))
        .bearer_auth(OPERATOR)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("approve");
    assert!(response.status().is_success(), "{}", response.status());
    let answer: Value = serde_json::from_str(&response.text().await.expect("body")).expect("json");
    serde_json::from_value(answer["grant"].clone()).expect("a grant")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirmed_click_is_approved_on_the_operator_channel_and_verified() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = http_server(dir.path());
    let mcp = format!("{}/mcp", server.base);
    let connect =
        || ComputerUseMcpRuntime::connect_http(&mcp, Some(AGENT), RuntimeOptions::default());
    let runtime = connect().await.expect("connect");
    let window = form_window(&runtime).await;
    let graph = ComputerUseGraph::new(
        runtime,
        click_planner(window.clone(), "button", "Submit", submitted()),
        checkpoints(dir.path()),
        Arc::new(SystemClock),
    );
    let RunOutcome::Interrupted(request) = graph.run("e2e-approval").await.expect("runs") else {
        panic!("expected the approval interrupt")
    };
    assert_eq!(request.preview.policy.decision, PolicyVerdict::Confirm);
    let env = request.preview.envelope.clone();
    let grant = approve(
        &server.base,
        &env.session_id,
        &env.action_id,
        &env.args_digest,
    )
    .await;
    drop(graph);

    // A new graph (new connection, same checkpoint file) resumes the waiting thread.
    let graph = ComputerUseGraph::new(
        connect().await.expect("reconnect"),
        click_planner(window, "button", "Submit", submitted()),
        checkpoints(dir.path()),
        Arc::new(SystemClock),
    );
    let state = graph.state("e2e-approval").expect("state").expect("some");
    assert_eq!(state.next, Node::Approval);
    let done = completed(
        graph
            .resume("e2e-approval", ResumeInput::exact_grant(grant))
            .await
            .expect("resumes"),
    );
    assert_eq!(done.result.outcome, OutcomeKind::Verified, "{done:?}");
    assert_eq!(done.receipt.action_id, env.action_id);
}

const CHILD: &str = "GRAPH_E2E_CHILD_BASE";
const CHILD_DIR: &str = "GRAPH_E2E_CHILD_DIR";
const RESTART_THREAD: &str = "e2e-restart";

/// Child side of the restart test (does nothing unless started by it): runs the graph
/// against the parent's server until the approval interrupt, says so, waits to be killed.
/// Ignored in the suite, where it would check nothing: the restart test runs it with
/// `--ignored`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the child half of the restart test, run by it"]
async fn child_process() {
    let (Ok(base), Ok(dir)) = (std::env::var(CHILD), std::env::var(CHILD_DIR)) else {
        return;
    };
    let runtime = ComputerUseMcpRuntime::connect_http(
        &format!("{base}/mcp"),
        Some(AGENT),
        RuntimeOptions::default(),
    )
    .await
    .expect("connect");
    let planner = click_planner(form_window(&runtime).await, "button", "Submit", submitted());
    let graph = ComputerUseGraph::new(
        runtime,
        planner,
        checkpoints(Path::new(&dir)),
        Arc::new(SystemClock),
    );
    let outcome = graph.run(RESTART_THREAD).await.expect("runs");
    assert!(matches!(outcome, RunOutcome::Interrupted(_)), "{outcome:?}");
    println!("interrupted");
    loop {
        std::thread::park();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graph_killed_while_waiting_for_approval_resumes_in_another_process_and_acts_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = http_server(dir.path());
    let mut child = Command::new(std::env::current_exe().expect("test executable"))
        .args([
            "--ignored",
            "--exact",
            // This test, by its name in the crate's one test binary.
            "graph_e2e::child_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, &server.base)
        .env(CHILD_DIR, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn the graph process");
    let stdout = child.stdout.take().expect("stdout");
    let interrupted = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .any(|line| line.trim_end().ends_with("interrupted"));
    assert!(interrupted, "the graph process ended before the interrupt");
    // SIGKILL (what `Child::kill` sends on Unix): the graph process dies mid-wait.
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");

    // This process: the operator approves what the checkpoint says is waiting.
    let runtime = ComputerUseMcpRuntime::connect_http(
        &format!("{}/mcp", server.base),
        Some(AGENT),
        RuntimeOptions::default(),
    )
    .await
    .expect("connect");
    let window = form_window(&runtime).await;
    let graph = ComputerUseGraph::new(
        runtime,
        click_planner(window, "button", "Submit", submitted()),
        checkpoints(dir.path()),
        Arc::new(SystemClock),
    );
    let state = graph.state(RESTART_THREAD).expect("state").expect("some");
    assert_eq!(state.next, Node::Approval);
    let preview = state
        .decoded_preview()
        .expect("a preview")
        .expect("decodes");
    let env = preview.envelope;
    let grant = approve(
        &server.base,
        &env.session_id,
        &env.action_id,
        &env.args_digest,
    )
    .await;
    let done = completed(
        graph
            .resume(RESTART_THREAD, ResumeInput::exact_grant(grant))
            .await
            .expect("resumes"),
    );
    assert_eq!(done.result.outcome, OutcomeKind::Verified, "{done:?}");

    // Once: one commit in the session's journal, and another run does not act again.
    let mut args = Map::new();
    args.insert("session_id".into(), json!(env.session_id));
    let events = || async {
        graph
            .runtime()
            .caller()
            .call_tool("get_session_events", args.clone())
            .await
            .expect("events")
            .raw
    };
    assert_eq!(events().await.matches("\"action.committed\"").count(), 1);
    completed(graph.run(RESTART_THREAD).await.expect("runs"));
    assert_eq!(events().await.matches("\"action.committed\"").count(), 1);
}
