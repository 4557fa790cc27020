//! A governed click, end to end: starts `computer-control` on its virtual desktop, runs the
//! whole reference graph for a click on the sign-in form's Submit button with a
//! postcondition (the status bar then reads `Submitted: `), approves the action on the
//! operator channel when the policy asks, and prints the outcome.
//!
//! ```sh
//! cargo build -p computer-control
//! cargo run -p computer-control-client --example governed_click            # policy asks: approve
//! cargo run -p computer-control-client --example governed_click -- --allow # policy allows
//! ```
//!
//! The server runs with `--transport http`: the agent side (this graph) speaks MCP on
//! `/mcp` with the agent token, and the approval is given with the operator token on
//! `POST /approvals/approve`, as a human would from the console. The binary is taken from
//! `$COMPUTER_CONTROL_BIN`, else `target/debug/computer-control` of this workspace.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use adk_computer_use::checkpoint::SqliteCheckpointer;
use adk_computer_use::governed::{RuntimeOptions, ToolCaller};
use adk_computer_use::graph::{
    ComputerUseGraph, PlanError, PlanInput, PlannedAction, ResumeInput, RunOutcome,
};
use adk_computer_use::mcp::ComputerUseMcpRuntime;
use adk_computer_use::runtime::SystemClock;
use cc_contract::{ActionPostcondition, ApprovalGrant, value_digest};
use serde_json::{Map, Value, json};

const AGENT_TOKEN: &str = "example-agent-token-0123456789";
const OPERATOR_TOKEN: &str = "example-operator-token-0123456789";

type Error = Box<dyn std::error::Error>;

/// The server process, killed when dropped.
struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn server_binary() -> Result<PathBuf, Error> {
    let binary = match std::env::var_os("COMPUTER_CONTROL_BIN") {
        Some(path) => PathBuf::from(path),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/debug/computer-control"),
    };
    if binary.exists() {
        Ok(binary)
    } else {
        Err(format!(
            "no computer-control binary at {} (run `cargo build -p computer-control` or set COMPUTER_CONTROL_BIN)",
            binary.display()
        )
        .into())
    }
}

