//! The governed kernel end to end: real SQLite files in temp dirs, the virtual desktop
//! underneath, every action performed through the engine.

use crate::support;

use std::path::Path;
use std::time::Duration;

use cc_contract::{ErrorCode, format_timestamp, value_digest};
use cc_desktop::VirtualDesktop;
use cc_engine::Engine;
use cc_engine::config::ConfigStack;
use cc_governance::{Governance, verify_chain};
use serde_json::{Value, json};
use support::{Form, err, form, ok};

fn engine() -> Engine {
    let e = Engine::new(Box::new(VirtualDesktop::default()), ConfigStack::new());
    assert!(e.start(&json!({})).ok);
    e
}

fn kernel(engine: &Engine, db: &Path, principal: &str) -> Governance {
    Governance::open(engine.clone(), db, principal).expect("open the journal")
}

fn target(f: &Form) -> Value {
    let w = &f.window;
    json!({
        "platform": "virtual",
        "appId": "cc-form",
        "pid": w["pid"],
        "windowId": w["id"],
        "bounds": w["rect"],
        "observationId": "obs-1",
        "confidence": 1,
        "capturedAt": format_timestamp(time::OffsetDateTime::now_utc()),
    })
}

fn start(g: &Governance) -> String {
    ok(g, "start_session", json!({"objective": "sign in"}))["session"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string()
}

fn lease(g: &Governance, session: &str, budget: u32, ttl_ms: u64) -> String {
    ok(
        g,
        "acquire_control_lease",
        json!({"session_id": session, "kind": "exclusive", "mode": "foreground",
               "ttl_ms": ttl_ms, "action_budget": budget, "app_ids": ["cc-form"]}),
    )["lease"]["leaseId"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A governed click on Submit whose postcondition is the status bar's new value.
fn click(f: &Form, session: &str, lease: &str, action: &str) -> Value {
    json!({
        "session_id": session,
        "action_id": action,
        "lease_id": lease,
        "tool": "pointer_click",
        "arguments": {"x": f.submit.0, "y": f.submit.1},
        "mode": "foreground",
        "target": target(f),
        "postcondition": {"kind": "ui_element", "role": "statusbar", "label": "Status",
                          "exists": true, "valueDigest": value_digest("Submitted: ")},
    })
}

fn events(g: &Governance, session: &str) -> Value {
    ok(g, "get_session_events", json!({"session_id": session}))
}

fn chain_verifies(g: &Governance, session: &str) -> Vec<String> {
    let ev = events(g, session);
    assert_eq!(ev["schema_uri"], "computer://audit/schema");
    assert_eq!(
        ev["schema_digest"],
        cc_governance::audit::audit_schema_digest().as_str()
    );
    assert_eq!(g.verify_session_chain(session).unwrap(), Ok(()));
    let list: Vec<cc_contract::SessionEvent> =
        serde_json::from_value(ev["events"].clone()).unwrap();
    assert!(verify_chain(&list).is_ok());
    list.into_iter().map(|e| e.event_type).collect()
}

#[test]
fn a_governed_click_commits_with_a_verified_postcondition_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"), "local-user");
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s, 5, 60_000);

    let a1 = click(&f, &s, &l, "a1");
    let preview = ok(&g, "preview_action", a1.clone());
    assert_eq!(preview["policy"]["decision"], "allow", "{preview}");
    assert_eq!(preview["executable"], true);
    let digest = preview["envelope"]["argsDigest"]
        .as_str()
        .unwrap()
        .to_string();

    let receipt = ok(&g, "execute_action", a1.clone())["receipt"].clone();
    assert_eq!(receipt["status"], "committed", "{receipt}");
    assert_eq!(receipt["actionDigest"], digest.as_str());
    let v = &receipt["result"]["verification"];
    assert_eq!(v["satisfied"], true);
    assert_eq!(v["method"], "accessibility");
    assert_eq!(v["observedDigest"], value_digest("Submitted: ").as_str());

    // Replay: same key and digest, the stored receipt, no second effect or budget unit.
    let again = ok(&g, "execute_action", a1.clone())["receipt"].clone();
    assert_eq!(again, receipt);
    // Same id, other arguments: action_id_conflict.
    let mut other = a1.clone();
    other["arguments"]["x"] = json!(f.submit.0 + 1);
    assert_eq!(
        err(&g, "execute_action", other).error,
        ErrorCode::ActionIdConflict
    );

    // A window postcondition, read back from the window list.
    let mut w = click(&f, &s, &l, "a2");
    w["postcondition"] = json!({"kind": "window", "windowId": f.window["id"], "exists": true});
    let r2 = ok(&g, "execute_action", w)["receipt"].clone();
    assert_eq!(r2["status"], "committed");
    assert_eq!(r2["result"]["verification"]["method"], "window_list");
    assert_eq!(r2["result"]["verification"]["satisfied"], true);

    let types = chain_verifies(&g, &s);
    assert_eq!(
        types.iter().filter(|t| *t == "action.committed").count(),
        2,
        "{types:?}"
    );
    assert_eq!(types.iter().filter(|t| *t == "action.started").count(), 2);
}

#[test]
fn an_unsatisfied_postcondition_is_indeterminate_and_revokes_the_lease() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"), "local-user");
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s, 5, 60_000);
    let mut a = click(&f, &s, &l, "a1");
    a["postcondition"]["valueDigest"] = json!(value_digest("something else"));
    let r = ok(&g, "execute_action", a)["receipt"].clone();
    assert_eq!(r["status"], "indeterminate", "{r}");
    assert_eq!(r["result"]["verification"]["satisfied"], false);
    assert_eq!(r["error"]["code"], "indeterminate");
    let next = err(&g, "execute_action", click(&f, &s, &l, "a2"));
    assert_eq!(next.error, ErrorCode::LeaseRevoked);
    assert_eq!(next.details["reason"], "action_indeterminate");
}

