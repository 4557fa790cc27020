//! Every driver error path, provoked through the real server by the fault-injecting
//! driver (`COMPUTER_CONTROL_FAULTS`, compiled in by the `fault-injection` feature
//! the test build turns on): `backend_unavailable`, `driver_failed`, `timeout` ("it
//! may still have executed"), JSON-RPC `-32603` for a panic inside the driver, a key
//! that fails in the middle of a combo (every key already down comes back up), and a
//! governed action whose engine fails after the effect may have happened (receipt
//! `indeterminate`, lease revoked, a retry never acts). After each, the server keeps
//! serving.
// Always true in this package's test build (its dev-dependency on itself turns the
// feature on); the guard keeps the file compiling should that ever change.
#![cfg(feature = "fault-injection")]

use crate::common;
use crate::governed_http_support;

use std::time::Duration;

use common::Server;
use rmcp::ServiceExt;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

fn faulty(spec: &str, config: Option<Value>) -> Server {
    let mut s = Server::start_env(config, &[], &[("COMPUTER_CONTROL_FAULTS", spec)]);
    s.start_session(json!({}));
    s
}

/// The server still acts and answers after a fault.
fn still_serving(s: &mut Server) {
    s.ok("pointer.move", json!({"x": 3, "y": 3}));
    let st = s.status();
    assert_eq!(st["held"], json!({"keys": [], "buttons": []}), "{st}");
}

#[test]
fn an_unavailable_backend_and_a_failed_call_are_their_codes() {
    let mut s = faulty("capture@1=unavailable,pointer_move@1=failed", None);
    let env = s.fails(
        "screen.capture",
        json!({"scale": 0.1}),
        "backend_unavailable",
    );
    assert!(
        env["message"].as_str().unwrap().contains("injected"),
        "{env}"
    );
    s.ok("screen.capture", json!({"scale": 0.1}));
    s.fails("pointer.move", json!({"x": 1, "y": 1}), "driver_failed");
    still_serving(&mut s);
}

/// The clipboard and launching fail with the driver's codes, nothing half done: a
/// failed write leaves the clipboard as it was.
#[test]
fn clipboard_and_launch_failures_are_their_codes() {
    let mut s = faulty(
        "clipboard_read@1=unavailable,clipboard_write@2=failed,launch@1=failed",
        Some(json!({"apps": {"launch_allowed": ["cc-form"]}})),
    );
    s.fails("clipboard.read", json!({}), "backend_unavailable");
    s.ok("clipboard.write", json!({"text": "kept"}));
    s.fails("clipboard.write", json!({"text": "lost"}), "driver_failed");
    assert_eq!(s.ok("clipboard.read", json!({}))["text"], "kept");
    s.fails("app.launch", json!({"app": "cc-form"}), "driver_failed");
    s.ok("app.launch", json!({"app": "cc-form"}));
    still_serving(&mut s);
}

#[test]
fn a_panic_inside_the_driver_is_an_internal_error_and_the_server_goes_on() {
    let mut s = faulty("key@1=panic", None);
    let r = s.request(
        "tools.call",
        json!({"tool": "keyboard.press", "arguments": {"key": "a"}}),
    );
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("may have executed"),
        "{r}"
    );
    // The worker survived the panic: the same tool works now.
    s.ok("keyboard.press", json!({"key": "a"}));
    still_serving(&mut s);
}

#[test]
fn a_key_failing_in_the_middle_of_a_combo_releases_the_keys_already_down() {
    let mut s = faulty("key@3=failed", None);
    let err = s.fails(
        "keyboard.combo",
        json!({"keys": ["ctrl", "shift", "a"]}),
        "driver_failed",
    );
    assert!(err["message"].as_str().unwrap().contains("key #3"), "{err}");
    still_serving(&mut s);
}

