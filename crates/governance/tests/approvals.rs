//! Operator approval of `confirm` decisions, end to end: real SQLite files, the
//! virtual desktop, a confirm rule on clicks. Without a grant nothing happens; the
//! operator's grant lets exactly one matching action through the engine's gate (no
//! second confirmation), and every mismatch — used, expired, other digest, session or
//! principal — is `approval_required`.

use crate::support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cc_contract::{ErrorCode, format_timestamp, value_digest};
use cc_desktop::VirtualDesktop;
use cc_engine::Engine;
use cc_engine::clock::{Clock, ManualClock};
use cc_engine::config::ConfigStack;
use cc_governance::Governance;
use cc_governance::approvals::{
    ApprovalDecision, ApprovalError, Decided, EVENT_REQUESTED, EVENT_RESOLVED, RequestStatus,
};
use serde_json::{Value, json};
use support::{Form, err, form, ok, status_bar};

/// An engine whose rules make every click a `confirm`.
fn engine() -> Engine {
    let mut base = ConfigStack::new();
    base.apply(&json!({"safety": {"rules": [
        {"match": {"tool": "pointer.click"}, "effect": "confirm"}
    ]}}))
    .unwrap();
    let e = Engine::new(Box::new(VirtualDesktop::default()), base);
    assert!(e.start(&json!({})).ok);
    e
}

fn kernel(e: &Engine, db: &Path, principal: &str, clock: Arc<dyn Clock>) -> Governance {
    Governance::open_with_clock(e.clone(), db, principal, clock).expect("open the journal")
}