#[test]
fn an_exhausted_budget_refuses_the_next_action() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"), "local-user");
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s, 1, 60_000);
    assert_eq!(
        ok(&g, "execute_action", click(&f, &s, &l, "a1"))["receipt"].clone()["status"],
        "committed"
    );
    // The spent lease is revoked with the action (upstream semantics), so the next
    // action is refused and the desktop is free for a new lease.
    let e2 = err(&g, "execute_action", click(&f, &s, &l, "a2"));
    assert_eq!(e2.error, ErrorCode::LeaseRevoked);
    assert_eq!(e2.details["reason"], "action_budget_exhausted");
    let types = chain_verifies(&g, &s);
    let committed = types.iter().position(|t| t == "action.committed");
    let revoked = types.iter().position(|t| t == "lease.revoked");
    assert!(committed < revoked && revoked.is_some(), "{types:?}");
    lease(&g, &s, 1, 60_000);
}

#[test]
fn a_budget_left_keeps_the_lease_active() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"), "local-user");
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s, 2, 60_000);
    ok(&g, "execute_action", click(&f, &s, &l, "a1"));
    assert!(!chain_verifies(&g, &s).contains(&"lease.revoked".to_string()));
    ok(&g, "execute_action", click(&f, &s, &l, "a2"));
    assert!(chain_verifies(&g, &s).contains(&"lease.revoked".to_string()));
}

#[test]
fn an_expired_lease_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let clock = std::sync::Arc::new(cc_engine::clock::ManualClock::new());
    let g = Governance::open_with_clock(
        e.clone(),
        &dir.path().join("j.db"),
        "local-user",
        clock.clone(),
    )
    .unwrap();
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s, 5, 1_000);
    // The kernel's clock moves; nothing sleeps.
    clock.advance(Duration::from_millis(1_000));
    assert_eq!(
        err(&g, "execute_action", click(&f, &s, &l, "a1")).error,
        ErrorCode::LeaseExpired
    );
    assert!(chain_verifies(&g, &s).contains(&"lease.expired".to_string()));
}

