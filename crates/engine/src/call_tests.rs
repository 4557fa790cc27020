//! A caller's own stop and progress ([`crate::CallControl`]) through the engine, on the
//! virtual desktop: what is reported, and what a cancel stops (that call only).

use std::sync::{Arc, Mutex};

use cc_desktop::VirtualDesktop;
use cc_protocol::ErrorCode;
use serde_json::json;

use crate::config::ConfigStack;
use crate::{CallControl, Engine, Progress};

fn started() -> Engine {
    let e = Engine::new(Box::new(VirtualDesktop::default()), ConfigStack::new());
    assert!(e.start(&json!({})).ok);
    e
}

/// A call prepared as a transport prepares it, run with the caller's own control.
fn run_with(
    e: &Engine,
    tool: &str,
    args: &serde_json::Value,
    call: CallControl,
) -> cc_protocol::Envelope {
    let prepared = e.prepare(tool, args).expect("the call validates");
    e.run_with(prepared, call)
}

fn recorded() -> (Arc<Mutex<Vec<Progress>>>, CallControl) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    (
        seen,
        CallControl::reporting(move |p| s.lock().unwrap().push(p)),
    )
}

#[test]
fn typing_reports_each_character_of_the_total() {
    let e = started();
    let (seen, call) = recorded();
    let env = run_with(&e, "keyboard.type", &json!({"text": "abc"}), call);
    assert!(env.ok, "{env:?}");
    assert_eq!(
        *seen.lock().unwrap(),
        [1, 2, 3].map(|chars| Progress::Typed { chars, total: 3 })
    );
}

#[test]
fn a_batch_reports_items_not_what_each_item_reports() {
    let e = started();
    let (seen, call) = recorded();
    let items = json!({"items": [
        {"tool": "keyboard.type", "arguments": {"text": "ab"}},
        {"tool": "pointer.move", "arguments": {"x": 3, "y": 4}}
    ], "gap_ms": 0});
    let env = run_with(&e, "batch.execute", &items, call);
    assert!(env.ok, "{env:?}");
    assert_eq!(
        *seen.lock().unwrap(),
        [1, 2].map(|done| Progress::Items { done, total: 2 })
    );
}

#[test]
fn a_wait_reports_time_waited_of_its_timeout() {
    let e = started();
    let (seen, call) = recorded();
    let env = run_with(
        &e,
        "wait.for",
        &json!({"condition": "appears", "element": {"role": "button", "name": "Never"}, "timeout_ms": 300}),
        call,
    );
    assert_eq!(env.error_code(), Some(ErrorCode::Timeout), "{env:?}");
    let seen = seen.lock().unwrap();
    assert!(!seen.is_empty());
    for p in seen.iter() {
        assert!(
            matches!(p, Progress::Waited { elapsed_ms, timeout_ms: 300 } if *elapsed_ms <= 300),
            "{p:?}"
        );
    }
}

#[test]
fn a_cancel_stops_that_call_alone_and_releases_what_it_held() {
    let e = started();
    // The caller cancels once two characters went out.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let slot: Arc<Mutex<Option<CallControl>>> = Arc::default();
    let (s, c) = (seen.clone(), slot.clone());
    let call = CallControl::reporting(move |p| {
        s.lock().unwrap().push(p.clone());
        if matches!(p, Progress::Typed { chars: 2, .. })
            && let Some(me) = c.lock().unwrap().as_ref()
        {
            me.cancel();
        }
    });
    *slot.lock().unwrap() = Some(call.clone());
    let env = run_with(&e, "keyboard.type", &json!({"text": "abcdef"}), call);
    assert_eq!(env.error_code(), Some(ErrorCode::SafetyStopped), "{env:?}");
    let err = env.error.clone().expect("an error");
    assert_eq!(err.data, Some(json!({"cancelled": true})), "{err:?}");
    assert_eq!(
        seen.lock().unwrap().len(),
        2,
        "nothing typed after the cancel"
    );
    // Not the server's stop: the next call runs, and nothing is held.
    let next = e.call_tool("pointer.position", &json!({}));
    assert!(next.ok, "{next:?}");
    let status = e.status();
    assert_eq!(status.result.expect("status")["state"], "ready");
    // A control cancelled before its job starts never runs.
    let gone = CallControl::default();
    gone.cancel();
    let env = run_with(&e, "keyboard.type", &json!({"text": "x"}), gone);
    assert_eq!(env.error_code(), Some(ErrorCode::SafetyStopped), "{env:?}");
}

#[test]
fn a_vendor_call_waiting_for_a_person_reports_it_and_a_cancel_withdraws_it() {
    let e = started();
    let (_, sub) = e.subscribe(256, Some(u64::MAX));
    let slot: Arc<Mutex<Option<CallControl>>> = Arc::default();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (s, c) = (seen.clone(), slot.clone());
    // The caller gives up as soon as it hears the call waits for a person.
    let call = CallControl::reporting(move |p| {
        s.lock().unwrap().push(p.clone());
        if let (Progress::Confirming { .. }, Some(me)) = (&p, c.lock().unwrap().as_ref()) {
            me.cancel();
        }
    });
    *slot.lock().unwrap() = Some(call.clone());
    let voc = crate::find_vocabulary("openai.computer").expect("openai");
    let args = json!({"type": "computer_call", "call_id": "c1",
        "action": {"type": "move", "x": 10, "y": 10},
        "pending_safety_checks": [{"id": "sc1", "code": "malicious_instructions", "message": "m"}]});
    let env = e.call_vocabulary_with(voc, &args, call);
    assert_eq!(env.error_code(), Some(ErrorCode::SafetyStopped), "{env:?}");
    let seen = seen.lock().unwrap();
    assert!(
        matches!(
            seen.first(),
            Some(Progress::Confirming { waited_ms: 0, .. })
        ),
        "{seen:?}"
    );
    // Withdrawn: denied, nothing pending, and the next call runs.
    let resolved =
        std::iter::from_fn(|| sub.rx.recv_timeout(std::time::Duration::from_secs(10)).ok())
            .find(|ev| ev.kind == "safety.confirmation_resolved")
            .expect("the request was resolved");
    assert_eq!(resolved.payload["approve"], false, "{resolved:?}");
    let status = e.status().result.expect("status");
    assert!(status["pending_confirmation"].is_null(), "{status}");
    assert!(e.call_tool("pointer.position", &json!({})).ok);
}

/// Before `session.start` a known tool is `not_started` even with bad arguments (what a
/// plugin-protocol client checks for); an unknown tool is still `unknown_tool`, and
/// once started the bad arguments are `invalid_arguments`.
#[test]
fn a_call_before_the_session_is_not_started_whatever_its_arguments() {
    let e = Engine::new(Box::new(VirtualDesktop::default()), ConfigStack::new());
    let bad = json!({"x": "left"});
    let code = |env: cc_protocol::Envelope| env.error.expect("refused").code;
    assert_eq!(
        code(e.call_tool("pointer.click", &bad)),
        ErrorCode::NotStarted
    );
    assert_eq!(
        code(e.call_tool("no.such.tool", &bad)),
        ErrorCode::UnknownTool
    );
    assert!(e.start(&json!({})).ok);
    assert_eq!(
        code(e.call_tool("pointer.click", &bad)),
        ErrorCode::InvalidArguments
    );
}
