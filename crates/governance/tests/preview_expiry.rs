//! Execute step 1 of GOVERNANCE.md Part A: "an expired envelope is `stale_target`".
//! The envelope that expires is the one the agent was shown by its own preview of the
//! action (execute's re-preview is always fresh), kept in the journal; previewing the
//! same action again while it is valid answers it unchanged. Real SQLite files, the virtual
//! desktop, and a `ManualClock` moved past the expiry instead of sleeping.

use crate::support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cc_contract::{ContractError, ErrorCode, format_timestamp};
use cc_desktop::VirtualDesktop;
use cc_engine::Engine;
use cc_engine::clock::{Clock, ManualClock};
use cc_engine::config::ConfigStack;
use cc_governance::Governance;
use cc_governance::approvals::{ApprovalDecision, ApprovalError, Decided};
use serde_json::{Value, json};
use support::{err, form, ok, status_bar};

/// An engine on the virtual desktop; `rules` are its safety rules.
fn engine(rules: Value) -> Engine {
    let mut base = ConfigStack::new();
    base.apply(&json!({"safety": {"rules": rules}})).unwrap();
    let e = Engine::new(Box::new(VirtualDesktop::default()), base);
    assert!(e.start(&json!({})).ok);
    e
}

fn kernel(e: &Engine, db: &Path, clock: &Arc<ManualClock>) -> Governance {
    let clock: Arc<dyn Clock> = clock.clone();
    Governance::open_with_clock(e.clone(), db, "local-user", clock).expect("open the journal")
}

/// A governed click on Submit whose preview expires after one second. The target
/// evidence is captured once, so every preview and execute of it has one digest.
struct Click {
    args: Value,
}

impl Click {
    fn new(e: &Engine, clock: &ManualClock, session: &str, lease: &str, action: &str) -> Click {
        let support::Form { window: w, submit } = form(e);
        let captured = format_timestamp(time::OffsetDateTime::from(clock.wall()));
        Click {
            args: json!({
                "session_id": session, "action_id": action, "lease_id": lease,
                "tool": "pointer_click", "arguments": {"x": submit.0, "y": submit.1},
                "mode": "foreground", "expires_in_ms": 1_000,
                "target": {"platform": "virtual", "appId": "cc-form", "pid": w["pid"],
                           "windowId": w["id"], "bounds": w["rect"], "observationId": "obs-1",
                           "confidence": 1, "capturedAt": captured},
            }),
        }
    }
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
        json!({"session_id": session, "kind": "cooperative", "mode": "foreground",
               "ttl_ms": 300_000, "action_budget": budget, "app_ids": ["cc-form"]}),
    )["lease"]["leaseId"]
        .as_str()
        .unwrap()
        .to_string()
}

/// What the journal file holds, read with a separate connection: receipts, approval
/// requests, and the lease's `actionsUsed`.
fn journal(db: &Path, lease: &str) -> (i64, i64, i64) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let count = |table: &str| -> i64 {
        conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap()
    };
    let data: String = conn
        .query_row(
            "SELECT data FROM leases WHERE lease_id = ?1",
            [lease],
            |r| r.get(0),
        )
        .unwrap();
    let used = serde_json::from_str::<Value>(&data).unwrap()["actionsUsed"]
        .as_i64()
        .unwrap();
    (count("receipts"), count("approval_requests"), used)
}