#[test]
fn foreign_principals_and_sessions_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let e = engine();
    let g = kernel(&e, &db, "local-user");
    let mallory = g.for_principal("mallory").unwrap();
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s, 5, 60_000);
    for (tool, args) in [
        ("get_session", json!({"session_id": s})),
        ("stop_session", json!({"session_id": s})),
        (
            "release_control_lease",
            json!({"session_id": s, "lease_id": l}),
        ),
        ("get_session_events", json!({"session_id": s})),
        ("preview_action", click(&f, &s, &l, "m1")),
        ("execute_action", click(&f, &s, &l, "m1")),
    ] {
        assert_eq!(
            err(&mallory, tool, args).error,
            ErrorCode::PrincipalMismatch,
            "{tool}"
        );
    }
    // Mallory's own session cannot use local-user's lease.
    let ms = start(&mallory);
    assert_eq!(
        err(&mallory, "execute_action", click(&f, &ms, &l, "m2")).error,
        ErrorCode::PrincipalMismatch
    );
    // The same principal, another session: the lease is not that session's.
    let s2 = start(&g);
    assert_eq!(
        err(&g, "execute_action", click(&f, &s2, &l, "x1")).error,
        ErrorCode::LeaseConflict
    );
    assert_eq!(
        err(&g, "get_session", json!({"session_id": "ses-nope"})).error,
        ErrorCode::SessionNotFound
    );
}

#[test]
fn a_restart_on_the_same_database_keeps_everything_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let e = engine();
    let f = form(&e);
    let (s, l, a1, receipt, head) = {
        let g = kernel(&e, &db, "local-user");
        let s = start(&g);
        let l = lease(&g, &s, 5, 60_000);
        let a1 = click(&f, &s, &l, "a1");
        let receipt = ok(&g, "execute_action", a1.clone())["receipt"].clone();
        assert_eq!(receipt["status"], "committed");
        let head = events(&g, &s)["next_sequence"].clone();
        (s, l, a1, receipt, head)
    };
    // A second handle on the same journal sees everything acknowledged, and opening
    // it changes nothing.
    let g = kernel(&e, &db, "local-user");
    let session = ok(&g, "get_session", json!({"session_id": s}))["session"].clone();
    assert_eq!(session["state"], "running");
    assert_eq!(
        ok(&g, "execute_action", a1.clone())["receipt"].clone(),
        receipt
    );
    assert_eq!(
        events(&g, &s)["next_sequence"],
        head,
        "a replay adds no event"
    );
    chain_verifies(&g, &s);

    // Startup recovery: the session is paused (recovered), the lease revoked.
    let recovery = g.recover().unwrap();
    assert_eq!(recovery.paused_session_ids, std::slice::from_ref(&s));
    assert_eq!(recovery.revoked_lease_ids, std::slice::from_ref(&l));
    let session = ok(&g, "get_session", json!({"session_id": s}))["session"].clone();
    assert_eq!(session["state"], "paused_by_policy");
    assert_eq!(session["recovered"], true);
    // The receipt still replays; a new action waits for resume and a new lease.
    assert_eq!(ok(&g, "execute_action", a1)["receipt"].clone(), receipt);
    assert_eq!(
        err(&g, "execute_action", click(&f, &s, &l, "a2")).error,
        ErrorCode::SessionNotRunning
    );
    ok(&g, "resume_session", json!({"session_id": s}));
    let revoked = err(&g, "execute_action", click(&f, &s, &l, "a2"));
    assert_eq!(revoked.details["reason"], "server_restart");
    let l2 = lease(&g, &s, 5, 60_000);
    let r2 = ok(&g, "execute_action", click(&f, &s, &l2, "a2"))["receipt"].clone();
    assert_eq!(r2["status"], "committed");
    assert!(chain_verifies(&g, &s).contains(&"session.recovered".to_string()));
}

