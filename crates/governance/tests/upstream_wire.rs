//! The kernel answers the upstream client's wire: shadow observations without a lease,
//! its observation tool names, snake_case evidence, `{receipt, replay, output}`, the
//! events its evaluator reads, exact-action grants scoped to the action digest,
//! follow-ups, deletion and pruning, and a journaled pause reason. Real SQLite files,
//! the virtual desktop underneath.

use crate::support;

use std::path::Path;

use cc_contract::{ErrorCode, SessionEvent, value_digest};
use cc_desktop::VirtualDesktop;
use cc_engine::Engine;
use cc_engine::config::ConfigStack;
use cc_governance::Governance;
use serde_json::{Value, json};
use support::{Form, err, form, name_field, ok};

fn engine() -> Engine {
    let e = Engine::new(Box::new(VirtualDesktop::default()), ConfigStack::new());
    assert!(e.start(&json!({})).ok);
    e
}

fn kernel(engine: &Engine, db: &Path) -> Governance {
    Governance::open(engine.clone(), db, "local-user").expect("open the journal")
}

fn start(g: &Governance) -> String {
    ok(g, "start_session", json!({}))["session"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string()
}

fn lease(g: &Governance, session: &str, budget: u32) -> String {
    ok(
        g,
        "acquire_control_lease",
        json!({"session_id": session, "kind": "exclusive", "mode": "foreground",
               "ttl_ms": 60_000, "action_budget": budget, "app_ids": ["cc-form"]}),
    )["lease"]["leaseId"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Target evidence as upstream sends it: snake_case, chrono's timestamp form.
fn snake_target(f: &Form) -> Value {
    let w = &f.window;
    let t = time::OffsetDateTime::now_utc();
    json!({
        "platform": "linux", "app_id": "cc-form", "pid": w["pid"], "window_id": w["id"],
        "bounds": w["rect"], "observation_id": "obs-1", "confidence": 1.0,
        "captured_at": format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:09}+00:00",
            t.year(), u8::from(t.month()), t.day(), t.hour(), t.minute(), t.second(),
            t.nanosecond()),
    })
}

fn events(g: &Governance, session: &str) -> Vec<SessionEvent> {
    let page = ok(g, "get_session_events", json!({"session_id": session}));
    serde_json::from_value(page["events"].clone()).unwrap()
}

fn shadow(session: &str, action: &str, tool: &str, arguments: Value) -> Value {
    json!({"session_id": session, "action_id": action, "tool": tool,
           "arguments": arguments, "mode": "shadow", "data_labels": ["private"]})
}

#[test]
fn a_shadow_observation_needs_no_lease_and_answers_receipt_replay_and_output() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"));
    let s = start(&g);
    let r = ok(
        &g,
        "execute_action",
        shadow(&s, "o1", "list_windows", json!({})),
    );
    assert_eq!(r["receipt"]["status"], "committed", "{r}");
    assert_eq!(r["replay"], false);
    let form = r["output"]["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["title"] == "Sign in")
        .expect("the sign-in window")
        .clone();
    assert_eq!(form["bundleId"], "cc-form");
    assert!(form["windowId"].is_u64() && form["pid"].is_u64(), "{form}");
    assert!(form["bounds"]["width"].is_number(), "{form}");
    // Only `bundle_id`'s windows when one is named.
    let only = ok(
        &g,
        "execute_action",
        shadow(&s, "o2", "list_windows", json!({"bundle_id": "cc-list"})),
    );
    assert!(
        only["output"]["windows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| w["bundleId"] == "cc-list")
    );
    // The same action id again: the stored receipt, `replay: true`, no output.
    let again = ok(
        &g,
        "execute_action",
        shadow(&s, "o1", "list_windows", json!({})),
    );
    assert_eq!(again["replay"], true);
    assert_eq!(again["receipt"], r["receipt"]);
    assert!(again.get("output").is_none());
    // An observation journals `action.observed`, never `action.started` (no lease).
    let types: Vec<String> = events(&g, &s).into_iter().map(|e| e.event_type).collect();
    assert_eq!(types.iter().filter(|t| *t == "action.observed").count(), 2);
    assert!(!types.contains(&"action.started".to_string()), "{types:?}");
}

#[test]
fn upstream_observation_names_go_through_the_same_gate() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"));
    let f = form(&e);
    let s = start(&g);
    let shot = ok(
        &g,
        "execute_action",
        shadow(
            &s,
            "v1",
            "snapshot",
            json!({"use_vision": true, "use_annotation": true}),
        ),
    );
    assert!(
        shot["output"]["data_url"]
            .as_str()
            .is_some_and(|u| u.starts_with("data:image/"))
    );
    // The pixels are answered once, never kept in the journal.
    assert!(shot["receipt"]["result"].get("data_url").is_none());
    let tree = ok(
        &g,
        "execute_action",
        shadow(
            &s,
            "v2",
            "get_ui_tree",
            json!({"window_id": f.window["id"]}),
        ),
    );
    assert!(tree["output"]["tree"].is_object() || tree["output"]["tree"].is_array());
    // The envelope names the plain tool underneath: policy and gate judge that tool.
    let previewed = ok(
        &g,
        "preview_action",
        shadow(
            &s,
            "v3",
            "get_ui_tree",
            json!({"window_id": f.window["id"]}),
        ),
    );
    assert_eq!(previewed["envelope"]["tool"], "a11y.snapshot");
    let bad = err(
        &g,
        "execute_action",
        shadow(&s, "v4", "get_ui_tree", json!({"window": 1})),
    );
    assert_eq!(bad.error, ErrorCode::InvalidArguments);
}

#[test]
fn a_shadow_action_cannot_mutate_and_a_mutation_still_needs_a_lease() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"));
    let f = form(&e);
    let s = start(&g);
    let mut click = shadow(
        &s,
        "m1",
        "pointer_click",
        json!({"x": f.submit.0, "y": f.submit.1}),
    );
    click["target"] = snake_target(&f);
    assert_eq!(
        err(&g, "execute_action", click.clone()).error,
        ErrorCode::ShadowMutation
    );
    click["mode"] = json!("foreground");
    let e2 = err(&g, "execute_action", click);
    assert_eq!(e2.error, ErrorCode::InvalidArguments);
    assert!(e2.message.contains("lease_id"), "{e2:?}");
}

