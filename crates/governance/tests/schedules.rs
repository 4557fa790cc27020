//! Property tests: random schedules of lease, reservation and receipt operations
//! against the real kernel (a temp SQLite file, the virtual desktop through the
//! engine), on the kernel's manual clock so expiry is reached by moving time.
//!
//! Every governed action types one character into the form's Name field (by
//! `keyboard.type`, or as the first item of a `batch.execute`), a distinct character per
//! `(session, action id, arguments)`, so the field's text counts the
//! effects of each action exactly. Invariants:
//! * never more than one effect per action id (and a replay answers the same receipt);
//! * never beyond budget: `actionsUsed ≤ actionBudget` for every lease, and the number
//!   of effects ≤ the budget units consumed;
//! * no active lease right after `emergency_stop`;
//! * no receipt left `pending`, and every session's hash chain verifies at the end.

use crate::support;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cc_contract::{ErrorCode, SessionEvent, format_timestamp};
use cc_desktop::VirtualDesktop;
use cc_engine::Engine;
use cc_engine::clock::{Clock, ManualClock};
use cc_engine::config::ConfigStack;
use cc_governance::{Governance, verify_chain};
use proptest::prelude::*;
use serde_json::{Value, json};

const SESSIONS: usize = 2;
const ACTION_IDS: usize = 3;

#[derive(Debug, Clone)]
enum Op {
    Acquire {
        session: usize,
        exclusive: bool,
        budget: u32,
        ttl_s: u64,
    },
    Release {
        session: usize,
        lease: usize,
    },
    Reserve {
        session: usize,
        app: usize,
        ttl_s: u64,
    },
    ReleaseReservation {
        session: usize,
        reservation: usize,
    },
    Execute {
        session: usize,
        lease: usize,
        action: usize,
        variant: usize,
    },
    Advance {
        ms: u64,
    },
    EmergencyStop,
    Restart,
    Resume {
        session: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let s = 0..SESSIONS;
    prop_oneof![
        3 => (s.clone(), any::<bool>(), 1u32..4, 1u64..6).prop_map(|(session, exclusive, budget, ttl_s)| {
            Op::Acquire { session, exclusive, budget, ttl_s }
        }),
        1 => (s.clone(), 0usize..8).prop_map(|(session, lease)| Op::Release { session, lease }),
        1 => (s.clone(), 0usize..2, 1u64..4).prop_map(|(session, app, ttl_s)| Op::Reserve { session, app, ttl_s }),
        1 => (s.clone(), 0usize..8).prop_map(|(session, reservation)| Op::ReleaseReservation { session, reservation }),
        8 => (s.clone(), 0usize..4, 0..ACTION_IDS, 0usize..2).prop_map(|(session, lease, action, variant)| {
            Op::Execute { session, lease, action, variant }
        }),
        2 => (0u64..2500).prop_map(|ms| Op::Advance { ms }),
        1 => Just(Op::EmergencyStop),
        1 => Just(Op::Restart),
        2 => s.prop_map(|session| Op::Resume { session }),
    ]
}

/// The character an action types: one per (session, action id, variant).
fn mark(session: usize, action: usize, variant: usize) -> char {
    let i = (session * ACTION_IDS + action) * 2 + variant;
    char::from(b'a' + u8::try_from(i).expect("few marks"))
}

struct World {
    _dir: tempfile::TempDir,
    db: std::path::PathBuf,
    engine: Engine,
    clock: Arc<ManualClock>,
    /// `None` only inside a restart: the old kernel is gone before the new one opens,
    /// as when a process dies (one server per journal).
    g: Option<Governance>,
    form: Value,
    sessions: Vec<String>,
    /// Leases acquired, in order: (session, id), any state.
    leases: Vec<(usize, String)>,
    reservations: Vec<String>,
    /// Receipt id answered per (session, action id, variant).
    receipts: HashMap<(usize, usize, usize), String>,
}

fn open(engine: &Engine, db: &Path, clock: &Arc<ManualClock>) -> Governance {
    Governance::open_with_clock(engine.clone(), db, "local-user", clock.clone()).unwrap()
}

impl World {
    fn g(&self) -> &Governance {
        self.g.as_ref().expect("a kernel outside a restart")
    }

    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("journal.db");
        let engine = Engine::new(Box::new(VirtualDesktop::default()), ConfigStack::new());
        assert!(engine.start(&json!({})).ok);
        let clock = Arc::new(ManualClock::new());
        let g = open(&engine, &db, &clock);
        let form = support::form(&engine).window;
        let mut w = World {
            _dir: dir,
            db,
            engine,
            clock,
            g: Some(g),
            form,
            sessions: Vec::new(),
            leases: Vec::new(),
            reservations: Vec::new(),
            receipts: HashMap::new(),
        };
        for _ in 0..SESSIONS {
            let s = w.call("start_session", json!({})).unwrap()["session"]["sessionId"]
                .as_str()
                .unwrap()
                .to_string();
            w.sessions.push(s);
        }
        w
    }

