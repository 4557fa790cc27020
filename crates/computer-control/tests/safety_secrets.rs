//! Secrets: text typed into password fields never appears in events (requested,
//! started, finished; their arguments and descriptions alike), in `system.status`, in
//! snapshots, nor in the logs, even at trace level.

use crate::common;
use crate::safety_support;

use common::{Out, Server, find_node};
use safety_support::*;
use serde_json::{Value, json};

const TYPED: &str = "Hunter2-typed-secret";
const TABBED: &str = "Tabbed-Secret-77";
const INPUT: &str = "A11y-Input-Secret";
const BATCH: &str = "Batch-Secret-99";
const UNCONFIRMED: &str = "Unconfirmed-Secret-5";
const SECRETS: [&str; 5] = [TYPED, TABBED, INPUT, BATCH, UNCONFIRMED];

fn assert_clean(what: &str, text: &str) {
    for secret in SECRETS {
        assert!(
            !text.contains(secret),
            "{secret} leaked into {what}: {text}"
        );
    }
}

#[test]
fn password_text_never_appears_in_events_status_snapshots_or_logs() {
    let mut s = Server::start_capturing_stderr(None, &[], &[("COMPUTER_CONTROL_LOG", "trace")]);
    s.start_session(json!({"a11y": {"max_name_len": 4096}, "capture": {"default_width": 1920}}));

    // 1. keyboard.type into the password field (clicked): confirmation, then the run.
    s.ok("pointer.click", json!({"x": PASSWORD.0, "y": PASSWORD.1}));
    let (id, _) = parked(&mut s, "keyboard.type", json!({"text": TYPED}));
    let (_, req) = s.wait_event_matching("safety.confirmation_requested", 0, |p| {
        p["request_id"] == id.as_str()
    });
    assert_eq!(req["payload"]["arguments"]["text"], "[redacted]", "{req}");
    // The operator's description of it is redacted the same way, title included.
    let described = &req["payload"]["description"];
    assert_eq!(described["text"], "[redacted]", "{req}");
    assert_eq!(described["title"], "Type “[redacted]”", "{req}");
    let pending = status(&mut s)["pending_confirmation"].clone();
    assert_eq!(pending["arguments"]["text"], "[redacted]", "{pending}");
    assert_eq!(pending["description"]["text"], "[redacted]", "{pending}");
    confirm(&mut s, &id, true);
    let (_, fin) = s.wait_event_matching("action.finished", 0, |p| p["request_id"] == id.as_str());
    assert_eq!(
        fin["payload"]["envelope"]["result"]["chars"],
        TYPED.len(),
        "{fin}"
    );
    let (_, started) =
        s.wait_event_matching("action.started", 0, |p| p["request_id"] == id.as_str());
    assert_eq!(started["payload"]["arguments"]["text"], "[redacted]");
    assert_eq!(started["payload"]["description"]["text"], "[redacted]");

    // 2. From "Name", a tab moves into the password field: what follows it is hidden.
    s.ok("pointer.click", json!({"x": NAME.0, "y": NAME.1}));
    let from = s.events.len();
    s.ok("keyboard.type", json!({"text": format!("alice\t{TABBED}")}));
    let (_, started) =
        s.wait_event_matching("action.started", from, |p| p["tool"] == "keyboard.type");
    assert_eq!(started["payload"]["arguments"]["text"], "alice\t[redacted]");
    assert_eq!(
        started["payload"]["description"]["text"],
        "alice\t[redacted]"
    );
    assert_eq!(name_value(&mut s), "alice");

    // 3. a11y.input into the password node.
    let (snap, pw) = node(&mut s, "edit", "Password");
    let (id, _) = parked(
        &mut s,
        "a11y.input",
        json!({"snapshot_id": snap, "node_id": pw, "text": INPUT}),
    );
    confirm(&mut s, &id, true);
    let (_, fin) = s.wait_event_matching("action.finished", 0, |p| p["request_id"] == id.as_str());
    assert_eq!(fin["payload"]["ok"], true, "{fin}");

    // 4. A confirmed batch that clicks the password field, then types: the text is
    //    hidden in the request (the focus may have moved by then) and in the run.
    configure(
        &mut s,
        json!({"safety": {"rules": [{"match": {"tool": "pointer.click"}, "effect": "confirm"}]}}),
    );
    let (id, _) = parked(
        &mut s,
        "batch.execute",
        json!({"items": [
            {"tool": "pointer.click", "arguments": {"x": PASSWORD.0, "y": PASSWORD.1}},
            {"tool": "keyboard.type", "arguments": {"text": BATCH}}
        ], "gap_ms": 0}),
    );
    let (_, req) = s.wait_event_matching("safety.confirmation_requested", 0, |p| {
        p["request_id"] == id.as_str()
    });
    assert_eq!(
        req["payload"]["arguments"]["items"][1]["arguments"]["text"],
        "[redacted]"
    );
    assert_eq!(
        req["payload"]["description"]["items"][1]["text"], "[redacted]",
        "{req}"
    );
    confirm(&mut s, &id, true);
    let (_, fin) = s.wait_event_matching("action.finished", 0, |p| p["request_id"] == id.as_str());
    assert_eq!(
        fin["payload"]["envelope"]["result"]["status"], "completed",
        "{fin}"
    );
    configure(&mut s, json!({"safety": {"rules": []}}));

    // 5. An unconfirmed batch cannot type into a password field it focused itself.
    s.ok("pointer.click", json!({"x": NAME.0, "y": NAME.1}));
    let r = s.ok(
        "batch.execute",
        json!({"items": [
            {"tool": "pointer.click", "arguments": {"x": PASSWORD.0, "y": PASSWORD.1}},
            {"tool": "keyboard.type", "arguments": {"text": UNCONFIRMED}}
        ], "gap_ms": 0}),
    );
    assert_eq!(r["status"], "aborted", "{r}");
    assert_eq!(r["items"][1]["error"]["code"], "policy_denied", "{r}");

    // 6. Snapshots never carry the password's value, at any level.
    for level in ["skeleton", "standard", "full"] {
        let snap = s.ok("a11y.snapshot", json!({ "level": level }));
        assert_clean("a snapshot", &snap.to_string());
        if let Some(n) = find_node(&snap["tree"], "edit", "Password") {
            assert!(n.get("value").is_none_or(Value::is_null), "{n}");
        }
    }

    // Everything the server wrote: stdout (answers and events) and stderr (logs).
    s.call("session.stop", json!(null));
    let stderr = s.stderr_buffer();
    let (status, lines) = s.finish();
    assert!(status.success());
    for line in &lines {
        match line {
            Out::Json(v) => assert_clean("stdout", &v.to_string()),
            Out::NotJson(t) => assert_clean("stdout", t),
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(100));
    let logs = String::from_utf8_lossy(&stderr.lock().unwrap()).to_string();
    // The logs did record these actions, with their (redacted) arguments.
    assert!(
        logs.contains("keyboard.type"),
        "no trace of the actions: {logs}"
    );
    assert!(logs.contains("[redacted]"), "{logs}");
    assert_clean("the logs", &logs);
}
