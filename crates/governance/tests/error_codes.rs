//! Every error code of GOVERNANCE.md Part A, provoked against the real kernel (a
//! SQLite file in a temp dir, the virtual desktop through the engine), and a final
//! check that the codes provoked are exactly the contract's governance codes — so a
//! code added to the contract without a test here fails this file.
//!
//! Codes arrive in two forms: a refusal (`isError`, `{error, message, details}`) when
//! nothing was attempted, or the `error.code` of a receipt when the pipeline ran
//! (`interrupted`, `execution_failed` from the engine). Both are checked for their
//! exact code.

use crate::support;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use cc_contract::{ErrorCode, format_timestamp};
use cc_desktop::VirtualDesktop;
use cc_engine::Engine;
use cc_engine::clock::ManualClock;
use cc_engine::config::ConfigStack;
use cc_governance::Governance;
use serde_json::{Value, json};

/// The kernel with a deny rule for `pointer.scroll` (so `policy_denied` has a rule to
/// come from), on a manual clock (so `lease_expired` needs no sleep).
struct Fx {
    _dir: tempfile::TempDir,
    db: std::path::PathBuf,
    clock: Arc<ManualClock>,
    g: Governance,
    form: Value,
    submit: (i64, i64),
}

fn fx() -> Fx {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("journal.db");
    let mut config = ConfigStack::new();
    config
        .apply(&json!({"safety": {"rules": [
            {"match": {"tool": "pointer.scroll"}, "effect": "deny"}
        ]}}))
        .unwrap();
    let engine = Engine::new(Box::new(VirtualDesktop::default()), config);
    assert!(engine.start(&json!({})).ok);
    let clock = Arc::new(ManualClock::new());
    let g = Governance::open_with_clock(engine.clone(), &db, "local-user", clock.clone()).unwrap();
    let support::Form {
        window: form,
        submit,
    } = support::form(&engine);
    Fx {
        _dir: dir,
        db,
        clock,
        g,
        form,
        submit,
    }
}

impl Fx {
    /// Another handle on the same kernel and journal (one server per journal), acting
    /// for `principal`; it has not run startup recovery.
    fn kernel(&self, principal: &str) -> Governance {
        self.g.for_principal(principal).unwrap()
    }

    fn ok(&self, tool: &str, args: Value) -> Value {
        match self.g.call(tool, &args).expect("a governed tool") {
            Ok(v) => v,
            Err(e) => panic!("{tool} failed: {e:?}"),
        }
    }

    fn session(&self) -> String {
        self.ok("start_session", json!({}))["session"]["sessionId"]
            .as_str()
            .unwrap()
            .to_string()
    }

    fn lease(&self, session: &str) -> String {
        self.ok(
            "acquire_control_lease",
            json!({"session_id": session, "kind": "cooperative", "mode": "foreground",
                   "ttl_ms": 60_000, "action_budget": 10}),
        )["lease"]["leaseId"]
            .as_str()
            .unwrap()
            .to_string()
    }

    fn target(&self) -> Value {
        let w = &self.form;
        json!({"platform": "virtual", "appId": "cc-form", "pid": w["pid"], "windowId": w["id"],
               "bounds": w["rect"], "observationId": "obs-1", "confidence": 1,
               "capturedAt": format_timestamp(time::OffsetDateTime::from(
                   cc_engine::clock::Clock::wall(self.clock.as_ref())))})
    }

    /// A governed click on Submit.
    fn click(&self, session: &str, lease: &str, action: &str) -> Value {
        json!({"session_id": session, "action_id": action, "lease_id": lease,
               "tool": "pointer_click", "arguments": {"x": self.submit.0, "y": self.submit.1},
               "mode": "foreground", "target": self.target()})
    }

    /// The code of a refusal; panics on success.
    fn refused(&self, g: &Governance, tool: &str, args: Value) -> ErrorCode {
        match g.call(tool, &args).expect("a governed tool") {
            Ok(v) => panic!("{tool} succeeded: {v}"),
            Err(e) => {
                assert!(!e.message.is_empty(), "{e:?}");
                e.error
            }
        }
    }

    /// The error code of the receipt an execute answered.
    fn receipt_code(&self, args: Value) -> ErrorCode {
        let receipt = self.ok("execute_action", args)["receipt"].clone();
        let code = receipt["error"]["code"].as_str().unwrap_or_default();
        code.parse()
            .unwrap_or_else(|_| panic!("no error code in {receipt}"))
    }
}