#[test]
fn snake_case_evidence_is_canonical_and_the_events_satisfy_the_evaluator() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"));
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s, 1);
    let click = json!({
        "session_id": s, "action_id": "a1", "lease_id": l, "tool": "pointer_click",
        "arguments": {"x": f.submit.0, "y": f.submit.1}, "mode": "foreground",
        "target": snake_target(&f),
        "postcondition": {"kind": "ui_element", "role": "statusbar", "label": "Status",
                          "exists": true, "value_digest": value_digest("Submitted: ")},
    });
    let preview = ok(&g, "preview_action", click.clone());
    let captured = preview["envelope"]["target"]["capturedAt"]
        .as_str()
        .unwrap();
    assert!(
        captured.ends_with('Z') && captured.len() == "2026-12-01T20:13:18.123Z".len(),
        "normalised to milliseconds and Z: {captured}"
    );
    assert_eq!(preview["envelope"]["target"]["appId"], "cc-form");
    let r = ok(&g, "execute_action", click);
    assert_eq!(r["receipt"]["status"], "committed", "{r}");
    assert_eq!(
        r["receipt"]["actionDigest"],
        preview["envelope"]["argsDigest"]
    );
    // The same evidence in camelCase is the same action (same digest).
    let mut camel = preview["envelope"]["target"].clone();
    camel["capturedAt"] = json!(captured);
    let again = ok(
        &g,
        "preview_action",
        json!({"session_id": s, "action_id": "a1", "tool": "pointer_click",
               "arguments": {"x": f.submit.0, "y": f.submit.1}, "mode": "foreground",
               "target": camel,
               "postcondition": {"kind": "ui_element", "role": "statusbar", "label": "Status",
                                 "exists": true, "valueDigest": value_digest("Submitted: ")}}),
    );
    assert_eq!(
        again["envelope"]["argsDigest"],
        preview["envelope"]["argsDigest"]
    );

    let ev = events(&g, &s);
    let of = |t: &str| {
        ev.iter()
            .position(|e| e.event_type == t)
            .unwrap_or(usize::MAX)
    };
    assert!(of("action.started") < of("action.verified"));
    assert!(of("action.verified") < of("action.committed"));
    let started = &ev[of("action.started")];
    assert_eq!(started.payload["mode"], "foreground");
    assert_eq!(started.payload["leaseId"], l);
    assert_eq!(started.payload["tool"], "pointer.click");
    let verified = &ev[of("action.verified")];
    assert_eq!(verified.payload["verified"], true);
    assert_eq!(
        verified.payload["observedDigest"],
        value_digest("Submitted: ")
    );
}

#[test]
fn a_replayed_receipt_that_did_not_commit_is_an_error_carrying_it() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"));
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s, 5);
    // A postcondition that cannot hold: indeterminate (and the lease revoked).
    let click = json!({
        "session_id": s, "action_id": "a1", "lease_id": l, "tool": "pointer_click",
        "arguments": {"x": f.submit.0, "y": f.submit.1}, "mode": "foreground",
        "target": snake_target(&f),
        "postcondition": {"kind": "ui_element", "role": "statusbar", "label": "Status",
                          "exists": true, "value_digest": value_digest("never")},
    });
    let first = ok(&g, "execute_action", click.clone());
    assert_eq!(first["receipt"]["status"], "indeterminate");
    let replayed = err(&g, "execute_action", click);
    assert_eq!(replayed.error, ErrorCode::Indeterminate);
    let wire = serde_json::to_value(&replayed).unwrap();
    assert_eq!(wire["error"], "indeterminate");
    assert_eq!(wire["receipt"], first["receipt"]);
}