fn event_types(g: &Governance, session: &str) -> Vec<String> {
    ok(g, "get_session_events", json!({"session_id": session}))["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect()
}

fn assert_preview_expired(refused: &ContractError, preview: &Value) {
    assert_eq!(refused.error, ErrorCode::StaleTarget, "{refused:?}");
    let expired_at = preview["envelope"]["expiresAt"].as_str().unwrap();
    assert_eq!(refused.details["reason"], "preview_expired");
    assert_eq!(refused.details["expiredAt"], expired_at);
    assert_eq!(
        refused.details["proposedAt"],
        preview["envelope"]["proposedAt"]
    );
    assert_eq!(
        refused.details["argsDigest"],
        preview["envelope"]["argsDigest"]
    );
    assert!(
        refused.message.contains(expired_at) && refused.message.contains("preview it again"),
        "{}",
        refused.message
    );
}

#[test]
fn an_expired_preview_is_stale_target_with_nothing_consumed_until_previewed_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let clock = Arc::new(ManualClock::new());
    let e = engine(json!([]));
    let g = kernel(&e, &db, &clock);
    let s = start(&g);
    // A budget of one: the commit at the end proves the refusal used none.
    let l = lease(&g, &s, 1);
    let a1 = Click::new(&e, &clock, &s, &l, "a1").args;
    let before = status_bar(&e);

    let first = ok(&g, "preview_action", a1.clone());
    assert_eq!(first["policy"]["decision"], "allow", "{first}");
    assert_eq!(
        journal(&db, &l),
        (0, 0, 0),
        "an allow preview asks no operator"
    );

    clock.advance(Duration::from_millis(1_001));
    assert_preview_expired(&err(&g, "execute_action", a1.clone()), &first);
    assert_eq!(journal(&db, &l), (0, 0, 0), "no receipt, no budget unit");
    assert!(!event_types(&g, &s).contains(&"action.started".to_string()));
    assert_eq!(status_bar(&e), before, "no effect");

    // Previewing again renews the envelope: same digest, later expiry.
    let second = ok(&g, "preview_action", a1.clone());
    assert_eq!(
        second["envelope"]["argsDigest"],
        first["envelope"]["argsDigest"]
    );
    assert!(second["envelope"]["expiresAt"].as_str() > first["envelope"]["expiresAt"].as_str());
    let receipt = ok(&g, "execute_action", a1.clone())["receipt"].clone();
    assert_eq!(receipt["status"], "committed", "{receipt}");
    assert_eq!(status_bar(&e), "Submitted: ", "the effect is visible");
    assert_eq!(journal(&db, &l), (1, 0, 1));

    // The renewed preview expires too; the committed action still replays its receipt
    // (a replay performs nothing, so the receipt comes before the expiry).
    clock.advance(Duration::from_millis(1_001));
    assert_eq!(ok(&g, "execute_action", a1)["receipt"], receipt);
    assert_eq!(journal(&db, &l), (1, 0, 1), "the replay consumed nothing");
    let started = event_types(&g, &s)
        .into_iter()
        .filter(|t| t == "action.started")
        .count();
    assert_eq!(started, 1);
}

#[test]
fn an_expired_allow_preview_never_executes_also_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let clock = Arc::new(ManualClock::new());
    let e = engine(json!([]));
    let (s, l, a2) = {
        let g = kernel(&e, &db, &clock);
        let s = start(&g);
        let l = lease(&g, &s, 5);
        // Never previewed: executes as before (the re-preview is the envelope).
        clock.advance(Duration::from_millis(5_000));
        let a1 = Click::new(&e, &clock, &s, &l, "a1").args;
        let r = ok(&g, "execute_action", a1)["receipt"].clone();
        assert_eq!(r["status"], "committed", "{r}");
        // Previewed with other arguments under the same id: not the envelope of this
        // execute, so its expiry does not apply to it.
        let b = Click::new(&e, &clock, &s, &l, "b").args;
        let mut moved = b.clone();
        moved["arguments"]["x"] = json!(b["arguments"]["x"].as_i64().unwrap() + 1);
        ok(&g, "preview_action", moved);
        let a2 = Click::new(&e, &clock, &s, &l, "a2").args;
        ok(&g, "preview_action", a2.clone());
        clock.advance(Duration::from_millis(1_001));
        let r = ok(&g, "execute_action", b)["receipt"].clone();
        assert_eq!(r["status"], "committed", "{r}");
        // a2's allow preview expired.
        assert_eq!(
            err(&g, "execute_action", a2.clone()).error,
            ErrorCode::StaleTarget
        );
        (s, l, a2)
    };
    // The expiry is in the journal: a restarted server refuses it just the same.
    let g = kernel(&e, &db, &clock);
    let refused = err(&g, "execute_action", a2.clone());
    assert_eq!(refused.error, ErrorCode::StaleTarget, "{refused:?}");
    assert_eq!(refused.details["reason"], "preview_expired");
    assert_eq!(journal(&db, &l), (2, 0, 2), "no receipt, no budget unit");
    // Previewed again, it runs.
    ok(&g, "preview_action", a2.clone());
    let r = ok(&g, "execute_action", a2)["receipt"].clone();
    assert_eq!(r["status"], "committed", "{r}");
    assert_eq!(journal(&db, &l), (3, 0, 3));
    assert!(event_types(&g, &s).contains(&"action.committed".to_string()));
}