fn start(g: &Governance) -> String {
    ok(g, "start_session", json!({}))["session"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string()
}

fn lease(g: &Governance, session: &str) -> String {
    ok(
        g,
        "acquire_control_lease",
        json!({"session_id": session, "kind": "cooperative", "mode": "foreground",
               "ttl_ms": 300_000, "action_budget": 20, "app_ids": ["cc-form"]}),
    )["lease"]["leaseId"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A click on Submit (`dx` moves it, for another digest), verified by the status bar.
fn click(f: &Form, session: &str, lease: &str, action: &str, dx: i64) -> Value {
    let w = &f.window;
    json!({
        "session_id": session,
        "action_id": action,
        "lease_id": lease,
        "tool": "pointer_click",
        "arguments": {"x": f.submit.0 + dx, "y": f.submit.1},
        "mode": "foreground",
        "target": {"platform": "virtual", "appId": "cc-form", "pid": w["pid"],
                   "windowId": w["id"], "bounds": w["rect"], "observationId": "obs-1",
                   "confidence": 1, "capturedAt": format_timestamp(now())},
        "postcondition": {"kind": "ui_element", "role": "statusbar", "label": "Status",
                          "exists": true, "valueDigest": value_digest("Submitted: ")},
    })
}

thread_local! {
    /// Each test (one thread each) moves its own kernel clock.
    static CLOCK: Arc<ManualClock> = Arc::new(ManualClock::new());
}

fn clock() -> Arc<ManualClock> {
    CLOCK.with(Arc::clone)
}

/// The kernel clock's time (what evidence age is judged against).
fn now() -> time::OffsetDateTime {
    time::OffsetDateTime::from(clock().wall())
}

fn decision(session: &str, action: &str) -> ApprovalDecision {
    serde_json::from_value(json!({"session_id": session, "action_id": action})).unwrap()
}

fn approve(g: &Governance, d: &ApprovalDecision) -> cc_contract::ApprovalGrant {
    match g.decide_approval(d, true) {
        Ok(Decided::Approved(grant)) => *grant,
        other => panic!("approval failed: {other:?}"),
    }
}

/// A grant as stored in the journal file, read with a separate connection.
fn stored_grant(db: &Path, grant_id: &str) -> Value {
    let conn = rusqlite::Connection::open(db).unwrap();
    let text: String = conn
        .query_row(
            "SELECT data FROM grants WHERE grant_id = ?1",
            [grant_id],
            |r| r.get(0),
        )
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn journal_types(g: &Governance, session: &str) -> Vec<String> {
    ok(g, "get_session_events", json!({"session_id": session}))["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_confirm_action_runs_once_with_the_operators_grant_and_never_without() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let e = engine();
    let (_, bus) = e.subscribe(1024, None);
    let g = kernel(&e, &db, "local-user", clock());
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s);
    let before = status_bar(&e);

    // Without a grant: the preview is blocked, execute refuses, nothing happens.
    let a1 = click(&f, &s, &l, "a1", 0);
    let preview = ok(&g, "preview_action", a1.clone());
    assert_eq!(preview["policy"]["decision"], "confirm", "{preview}");
    assert_eq!(preview["blocker"], "approval_required");
    assert_eq!(
        err(&g, "execute_action", a1.clone()).error,
        ErrorCode::ApprovalRequired
    );
    assert_eq!(status_bar(&e), before, "no effect without approval");
    assert!(!journal_types(&g, &s).contains(&"action.started".to_string()));

    // The operator sees it, redacted and summarized, and approves it.
    let pending = g.pending_approvals().unwrap();
    assert_eq!(pending.len(), 1, "{pending:?}");
    let p = &pending[0];
    assert_eq!(
        (p.session_id.as_str(), p.action_id.as_str()),
        (s.as_str(), "a1")
    );
    assert_eq!(p.status, RequestStatus::Pending);
    assert_eq!(p.tool, "pointer.click");
    assert_eq!(p.args_digest, preview["envelope"]["argsDigest"]);
    assert_eq!(
        p.reasons,
        vec!["rule 0 requires confirmation for pointer.click"]
    );
    // What it does, in the click tool's own words.
    let at = format!("Click at ({}, {})", f.submit.0, f.submit.1);
    assert_eq!(p.description.title, at);
    let target = p.target.as_ref().unwrap();
    assert_eq!(target.app_id, "cc-form");
    assert_eq!(
        target.window_title.as_deref(),
        f.window["title"].as_str(),
        "the window's title, read from the desktop"
    );
    // Announced once, though the action was previewed, executed and previewed again.
    ok(&g, "preview_action", a1.clone());
    let requested: Vec<_> = std::iter::from_fn(|| bus.rx.try_recv().ok())
        .filter(|ev| ev.kind == EVENT_REQUESTED)
        .collect();
    assert_eq!(requested.len(), 1, "{requested:?}");
    assert_eq!(requested[0].payload["actionId"], "a1");
    assert_eq!(requested[0].payload["description"]["title"], at.as_str());
    assert_eq!(g.pending_approvals().unwrap().len(), 1);

    let mut d = decision(&s, "a1");
    d.args_digest = Some(p.args_digest.clone());
    let grant = approve(&g, &d);
    assert_eq!(grant.remaining_uses, 1);
    assert_eq!(grant.action_digest, p.args_digest);
    // An exact-action grant is scoped to exactly that action: its scope digest is the
    // action digest (upstream's `ApprovalGrant` refuses anything else).
    assert_eq!(grant.scope_digest, grant.action_digest);
    assert!(g.pending_approvals().unwrap().is_empty());
    let resolved = std::iter::from_fn(|| bus.rx.try_recv().ok())
        .find(|ev| ev.kind == EVENT_RESOLVED)
        .expect("the decision is announced");
    assert_eq!(resolved.payload["status"], "approved");
    assert_eq!(resolved.payload["grantId"], grant.grant_id.as_str());

    // The preview now names the grant; execute commits without a second confirmation.
    let again = ok(&g, "preview_action", a1.clone());
    assert_eq!(again["policy"]["grantId"], grant.grant_id.as_str());
    assert_eq!(again["executable"], true);
    let receipt = ok(&g, "execute_action", a1.clone())["receipt"].clone();
    assert_eq!(receipt["status"], "committed", "{receipt}");
    assert_eq!(receipt["result"]["verification"]["satisfied"], true);
    assert_eq!(status_bar(&e), "Submitted: ", "the effect is visible");
    assert_eq!(
        e.status().result.unwrap()["state"],
        "ready",
        "no engine confirmation was left pending"
    );
    let stored = stored_grant(&db, &grant.grant_id);
    assert_eq!(stored["remainingUses"], 0);
    assert_eq!(stored["consumedByActionIds"], json!(["a1"]));
    let started = ok(&g, "get_session_events", json!({"session_id": s}))["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|ev| ev["type"] == "action.started")
        .cloned()
        .unwrap();
    assert_eq!(started["payload"]["grantId"], grant.grant_id.as_str());

    // The grant is used up: the same click under a new action id needs a new one.
    let a2 = click(&f, &s, &l, "a2", 0);
    assert_eq!(
        err(&g, "execute_action", a2.clone()).error,
        ErrorCode::ApprovalRequired
    );
    let mut named = a2;
    named["approval_grant_id"] = json!(grant.grant_id);
    assert_eq!(
        err(&g, "execute_action", named).error,
        ErrorCode::ApprovalRequired
    );
    let types = journal_types(&g, &s);
    for t in ["action.approved", "approval.consumed", "action.committed"] {
        assert_eq!(
            types.iter().filter(|x| *x == t).count(),
            1,
            "{t}: {types:?}"
        );
    }
}

/// The operator reads a governed typing in its tool's words, its text redacted as its
/// arguments are: whole once the caller labels the data anything but public.
#[test]
fn the_description_of_a_governed_action_is_redacted_as_its_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let typing = json!({"patch": {"safety": {"rules": [
        {"match": {"tool": "keyboard.type"}, "effect": "confirm"}
    ]}}});
    assert!(e.configure(&typing).ok);
    let (_, bus) = e.subscribe(1024, None);
    let g = kernel(&e, &dir.path().join("j.db"), "local-user", clock());
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s);
    let typed = |action: &str, labels: Value| {
        let mut a = click(&f, &s, &l, action, 0);
        a["tool"] = json!("keyboard_type");
        a["arguments"] = json!({"text": "s3cret words"});
        a["data_labels"] = labels;
        a
    };
    ok(&g, "preview_action", typed("t1", json!(["public"])));
    ok(&g, "preview_action", typed("t2", json!(["private"])));
    let pending = g.pending_approvals().unwrap();
    let of = |id: &str| pending.iter().find(|p| p.action_id == id).unwrap();
    let public = &of("t1").description;
    assert_eq!(public.title, "Type “s3cret words”");
    assert_eq!(public.text.as_deref(), Some("s3cret words"));
    let private = &of("t2").description;
    assert_eq!(of("t2").arguments["text"], cc_engine::REDACTED);
    assert_eq!(private.text.as_deref(), Some(cc_engine::REDACTED));
    assert!(
        !serde_json::to_string(private).unwrap().contains("s3cret"),
        "{private:?}"
    );
    // The events the console reads say the same.
    let announced: Vec<_> = std::iter::from_fn(|| bus.rx.try_recv().ok())
        .filter(|ev| ev.kind == EVENT_REQUESTED)
        .collect();
    assert_eq!(announced.len(), 2, "{announced:?}");
    assert!(
        announced
            .iter()
            .all(|ev| ev.payload["actionId"] == "t1" || !ev.json().contains("s3cret")),
        "{announced:?}"
    );
}

#[test]
fn an_expired_grant_is_approval_required() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"), "local-user", clock());
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s);
    ok(&g, "preview_action", click(&f, &s, &l, "a1", 0));
    let mut d = decision(&s, "a1");
    d.ttl_ms = Some(1_000);
    let grant = approve(&g, &d);
    clock().advance(Duration::from_millis(1_001));
    let a1 = click(&f, &s, &l, "a1", 0);
    let blocked = ok(&g, "preview_action", a1.clone());
    assert_eq!(blocked["blocker"], "approval_required");
    assert_eq!(
        err(&g, "execute_action", a1).error,
        ErrorCode::ApprovalRequired
    );
    assert_eq!(
        stored_grant(&dir.path().join("j.db"), &grant.grant_id)["remainingUses"],
        1,
        "an expired grant is never consumed"
    );
}

#[test]
fn a_grant_for_another_digest_session_or_principal_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let e = engine();
    let g = kernel(&e, &db, "local-user", clock());
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s);
    ok(&g, "preview_action", click(&f, &s, &l, "a1", 0));
    let grant = approve(&g, &decision(&s, "a1"));

    // Other arguments (another digest), even naming the grant.
    let mut other = click(&f, &s, &l, "b1", 1);
    other["approval_grant_id"] = json!(grant.grant_id);
    assert_eq!(
        err(&g, "execute_action", other).error,
        ErrorCode::ApprovalRequired
    );
    // Another session of the same principal.
    let s2 = start(&g);
    let l2 = lease(&g, &s2);
    let mut in_s2 = click(&f, &s2, &l2, "a1", 0);
    in_s2["approval_grant_id"] = json!(grant.grant_id);
    assert_eq!(
        err(&g, "execute_action", in_s2).error,
        ErrorCode::ApprovalRequired
    );
    // Another principal on the same journal (as an HTTP token's identity is): its own
    // session, the same click.
    let m = g.for_principal("mallory").unwrap();
    let sm = start(&m);
    let lm = lease(&m, &sm);
    let mut theirs = click(&f, &sm, &lm, "a1", 0);
    theirs["approval_grant_id"] = json!(grant.grant_id);
    assert_eq!(
        err(&m, "execute_action", theirs).error,
        ErrorCode::ApprovalRequired
    );
    // The operator supervises every principal of the journal: mallory's own request
    // is listed with its principal, and its grant is issued to mallory, whose
    // sessions alone can use it.
    ok(&m, "preview_action", click(&f, &sm, &lm, "m1", 0));
    let listed = g.pending_approvals().unwrap();
    let mine = listed.iter().find(|p| p.session_id == sm).unwrap();
    assert_eq!(mine.principal_id, "mallory");
    let granted = approve(&g, &decision(&sm, "m1"));
    assert_eq!(granted.principal_id, "mallory");
    let mut steal = click(&f, &s2, &l2, "x1", 0);
    steal["approval_grant_id"] = json!(granted.grant_id);
    assert_eq!(
        err(&g, "execute_action", steal).error,
        ErrorCode::ApprovalRequired
    );
    let r = ok(&m, "execute_action", click(&f, &sm, &lm, "m1", 0))["receipt"].clone();
    assert_eq!(r["status"], "committed", "{r}");
    // The grant is still there for the action it was issued for.
    let r = ok(&g, "execute_action", click(&f, &s, &l, "a1", 0))["receipt"].clone();
    assert_eq!(r["status"], "committed", "{r}");
}

