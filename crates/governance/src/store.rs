//! The SQLite journal: one WAL database holding sessions, the per-session event hash
//! chain, receipts, leases, reservations, grants, the envelopes previewed last, the
//! approval requests the operator decides on, and the sessions' follow-up instructions.
//!
//! Each row keeps the contract object as JSON (`data`) next to the few columns that are
//! looked up by. The object is the source of truth, so what a client receives is exactly
//! what was stored. Every state change is written with its event inside one
//! transaction (the callers own the transaction), so a restart never sees a change
//! without its event or the reverse.

use std::path::Path;

use cc_contract::digest::GENESIS_HASH;
use cc_contract::{EventIntegrity, EventSchemaVersion, ExecutionReceipt, SessionEvent, event_hash};
use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::{GovResult, db, storage};
use crate::util::{new_id, now, ts};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    principal_id TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    session_id TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    hash TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (session_id, sequence)
);
CREATE TABLE IF NOT EXISTS receipts (
    session_id TEXT NOT NULL,
    action_id TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (session_id, action_id)
);
CREATE TABLE IF NOT EXISTS leases (
    lease_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    state TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS reservations (
    reservation_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    state TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS approval_requests (
    session_id TEXT NOT NULL,
    action_id TEXT NOT NULL,
    action_digest TEXT NOT NULL,
    status TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    preview TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (session_id, action_id)
);
-- The envelope each action was last previewed as (see previews.rs).
CREATE TABLE IF NOT EXISTS previews (
    session_id TEXT NOT NULL,
    action_id TEXT NOT NULL,
    action_digest TEXT NOT NULL,
    decision TEXT NOT NULL,
    envelope TEXT NOT NULL,
    PRIMARY KEY (session_id, action_id)
);
CREATE TABLE IF NOT EXISTS grants (
    grant_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    action_digest TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS follow_ups (
    session_id TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (session_id, sequence)
);
-- The lookups that are not by primary key: every preview prunes expired approval
-- requests, the operator lists pending ones, and lease and reservation checks read the
-- active rows. Without these each would scan its whole table as the journal grows.
CREATE INDEX IF NOT EXISTS approval_requests_by_expiry ON approval_requests (expires_at);
CREATE INDEX IF NOT EXISTS approval_requests_by_status ON approval_requests (status);
CREATE INDEX IF NOT EXISTS leases_by_state ON leases (state);
CREATE INDEX IF NOT EXISTS reservations_by_state ON reservations (state);
CREATE INDEX IF NOT EXISTS grants_by_action ON grants (session_id, action_digest);
";

/// Opens (creating if needed) the journal at `path`, in WAL mode with full sync, so
/// an acknowledged write survives a crash of the process or the machine. The journal
/// and its side files are readable by their owner only (`make_private`).
pub fn open(path: &Path) -> GovResult<Connection> {
    make_private(path)?;
    let conn = Connection::open(path).map_err(db)?;
    let mode: String = conn
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .map_err(db)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(storage(format!("journal_mode is {mode}, not wal")));
    }
    conn.execute_batch("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")
        .map_err(db)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .map_err(db)?;
    conn.execute_batch(SCHEMA).map_err(db)?;
    Ok(conn)
}

/// The journal holds every governed action's arguments, targets and receipts: no other
/// account may read it. Creates it 0600 when it is missing (SQLite gives its `-wal`,
/// `-shm` and `-journal` side files the database's mode) and takes group and other
/// access away from an existing journal and side files.
#[cfg(unix)]
fn make_private(path: &Path) -> GovResult<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path);
    match created {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(storage(format!("cannot create {}: {e}", path.display()))),
    }
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let file = std::path::PathBuf::from(name);
        let Ok(meta) = std::fs::metadata(&file) else {
            continue;
        };
        let mode = meta.permissions().mode();
        if mode & 0o077 != 0 {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode & 0o700))
                .map_err(|e| {
                    storage(format!(
                        "{} is readable by other accounts and cannot be made private: {e}",
                        file.display()
                    ))
                })?;
        }
    }
    Ok(())
}

