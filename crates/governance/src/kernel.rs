//! The kernel handle: the engine, the host's principal and the journal connection.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use cc_contract::ErrorCode;
use cc_engine::Engine;
use cc_engine::clock::{Clock, SystemClock};
use rusqlite::{Connection, Transaction};
use serde::Serialize;
use serde_json::Value;

use crate::args::{self, parse};
use crate::error::{GovResult, db, fail, storage};
use crate::journal_lock::JournalLock;
use crate::store;

/// The governed kernel. One per server; operations serialize on the journal
/// connection, which also serializes governed executions (two actions can never race
/// for one lease's budget).
pub struct Governance {
    pub(crate) engine: Engine,
    pub(crate) principal: String,
    /// Every expiry decision (leases, reservations, grants, envelopes, evidence age)
    /// reads this clock, so tests can move time instead of sleeping.
    clock: Arc<dyn Clock>,
    /// Shared by the kernels of every principal of the process ([`Governance::for_principal`]).
    conn: Arc<Mutex<Connection>>,
    /// Held while any kernel of the process lives: one server per journal.
    _lock: Arc<JournalLock>,
}

impl Governance {
    /// Opens the journal at `db_path` for the host's `principal_id` (config
    /// `governance.principal_id`, or the identity of an HTTP token): never taken from
    /// tool arguments.
    pub fn open(
        engine: Engine,
        db_path: &Path,
        principal_id: impl Into<String>,
    ) -> GovResult<Self> {
        Self::open_with_clock(engine, db_path, principal_id, Arc::new(SystemClock))
    }

    /// [`Governance::open`] with an injected clock (a `ManualClock` in tests, so
    /// expiry is reached by advancing time, never by sleeping).
    pub fn open_with_clock(
        engine: Engine,
        db_path: &Path,
        principal_id: impl Into<String>,
        clock: Arc<dyn Clock>,
    ) -> GovResult<Self> {
        let principal = principal_id.into();
        if principal.is_empty() {
            return Err(fail(ErrorCode::InvalidArguments, "principal_id is empty"));
        }
        // The lock first: a second server must not even recover the journal.
        let lock = JournalLock::acquire(db_path)?;
        let conn = match store::open(db_path) {
            Ok(conn) => conn,
            Err(e) => {
                lock.abandon();
                return Err(e);
            }
        };
        Ok(Governance {
            engine,
            principal,
            clock,
            conn: Arc::new(Mutex::new(conn)),
            _lock: Arc::new(lock),
        })
    }

    /// The kernel clock's wall time: what every expiry is decided against.
    pub(crate) fn now(&self) -> time::OffsetDateTime {
        time::OffsetDateTime::from(self.clock.wall())
    }

    /// The principal every operation acts for.
    pub fn principal(&self) -> &str {
        &self.principal
    }

    /// The same kernel (engine, clock, journal connection) acting for another
    /// principal: over HTTP each token's identity is one. Operations of every principal
    /// still serialize on the one connection.
    pub fn for_principal(&self, principal_id: impl Into<String>) -> GovResult<Governance> {
        let principal = principal_id.into();
        if principal.is_empty() {
            return Err(fail(ErrorCode::InvalidArguments, "principal_id is empty"));
        }
        Ok(Governance {
            engine: self.engine.clone(),
            principal,
            clock: self.clock.clone(),
            conn: self.conn.clone(),
            _lock: self._lock.clone(),
        })
    }