/// `computer-control serve --transport http --port 0 --platform virtual`, with both tokens
/// and, unless `allow`, a rule that makes every click wait for the operator.
fn start_server(dir: &Path, allow: bool) -> Result<Server, Error> {
    let mut config = json!({"http": {"token": AGENT_TOKEN, "operator_token": OPERATOR_TOKEN}});
    if !allow {
        config["safety"] =
            json!({"rules": [{"match": {"tool": "pointer.click"}, "effect": "confirm"}]});
    }
    let config_path = dir.join("config.json");
    std::fs::write(&config_path, config.to_string())?;
    let mut child = Command::new(server_binary()?)
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
        .arg(&config_path)
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env("COMPUTER_CONTROL_LOG", "warn")
        .env("XDG_STATE_HOME", dir)
        .env("XDG_RUNTIME_DIR", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let mut lines = BufReader::new(stderr).lines();
    let base = loop {
        match lines.next() {
            Some(line) => {
                let line = line?;
                if let Some(url) = line.strip_prefix("computer-control: http listening on ") {
                    break url.trim().to_owned();
                }
            }
            None => return Err("the server exited before listening".into()),
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    Ok(Server { child, base })
}

/// The sign-in form's window, as `window_list` reports it.
async fn form_window(runtime: &ComputerUseMcpRuntime) -> Result<Value, Error> {
    let list = runtime
        .caller()
        .call_tool("window_list", Map::new())
        .await?;
    list.structured["windows"]
        .as_array()
        .and_then(|ws| ws.iter().find(|w| w["app_id"] == "cc-form"))
        .cloned()
        .ok_or_else(|| "no sign-in form on the desktop".into())
}

fn find<'a>(node: &'a Value, role: &str, name: &str) -> Option<&'a Value> {
    if let Some(items) = node.as_array() {
        return items.iter().find_map(|c| find(c, role, name));
    }
    if node["role"] == role && node["name"] == name {
        return Some(node);
    }
    node["children"]
        .as_array()?
        .iter()
        .find_map(|c| find(c, role, name))
}

/// The planner: finds Submit in the accessibility tree the graph observed and proposes a
/// click on its centre, on the form window, with the status bar's expected value as the
/// postcondition.
fn plan_submit(window: &Value, input: &PlanInput<'_>) -> Result<PlannedAction, PlanError> {
    let tree = input
        .semantic
        .tree
        .as_ref()
        .ok_or("no accessibility tree")?;
    let rect = find(tree, "button", "Submit").ok_or("no Submit button")?["rect"].clone();
    let at = |i: usize| rect[i].as_i64().ok_or("Submit has no rect");
    let (x, y) = ((at(0)? + at(2)?) / 2, (at(1)? + at(3)?) / 2);
    let mut arguments = Map::new();
    arguments.insert("x".into(), json!(x));
    arguments.insert("y".into(), json!(y));
    let now = time::OffsetDateTime::now_utc();
    Ok(PlannedAction {
        target: Some(input.window_target("virtual", window, Some("button"), now)?),
        postcondition: Some(ActionPostcondition::UiElement {
            role: Some("statusbar".into()),
            label: Some("Status".into()),
            exists: true,
            value_digest: Some(value_digest("Submitted: ")),
        }),
        expires_in_ms: Some(120_000),
        ..PlannedAction::new("pointer_click", arguments)
    })
}

/// The operator's approval: `POST /approvals/approve` with the operator token.
async fn approve(
    base: &str,
    session_id: &str,
    action_id: &str,
    digest: &str,
) -> Result<ApprovalGrant, Error> {
    let body = json!({"session_id": session_id, "action_id": action_id, "args_digest": digest, "ttl_ms": 120_000});
    let response = reqwest::Client::builder()
        .no_proxy()
        .build()?
        .post(format!("{base}/approvals/approve"))
        .bearer_auth(OPERATOR_TOKEN)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await?;
    let status = response.status();
    let answer: Value = serde_json::from_str(&response.text().await?)?;
    if !status.is_success() {
        return Err(
            format!("the operator channel refused the approval ({status}): {answer}").into(),
        );
    }
    Ok(serde_json::from_value(answer["grant"].clone())?)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let allow = std::env::args().any(|a| a == "--allow");
    let dir = tempfile::tempdir()?;
    let server = start_server(dir.path(), allow)?;
    println!("computer-control at {}", server.base);

    let runtime = ComputerUseMcpRuntime::connect_http(
        &format!("{}/mcp", server.base),
        Some(AGENT_TOKEN),
        RuntimeOptions::default(),
    )
    .await?;
    let window = form_window(&runtime).await?;
    let planner = move |input: &PlanInput<'_>| plan_submit(&window, input);
    let checkpoints = SqliteCheckpointer::open(dir.path().join("graph.db"))?;
    let graph = ComputerUseGraph::new(runtime, planner, checkpoints, Arc::new(SystemClock))
        .with_objective("submit the sign-in form");

    let thread = "governed-click";
    let mut outcome = graph.run(thread).await?;
    if let RunOutcome::Interrupted(request) = &outcome {
        let env = &request.preview.envelope;
        println!(
            "approval required ({}): {} on {}; approving on the operator channel",
            request.preview.policy.reasons.join("; "),
            env.tool,
            env.target.as_ref().map_or("?", |t| t.app_id.as_str()),
        );
        let grant = approve(
            &server.base,
            &env.session_id,
            &env.action_id,
            &env.args_digest,
        )
        .await?;
        outcome = graph
            .resume(thread, ResumeInput::exact_grant(grant))
            .await?;
    }
    match outcome {
        RunOutcome::Completed(done) => {
            println!(
                "receipt {} {}: verified={} committed={}",
                done.receipt.receipt_id, done.receipt.status, done.verified, done.committed
            );
            if let Some(detail) = &done.result.verification_detail {
                println!("verificationDetail: {detail}");
            }
            println!("outcome: {:?}", done.result.outcome);
        }
        RunOutcome::Blocked(blocked) => println!("blocked: {blocked:?}"),
        RunOutcome::Interrupted(_) => println!("still waiting for approval"),
    }
    drop(server);
    Ok(())
}