#[cfg(not(unix))]
fn make_private(_path: &Path) -> GovResult<()> {
    Ok(())
}

/// Serializes a contract object for a `data` column.
pub fn to_json<T: Serialize>(value: &T) -> GovResult<String> {
    serde_json::to_string(value).map_err(storage)
}

/// Decodes a `data` column; a row that no longer decodes is reported, not skipped.
pub fn from_json<T: DeserializeOwned>(text: &str) -> GovResult<T> {
    serde_json::from_str(text).map_err(storage)
}

/// Reads one `data` column by a single-key query.
pub fn get_one<T: DeserializeOwned>(
    tx: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> GovResult<Option<T>> {
    // Cached: the same few statements run on every governed call.
    let text: Option<String> = tx
        .prepare_cached(sql)
        .and_then(|mut stmt| stmt.query_row(params, |r| r.get(0)).optional())
        .map_err(db)?;
    text.map(|t| from_json(&t)).transpose()
}

/// Reads every `data` column of a query.
pub fn get_all<T: DeserializeOwned>(
    tx: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> GovResult<Vec<T>> {
    let mut stmt = tx.prepare_cached(sql).map_err(db)?;
    let rows = stmt
        .query_map(params, |r| r.get::<_, String>(0))
        .map_err(db)?;
    let mut out = Vec::new();
    for row in rows {
        out.push(from_json(&row.map_err(db)?)?);
    }
    Ok(out)
}

/// Appends an event to the session's chain: the next sequence, `previousHash` = the
/// hash of the last event (genesis for the first), `hash` per `cc_contract::event_hash`.
pub fn append_event(
    tx: &Transaction<'_>,
    session_id: &str,
    action_id: Option<&str>,
    event_type: &str,
    principal_id: Option<&str>,
    payload: Value,
) -> GovResult<SessionEvent> {
    let last: Option<(u64, String)> = tx
        .prepare_cached(
            "SELECT sequence, hash FROM events WHERE session_id = ?1
             ORDER BY sequence DESC LIMIT 1",
        )
        .and_then(|mut stmt| {
            stmt.query_row(params![session_id], |r| {
                Ok((r.get::<_, i64>(0)?.max(0) as u64, r.get(1)?))
            })
            .optional()
        })
        .map_err(db)?;
    let (sequence, previous) = match last {
        Some((seq, hash)) => (seq + 1, hash),
        None => (1, GENESIS_HASH.to_string()),
    };
    let payload = match payload {
        Value::Object(map) => map,
        Value::Null => Map::new(),
        other => {
            let mut map = Map::new();
            map.insert("value".into(), other);
            map
        }
    };
    let mut event = SessionEvent {
        schema_version: EventSchemaVersion,
        event_id: new_id("evt"),
        sequence,
        session_id: session_id.to_string(),
        action_id: action_id.map(str::to_string),
        event_type: event_type.to_string(),
        at: ts(now()),
        principal_id: principal_id.map(str::to_string),
        payload,
        integrity: None,
    };
    let hash = event_hash(&previous, &event);
    event.integrity = Some(EventIntegrity {
        previous_hash: previous,
        hash: hash.clone(),
    });
    let seq = i64::try_from(sequence).map_err(storage)?;
    let data = to_json(&event)?;
    tx.prepare_cached(
        "INSERT INTO events (session_id, sequence, hash, data) VALUES (?1, ?2, ?3, ?4)",
    )
    .and_then(|mut stmt| stmt.execute(params![session_id, seq, hash, data]))
    .map_err(db)?;
    Ok(event)
}

/// The events of a session after `after` (exclusive), at most `limit`, in order.
pub fn events(
    conn: &Connection,
    session_id: &str,
    after: u64,
    limit: u32,
) -> GovResult<Vec<SessionEvent>> {
    let after = i64::try_from(after).unwrap_or(i64::MAX);
    get_all(
        conn,
        "SELECT data FROM events WHERE session_id = ?1 AND sequence > ?2
         ORDER BY sequence LIMIT ?3",
        params![session_id, after, i64::from(limit)],
    )
}

/// Checks a chain from its first event: consecutive sequences from 1, each
/// `previousHash` the hash before it, each `hash` recomputed. Returns the first bad
/// sequence, if any.
pub fn verify_chain(events: &[SessionEvent]) -> Result<(), u64> {
    let mut previous = GENESIS_HASH.to_string();
    for (i, event) in events.iter().enumerate() {
        let expected_seq = i as u64 + 1;
        let Some(integrity) = &event.integrity else {
            return Err(event.sequence);
        };
        if event.sequence != expected_seq
            || integrity.previous_hash != previous
            || event_hash(&previous, event) != integrity.hash
        {
            return Err(event.sequence);
        }
        previous = integrity.hash.clone();
    }
    Ok(())
}

/// Writes a receipt (a new one, or its next status), whoever settles it: execute, or
/// recovery after a restart.
pub(crate) fn save_receipt(tx: &Transaction<'_>, r: &ExecutionReceipt) -> GovResult<()> {
    tx.execute(
        "INSERT INTO receipts (session_id, action_id, data) VALUES (?1, ?2, ?3)
         ON CONFLICT(session_id, action_id) DO UPDATE SET data = excluded.data",
        params![r.session_id, r.action_id, to_json(r)?],
    )
    .map_err(db)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chain(n: usize) -> (tempfile::TempDir, Vec<SessionEvent>) {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = open(&dir.path().join("j.db")).unwrap();
        let tx = conn.transaction().unwrap();
        for i in 0..n {
            append_event(&tx, "s1", None, "test.event", Some("p"), json!({"i": i})).unwrap();
        }
        // Another session's chain is independent.
        append_event(&tx, "s2", None, "test.event", None, json!({})).unwrap();
        tx.commit().unwrap();
        let events = events(&conn, "s1", 0, 1000).unwrap();
        (dir, events)
    }

    #[test]
    fn the_chain_links_and_verifies() {
        let (_dir, events) = chain(3);
        assert_eq!(events.len(), 3);
        assert_eq!(
            events[0].integrity.as_ref().unwrap().previous_hash,
            GENESIS_HASH
        );
        assert_eq!(
            events[1].integrity.as_ref().unwrap().previous_hash,
            events[0].integrity.as_ref().unwrap().hash
        );
        assert_eq!(verify_chain(&events), Ok(()));
    }

    #[test]
    fn tampering_is_detected_at_the_first_bad_event() {
        let (_dir, events) = chain(3);
        let mut edited = events.clone();
        edited[1].payload.insert("i".into(), json!(42));
        assert_eq!(verify_chain(&edited), Err(2));
        let mut dropped = events.clone();
        dropped.remove(1);
        assert_eq!(verify_chain(&dropped), Err(3));
        let mut reordered = events;
        reordered.swap(0, 1);
        assert_eq!(verify_chain(&reordered), Err(2));
    }

    #[test]
    fn the_journal_is_in_wal_mode() {
        let dir = tempfile::tempdir().unwrap();
        let conn = open(&dir.path().join("j.db")).unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }

    /// Reads the mode of `path` (permission bits only).
    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[cfg(unix)]
    #[test]
    fn the_journal_and_its_side_files_are_the_owners_alone() {
        let (dir, _) = chain(2);
        let db = dir.path().join("j.db");
        // The connection is closed: open a new one so the WAL and SHM files exist.
        let conn = open(&db).unwrap();
        conn.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
        for side in ["j.db", "j.db-wal", "j.db-shm"] {
            let p = dir.path().join(side);
            assert!(p.exists(), "{side}");
            assert_eq!(mode(&p), 0o600, "{side}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn an_existing_journal_readable_by_others_is_made_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("j.db");
        drop(open(&db).unwrap());
        let wal = dir.path().join("j.db-wal");
        std::fs::write(&wal, b"").unwrap();
        for p in [&db, &wal] {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        let conn = open(&db).unwrap();
        conn.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
        for side in ["j.db", "j.db-wal", "j.db-shm"] {
            assert_eq!(mode(&dir.path().join(side)), 0o600, "{side}");
        }
    }
}