    /// Whether the journal takes writes now: a write transaction is begun and rolled
    /// back, so nothing is written. A health check calls it; the error says why not
    /// (another writer holds the journal past the busy timeout, the file or its volume
    /// became read-only).
    pub fn probe_journal(&self) -> GovResult<()> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(db)?;
        tx.rollback().map_err(db)
    }

    /// The engine underneath.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Dispatches a governed tool by name; `None` when `tool` is not one. Results
    /// follow upstream v8: `{session}`, `{lease}`, `{reservation}`,
    /// `{receipt, replay, output?}`, `{follow_up}`, `{follow_ups, next_sequence}`,
    /// `{deletion}`, `{deletions}`, the preview itself, and the audit-export page for
    /// events.
    pub fn call(&self, tool: &str, arguments: &Value) -> Option<GovResult<Value>> {
        Some(match tool {
            "start_session" => {
                parse(arguments).and_then(|a| wrap("session", self.start_session(&a)))
            }
            "get_session" => parse::<args::SessionRef>(arguments)
                .and_then(|a| wrap("session", self.get_session(&a.session_id))),
            "pause_session" => parse::<args::SessionRef>(arguments)
                .and_then(|a| wrap("session", self.pause_session(&a))),
            "resume_session" => parse::<args::SessionRef>(arguments)
                .and_then(|a| wrap("session", self.resume_session(&a.session_id))),
            "stop_session" => parse(arguments).and_then(|a| wrap("session", self.stop_session(&a))),
            "get_session_events" => parse(arguments).and_then(|a| self.get_session_events(&a)),
            "get_execution_capabilities" => self.get_execution_capabilities(arguments),
            "preview_action" => parse(arguments).and_then(|a| json(self.preview_action(&a))),
            "execute_action" => parse(arguments)
                .and_then(|a| self.execute_action(&a))
                .and_then(|x| x.to_json()),
            "acquire_control_lease" => {
                parse(arguments).and_then(|a| wrap("lease", self.acquire_lease(&a)))
            }
            "release_control_lease" => {
                parse(arguments).and_then(|a| wrap("lease", self.release_lease(&a)))
            }
            "reserve_target" => {
                parse(arguments).and_then(|a| wrap("reservation", self.reserve_target(&a)))
            }
            "release_target_reservation" => {
                parse(arguments).and_then(|a| wrap("reservation", self.release_reservation(&a)))
            }
            "emergency_stop" => parse(arguments).and_then(|a| self.emergency_stop(&a)),
            "get_follow_ups" => parse(arguments).and_then(|a| self.get_follow_ups(&a)),
            "submit_follow_up" => {
                parse(arguments).and_then(|a| wrap("follow_up", self.submit_follow_up(&a)))
            }
            "delete_session" => {
                parse(arguments).and_then(|a| wrap("deletion", self.delete_session(&a)))
            }
            "prune_sessions" => parse(arguments).and_then(|a| self.prune_sessions(&a)),
            _ => return None,
        })
    }

    /// The journal connection (poisoning is ignored: every write is transactional, so
    /// a panic mid-operation left nothing half-written).
    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` in one transaction, committed only when `f` succeeds.
    pub(crate) fn with_tx<T>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> GovResult<T>,
    ) -> GovResult<T> {
        let mut conn = self.conn();
        in_tx(&mut conn, f)
    }
}

/// Runs `f` in one transaction on an already locked connection.
pub(crate) fn in_tx<T>(
    conn: &mut Connection,
    f: impl FnOnce(&Transaction<'_>) -> GovResult<T>,
) -> GovResult<T> {
    let tx = conn.transaction().map_err(db)?;
    let out = f(&tx)?;
    tx.commit().map_err(db)?;
    Ok(out)
}

/// Runs `f` in one transaction that is committed even when `f`'s inner result is an
/// error: for refusals that must leave a trace (a lease revoked for a boundary escape,
/// an expired lease marked expired).
pub(crate) fn in_tx_keep<T>(
    conn: &mut Connection,
    f: impl FnOnce(&Transaction<'_>) -> GovResult<GovResult<T>>,
) -> GovResult<T> {
    let tx = conn.transaction().map_err(db)?;
    let out = f(&tx)?;
    tx.commit().map_err(db)?;
    out
}

/// `{key: object}`: the upstream v8 result shape (`structuredContent.session`,
/// `.lease`, `.reservation`, `.receipt`), so existing clients read the same paths.
fn wrap<T: Serialize>(key: &str, r: GovResult<T>) -> GovResult<Value> {
    json(r).map(|v| {
        let mut m = serde_json::Map::new();
        m.insert(key.to_string(), v);
        Value::Object(m)
    })
}

fn json<T: Serialize>(r: GovResult<T>) -> GovResult<Value> {
    r.and_then(|v| serde_json::to_value(v).map_err(storage))
}