/// One case per code: it returns the code it provoked.
fn provoke(code: ErrorCode, x: &Fx) -> ErrorCode {
    let s = x.session();
    let l = x.lease(&s);
    match code {
        ErrorCode::ForegroundRequired => {
            let mut a = x.click(&s, &l, "fg");
            a["mode"] = json!("background");
            x.refused(&x.g, "execute_action", a)
        }
        ErrorCode::ShadowMutation => {
            let mut a = x.click(&s, &l, "shadow");
            a["mode"] = json!("shadow");
            x.refused(&x.g, "execute_action", a)
        }
        ErrorCode::StaleTarget => {
            let mut a = x.click(&s, &l, "stale");
            a["target"]["bounds"]["y"] = json!(x.form["rect"]["y"].as_i64().unwrap() + 40);
            x.refused(&x.g, "execute_action", a)
        }
        ErrorCode::LeaseConflict => x.refused(
            &x.g,
            "acquire_control_lease",
            json!({"session_id": s, "kind": "exclusive", "mode": "foreground",
                   "ttl_ms": 60_000, "action_budget": 1}),
        ),
        ErrorCode::LeaseExpired => {
            x.clock.advance(Duration::from_millis(60_001));
            x.refused(&x.g, "execute_action", x.click(&s, &l, "late"))
        }
        ErrorCode::LeaseRevoked => {
            x.ok("emergency_stop", json!({"reason": "error-code test"}));
            x.refused(&x.g, "execute_action", x.click(&s, &l, "revoked"))
        }
        ErrorCode::LeaseNotActive => {
            x.ok(
                "release_control_lease",
                json!({"session_id": s, "lease_id": l}),
            );
            x.refused(&x.g, "execute_action", x.click(&s, &l, "released"))
        }
        ErrorCode::TargetConflict => {
            x.ok(
                "reserve_target",
                json!({"session_id": s, "intent_id": "i1", "app_id": "cc-form", "ttl_ms": 60_000}),
            );
            let other = x.session();
            x.refused(
                &x.g,
                "reserve_target",
                json!({"session_id": other, "intent_id": "i2", "app_id": "cc-form", "ttl_ms": 60_000}),
            )
        }
        ErrorCode::ReservationNotActive => x.refused(
            &x.g,
            "release_target_reservation",
            json!({"session_id": s, "reservation_id": "res-none"}),
        ),
        ErrorCode::Interrupted => {
            // A long wait is in flight (its `pending` receipt is in the journal) when
            // the emergency stop engages the engine's panic: the wait is pre-empted and
            // the receipt ends interrupted.
            let wait = json!({"session_id": s, "action_id": "wait", "lease_id": l,
                              "tool": "wait_pause", "arguments": {"ms": 30_000},
                              "mode": "foreground"});
            std::thread::scope(|scope| {
                let running = scope.spawn(|| x.receipt_code(wait));
                let conn = rusqlite::Connection::open(&x.db).unwrap();
                while conn
                    .query_row(
                        "SELECT count(*) FROM receipts WHERE action_id = 'wait'",
                        [],
                        |r| r.get::<_, i64>(0),
                    )
                    .unwrap()
                    == 0
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                x.ok("emergency_stop", json!({"reason": "interrupt the wait"}));
                running.join().unwrap()
            })
        }
        ErrorCode::ApprovalRequired => x.refused(
            &x.g,
            "execute_action",
            json!({"session_id": s, "action_id": "combo", "lease_id": l,
                   "tool": "keyboard_combo", "arguments": {"keys": ["win", "r"]},
                   "mode": "foreground", "target": x.target()}),
        ),
        ErrorCode::PolicyDenied => x.refused(
            &x.g,
            "execute_action",
            json!({"session_id": s, "action_id": "scroll", "lease_id": l,
                   "tool": "pointer_scroll", "arguments": {"x": x.submit.0, "y": x.submit.1, "amount": 1},
                   "mode": "foreground", "target": x.target()}),
        ),
        ErrorCode::ActionIdConflict => {
            x.ok("execute_action", x.click(&s, &l, "dup"));
            let mut other = x.click(&s, &l, "dup");
            other["arguments"]["x"] = json!(x.submit.0 + 1);
            x.refused(&x.g, "execute_action", other)
        }
        ErrorCode::Indeterminate => {
            // A receipt left `pending` by a process that died mid-flight (the real
            // SIGKILL is in crates/computer-control/tests/mcp_crash.rs); a handle that
            // has not run startup recovery refuses to retry it.
            let a = x.click(&s, &l, "crashed");
            x.ok("execute_action", a.clone());
            let conn = rusqlite::Connection::open(&x.db).unwrap();
            conn.execute(
                "UPDATE receipts SET data = json_set(data, '$.status', 'pending')
                 WHERE action_id = 'crashed'",
                [],
            )
            .unwrap();
            x.refused(&x.kernel("local-user"), "execute_action", a)
        }
        ErrorCode::ExecutionFailed => {
            // The engine refuses before the desktop (a snapshot it never issued): the
            // receipt is rejected with execution_failed.
            let from_engine = x.receipt_code(json!({
                "session_id": s, "action_id": "activate", "lease_id": l,
                "tool": "a11y_activate", "arguments": {"snapshot_id": "snap-none", "node_id": 1},
                "mode": "foreground", "target": x.target()}));
            assert_eq!(from_engine, ErrorCode::ExecutionFailed);
            // The journal itself fails: a refusal with the cause, nothing half-written.
            let conn = rusqlite::Connection::open(&x.db).unwrap();
            conn.execute("DROP TABLE receipts", []).unwrap();
            x.refused(&x.g, "execute_action", x.click(&s, &l, "no-journal"))
        }
        ErrorCode::PostconditionUnavailable => {
            let mut a = x.click(&s, &l, "registry");
            a["postcondition"] = json!({"kind": "registry", "path": "HKCU\\Software\\X",
                                        "name": "Enabled", "exists": true});
            x.refused(&x.g, "execute_action", a)
        }
        ErrorCode::SessionNotFound => {
            x.refused(&x.g, "get_session", json!({"session_id": "ses-none"}))
        }
        ErrorCode::SessionNotRunning => {
            x.ok("pause_session", json!({"session_id": s}));
            x.refused(&x.g, "execute_action", x.click(&s, &l, "paused"))
        }
        ErrorCode::PrincipalMismatch => x.refused(
            &x.kernel("mallory"),
            "get_session",
            json!({"session_id": s}),
        ),
        ErrorCode::InvalidArguments => x.refused(
            &x.g,
            "acquire_control_lease",
            json!({"session_id": s, "kind": "cooperative", "mode": "foreground",
                   "ttl_ms": 60_000, "action_budget": 0}),
        ),
        ErrorCode::InputAttributionUnavailable
        | ErrorCode::SessionNotTerminal
        | ErrorCode::Rejected => {
            unreachable!("not a governance code: {code}")
        }
    }
}