/// The same action previewed again with the same arguments while its envelope is
/// valid answers that envelope unchanged — also after a restart — so a client can
/// re-preview (after an approval, say) and still execute the envelope it holds. Other
/// arguments, another agent, or an expired envelope make a new one.
#[test]
fn previewing_the_same_action_again_answers_the_same_envelope() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let clock = Arc::new(ManualClock::new());
    let e = engine(json!([]));
    let (s, l, first) = {
        let g = kernel(&e, &db, &clock);
        let s = start(&g);
        let l = lease(&g, &s, 1);
        let mut a1 = Click::new(&e, &clock, &s, &l, "a1").args;
        a1["expires_in_ms"] = json!(10_000);
        let first = ok(&g, "preview_action", a1.clone());
        clock.advance(Duration::from_millis(4_000));
        assert_eq!(ok(&g, "preview_action", a1.clone()), first);
        (s, l, (a1, first))
    };
    let (a1, first) = first;
    let g = kernel(&e, &db, &clock);
    clock.advance(Duration::from_millis(4_000));
    assert_eq!(
        ok(&g, "preview_action", a1.clone()),
        first,
        "after a restart"
    );

    let mut other_agent = a1.clone();
    other_agent["agent_id"] = json!("another-agent");
    let changed = ok(&g, "preview_action", other_agent);
    assert_ne!(
        changed["envelope"]["proposedAt"],
        first["envelope"]["proposedAt"]
    );
    let mut moved = a1.clone();
    moved["arguments"]["x"] = json!(a1["arguments"]["x"].as_i64().unwrap() + 1);
    let changed = ok(&g, "preview_action", moved);
    assert_ne!(
        changed["envelope"]["argsDigest"],
        first["envelope"]["argsDigest"]
    );
    // The latest preview is the action's envelope now: the first one's arguments get a
    // new envelope, which then answers again.
    let renewed = ok(&g, "preview_action", a1.clone());
    assert_eq!(
        renewed["envelope"]["argsDigest"],
        first["envelope"]["argsDigest"]
    );
    assert_ne!(
        renewed["envelope"]["expiresAt"],
        first["envelope"]["expiresAt"]
    );
    clock.advance(Duration::from_millis(1_000));
    assert_eq!(ok(&g, "preview_action", a1.clone()), renewed);
    // Expired, it is renewed too.
    clock.advance(Duration::from_millis(10_000));
    let later = ok(&g, "preview_action", a1.clone());
    assert!(later["envelope"]["expiresAt"].as_str() > renewed["envelope"]["expiresAt"].as_str());
    let r = ok(&g, "execute_action", a1)["receipt"].clone();
    assert_eq!(r["status"], "committed", "{r}");
    assert_eq!(journal(&db, &l), (1, 0, 1));
    assert!(event_types(&g, &s).contains(&"action.committed".to_string()));
}

/// An engine whose rules make every click a `confirm`.
fn confirm_engine() -> Engine {
    engine(json!([{"match": {"tool": "pointer.click"}, "effect": "confirm"}]))
}

fn decision(session: &str, action: &str, digest: Option<&Value>) -> ApprovalDecision {
    serde_json::from_value(json!({"session_id": session, "action_id": action,
                                  "args_digest": digest}))
    .unwrap()
}

