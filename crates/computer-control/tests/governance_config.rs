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