#[test]
fn a_stored_pending_receipt_is_indeterminate_never_retried() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let e = engine();
    let f = form(&e);
    let g = kernel(&e, &db, "local-user");
    let s = start(&g);
    let l = lease(&g, &s, 5, 60_000);
    let a1 = click(&f, &s, &l, "a1");
    ok(&g, "execute_action", a1.clone());
    drop(g);
    // A crash mid-flight leaves the receipt pending.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE receipts SET data = json_set(data, '$.status', 'pending') WHERE action_id = 'a1'",
        [],
    )
    .unwrap();
    drop(conn);
    let g = kernel(&e, &db, "local-user");
    assert_eq!(
        err(&g, "execute_action", a1.clone()).error,
        ErrorCode::Indeterminate
    );
    // Startup recovery settles it: the receipt is now `indeterminate` in the journal,
    // with its event, and a retry replays it instead of acting.
    let recovery = g.recover().unwrap();
    assert_eq!(recovery.indeterminate_receipt_ids.len(), 1);
    // A replayed receipt that did not commit answers `{error: <status>, receipt}`.
    let refused = err(&g, "execute_action", a1);
    assert_eq!(refused.error, ErrorCode::Indeterminate);
    let replay = serde_json::to_value(refused.receipt.expect("the stored receipt")).unwrap();
    assert_eq!(replay["status"], "indeterminate", "{replay}");
    assert_eq!(replay["error"]["code"], "indeterminate");
    assert_eq!(
        replay["receiptId"].as_str(),
        Some(recovery.indeterminate_receipt_ids[0].as_str())
    );
    assert!(chain_verifies(&g, &s).contains(&"action.indeterminate".to_string()));
    assert!(g.recover().unwrap().indeterminate_receipt_ids.is_empty());
}

#[test]
fn blockers_come_in_spec_order() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"), "local-user");
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s, 5, 60_000);
    let blocker = |mut a: Value, mode: &str, no_target: bool| {
        a["mode"] = json!(mode);
        if no_target {
            a.as_object_mut().unwrap().remove("target");
        }
        ok(&g, "preview_action", a)["blocker"].clone()
    };
    assert_eq!(
        blocker(click(&f, &s, &l, "p"), "shadow", true),
        "shadow_mutation"
    );
    assert_eq!(
        blocker(click(&f, &s, &l, "p"), "background", true),
        "foreground_required"
    );
    assert_eq!(
        blocker(click(&f, &s, &l, "p"), "foreground", true),
        "target_evidence_required"
    );
    // A win combo is high risk: confirm, blocked until an operator approves it.
    let combo = json!({"session_id": s, "action_id": "c1", "tool": "keyboard.combo",
                       "arguments": {"keys": ["win", "r"]}, "mode": "foreground",
                       "target": target(&f)});
    let p = ok(&g, "preview_action", combo.clone());
    assert_eq!(p["policy"]["decision"], "confirm", "{p}");
    assert_eq!(p["blocker"], "approval_required");
    assert_eq!(p["envelope"]["actionClass"], "privilege_change");
    let mut exec = combo.clone();
    exec["lease_id"] = json!(l);
    assert_eq!(
        err(&g, "execute_action", exec).error,
        ErrorCode::ApprovalRequired
    );
    let preview: cc_contract::ActionPreview = serde_json::from_value(p).unwrap();
    let grant = g.approve_preview(&preview, 60_000).unwrap();
    let p2 = ok(&g, "preview_action", combo);
    assert_eq!(p2["policy"]["grantId"], grant.grant_id.as_str());
    assert_eq!(p2["executable"], true);
    // An observation is allowed in shadow mode and needs no target.
    let look = json!({"session_id": s, "tool": "window_list", "mode": "shadow"});
    let p3 = ok(&g, "preview_action", look);
    assert_eq!(p3["executable"], true, "{p3}");
    assert_eq!(p3["envelope"]["actionClass"], "observe");
}