    fn call(&self, tool: &str, args: Value) -> Result<Value, cc_contract::ContractError> {
        self.g().call(tool, &args).expect("a governed tool")
    }

    fn name_field(&self) -> String {
        support::name_field(&self.engine, &self.form)
    }

    fn lease_rows(&self) -> Vec<cc_contract::ControlLease> {
        let conn = rusqlite::Connection::open(&self.db).unwrap();
        let mut stmt = conn.prepare("SELECT data FROM leases").unwrap();
        stmt.query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .map(|t| serde_json::from_str(&t.unwrap()).unwrap())
            .collect()
    }

    fn target(&self) -> Value {
        let w = &self.form;
        json!({"platform": "virtual", "appId": "cc-form", "pid": w["pid"], "windowId": w["id"],
               "bounds": w["rect"], "observationId": "obs", "confidence": 1,
               "capturedAt": format_timestamp(time::OffsetDateTime::from(self.clock.wall()))})
    }

    /// Applies one operation and checks what must hold right after it.
    fn apply(&mut self, op: &Op) {
        use ErrorCode::*;
        match *op {
            Op::Acquire {
                session,
                exclusive,
                budget,
                ttl_s,
            } => {
                let r = self.call(
                    "acquire_control_lease",
                    json!({"session_id": self.sessions[session],
                           "kind": if exclusive { "exclusive" } else { "cooperative" },
                           "mode": "foreground", "ttl_ms": ttl_s * 1000, "action_budget": budget}),
                );
                match r {
                    Ok(v) => self
                        .leases
                        .push((session, v["lease"]["leaseId"].as_str().unwrap().to_string())),
                    Err(e) => assert!(
                        [LeaseConflict, SessionNotRunning].contains(&e.error),
                        "{e:?}"
                    ),
                }
            }
            Op::Release { session, lease } => {
                let Some((_, l)) = self.leases.get(lease) else {
                    return;
                };
                if let Err(e) = self.call(
                    "release_control_lease",
                    json!({"session_id": self.sessions[session], "lease_id": l}),
                ) {
                    assert!([LeaseNotActive, LeaseConflict].contains(&e.error), "{e:?}");
                }
            }
            Op::Reserve {
                session,
                app,
                ttl_s,
            } => {
                let app_id = ["cc-form", "cc-list"][app];
                let r = self.call(
                    "reserve_target",
                    json!({"session_id": self.sessions[session], "intent_id": format!("i{app}"),
                           "app_id": app_id, "ttl_ms": ttl_s * 1000}),
                );
                match r {
                    Ok(v) => self.reservations.push(
                        v["reservation"]["reservationId"]
                            .as_str()
                            .unwrap()
                            .to_string(),
                    ),
                    Err(e) => assert!(
                        [TargetConflict, SessionNotRunning].contains(&e.error),
                        "{e:?}"
                    ),
                }
            }
            Op::ReleaseReservation {
                session,
                reservation,
            } => {
                let Some(r) = self.reservations.get(reservation) else {
                    return;
                };
                if let Err(e) = self.call(
                    "release_target_reservation",
                    json!({"session_id": self.sessions[session], "reservation_id": r}),
                ) {
                    assert_eq!(e.error, ReservationNotActive, "{e:?}");
                }
            }
            Op::Execute {
                session,
                lease,
                action,
                variant,
            } => self.execute(session, lease, action, variant),
            Op::Advance { ms } => self.clock.advance(Duration::from_millis(ms)),
            Op::EmergencyStop => {
                self.call("emergency_stop", json!({})).unwrap();
                let active: Vec<_> = self
                    .lease_rows()
                    .into_iter()
                    .filter(|l| l.state == cc_contract::LeaseState::Active)
                    .collect();
                assert!(active.is_empty(), "active after emergency_stop: {active:?}");
                // The operator releases the engine's panic so the schedule goes on.
                assert!(self.engine.panic(&json!({"on": false})).ok);
            }
            Op::Restart => {
                self.g = None;
                self.g = Some(open(&self.engine, &self.db, &self.clock));
                self.g().recover().unwrap();
            }
            Op::Resume { session } => {
                if let Err(e) = self.call(
                    "resume_session",
                    json!({"session_id": self.sessions[session]}),
                ) {
                    assert_eq!(e.error, SessionNotRunning, "{e:?}");
                }
            }
        }
    }