/// A grant as stored in the journal file.
fn remaining_uses(db: &Path, grant_id: &str) -> i64 {
    let conn = rusqlite::Connection::open(db).unwrap();
    let text: String = conn
        .query_row(
            "SELECT data FROM grants WHERE grant_id = ?1",
            [grant_id],
            |r| r.get(0),
        )
        .unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["remainingUses"]
        .as_i64()
        .unwrap()
}

#[test]
fn a_confirm_previews_expiry_is_journaled_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let clock = Arc::new(ManualClock::new());
    let e = confirm_engine();
    let before = status_bar(&e);
    let (s, l, a1, first, grant) = {
        let g = kernel(&e, &db, &clock);
        let s = start(&g);
        let l = lease(&g, &s, 1);
        let a1 = Click::new(&e, &clock, &s, &l, "a1").args;
        let first = ok(&g, "preview_action", a1.clone());
        assert_eq!(first["blocker"], "approval_required", "{first}");
        assert_eq!(journal(&db, &l), (0, 1, 0), "the operator's request");
        let grant = match g.decide_approval(&decision(&s, "a1", None), true) {
            Ok(Decided::Approved(grant)) => grant,
            other => panic!("{other:?}"),
        };
        // The grant lives 60 s; the preview it was given for only 1 s.
        clock.advance(Duration::from_millis(1_001));
        (s, l, a1, first, grant)
    };
    // After a restart the journaled request still knows the envelope's expiry.
    let g = kernel(&e, &db, &clock);
    assert_preview_expired(&err(&g, "execute_action", a1.clone()), &first);
    assert_eq!(remaining_uses(&db, &grant.grant_id), 1, "the grant is kept");
    assert_eq!(journal(&db, &l), (0, 1, 0), "no receipt, no budget unit");
    assert_eq!(status_bar(&e), before, "no effect");

    // Previewed again: the approval still stands for this digest, and it runs once.
    let again = ok(&g, "preview_action", a1.clone());
    assert_eq!(
        again["policy"]["grantId"],
        grant.grant_id.as_str(),
        "{again}"
    );
    let r = ok(&g, "execute_action", a1)["receipt"].clone();
    assert_eq!(r["status"], "committed", "{r}");
    assert_eq!(remaining_uses(&db, &grant.grant_id), 0);
    assert_eq!(status_bar(&e), "Submitted: ");
    assert!(event_types(&g, &s).contains(&"approval.consumed".to_string()));
}

/// The runtime-held approval: a person approves, the agent previews the same action
/// again and gets the same envelope, now executable with the grant, and executes it.
#[test]
fn after_an_approval_the_same_preview_answers_the_same_envelope_executable() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let clock = Arc::new(ManualClock::new());
    let e = confirm_engine();
    let g = kernel(&e, &db, &clock);
    let s = start(&g);
    let l = lease(&g, &s, 1);
    let mut a1 = Click::new(&e, &clock, &s, &l, "a1").args;
    a1["expires_in_ms"] = json!(10_000);
    let first = ok(&g, "preview_action", a1.clone());
    assert_eq!(first["blocker"], "approval_required", "{first}");
    let grant = match g.decide_approval(&decision(&s, "a1", None), true) {
        Ok(Decided::Approved(grant)) => grant,
        other => panic!("{other:?}"),
    };
    clock.advance(Duration::from_millis(500));
    let again = ok(&g, "preview_action", a1.clone());
    assert_eq!(again["envelope"], first["envelope"]);
    assert_eq!(again["executable"], true, "{again}");
    assert_eq!(again["policy"]["grantId"], grant.grant_id.as_str());
    let r = ok(&g, "execute_action", a1)["receipt"].clone();
    assert_eq!(r["status"], "committed", "{r}");
}