#[test]
fn follow_ups_are_principal_bound_with_a_cursor() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"));
    let s = start(&g);
    let one = ok(
        &g,
        "submit_follow_up",
        json!({"session_id": s, "instruction": "use the revised document"}),
    )["follow_up"]
        .clone();
    assert_eq!(one["sequence"], 1);
    assert_eq!(one["principalId"], "local-user");
    let _: cc_contract::SessionFollowUp = serde_json::from_value(one).unwrap();
    ok(
        &g,
        "submit_follow_up",
        json!({"session_id": s, "instruction": "then stop"}),
    );
    let page = ok(
        &g,
        "get_follow_ups",
        json!({"session_id": s, "after_sequence": 1}),
    );
    assert_eq!(page["follow_ups"].as_array().unwrap().len(), 1);
    assert_eq!(page["follow_ups"][0]["instruction"], "then stop");
    assert_eq!(page["next_sequence"], 2);
    let empty = ok(
        &g,
        "get_follow_ups",
        json!({"session_id": s, "after_sequence": 2}),
    );
    assert_eq!(empty["next_sequence"], 2);
    // The text stays out of the journal.
    assert!(events(&g, &s).iter().all(|e| {
        !Value::Object(e.payload.clone())
            .to_string()
            .contains("revised")
    }));
    for bad in [
        json!({"session_id": s, "instruction": "  "}),
        json!({"session_id": s, "instruction": "x".repeat(10_001)}),
    ] {
        assert_eq!(
            err(&g, "submit_follow_up", bad).error,
            ErrorCode::InvalidArguments
        );
    }
    assert_eq!(
        err(&g, "get_follow_ups", json!({"session_id": s, "limit": 0})).error,
        ErrorCode::InvalidArguments
    );
    let mallory = g.for_principal("mallory").unwrap();
    assert_eq!(
        err(&mallory, "get_follow_ups", json!({"session_id": s})).error,
        ErrorCode::PrincipalMismatch
    );
    ok(&g, "stop_session", json!({"session_id": s}));
    assert_eq!(
        err(
            &g,
            "submit_follow_up",
            json!({"session_id": s, "instruction": "late"})
        )
        .error,
        ErrorCode::SessionNotRunning
    );
}

#[test]
fn only_a_terminal_session_is_deleted_and_only_with_confirm() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"));
    let s = start(&g);
    let del = json!({"session_id": s, "confirm": true});
    assert_eq!(
        err(&g, "delete_session", del.clone()).error,
        ErrorCode::SessionNotTerminal
    );
    ok(
        &g,
        "stop_session",
        json!({"session_id": s, "reason": "done"}),
    );
    assert_eq!(
        err(&g, "delete_session", json!({"session_id": s})).error,
        ErrorCode::InvalidArguments
    );
    let mallory = g.for_principal("mallory").unwrap();
    assert_eq!(
        err(&mallory, "delete_session", del.clone()).error,
        ErrorCode::PrincipalMismatch
    );
    let d = ok(&g, "delete_session", del.clone())["deletion"].clone();
    assert_eq!(d["deleted"], true);
    assert_eq!(d["deletedEvidenceFrames"], 0);
    assert!(d["deletedEvents"].as_u64().unwrap() >= 2, "{d}");
    let _: cc_contract::SessionDeletion = serde_json::from_value(d).unwrap();
    assert_eq!(
        err(&g, "get_session", json!({"session_id": s})).error,
        ErrorCode::SessionNotFound
    );
    assert_eq!(
        err(&g, "delete_session", del).error,
        ErrorCode::SessionNotFound
    );
}