#[test]
fn an_action_that_outlasts_its_wait_is_a_timeout_that_may_have_executed() {
    // The engine waits `runtime.max_wait_ms` plus 60 s for the worker: with 0, a
    // driver call hanging 61 s outlasts the wait.
    let mut s = faulty(
        "pointer_move@1=hang:61000",
        Some(json!({"runtime": {"max_wait_ms": 0}})),
    );
    // Longer than the test client's usual wait: read the answer in slices.
    let id = s.send(
        "tools.call",
        json!({"tool": "pointer.move", "arguments": {"x": 9, "y": 9}}),
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let r = loop {
        let got = s.quiet_for(Duration::from_secs(2));
        if let Some(r) = got.into_iter().find(|v| v["id"] == json!(id)) {
            break r;
        }
        assert!(std::time::Instant::now() < deadline, "no answer");
    };
    let env = &r["result"];
    assert_eq!(env["error"]["code"], "timeout", "{r}");
    assert!(
        env["error"]["message"]
            .as_str()
            .unwrap()
            .contains("may still have executed"),
        "{r}"
    );
    // Once the hung call returns, the worker takes the next action.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let env = s.tool("pointer.move", json!({"x": 4, "y": 4}));
        if env["ok"] == true {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{env}");
        std::thread::sleep(Duration::from_millis(200));
    }
    still_serving(&mut s);
}

async fn mcp_client(journal: &std::path::Path, faults: &str) -> RunningService<RoleClient, ()> {
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_computer-control")).configure(|c| {
        c.args([
            "serve",
            "--transport",
            "mcp",
            "--platform",
            "virtual",
            "--journal",
        ])
        .arg(journal)
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env_remove("COMPUTER_CONTROL_PRINCIPAL")
        .env("COMPUTER_CONTROL_FAULTS", faults)
        .env("COMPUTER_CONTROL_LOG", "warn");
    });
    let transport = TokioChildProcess::new(cmd).expect("spawn the server");
    tokio::time::timeout(Duration::from_secs(60), ().serve(transport))
        .await
        .expect("initialize in time")
        .expect("initialize")
}

/// The Name edit's value, read back through a plain snapshot.
async fn name_value(c: &RunningService<RoleClient, ()>) -> String {
    let snap = governed_http_support::ok(c, "a11y_snapshot", json!({"level": "full"})).await;
    governed_http_support::find(&snap["tree"], "edit", "Name").expect("Name")["value"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_governed_action_failing_after_its_effect_is_indeterminate_and_never_retried() {
    use governed_http_support::ok;
    let dir = tempfile::tempdir().unwrap();
    // The third character typed fails: two of them reached the form.
    let c = mcp_client(&dir.path().join("journal.db"), "type_char@3=failed").await;
    let windows = ok(&c, "window_list", json!({})).await;
    let form = windows["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["app_id"] == "cc-form")
        .unwrap()
        .clone();
    let snap = ok(
        &c,
        "a11y_snapshot",
        json!({"window": form["id"], "level": "full"}),
    )
    .await;
    let name = governed_http_support::find(&snap["tree"], "edit", "Name").unwrap();
    let r = &name["rect"];
    let (x, y) = (
        (r[0].as_i64().unwrap() + r[2].as_i64().unwrap()) / 2,
        (r[1].as_i64().unwrap() + r[3].as_i64().unwrap()) / 2,
    );
    ok(&c, "pointer_click", json!({"x": x, "y": y})).await;

    let session = ok(&c, "start_session", json!({"objective": "type a name"})).await;
    let sid = session["session"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let lease = ok(
        &c,
        "acquire_control_lease",
        json!({"session_id": sid, "kind": "exclusive", "mode": "foreground",
               "ttl_ms": 60_000, "action_budget": 5}),
    )
    .await;
    let lid = lease["lease"]["leaseId"].as_str().unwrap().to_string();
    let action = json!({
        "session_id": sid, "action_id": "type-1", "lease_id": lid,
        "tool": "keyboard_type", "arguments": {"text": "abcdef"}, "mode": "foreground",
        "target": {"platform": "virtual", "appId": "cc-form", "pid": form["pid"],
                   "windowId": form["id"], "bounds": form["rect"],
                   "observationId": "obs-1", "confidence": 1,
                   "capturedAt": governed_http_support::now()},
        "postcondition": {"kind": "ui_element", "role": "edit", "label": "Name",
                          "exists": true, "valueDigest": cc_contract::value_digest("abcdef")},
    });
    let p = ok(&c, "preview_action", action.clone()).await;
    assert_eq!(p["executable"], true, "{p}");
    let first = ok(&c, "execute_action", action.clone()).await;
    assert_eq!(first["receipt"]["status"], "indeterminate", "{first}");
    assert_eq!(
        name_value(&c).await,
        "ab",
        "two characters reached the form"
    );
    // The lease is revoked: nothing more runs under it.
    let again = governed_http_support::call(&c, "execute_action", action.clone()).await;
    let again = format!("{again:?}");
    assert!(!again.contains("\"committed\""), "{again}");
    assert_eq!(name_value(&c).await, "ab", "a retry never acts");
    let l = ok(&c, "get_session", json!({"session_id": sid})).await;
    let events = ok(&c, "get_session_events", json!({"session_id": sid})).await;
    let text = events.to_string();
    assert!(text.contains("lease.revoked"), "{l} {text}");
    c.cancel().await.ok();
}
