//! Durable checkpoints of the reference graph (GOVERNANCE.md Part B, "Checkpoints").
//!
//! A graph waiting for approval may wait longer than its process lives. Each node's
//! resulting state is written to SQLite before the next node runs, keyed by
//! `(thread_id, step)`, so a new process picks the thread up where the old one stopped and
//! the action is executed exactly once. Checkpoints are append-only: a step is never
//! overwritten, so two processes racing on one thread cannot both record the same step.

mod memory;
#[cfg(feature = "sqlite")]
mod sqlite;

pub use memory::MemoryCheckpointer;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteCheckpointer;

/// Where the graph keeps its steps. [`SqliteCheckpointer`] (feature `sqlite`, on by
/// default) is durable; [`MemoryCheckpointer`] lives as long as the process, for hosts
/// that never wait across a restart. Another store (a server's own database) implements
/// these three calls with the same guarantees: a step is never overwritten
/// ([`CheckpointError::StepTaken`]) and a damaged step is reported, never resumed from.
pub trait CheckpointStore: Send + Sync {
    /// Records `state` as step `step` of `thread_id`, produced by `node`; refuses to
    /// overwrite a recorded step.
    fn save(
        &self,
        thread_id: &str,
        step: u64,
        node: &str,
        state: &str,
    ) -> Result<(), CheckpointError>;

    /// The last recorded step of `thread_id`, or `None` for a thread never run.
    fn latest(&self, thread_id: &str) -> Result<Option<Checkpoint>, CheckpointError>;

    /// Every recorded step of `thread_id`, in order: the audit trail of one run.
    fn history(&self, thread_id: &str) -> Result<Vec<Checkpoint>, CheckpointError>;
}

/// One saved step of one thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// The thread the step belongs to.
    pub thread_id: String,
    /// Position of the step in the thread, from 0.
    pub step: u64,
    /// The node that produced this state.
    pub node: String,
    /// The state after the node, as JSON text.
    pub state: String,
}

/// Why a checkpoint could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// The store's database refused an operation (the source says why).
    #[error("checkpoint database: {0}")]
    Database(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// Another writer already recorded this step of the thread (two processes running one
    /// thread): the later one must stop instead of acting twice.
    #[error("step {step} of thread `{thread_id}` is already recorded")]
    StepTaken {
        /// The thread.
        thread_id: String,
        /// The step both tried to record.
        step: u64,
    },
    /// A stored state no longer hashes to the digest written with it.
    #[error(
        "checkpoint {step} of thread `{thread_id}` is corrupt: its state does not match its digest"
    )]
    Corrupt {
        /// The thread.
        thread_id: String,
        /// The damaged step.
        step: u64,
    },
    /// The state could not be encoded or decoded.
    #[error("checkpoint state of thread `{thread_id}` does not (de)serialize: {message}")]
    State {
        /// The thread.
        thread_id: String,
        /// What serde said.
        message: String,
    },
}

#[cfg(feature = "sqlite")]
impl From<rusqlite::Error> for CheckpointError {
    fn from(e: rusqlite::Error) -> Self {
        CheckpointError::Database(Box::new(e))
    }
}
