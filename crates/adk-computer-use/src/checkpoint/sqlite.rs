//! [`SqliteCheckpointer`]: checkpoints in one SQLite file (WAL, `synchronous=FULL`).

use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

use cc_contract::{format_timestamp, sha256_hex};
use rusqlite::{Connection, OptionalExtension, params};
use time::OffsetDateTime;

use super::{Checkpoint, CheckpointError, CheckpointStore};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS graph_checkpoints (
    thread_id    TEXT    NOT NULL,
    step         INTEGER NOT NULL,
    node         TEXT    NOT NULL,
    state        TEXT    NOT NULL,
    state_sha256 TEXT    NOT NULL,
    created_at   TEXT    NOT NULL,
    PRIMARY KEY (thread_id, step)
);";

/// Graph checkpoints in one SQLite database file.
///
/// Every write is a durable transaction (`synchronous=FULL` under WAL): when
/// [`SqliteCheckpointer::save`] returns, a SIGKILL cannot lose the step. Each state is
/// stored with its SHA-256 so a damaged row is reported instead of resumed from.
pub struct SqliteCheckpointer {
    conn: Mutex<Connection>,
}

impl std::fmt::Debug for SqliteCheckpointer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteCheckpointer").finish_non_exhaustive()
    }
}

impl SqliteCheckpointer {
    /// Opens (creating if needed) the checkpoint database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, CheckpointError> {
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch(SCHEMA)?;
        Ok(Self {
            conn: Mutex::new(conn),
        })
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        // A poisoned lock means a panic elsewhere while holding the connection; SQLite
        // rolled back any open transaction, so the connection is still consistent.
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl CheckpointStore for SqliteCheckpointer {
    /// Records `state` as step `step` of `thread_id`, produced by `node`. Refuses to
    /// overwrite a recorded step ([`CheckpointError::StepTaken`]).
    fn save(
        &self,
        thread_id: &str,
        step: u64,
        node: &str,
        state: &str,
    ) -> Result<(), CheckpointError> {
        let step_sql = i64::try_from(step).map_err(|_| CheckpointError::State {
            thread_id: thread_id.to_owned(),
            message: format!("step {step} out of range"),
        })?;
        let result = self.conn().execute(
            "INSERT INTO graph_checkpoints (thread_id, step, node, state, state_sha256, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                thread_id,
                step_sql,
                node,
                state,
                sha256_hex(state),
                format_timestamp(OffsetDateTime::now_utc()),
            ],
        );
        match result {
            Ok(_) => Ok(()),
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::ConstraintViolation =>
            {
                Err(CheckpointError::StepTaken {
                    thread_id: thread_id.to_owned(),
                    step,
                })
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The last recorded step of `thread_id`, or `None` for a thread never run.
    fn latest(&self, thread_id: &str) -> Result<Option<Checkpoint>, CheckpointError> {
        let row = self
            .conn()
            .query_row(
                "SELECT step, node, state, state_sha256 FROM graph_checkpoints
                 WHERE thread_id = ?1 ORDER BY step DESC LIMIT 1",
                params![thread_id],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                    ))
                },
            )
            .optional()?;
        row.map(|row| checked(thread_id, row)).transpose()
    }

    /// Every recorded step of `thread_id`, in order: the audit trail of one run.
    fn history(&self, thread_id: &str) -> Result<Vec<Checkpoint>, CheckpointError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT step, node, state, state_sha256 FROM graph_checkpoints
             WHERE thread_id = ?1 ORDER BY step",
        )?;
        let rows = stmt.query_map(params![thread_id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            out.push(checked(thread_id, row?)?);
        }
        Ok(out)
    }
}

fn checked(
    thread_id: &str,
    (step, node, state, digest): (i64, String, String, String),
) -> Result<Checkpoint, CheckpointError> {
    let step = u64::try_from(step).map_err(|_| CheckpointError::Corrupt {
        thread_id: thread_id.to_owned(),
        step: 0,
    })?;
    if sha256_hex(&state) != digest {
        return Err(CheckpointError::Corrupt {
            thread_id: thread_id.to_owned(),
            step,
        });
    }
    Ok(Checkpoint {
        thread_id: thread_id.to_owned(),
        step,
        node,
        state,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, SqliteCheckpointer) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = SqliteCheckpointer::open(dir.path().join("cp.db")).expect("open");
        (dir, store)
    }

    #[test]
    fn latest_is_the_last_step_and_history_keeps_every_step() {
        let (_dir, store) = store();
        assert_eq!(store.latest("t").expect("read"), None);
        store.save("t", 0, "observe", "{\"a\":0}").expect("save");
        store.save("t", 1, "join", "{\"a\":1}").expect("save");
        store.save("other", 0, "observe", "{}").expect("save");
        let latest = store.latest("t").expect("read").expect("some");
        assert_eq!((latest.step, latest.node.as_str()), (1, "join"));
        assert_eq!(latest.state, "{\"a\":1}");
        assert_eq!(store.history("t").expect("history").len(), 2);
    }

    #[test]
    fn a_step_is_never_overwritten() {
        let (_dir, store) = store();
        store.save("t", 0, "observe", "{}").expect("save");
        assert!(matches!(
            store.save("t", 0, "observe", "{\"x\":1}"),
            Err(CheckpointError::StepTaken { step: 0, .. })
        ));
        assert_eq!(store.latest("t").expect("read").expect("some").state, "{}");
    }

    #[test]
    fn a_tampered_row_is_reported_not_resumed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("cp.db");
        let store = SqliteCheckpointer::open(&path).expect("open");
        store
            .save("t", 0, "observe", "{\"ok\":true}")
            .expect("save");
        let raw = Connection::open(&path).expect("raw");
        raw.execute("UPDATE graph_checkpoints SET state = '{\"ok\":false}'", [])
            .expect("tamper");
        assert!(matches!(
            store.latest("t"),
            Err(CheckpointError::Corrupt { step: 0, .. })
        ));
        assert!(matches!(
            store.history("t"),
            Err(CheckpointError::Corrupt { .. })
        ));
    }

    #[test]
    fn a_path_that_cannot_be_opened_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("no/such/dir/cp.db");
        assert!(matches!(
            SqliteCheckpointer::open(missing),
            Err(CheckpointError::Database(_))
        ));
    }
}