#[test]
fn pruning_takes_only_the_callers_old_terminal_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"));
    let mallory = g.for_principal("mallory").unwrap();
    let mine: Vec<String> = (0..3).map(|_| start(&g)).collect();
    for s in &mine[..2] {
        ok(&g, "stop_session", json!({"session_id": s}));
    }
    let theirs = start(&mallory);
    ok(&mallory, "stop_session", json!({"session_id": theirs}));
    let later =
        cc_contract::format_timestamp(time::OffsetDateTime::now_utc() + time::Duration::seconds(5));
    let pruned = ok(
        &g,
        "prune_sessions",
        json!({"older_than": later, "limit": 1, "confirm": true}),
    );
    assert_eq!(pruned["deletions"].as_array().unwrap().len(), 1);
    let rest = ok(
        &g,
        "prune_sessions",
        json!({"older_than": later, "confirm": true}),
    );
    assert_eq!(rest["deletions"].as_array().unwrap().len(), 1);
    ok(&g, "get_session", json!({"session_id": mine[2]}));
    ok(&mallory, "get_session", json!({"session_id": theirs}));
    let earlier = ok(
        &mallory,
        "prune_sessions",
        json!({"older_than": "2000-01-01T00:00:00.000Z", "confirm": true}),
    );
    assert!(earlier["deletions"].as_array().unwrap().is_empty());
    for bad in [
        json!({"older_than": later}),
        json!({"older_than": "soon", "confirm": true}),
        json!({"older_than": later, "limit": 0, "confirm": true}),
    ] {
        assert_eq!(
            err(&g, "prune_sessions", bad).error,
            ErrorCode::InvalidArguments
        );
    }
}

#[test]
fn a_lease_spent_and_revoked_can_still_be_released_by_its_holder() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"));
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s, 1);
    let click = json!({
        "session_id": s, "action_id": "a1", "lease_id": l, "tool": "pointer_click",
        "arguments": {"x": f.submit.0, "y": f.submit.1}, "mode": "foreground",
        "target": snake_target(&f)});
    ok(&g, "execute_action", click);
    let released = ok(
        &g,
        "release_control_lease",
        json!({"session_id": s, "lease_id": l}),
    )["lease"]
        .clone();
    assert_eq!(released["state"], "revoked");
    assert_eq!(released["revokedReason"], "action_budget_exhausted");
    // Any other lease that is no longer active is still refused.
    let other = lease(&g, &s, 5);
    ok(
        &g,
        "release_control_lease",
        json!({"session_id": s, "lease_id": other}),
    );
    assert_eq!(
        err(
            &g,
            "release_control_lease",
            json!({"session_id": s, "lease_id": other})
        )
        .error,
        ErrorCode::LeaseNotActive
    );
}

#[test]
fn pause_journals_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"));
    let s = start(&g);
    let paused = ok(
        &g,
        "pause_session",
        json!({"session_id": s, "reason": "lunch"}),
    );
    assert_eq!(paused["session"]["waitingReason"], "lunch");
    let ev = events(&g, &s);
    let p = ev
        .iter()
        .find(|e| e.event_type == "session.paused")
        .unwrap();
    assert_eq!(p.payload["reason"], "lunch");
    let resumed = ok(&g, "resume_session", json!({"session_id": s}));
    assert!(resumed["session"].get("waitingReason").is_none());
}

#[test]
fn typed_text_lands_through_snake_case_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"));
    let f = form(&e);
    let s = start(&g);
    // Focus Name by a plain click first, then type under a lease of budget 1 twice:
    // each lease is revoked once spent, so the second lease can be taken.
    for (i, text) in ["Ada", "Ada"].iter().enumerate() {
        let l = lease(&g, &s, 1);
        let name = name_centre(&e, &f);
        let click = json!({
            "session_id": s, "action_id": format!("c{i}"), "lease_id": l, "tool": "pointer_click",
            "arguments": {"x": name.0, "y": name.1}, "mode": "foreground",
            "target": snake_target(&f)});
        ok(&g, "execute_action", click);
        if i == 0 {
            let l = lease(&g, &s, 1);
            let typing = json!({
                "session_id": s, "action_id": "t", "lease_id": l, "tool": "keyboard_type",
                "arguments": {"text": text}, "mode": "foreground", "target": snake_target(&f),
                "postcondition": {"kind": "ui_element", "role": "edit", "label": "Name",
                                  "exists": true, "value_digest": value_digest(text)}});
            let r = ok(&g, "execute_action", typing);
            assert_eq!(
                r["receipt"]["result"]["verification"]["satisfied"], true,
                "{r}"
            );
        }
    }
    assert_eq!(name_field(&e, &f.window), "Ada");
}

/// The centre of the Name field, read from the engine.
fn name_centre(e: &Engine, f: &Form) -> (i64, i64) {
    let snap = e
        .call_tool(
            "a11y.snapshot",
            &json!({"window": f.window["id"], "level": "full"}),
        )
        .result
        .unwrap();
    fn find(n: &Value) -> Option<&Value> {
        if n["role"] == "edit" && n["name"] == "Name" {
            return Some(n);
        }
        n["children"].as_array()?.iter().find_map(find)
    }
    let r = &find(&snap["tree"]).unwrap()["rect"];
    let c = |i: usize| r[i].as_i64().unwrap();
    ((c(0) + c(2)) / 2, (c(1) + c(3)) / 2)
}
