//! Test support for MCP over Streamable HTTP: spawns the real binary with
//! `--transport mcp-http` or `--transport http` on port 0, a private journal and three
//! tokens (agent, operator, and an `http.agents` token with its own principal), and
//! learns the `/mcp` URL from the line the server prints on stderr.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

pub use cc_test_kit::TempDir;

/// `http.token`: acts for the host's principal (`--principal-id`).
pub const AGENT: &str = "mcp-agent-token-0123456789abcdef0123456789";
/// `http.operator_token`.
pub const OPERATOR: &str = "mcp-operator-token-fedcba9876543210fedcba";
/// An `http.agents` token acting for [`AGENT_B`].
pub const AGENT_B_TOKEN: &str = "mcp-agent-b-token-00112233445566778899aabb";
/// The principal of [`AGENT_B_TOKEN`].
pub const AGENT_B: &str = "agent-b";
/// The host's principal the server is started with.
pub const HOST_PRINCIPAL: &str = "local-user";

/// The config with the three tokens.
pub fn tokens_config() -> Value {
    json!({"http": {"token": AGENT, "operator_token": OPERATOR,
                    "agents": [{"principal_id": AGENT_B, "token": AGENT_B_TOKEN}]}})
}

/// A running server.
pub struct McpHttpServer {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub mcp_url: String,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    pub stderr: Arc<Mutex<Vec<String>>>,
    /// Journal, config and token files; shared by the servers restarted on it.
    pub dir: Arc<TempDir>,
}

impl McpHttpServer {
    /// `serve --transport <transport>` (`mcp-http` or `http`) with [`tokens_config`].
    pub fn start(transport: &str) -> McpHttpServer {
        McpHttpServer::start_in(transport, Arc::new(TempDir::new()), &tokens_config())
    }

    /// `serve --transport <transport>` with `config`, its journal and files in `dir`: a
    /// server started again on the same `dir` recovers the same journal.
    pub fn start_in(transport: &str, dir: Arc<TempDir>, config: &Value) -> McpHttpServer {
        let config_path = dir.0.join("config.json");
        std::fs::write(&config_path, config.to_string()).expect("write the config");
        let config = config_path;
        let mut child = serve_command(transport, &dir, &config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn computer-control");
        let stderr = child.stderr.take().expect("stderr");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix("computer-control: mcp endpoint at ") {
                    let _ = tx.send(url.trim().to_string());
                }
                sink.lock().unwrap().push(line);
            }
        });
        let Ok(mcp_url) = rx.recv_timeout(Duration::from_secs(60)) else {
            let _ = child.kill();
            panic!(
                "the server did not start; stderr:\n{}",
                lines.lock().unwrap().join("\n")
            );
        };
        let base = mcp_url.trim_end_matches("/mcp").to_string();
        McpHttpServer {
            child,
            mcp_url,
            base,
            stderr: lines,
            dir,
        }
    }

    /// SIGKILL; the exit status, which says the process died of it.
    pub fn sigkill(&mut self) -> std::process::ExitStatus {
        let _ = self.child.kill();
        self.child.wait().expect("wait for the killed server")
    }

    /// Everything the server wrote on stderr so far.
    pub fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }
}

/// The command line of a server on port 0 with a private journal, token file
/// directory and state directory.
pub fn serve_command(transport: &str, dir: &TempDir, config: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_computer-control"));
    cmd.args(["serve", "--transport", transport, "--port", "0"])
        .args(["--platform", "virtual", "--principal-id", HOST_PRINCIPAL])
        .arg("--journal")
        .arg(dir.0.join("journal.db"))
        .arg("--config")
        .arg(config)
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env_remove("COMPUTER_CONTROL_PRINCIPAL")
        .env_remove("COMPUTER_CONTROL_JOURNAL")
        .env("COMPUTER_CONTROL_LOG", "warn")
        .env("XDG_RUNTIME_DIR", &dir.0)
        .env("XDG_STATE_HOME", &dir.0);
    cmd
}

impl Drop for McpHttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `program args` in `cwd` to the end; `(success, stdout, stderr)`. Output is
/// read on threads so neither pipe can fill up and block the child.
pub fn run_to_end(program: &str, args: &[&str], cwd: &std::path::Path) -> (bool, String, String) {
    let out = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
