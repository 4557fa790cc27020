//! `Engine::run_approved`: an operator grant lifts the gate's own confirmation and
//! nothing else (deny rules, panic, standby, `busy` still apply).

use std::sync::Arc;
use std::time::{Duration, Instant};

use cc_desktop::VirtualDesktop;
use cc_protocol::{Envelope, ErrorCode, Event};
use serde_json::{Value, json};

use crate::Engine;
use crate::clock::{ManualClock, SystemClock};
use crate::config::ConfigStack;
use crate::events::Subscription;

/// Every `keyboard.type` needs a confirmation; `rm -rf` is denied outright.
fn rules() -> Value {
    json!({"safety": {"rules": [
        {"match": {"tool": "keyboard.type", "argument": {"name": "text", "matcher": "contains", "value": "rm -rf"}}, "effect": "deny"},
        {"match": {"tool": "keyboard.type"}, "effect": "confirm"}
    ]}})
}

/// A call prepared as a transport prepares it, run with the operator's grant.
fn run_approved(e: &Engine, tool: &str, args: &Value, grant: &str) -> Envelope {
    let call = e.prepare(tool, args).expect("the call validates");
    e.run_approved(call, grant)
}

fn engine(clock: Arc<dyn crate::clock::Clock>, config: Value) -> Engine {
    let e = Engine::with_clock(
        Box::new(VirtualDesktop::default()),
        ConfigStack::new(),
        clock,
    );
    let env = e.start(&config);
    assert!(env.ok, "{env:?}");
    e
}

fn code(env: &Envelope) -> Option<ErrorCode> {
    env.error_code()
}

fn status(e: &Engine, key: &str) -> Value {
    e.status().result.unwrap_or(Value::Null)[key].clone()
}

/// Waits (real time, bounded) for the first event of this type after `seen`.
fn wait_for(sub: &Subscription, kind: &str) -> Event {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(e) = sub.rx.recv_timeout(Duration::from_millis(20))
            && e.kind == kind
        {
            return e.to_event();
        }
    }
    panic!("no {kind} event");
}

fn kinds(sub: &Subscription) -> Vec<String> {
    sub.rx.try_iter().map(|e| e.kind.clone()).collect()
}

#[test]
fn without_approval_a_confirm_action_still_waits() {
    let e = engine(Arc::new(SystemClock), rules());
    let env = e.call_tool("keyboard.type", &json!({"text": "hello"}));
    assert!(env.ok, "{env:?}");
    assert_eq!(
        env.result.as_ref().unwrap()["status"],
        "awaiting_confirmation"
    );
    assert_eq!(status(&e, "state"), "confirming");
}

#[test]
fn an_approved_confirm_action_runs_without_a_second_confirmation() {
    let e = engine(Arc::new(SystemClock), rules());
    let (_, sub) = e.subscribe(1024, None);
    let env = run_approved(&e, "keyboard.type", &json!({"text": "hello"}), "grt-1");
    assert!(env.ok, "{env:?}");
    assert_ne!(
        env.result.as_ref().unwrap()["status"],
        "awaiting_confirmation"
    );
    let started = wait_for(&sub, "action.started");
    assert_eq!(started.payload["grant_id"], "grt-1");
    assert!(started.payload.get("request_id").is_none());
    let finished = wait_for(&sub, "action.finished");
    assert_eq!(finished.payload["grant_id"], "grt-1");
    assert_eq!(finished.payload["ok"], true);
    // The caller got the envelope: the event does not repeat it.
    assert!(finished.payload.get("envelope").is_none());
    assert!(!kinds(&sub).contains(&"safety.confirmation_requested".to_string()));
    assert_eq!(status(&e, "state"), "ready");
}

#[test]
fn a_granted_batch_runs_whole_and_each_item_is_still_gated() {
    let e = engine(Arc::new(SystemClock), rules());
    let (_, sub) = e.subscribe(1024, None);
    let batch = json!({"items": [
        {"tool": "keyboard.type", "arguments": {"text": "a"}},
        {"tool": "keyboard.type", "arguments": {"text": "b"}}
    ]});
    let env = run_approved(&e, "batch.execute", &batch, "grt-b");
    assert!(env.ok, "{env:?}");
    assert_eq!(env.result.as_ref().unwrap()["status"], "completed");
    let started = wait_for(&sub, "action.started");
    assert_eq!(started.payload["tool"], "batch.execute");
    assert_eq!(started.payload["grant_id"], "grt-b");
    // A denied item stops it, grant or not.
    let denied = json!({"items": [
        {"tool": "keyboard.type", "arguments": {"text": "a"}},
        {"tool": "keyboard.type", "arguments": {"text": "rm -rf /"}}
    ]});
    let env = run_approved(&e, "batch.execute", &denied, "grt-c");
    assert_eq!(code(&env), Some(ErrorCode::PolicyDenied), "{env:?}");
}