#[test]
fn an_allow_preview_replacing_a_pending_one_changes_what_the_operator_sees() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let clock = Arc::new(ManualClock::new());
    let e = confirm_engine();
    let g = kernel(&e, &db, &clock);
    let s = start(&g);
    let l = lease(&g, &s, 1);
    let a1 = Click::new(&e, &clock, &s, &l, "a1").args;
    let seen = ok(&g, "preview_action", a1)["envelope"]["argsDigest"].clone();
    assert_eq!(g.pending_approvals().unwrap().len(), 1);

    // The same action id, now an observation (`allow`): the operator must not approve
    // the click they were shown.
    let observe = json!({"session_id": s, "action_id": "a1", "tool": "window_list",
                         "arguments": {}, "mode": "foreground"});
    assert_eq!(
        ok(&g, "preview_action", observe)["policy"]["decision"],
        "allow"
    );
    assert!(g.pending_approvals().unwrap().is_empty());
    assert!(matches!(
        g.decide_approval(&decision(&s, "a1", Some(&seen)), true),
        Err(ApprovalError::Changed { .. })
    ));
    assert_eq!(
        g.decide_approval(&decision(&s, "a1", None), true)
            .unwrap_err()
            .code(),
        "not_confirm"
    );
}

#[test]
fn a_journaled_expiry_that_cannot_be_read_counts_as_expired() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let clock = Arc::new(ManualClock::new());
    let e = confirm_engine();
    let (s, a1) = {
        let g = kernel(&e, &db, &clock);
        let s = start(&g);
        let l = lease(&g, &s, 1);
        let a1 = Click::new(&e, &clock, &s, &l, "a1").args;
        ok(&g, "preview_action", a1.clone());
        approve_and_keep(&g, &s);
        (s, a1)
    };
    // The preview as a damaged journal would hold it (read after a restart).
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE previews SET envelope = json_set(envelope, '$.expiresAt', 'soon')
         WHERE session_id = ?1",
        [&s],
    )
    .unwrap();
    drop(conn);
    let g = kernel(&e, &db, &clock);
    let refused = err(&g, "execute_action", a1);
    assert_eq!(refused.error, ErrorCode::StaleTarget, "{refused:?}");
    assert_eq!(refused.details["expiredAt"], "soon");
}

fn approve_and_keep(g: &Governance, session: &str) {
    assert!(matches!(
        g.decide_approval(&decision(session, "a1", None), true),
        Ok(Decided::Approved(_))
    ));
}

#[test]
fn previewing_a_pending_action_again_keeps_then_renews_what_the_operator_may_approve() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let clock = Arc::new(ManualClock::new());
    let e = confirm_engine();
    let (_, bus) = e.subscribe(1024, None);
    let g = kernel(&e, &db, &clock);
    let s = start(&g);
    let l = lease(&g, &s, 1);
    let a1 = Click::new(&e, &clock, &s, &l, "a1").args;
    let first = ok(&g, "preview_action", a1.clone());
    clock.advance(Duration::from_millis(900));
    // Within its validity the same envelope is answered, and the request still waits.
    assert_eq!(ok(&g, "preview_action", a1.clone()), first);
    let requested = || {
        std::iter::from_fn(|| bus.rx.try_recv().ok())
            .filter(|ev| ev.kind == cc_governance::approvals::EVENT_REQUESTED)
            .count()
    };
    assert_eq!(requested(), 1, "announced once: it never stopped waiting");
    // Past its expiry nothing waits; previewing again renews the envelope and the request.
    clock.advance(Duration::from_millis(200));
    assert!(g.pending_approvals().unwrap().is_empty());
    let second = ok(&g, "preview_action", a1.clone());
    assert_eq!(
        second["envelope"]["argsDigest"],
        first["envelope"]["argsDigest"]
    );
    let pending = g.pending_approvals().unwrap();
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0].expires_at, second["envelope"]["expiresAt"]);
    assert_ne!(pending[0].expires_at, first["envelope"]["expiresAt"]);
    assert_eq!(requested(), 1, "announced again: it had stopped waiting");
    let seen = second["envelope"]["argsDigest"].clone();
    assert!(matches!(
        g.decide_approval(&decision(&s, "a1", Some(&seen)), true),
        Ok(Decided::Approved(_))
    ));
    let r = ok(&g, "execute_action", a1)["receipt"].clone();
    assert_eq!(r["status"], "committed", "{r}");
}