#[test]
fn every_governance_error_code_is_provoked() {
    let mut provoked = BTreeSet::new();
    for &code in ErrorCode::ALL {
        if !code.is_governance_code() {
            continue;
        }
        // A fresh kernel and journal per code, so no case depends on another.
        let x = fx();
        let got = provoke(code, &x);
        assert_eq!(got, code, "provoking {code}");
        provoked.insert(got);
    }
    let listed: BTreeSet<ErrorCode> = [
        "foreground_required",
        "shadow_mutation",
        "stale_target",
        "lease_conflict",
        "lease_expired",
        "lease_revoked",
        "lease_not_active",
        "target_conflict",
        "reservation_not_active",
        "interrupted",
        "approval_required",
        "policy_denied",
        "action_id_conflict",
        "indeterminate",
        "execution_failed",
        "postcondition_unavailable",
        "session_not_found",
        "session_not_running",
        "principal_mismatch",
        "invalid_arguments",
    ]
    .iter()
    .map(|c| c.parse().unwrap())
    .collect();
    // The spec's list (GOVERNANCE.md, wire rules) and the contract enum agree, and
    // every code of them was provoked above.
    let contract: BTreeSet<ErrorCode> = ErrorCode::ALL
        .iter()
        .copied()
        .filter(|c| c.is_governance_code())
        .collect();
    assert_eq!(contract, listed);
    assert_eq!(provoked, contract);
}

#[test]
fn a_failing_journal_leaves_nothing_half_applied() {
    // The storage path of execution_failed, inside receipt begin: the journal refuses
    // the receipt insert (a trigger stands in for a full disk), after the lease's
    // budget unit was written in the same transaction. The refusal must roll all of
    // it back: no budget used, no `action.started`, no receipt, the chain intact.
    let x = fx();
    let s = x.session();
    let l = x.lease(&s);
    let head =
        |x: &Fx| x.ok("get_session_events", json!({"session_id": s}))["next_sequence"].clone();
    let before = head(&x);
    let conn = rusqlite::Connection::open(&x.db).unwrap();
    conn.execute_batch(
        "CREATE TRIGGER full_disk BEFORE INSERT ON receipts
         BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;",
    )
    .unwrap();
    let e = match x.g.call("execute_action", &x.click(&s, &l, "a1")).unwrap() {
        Ok(v) => panic!("succeeded: {v}"),
        Err(e) => e,
    };
    assert_eq!(e.error, ErrorCode::ExecutionFailed);
    assert!(
        e.details["cause"]
            .as_str()
            .unwrap_or_default()
            .contains("full"),
        "{e:?}"
    );
    assert_eq!(head(&x), before, "no event survived the failed transaction");
    let used: i64 = conn
        .query_row(
            "SELECT json_extract(data, '$.actionsUsed') FROM leases WHERE lease_id = ?1",
            [&l],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(used, 0, "the budget unit was rolled back");
    let receipts: i64 = conn
        .query_row("SELECT count(*) FROM receipts", [], |r| r.get(0))
        .unwrap();
    assert_eq!(receipts, 0);
    assert_eq!(x.g.verify_session_chain(&s).unwrap(), Ok(()));
    // Once the journal accepts writes again, the same action id runs normally.
    conn.execute_batch("DROP TRIGGER full_disk").unwrap();
    let r = x.ok("execute_action", x.click(&s, &l, "a1"))["receipt"].clone();
    assert_eq!(r["status"], "committed", "{r}");
}