/// The preview judges over the session's live config, as the gate does: a `confirm`
/// rule added at runtime with `session.configure` changes the preview's decision (and
/// its policy digest, so an earlier grant would not carry over), and the gate agrees.
#[test]
fn a_runtime_confirm_rule_changes_the_preview_decision() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"), "local-user");
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s, 5, 60_000);
    let before = ok(&g, "preview_action", click(&f, &s, &l, "r1"));
    assert_eq!(before["policy"]["decision"], "allow", "{before}");
    let rule = json!({"safety": {"rules": [
        {"match": {"tool": "pointer.click"}, "effect": "confirm"}
    ]}});
    assert!(e.configure(&json!({ "patch": rule })).ok);
    let after = ok(&g, "preview_action", click(&f, &s, &l, "r2"));
    assert_eq!(after["policy"]["decision"], "confirm", "{after}");
    assert_eq!(after["blocker"], "approval_required");
    assert!(
        after["policy"]["reasons"][0]
            .as_str()
            .unwrap()
            .contains("rule 0 requires confirmation"),
        "{after}"
    );
    assert_ne!(
        after["policy"]["policyDigest"], before["policy"]["policyDigest"],
        "the digest is the live policy's"
    );
    // The gate, asked directly, decides the same.
    let gate = e.call_tool("pointer.click", &json!({"x": f.submit.0, "y": f.submit.1}));
    let r = gate.result.unwrap();
    assert_eq!(r["status"], "awaiting_confirmation", "{r}");
    let id = r["request_id"].clone();
    assert!(e.confirm(&json!({"request_id": id, "approve": false})).ok);
    // A runtime deny rule is previewed as a deny, naming its reason.
    let deny = json!({"safety": {"rules": [
        {"match": {"tool": "pointer.*"}, "effect": "deny"}
    ]}});
    assert!(e.configure(&json!({ "patch": deny })).ok);
    let denied = ok(&g, "preview_action", click(&f, &s, &l, "r3"));
    assert_eq!(denied["policy"]["decision"], "deny", "{denied}");
    assert_eq!(denied["blocker"], "policy_denied");
}

#[test]
fn emergency_stop_revokes_every_lease_and_engages_the_panic() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"), "local-user");
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s, 5, 60_000);
    let out = ok(&g, "emergency_stop", json!({"reason": "test"}));
    assert_eq!(out["panicEngaged"], true);
    assert_eq!(out["revokedLeaseIds"], json!([l]));
    let refused = err(&g, "execute_action", click(&f, &s, &l, "a1"));
    assert_eq!(refused.error, ErrorCode::LeaseRevoked);
    assert_eq!(refused.details["reason"], "emergency_stop");
    assert_eq!(e.status().result.unwrap()["state"], "stopped");
    chain_verifies(&g, &s);
}

/// The governed stop is the server's: governed sessions stopped and started after it,
/// and the engine's own session ended and restarted, all stay stopped until a person
/// releases it (here the host, in process).
#[test]
fn the_governed_stop_outlives_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"), "local-user");
    let f = form(&e);
    let s = start(&g);
    ok(&g, "emergency_stop", json!({"reason": "test"}));
    ok(&g, "stop_session", json!({"session_id": s}));
    assert!(e.stop().ok);
    assert_eq!(e.start(&json!({})).result.unwrap()["state"], "stopped");
    let s2 = start(&g);
    let l = lease(&g, &s2, 5, 60_000);
    let refused = err(&g, "execute_action", click(&f, &s2, &l, "a1"));
    assert_eq!(refused.error, ErrorCode::Interrupted, "{refused:?}");
    assert_eq!(e.status().result.unwrap()["state"], "stopped");
    assert!(e.panic(&json!({"on": false})).ok);
    assert_eq!(e.status().result.unwrap()["state"], "ready");
}