#[test]
fn decisions_that_cannot_apply_are_refused_with_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let e = engine();
    let g = kernel(&e, &db, "local-user", clock());
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s);
    ok(&g, "preview_action", click(&f, &s, &l, "a1", 0));

    // Bad TTLs and misplaced fields.
    for (ttl, reason) in [(Some(0), None), (Some(300_001), None)] {
        let mut d = decision(&s, "a1");
        d.ttl_ms = ttl;
        d.reason = reason;
        assert!(matches!(
            g.decide_approval(&d, true),
            Err(ApprovalError::InvalidRequest(_))
        ));
    }
    let mut d = decision(&s, "a1");
    d.reason = Some("no".into());
    assert!(matches!(
        g.decide_approval(&d, true),
        Err(ApprovalError::InvalidRequest(_))
    ));
    let mut d = decision(&s, "a1");
    d.ttl_ms = Some(1000);
    assert!(matches!(
        g.decide_approval(&d, false),
        Err(ApprovalError::InvalidRequest(_))
    ));
    // Unknown action or session.
    assert!(matches!(
        g.decide_approval(&decision(&s, "nope"), true),
        Err(ApprovalError::NotFound { .. })
    ));
    assert!(matches!(
        g.decide_approval(&decision("ses-nope", "a1"), true),
        Err(ApprovalError::NotFound { .. })
    ));
    // A digest the operator did not see.
    let mut d = decision(&s, "a1");
    d.args_digest = Some("0".repeat(64));
    assert!(matches!(
        g.decide_approval(&d, true),
        Err(ApprovalError::Changed { .. })
    ));
    // A preview that is not a confirm (a benign observation is `allow`).
    let observe = json!({"session_id": s, "action_id": "o1", "tool": "window_list",
                         "arguments": {}, "mode": "foreground"});
    assert_eq!(
        ok(&g, "preview_action", observe)["policy"]["decision"],
        "allow"
    );
    let refused = g.decide_approval(&decision(&s, "o1"), true).unwrap_err();
    assert_eq!(refused.code(), "not_confirm");
    assert!(refused.message().contains("allow"), "{}", refused.message());
    assert!(g.pending_approvals().unwrap().len() == 1);
    assert!(!journal_types(&g, &s).contains(&"action.approved".to_string()));

    // Denied: journaled, gone from the list, execute still needs approval, and a
    // second decision is refused.
    let mut d = decision(&s, "a1");
    d.reason = Some("not now".into());
    match g.decide_approval(&d, false) {
        Ok(Decided::Denied(r)) => {
            assert_eq!(r.status, RequestStatus::Denied);
            assert_eq!(r.reason.as_deref(), Some("not now"));
        }
        other => panic!("{other:?}"),
    }
    assert!(g.pending_approvals().unwrap().is_empty());
    assert!(journal_types(&g, &s).contains(&"approval.denied".to_string()));
    let refused = err(&g, "execute_action", click(&f, &s, &l, "a1", 0));
    assert_eq!(refused.error, ErrorCode::ApprovalRequired);
    assert_eq!(refused.details["approvalStatus"], "denied", "{refused:?}");
    assert_eq!(refused.details["reason"], "not now");
    assert!(matches!(
        g.decide_approval(&decision(&s, "a1"), true),
        Err(ApprovalError::AlreadyDecided {
            status: RequestStatus::Denied
        })
    ));

    // An expired preview cannot be approved.
    let mut short = click(&f, &s, &l, "a3", 2);
    short["expires_in_ms"] = json!(1_000);
    ok(&g, "preview_action", short);
    assert_eq!(g.pending_approvals().unwrap().len(), 1);
    clock().advance(Duration::from_millis(1_001));
    assert!(g.pending_approvals().unwrap().is_empty());
    assert!(matches!(
        g.decide_approval(&decision(&s, "a3"), true),
        Err(ApprovalError::Expired { .. })
    ));
}

