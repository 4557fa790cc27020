//! `ComputerUseMcpRuntime` over Streamable HTTP with a bearer token, against the real
//! `computer-control serve --transport mcp-http` on its virtual desktop.
#![cfg(feature = "mcp")]

use crate::runtime_support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};

use adk_computer_use::ComputerUseError;
use adk_computer_use::governed::{GovernedRuntime, RuntimeOptions};
use adk_computer_use::mcp::{ComputerUseMcpRuntime, McpToolClient};
use adk_computer_use::runtime::ComputerUseRuntime;
use runtime_support::scenario;
use runtime_support::{Recording, click_submit, observe_form, server_binary};
use serde_json::json;

const AGENT: &str = "adk-agent-token-0123456789abcdef0123456789ab";
const AGENT_B: &str = "adk-agent-b-token-00112233445566778899aabbcc";

/// A running `serve --transport mcp-http --port 0`, killed on drop.
struct Server {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the server with the agent token (host principal `local-user`) and an
/// `http.agents` token acting for `agent-b`; the URL is the line it prints on stderr.
fn start() -> Server {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("config.json");
    let tokens = json!({"http": {"token": AGENT,
                                 "agents": [{"principal_id": "agent-b", "token": AGENT_B}]}});
    std::fs::write(&config, tokens.to_string()).expect("write the config");
    let mut child = std::process::Command::new(server_binary())
        .args([
            "serve",
            "--transport",
            "mcp-http",
            "--port",
            "0",
            "--platform",
            "virtual",
        ])
        .args(["--principal-id", "local-user", "--journal"])
        .arg(dir.path().join("journal.db"))
        .arg("--config")
        .arg(&config)
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env_remove("COMPUTER_CONTROL_PRINCIPAL")
        .env_remove("COMPUTER_CONTROL_JOURNAL")
        .env("COMPUTER_CONTROL_LOG", "warn")
        .env("XDG_RUNTIME_DIR", dir.path())
        .env("XDG_STATE_HOME", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn computer-control");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    // The server prints its endpoint once it listens; stderr ends if it dies first.
    let url = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(url) = line.strip_prefix("computer-control: mcp endpoint at ") {
                    break url.trim().to_string();
                }
            }
            _ => panic!("the server exited before listening"),
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Server {
        child,
        url,
        _dir: dir,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn governed_click_over_streamable_http_commits_a_verified_receipt() {
    let server = start();
    let client = McpToolClient::connect_http(&server.url, Some(AGENT))
        .await
        .expect("connect with the agent token");
    let rt = GovernedRuntime::with_caller(Recording::new(client), RuntimeOptions::default());
    scenario::governed_click_commits_a_verified_receipt(&rt).await;
    scenario::altered_envelope_is_refused_before_any_call(&rt).await;
    scenario::runtime_errors_keep_their_code(&rt).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_decides_the_principal_of_the_envelope() {
    let server = start();
    let rt =
        ComputerUseMcpRuntime::connect_http(&server.url, Some(AGENT_B), RuntimeOptions::default())
            .await
            .expect("connect with the agents token");
    let session_id = rt.start_session(None).await.expect("session");
    let form = observe_form(rt.caller()).await;
    let record = rt
        .preview_action(&click_submit(&form, &session_id, "act-b"))
        .await
        .expect("preview");
    assert_eq!(
        record.preview().expect("preview").envelope.principal_id,
        "agent-b"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_or_wrong_token_is_a_connect_error() {
    let server = start();
    for token in [None, Some("not-the-token-0000000000000000000000000000")] {
        let err = McpToolClient::connect_http(&server.url, token)
            .await
            .expect_err("refused");
        assert!(
            matches!(
                err,
                ComputerUseError::Runtime {
                    operation: "connect",
                    code: None,
                    ..
                }
            ),
            "{err:?}"
        );
    }
}