#[test]
fn reservations_conflict_across_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"), "local-user");
    let a = start(&g);
    let b = start(&g);
    let i1 = json!({"session_id": a, "intent_id": "i1", "app_id": "cc-form", "ttl_ms": 60_000});
    let r = ok(&g, "reserve_target", i1.clone())["reservation"].clone();
    let replay = ok(&g, "reserve_target", i1)["reservation"].clone();
    assert_eq!(replay["reservationId"], r["reservationId"]);
    assert_eq!(
        err(
            &g,
            "reserve_target",
            json!({"session_id": b, "intent_id": "i2", "app_id": "CC-FORM", "ttl_ms": 60_000})
        )
        .error,
        ErrorCode::TargetConflict
    );
    ok(
        &g,
        "release_target_reservation",
        json!({"session_id": a, "reservation_id": r["reservationId"]}),
    );
    ok(
        &g,
        "reserve_target",
        json!({"session_id": b, "intent_id": "i2", "app_id": "cc-form", "ttl_ms": 60_000}),
    );
    assert_eq!(
        err(&g, "acquire_control_lease", json!({"session_id": a, "kind": "exclusive", "mode": "background", "ttl_ms": 1000, "action_budget": 1})).error,
        ErrorCode::ForegroundRequired
    );
    assert_eq!(
        err(&g, "acquire_control_lease", json!({"session_id": a, "kind": "cooperative", "mode": "foreground", "ttl_ms": 300_001, "action_budget": 1})).error,
        ErrorCode::InvalidArguments
    );
}

#[test]
fn a_granted_confirm_action_runs_without_a_second_engine_confirmation() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"), "local-user");
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s, 5, 60_000);
    let t = target(&f);
    let combo = |id: &str| {
        json!({"session_id": s, "action_id": id, "lease_id": l, "tool": "keyboard_combo",
               "arguments": {"keys": ["win", "r"]}, "mode": "foreground", "target": t})
    };
    let preview: cc_contract::ActionPreview =
        serde_json::from_value(ok(&g, "preview_action", combo("c1"))).unwrap();
    g.approve_preview(&preview, 60_000).unwrap();
    // The operator's grant is the human approval: the engine does not ask again.
    let r = ok(&g, "execute_action", combo("c1"))["receipt"].clone();
    assert_eq!(r["status"], "committed", "{r}");
    assert_eq!(e.status().result.unwrap()["state"], "ready");
    let types = chain_verifies(&g, &s);
    for t in ["action.approved", "approval.consumed", "action.committed"] {
        assert!(types.contains(&t.to_string()), "{t}: {types:?}");
    }
}

/// A shadow observation a rule makes `confirm` runs once an operator approved it: it
/// needs no lease, but it still consumes the grant, and the engine is told a person
/// approved it (it does not ask again, and the grant cannot be used twice).
#[test]
fn an_approved_shadow_observation_runs_and_consumes_its_grant() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"), "local-user");
    form(&e);
    let s = start(&g);
    let rule = json!({"safety": {"rules": [
        {"match": {"tool": "window.list"}, "effect": "confirm"}
    ]}});
    assert!(e.configure(&json!({ "patch": rule })).ok);
    let look = |id: &str| json!({"session_id": s, "action_id": id, "tool": "window_list", "mode": "shadow"});
    assert_eq!(
        err(&g, "execute_action", look("w1")).error,
        ErrorCode::ApprovalRequired
    );
    let preview: cc_contract::ActionPreview =
        serde_json::from_value(ok(&g, "preview_action", look("w1"))).unwrap();
    g.approve_preview(&preview, 60_000).unwrap();
    let r = ok(&g, "execute_action", look("w1"))["receipt"].clone();
    assert_eq!(r["status"], "committed", "{r}");
    assert!(r["result"]["windows"].is_array(), "{r}");
    assert_eq!(
        e.status().result.unwrap()["state"],
        "ready",
        "no engine confirmation waits"
    );
    let types = chain_verifies(&g, &s);
    for t in ["action.approved", "approval.consumed", "action.observed"] {
        assert!(types.contains(&t.to_string()), "{t}: {types:?}");
    }
    // The grant was used once: the same observation under another id needs a new one.
    assert_eq!(
        err(&g, "execute_action", look("w2")).error,
        ErrorCode::ApprovalRequired
    );
}

