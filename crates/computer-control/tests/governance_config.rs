//! `governance.principal_id` and `governance.journal` from the config file, the
//! `--principal-id` / `--journal` flags over them, and a bad principal refused at
//! start with a clear error (the real binary, MCP over stdio).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(60);

/// `start_session` over MCP stdio against a server started with `config` and `flags`;
/// the session's principal.
async fn principal_of_new_session(dir: &Path, config: Value, flags: &[&str]) -> String {
    let path = dir.join("config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_computer-control")).configure(|c| {
        c.args([
            "serve",
            "--transport",
            "mcp",
            "--platform",
            "virtual",
            "--config",
        ])
        .arg(&path)
        .args(flags)
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env_remove("COMPUTER_CONTROL_PRINCIPAL")
        .env_remove("COMPUTER_CONTROL_JOURNAL")
        .env("XDG_STATE_HOME", dir)
        .env("COMPUTER_CONTROL_LOG", "warn");
    });
    let c = tokio::time::timeout(TIMEOUT, ().serve(TokioChildProcess::new(cmd).unwrap()))
        .await
        .expect("initialize in time")
        .expect("initialize");
    let params = CallToolRequestParams::new("start_session")
        .with_arguments(json!({}).as_object().cloned().unwrap());
    let r = tokio::time::timeout(TIMEOUT, c.call_tool(params))
        .await
        .expect("in time")
        .expect("a result");
    let _ = c.cancel().await;
    let s = r.structured_content.expect("structured");
    s["session"]["principalId"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_principal_and_journal_come_from_config_and_flags_override_them() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("from-config.db");
    let config =
        json!({"governance": {"principal_id": "alice", "journal": journal.to_str().unwrap()}});
    assert_eq!(
        principal_of_new_session(dir.path(), config.clone(), &[]).await,
        "alice"
    );
    assert!(journal.is_file(), "the configured journal was used");
    let flagged = dir.path().join("from-flag.db");
    let principal = principal_of_new_session(
        dir.path(),
        config,
        &[
            "--principal-id",
            "bob",
            "--journal",
            flagged.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(principal, "bob", "--principal-id overrides the config");
    assert!(flagged.is_file(), "--journal overrides the config");
    // The default.
    assert_eq!(
        principal_of_new_session(dir.path(), json!({}), &[]).await,
        "local-user"
    );
}

#[test]
fn a_bad_principal_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let bad_config = dir.path().join("bad.json");
    std::fs::write(
        &bad_config,
        r#"{"governance": {"principal_id": " padded"}}"#,
    )
    .unwrap();
    for (flags, needle) in [
        (
            vec!["--config", bad_config.to_str().unwrap()],
            "governance.principal_id",
        ),
        (vec!["--principal-id", ""], "governance.principal_id"),
        (vec!["--principal-id", "a\tb"], "control characters"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_computer-control"))
            .args(["serve", "--transport", "mcp", "--platform", "virtual"])
            .args(&flags)
            .env_remove("COMPUTER_CONTROL_CONFIG")
            .env_remove("COMPUTER_CONTROL_PRINCIPAL")
            .env("XDG_STATE_HOME", dir.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{flags:?} started");
        assert!(stderr.contains(needle), "{flags:?}: {stderr}");
    }
}

/// One server per journal: a second server on a journal in use refuses to start (it
/// would otherwise recover the journal under the first one's feet: revoke its leases,
/// settle its in-flight receipts), says who holds it, and the first keeps serving.
#[test]
fn a_second_server_on_the_same_journal_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("shared.db");
    let serve = |stdin: std::process::Stdio| {
        Command::new(env!("CARGO_BIN_EXE_computer-control"))
            .args(["serve", "--transport", "mcp", "--platform", "virtual"])
            .arg("--journal")
            .arg(&journal)
            .env_remove("COMPUTER_CONTROL_CONFIG")
            .env("XDG_STATE_HOME", dir.path())
            .stdin(stdin)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    // The first server holds the journal while its stdin stays open.
    let mut first = serve(std::process::Stdio::piped());
    let lock = dir.path().join("shared.db.lock");
    let pid = first.id().to_string();
    let deadline = std::time::Instant::now() + TIMEOUT;
    while std::fs::read_to_string(&lock).ok().as_deref() != Some(pid.as_str()) {
        assert!(
            std::time::Instant::now() < deadline,
            "the first server never took the lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = serve(std::process::Stdio::null())
        .wait_with_output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        !second.status.success(),
        "the second server started: {stderr}"
    );
    assert!(
        stderr.contains(&format!("in use by process {pid}")),
        "{stderr}"
    );
    assert!(
        first.try_wait().unwrap().is_none(),
        "the first server kept serving"
    );
    // Closing the first server's stdin ends it (before any MCP initialize: an error
    // exit, which is not what this test is about) and frees the journal.
    drop(first.stdin.take());
    first.wait().unwrap();
    // A new server takes the journal and gets as far as waiting for its MCP client.
    let third = serve(std::process::Stdio::null())
        .wait_with_output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&third.stderr);
    assert!(!stderr.contains("in use"), "{stderr}");
    assert!(stderr.contains("MCP initialize"), "{stderr}");
}
