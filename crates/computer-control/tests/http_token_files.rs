//! The start-up options a desk in a cluster needs (PROTOCOL §1, docs/FLEET.md): the
//! tokens read from files (mounted Secrets) by flag or environment, with an unreadable
//! or empty file stopping the start; and `--allow-host` names the Host check accepts
//! beside the server's own, a malformed one refused before anything is served.

use crate::http_support::{self, Server, TempDir, client};

const AGENT: &str = "agent-from-a-file-0123456789abcdef";
const OPERATOR: &str = "operator-from-a-file-0123456789abcdef";

async fn role(s: &Server, token: &str) -> (u16, String) {
    let r = client()
        .get(s.url("/whoami"))
        .bearer_auth(token)
        .send()
        .await
        .expect("whoami");
    let status = r.status().as_u16();
    let body: serde_json::Value = r.json().await.unwrap_or_default();
    (
        status,
        body["role"].as_str().unwrap_or_default().to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_come_from_files_by_flag_or_environment() {
    let dir = TempDir::new();
    let agent = dir.0.join("agent");
    let operator = dir.0.join("operator");
    // A Secret's file may end in a newline; it is not part of the token.
    std::fs::write(&agent, format!("{AGENT}\n")).unwrap();
    std::fs::write(&operator, format!("  {OPERATOR}\n")).unwrap();
    let (a, o) = (agent.to_str().unwrap(), operator.to_str().unwrap());

    let s = Server::start_with(None, &["--token-file", a, "--operator-token-file", o], &[]);
    assert_eq!(role(&s, AGENT).await, (200, "agent".into()));
    assert_eq!(role(&s, OPERATOR).await, (200, "operator".into()));
    assert!(
        !s.stderr_text().contains("generated agent token"),
        "{}",
        s.stderr_text()
    );
    drop(s);

    let s = Server::start_with(
        None,
        &[],
        &[
            ("COMPUTER_CONTROL_TOKEN_FILE", a),
            ("COMPUTER_CONTROL_OPERATOR_TOKEN_FILE", o),
        ],
    );
    assert_eq!(role(&s, AGENT).await, (200, "agent".into()));
    assert_eq!(role(&s, OPERATOR).await, (200, "operator".into()));
    assert_eq!(role(&s, "anything-else-0123456789").await.0, 401);
}

/// `serve` with `args`, expected to stop at start: its stderr.
fn refused_start(args: &[&str]) -> String {
    let dir = TempDir::new();
    let out = http_support::serve_command(&dir)
        .args(args)
        .output()
        .expect("run computer-control");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_unreadable_or_empty_token_file_stops_the_start() {
    let dir = TempDir::new();
    let missing = dir.0.join("missing");
    let e = refused_start(&["--token-file", missing.to_str().unwrap()]);
    assert!(
        e.contains("--token-file") && e.contains("cannot read it"),
        "{e}"
    );

    let empty = dir.0.join("empty");
    std::fs::write(&empty, "\n  \n").unwrap();
    let e = refused_start(&["--operator-token-file", empty.to_str().unwrap()]);
    assert!(
        e.contains("--operator-token-file") && e.contains("the file is empty"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_hosts_pass_the_host_check_and_no_other() {
    let s = Server::start_with(
        Some(crate::http_support::tokens_config()),
        &["--allow-host", "desk-0.desks", "--allow-host", "10.0.0.7"],
        &[],
    );
    let get = |host: String| client().get(s.url("/health")).header("host", host).send();
    for host in ["desk-0.desks", "DESK-0.desks", "10.0.0.7", "localhost"] {
        let r = get(format!("{host}:{}", s.port)).await.expect("health");
        assert_eq!(r.status().as_u16(), 200, "{host}");
    }
    for host in [
        format!("desk-1.desks:{}", s.port),
        // The right name on another port is still refused.
        format!("desk-0.desks:{}", s.port.wrapping_add(1)),
    ] {
        let r = get(host.clone()).await.expect("health");
        assert_eq!(r.status().as_u16(), 403, "{host}");
    }
}

#[test]
fn a_malformed_allowed_host_stops_the_start() {
    for bad in ["*.desks", "desk-0.desks:8765", "http://desk-0"] {
        let e = refused_start(&["--allow-host", bad]);
        assert!(e.contains("is not a host name or address"), "{bad}: {e}");
    }
}

/// The Windows build under Wine on a private Xvfb (`cc_test_kit::wine`): the agent token
/// it generates is written under `%LOCALAPPDATA%\computer-control` (the user's
/// profile, ACLed to the user), not the temp directory, and the file holds the token.
#[test]
fn the_windows_build_writes_its_generated_token_under_localappdata() {
    use std::io::BufRead;
    let desk = cc_test_kit::wine::WineDesk::start();
    let exe = cc_test_kit::wine::WineDesk::windows_exe(env!("CARGO_BIN_EXE_computer-control"));
    let dir = TempDir::new();
    // Wine's drive Z: is the Unix root.
    let journal = format!("Z:{}", dir.0.join("j.db").display());
    let mut child = desk
        .server(
            &exe,
            &[
                "serve",
                "--transport",
                "http",
                "--port",
                "0",
                "--platform",
                "windows",
                "--journal",
                &journal,
            ],
        )
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("wine64 computer-control.exe serve --transport http");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    let written = loop {
        let Ok(line) = rx.recv_timeout(std::time::Duration::from_secs(60)) else {
            let _ = child.kill();
            panic!("no token file announced; stderr:\n{}", seen.join("\n"));
        };
        if let Some(rest) = line.strip_prefix("computer-control: generated agent token written to ")
        {
            break rest.split(" (").next().unwrap_or_default().to_string();
        }
        seen.push(line);
    };
    let _ = child.kill();
    let _ = child.wait();
    // C:\users\<user>\AppData\Local\computer-control\computer-control-http-….json
    let lower = written.to_ascii_lowercase();
    assert!(
        lower.starts_with("c:\\users\\") && lower.contains("\\appdata\\local\\computer-control\\"),
        "{written}"
    );
    assert!(!lower.contains("\\temp\\"), "{written}");
    let unix = desk
        .prefix
        .join("drive_c")
        .join(written[3..].replace('\\', "/"));
    let body: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&unix).expect("the token file"))
            .expect("the token file is JSON");
    let _ = std::fs::remove_file(&unix);
    assert_eq!(body["agent"].as_str().map(str::len), Some(64), "{body}");
}