#[test]
fn target_revalidation_and_boundaries() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"), "local-user");
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s, 5, 60_000);
    // Moved by more than 4 px.
    let mut moved = click(&f, &s, &l, "m1");
    moved["target"]["bounds"]["x"] = json!(f.window["rect"]["x"].as_i64().unwrap() + 5);
    assert_eq!(
        err(&g, "execute_action", moved).error,
        ErrorCode::StaleTarget
    );
    // Evidence older than 30 s.
    let mut old = click(&f, &s, &l, "m2");
    let then = time::OffsetDateTime::now_utc() - time::Duration::seconds(31);
    old["target"]["capturedAt"] = json!(format_timestamp(then));
    assert_eq!(err(&g, "execute_action", old).error, ErrorCode::StaleTarget);
    // A window that does not exist.
    let mut gone = click(&f, &s, &l, "m3");
    gone["target"]["windowId"] = json!(12345);
    assert_eq!(
        err(&g, "execute_action", gone).error,
        ErrorCode::StaleTarget
    );
    // Refusals before the effect leave no receipt: the id is still free.
    assert_eq!(
        ok(&g, "execute_action", click(&f, &s, &l, "m1"))["receipt"].clone()["status"],
        "committed"
    );
    // An exclusive lease excludes every other lease until it is released.
    let coop = json!({"session_id": s, "kind": "cooperative", "mode": "foreground",
                      "ttl_ms": 60_000, "action_budget": 5, "app_ids": ["cc-list"]});
    assert_eq!(
        err(&g, "acquire_control_lease", coop.clone()).error,
        ErrorCode::LeaseConflict
    );
    ok(
        &g,
        "release_control_lease",
        json!({"session_id": s, "lease_id": l}),
    );
    assert_eq!(
        err(&g, "execute_action", click(&f, &s, &l, "m4")).error,
        ErrorCode::LeaseNotActive
    );
    // A target outside the lease's boundaries revokes the lease.
    let bounded = ok(&g, "acquire_control_lease", coop)["lease"].clone();
    let escape = err(
        &g,
        "execute_action",
        click(&f, &s, bounded["leaseId"].as_str().unwrap(), "b1"),
    );
    assert_eq!(escape.error, ErrorCode::LeaseRevoked);
    assert_eq!(escape.details["reason"], "target_boundary_escape");
    // The revocation was committed with the refusal.
    let again = err(
        &g,
        "execute_action",
        click(&f, &s, bounded["leaseId"].as_str().unwrap(), "b2"),
    );
    assert_eq!(again.details["reason"], "target_boundary_escape");
}