#[test]
fn a_deny_rule_still_denies_an_approved_action() {
    let e = engine(Arc::new(SystemClock), rules());
    let env = run_approved(&e, "keyboard.type", &json!({"text": "rm -rf /"}), "grt-1");
    assert_eq!(code(&env), Some(ErrorCode::PolicyDenied), "{env:?}");
    // Allowlist mode too.
    let e = engine(
        Arc::new(SystemClock),
        json!({"safety": {"default_rule": "deny"}}),
    );
    let env = run_approved(&e, "pointer.move", &json!({"x": 1, "y": 1}), "grt-1");
    assert_eq!(code(&env), Some(ErrorCode::PolicyDenied), "{env:?}");
}

#[test]
fn the_panic_refuses_an_approved_action_and_pre_empts_it_in_flight() {
    let e = engine(Arc::new(SystemClock), rules());
    assert!(e.panic(&json!({"on": true})).ok);
    let env = run_approved(&e, "keyboard.type", &json!({"text": "hello"}), "grt-1");
    assert_eq!(code(&env), Some(ErrorCode::SafetyStopped), "{env:?}");
    assert!(e.panic(&json!({"on": false})).ok);

    // In flight: the panic comes once the approved action has started.
    let (_, sub) = e.subscribe(1024, None);
    let e2 = e.clone();
    let typing = std::thread::spawn(move || {
        run_approved(
            &e2,
            "keyboard.type",
            &json!({"text": "x".repeat(5000), "interval_ms": 1}),
            "grt-2",
        )
    });
    let started = wait_for(&sub, "action.started");
    assert_eq!(started.payload["grant_id"], "grt-2");
    assert!(e.panic(&json!({"on": true})).ok);
    let env = typing.join().unwrap();
    assert_eq!(code(&env), Some(ErrorCode::SafetyStopped), "{env:?}");
    assert_eq!(
        status(&e, "held"),
        json!({"keys": [], "buttons": []}),
        "nothing stays held"
    );
}

#[test]
fn standby_still_refuses_an_approved_action() {
    let clock = Arc::new(ManualClock::new());
    let mut config = rules();
    config["safety"]["idle_timeout_s"] = json!(10);
    let e = engine(clock.clone(), config);
    let (_, sub) = e.subscribe(1024, None);
    clock.advance(Duration::from_secs(11));
    wait_for(&sub, "session.idle");
    assert_eq!(status(&e, "state"), "standby");
    let env = run_approved(&e, "keyboard.type", &json!({"text": "hello"}), "grt-1");
    assert_eq!(code(&env), Some(ErrorCode::SafetyStandby), "{env:?}");
}

#[test]
fn a_grant_is_busy_while_another_confirmation_is_pending() {
    let e = engine(Arc::new(SystemClock), rules());
    let pending = e.call_tool("keyboard.type", &json!({"text": "other"}));
    assert_eq!(
        pending.result.as_ref().unwrap()["status"],
        "awaiting_confirmation"
    );
    let env = run_approved(&e, "keyboard.type", &json!({"text": "hello"}), "grt-1");
    assert_eq!(code(&env), Some(ErrorCode::Busy), "{env:?}");
    // The engine's own confirmation is untouched.
    assert_eq!(status(&e, "state"), "confirming");
}

#[test]
fn no_method_carries_an_approval() {
    let e = engine(Arc::new(SystemClock), rules());
    // `tools.call` takes `tool` and `arguments` only: an approval field is refused.
    let env = e
        .call_method(
            "tools.call",
            &json!({"tool": "keyboard.type", "arguments": {"text": "hello"}, "grant_id": "grt-1"}),
        )
        .unwrap();
    assert_eq!(code(&env), Some(ErrorCode::InvalidArguments), "{env:?}");
    let env = e
        .call_method(
            "tools.call",
            &json!({"tool": "keyboard.type", "arguments": {"text": "hello"}}),
        )
        .unwrap();
    assert_eq!(
        env.result.as_ref().unwrap()["status"],
        "awaiting_confirmation"
    );
    for m in [
        "tools.call_approved",
        "session.approve",
        "governance.approve",
    ] {
        assert!(e.call_method(m, &json!({})).is_none(), "{m}");
    }
}