    fn execute(&mut self, session: usize, lease: usize, action: usize, variant: usize) {
        use ErrorCode::*;
        // 0..=2: one of the session's leases, newest first (most schedules act on a
        // live one); 3: the newest lease of any session (often another session's).
        let own: Vec<&String> = self
            .leases
            .iter()
            .rev()
            .filter(|(s, _)| *s == session)
            .map(|(_, id)| id)
            .collect();
        let lease_id = if lease < 3 && !own.is_empty() {
            Some(own[lease % own.len()])
        } else {
            self.leases.last().map(|(_, id)| id)
        }
        .cloned()
        .unwrap_or_else(|| "lea-none".into());
        // Variant 0 types its mark with `keyboard.type`; variant 1 as the first item of
        // a batch (whose second item only waits), so batches go through the same
        // one-effect and budget checks.
        let text = mark(session, action, variant).to_string();
        let (tool, arguments) = if variant == 0 {
            ("keyboard_type", json!({"text": text}))
        } else {
            (
                "batch_execute",
                json!({"items": [{"tool": "keyboard.type", "arguments": {"text": text}},
                                 {"tool": "wait.pause", "arguments": {"ms": 0}}]}),
            )
        };
        let args = json!({"session_id": self.sessions[session], "action_id": format!("a{action}"),
                          "lease_id": lease_id, "tool": tool, "arguments": arguments,
                          "mode": "foreground", "target": self.target()});
        let before = self.name_field();
        let key = (session, action, variant);
        match self.call("execute_action", args) {
            Ok(v) => {
                let receipt = &v["receipt"];
                let id = receipt["receiptId"].as_str().unwrap().to_string();
                assert_eq!(receipt["status"], "committed", "{receipt}");
                if let Some(first) = self.receipts.get(&key) {
                    assert_eq!(*first, id, "a replay answers the stored receipt");
                    assert_eq!(self.name_field(), before, "a replay never acts");
                }
                let other = (session, action, 1 - variant);
                assert!(
                    !self.receipts.contains_key(&other),
                    "one id, two digests, both accepted"
                );
                self.receipts.insert(key, id);
            }
            Err(e) => {
                assert!(
                    [
                        LeaseNotActive,
                        LeaseExpired,
                        LeaseRevoked,
                        LeaseConflict,
                        SessionNotRunning,
                        ActionIdConflict,
                    ]
                    .contains(&e.error),
                    "{e:?}"
                );
                assert_eq!(self.name_field(), before, "a refusal never acts");
            }
        }
    }

    /// The invariants that hold at the end of every schedule.
    fn check(&self) {
        let text = self.name_field();
        for session in 0..SESSIONS {
            for action in 0..ACTION_IDS {
                let effects: usize = (0..2)
                    .map(|v| text.matches(mark(session, action, v)).count())
                    .sum();
                assert!(
                    effects <= 1,
                    "action a{action} acted {effects} times: {text:?}"
                );
            }
        }
        let leases = self.lease_rows();
        let used: u32 = leases.iter().map(|l| l.actions_used).sum();
        for l in &leases {
            assert!(l.actions_used <= l.action_budget, "{l:?}");
        }
        assert!(
            text.chars().count() <= used as usize,
            "{} effects, {used} budget units",
            text.chars().count()
        );
        assert_eq!(text.chars().count(), self.receipts.len());
        let conn = rusqlite::Connection::open(&self.db).unwrap();
        let pending: i64 = conn
            .query_row(
                "SELECT count(*) FROM receipts WHERE json_extract(data, '$.status') = 'pending'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(pending, 0);
        for s in &self.sessions {
            let page = self
                .call("get_session_events", json!({"session_id": s}))
                .unwrap();
            let events: Vec<SessionEvent> = serde_json::from_value(page["events"].clone()).unwrap();
            assert!(events.len() < 1000, "one page holds the chain");
            assert_eq!(verify_chain(&events), Ok(()));
            assert_eq!(self.g().verify_session_chain(s).unwrap(), Ok(()));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_schedules_keep_the_invariants(ops in proptest::collection::vec(op(), 1..40)) {
        let mut world = World::new();
        for op in &ops {
            world.apply(op);
        }
        world.check();
    }
}