/// Evidence without a `windowId` is still checked against the live window list: the
/// app must still have a window, its pid must still run and own one of them, the title
/// digest and the bounds must match one of them. Each refusal is `stale_target` with
/// nothing consumed; the evidence that holds commits.
#[test]
fn target_revalidation_without_a_window_id_meets_the_live_desktop() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"), "local-user");
    let f = form(&e);
    let s = start(&g);
    // No boundaries: a target in another app must reach revalidation, not revoke it.
    let l = ok(
        &g,
        "acquire_control_lease",
        json!({"session_id": s, "kind": "exclusive", "mode": "foreground",
               "ttl_ms": 60_000, "action_budget": 1}),
    )["lease"]["leaseId"]
        .as_str()
        .unwrap()
        .to_string();
    let windowless = |action: &str, change: &dyn Fn(&mut Value)| {
        let mut c = click(&f, &s, &l, action);
        c["target"].as_object_mut().unwrap().remove("windowId");
        c["target"]["windowTitleDigest"] = json!(value_digest("Sign in"));
        change(&mut c["target"]);
        c
    };
    let refused = |action: &str, change: &dyn Fn(&mut Value), says: &str| {
        let r = err(&g, "execute_action", windowless(action, change));
        assert_eq!(r.error, ErrorCode::StaleTarget, "{action}: {r:?}");
        assert!(r.message.contains(says), "{action}: {}", r.message);
    };
    refused(
        "no-window",
        &|t| t["appId"] = json!("cc-closed"),
        "the target app has no window",
    );
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let exited = child.id();
    child.wait().unwrap();
    refused(
        "dead-pid",
        &|t| t["pid"] = json!(exited),
        "no longer running",
    );
    // Process 1 runs, but none of the form's windows is its own.
    refused(
        "other-pid",
        &|t| t["pid"] = json!(1),
        "belongs to its process",
    );
    refused(
        "title",
        &|t| t["windowTitleDigest"] = json!(value_digest("Another title")),
        "observed title",
    );
    refused(
        "moved",
        &|t| t["bounds"]["x"] = json!(f.window["rect"]["x"].as_i64().unwrap() + 50),
        "where it was observed",
    );
    // The live desktop agrees with the evidence (the title digest in either spelling).
    let r = ok(
        &g,
        "execute_action",
        windowless("holds", &|t| {
            t["windowTitleDigest"] = json!(cc_contract::sha256_hex("Sign in"))
        }),
    )["receipt"]
        .clone();
    assert_eq!(r["status"], "committed", "{r}");
}

#[test]
fn filesystem_and_process_postconditions_are_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"), "local-user");
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s, 5, 60_000);
    let file = dir.path().join("out.txt");
    std::fs::write(&file, "hello").unwrap();
    let mut fs = click(&f, &s, &l, "f1");
    fs["postcondition"] = json!({"kind": "filesystem", "path": file.to_str().unwrap(),
                                 "exists": true, "contentDigest": value_digest("hello")});
    let r = ok(&g, "execute_action", fs)["receipt"].clone();
    assert_eq!(r["status"], "committed", "{r}");
    assert_eq!(r["result"]["verification"]["method"], "file_content");
    assert_eq!(
        r["result"]["verification"]["observedDigest"],
        value_digest("hello").as_str()
    );
    // A process that has exited.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    let mut proc = click(&f, &s, &l, "p1");
    proc["postcondition"] = json!({"kind": "process", "pid": pid, "running": false});
    let r = ok(&g, "execute_action", proc)["receipt"].clone();
    assert_eq!(r["status"], "committed", "{r}");
    assert_eq!(r["result"]["verification"]["method"], "process_table");
}

#[test]
fn the_event_export_pages_like_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"), "local-user");
    let s = start(&g);
    ok(&g, "pause_session", json!({"session_id": s}));
    ok(&g, "resume_session", json!({"session_id": s}));
    ok(&g, "stop_session", json!({"session_id": s}));
    let page = ok(
        &g,
        "get_session_events",
        json!({"session_id": s, "after_sequence": 0, "limit": 2}),
    );
    assert_eq!(page["events"].as_array().unwrap().len(), 2);
    assert_eq!(page["next_sequence"], 2);
    let keys: Vec<&String> = page.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["schema_uri", "schema_digest", "events", "next_sequence"]
    );
    let rest = ok(
        &g,
        "get_session_events",
        json!({"session_id": s, "after_sequence": 2, "limit": 100}),
    );
    let seqs: Vec<u64> = rest["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["sequence"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, [3, 4]);
    assert_eq!(rest["next_sequence"], 4);
    assert_eq!(
        err(
            &g,
            "get_session_events",
            json!({"session_id": s, "limit": 1001})
        )
        .error,
        ErrorCode::InvalidArguments
    );
    assert_eq!(
        err(&g, "resume_session", json!({"session_id": s})).error,
        ErrorCode::SessionNotRunning
    );
}