#[test]
fn a_request_of_a_session_that_is_not_running_cannot_be_approved() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"), "local-user", clock());
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s);
    ok(&g, "preview_action", click(&f, &s, &l, "a1", 0));
    ok(&g, "pause_session", json!({"session_id": s}));
    assert!(g.pending_approvals().unwrap().is_empty(), "not listed");
    let refused = g.decide_approval(&decision(&s, "a1"), true).unwrap_err();
    assert_eq!(refused.code(), "session_not_running", "{refused:?}");
    ok(&g, "resume_session", json!({"session_id": s}));
    assert_eq!(g.pending_approvals().unwrap().len(), 1, "listed again");
    approve(&g, &decision(&s, "a1"));
}

#[test]
fn a_grant_never_lifts_a_deny_rule_of_the_engine_gate() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"), "local-user", clock());
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s);
    let before = status_bar(&e);
    ok(&g, "preview_action", click(&f, &s, &l, "a1", 0));
    let grant = approve(&g, &decision(&s, "a1"));
    // The operator then forbids clicks in the engine session itself. The gate applies
    // it to a granted action too…
    let configured = e.configure(&json!({"safety": {"rules": [
        {"match": {"tool": "pointer.click"}, "effect": "deny"}
    ]}}));
    assert!(configured.ok, "{configured:?}");
    let args = &click(&f, &s, &l, "a1", 0)["arguments"];
    let call = e
        .prepare("pointer.click", args)
        .expect("the click validates");
    let r = e.run_approved(call, &grant.grant_id);
    assert_eq!(
        r.error_code(),
        Some(cc_protocol::ErrorCode::PolicyDenied),
        "{r:?}"
    );
    assert_eq!(status_bar(&e), before, "no effect");
    // …and the governed execute, whose preview judges over the same live rules, is
    // refused before it reaches the gate: the grant lifts nothing, nothing runs.
    let refused = err(&g, "execute_action", click(&f, &s, &l, "a1", 0));
    assert_eq!(refused.error, ErrorCode::PolicyDenied, "{refused:?}");
    assert_eq!(refused.details["blocker"], "policy_denied");
    assert_eq!(status_bar(&e), before, "no effect");
}

#[test]
fn executing_without_a_preview_still_asks_the_operator() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine();
    let g = kernel(&e, &dir.path().join("j.db"), "local-user", clock());
    let f = form(&e);
    let s = start(&g);
    let l = lease(&g, &s);
    let a1 = click(&f, &s, &l, "a1", 0);
    let refused = err(&g, "execute_action", a1.clone());
    assert_eq!(refused.error, ErrorCode::ApprovalRequired);
    assert_eq!(refused.details["approvalStatus"], "pending", "{refused:?}");
    let pending = g.pending_approvals().unwrap();
    assert_eq!(pending.len(), 1);
    approve(&g, &decision(&s, "a1"));
    let r = ok(&g, "execute_action", a1)["receipt"].clone();
    assert_eq!(r["status"], "committed", "{r}");
}
