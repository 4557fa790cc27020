//! [`MemoryCheckpointer`]: checkpoints that live as long as the process.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use super::{Checkpoint, CheckpointError, CheckpointStore};

/// Graph checkpoints in memory. A thread interrupted for approval can be resumed by the
/// same process only; use [`super::SqliteCheckpointer`] (feature `sqlite`) when the wait
/// may outlive it. Steps are append-only, as in every store.
#[derive(Debug, Default)]
pub struct MemoryCheckpointer {
    threads: Mutex<BTreeMap<String, Vec<Checkpoint>>>,
}

impl MemoryCheckpointer {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl CheckpointStore for MemoryCheckpointer {
    fn save(
        &self,
        thread_id: &str,
        step: u64,
        node: &str,
        state: &str,
    ) -> Result<(), CheckpointError> {
        let mut threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        let steps = threads.entry(thread_id.to_owned()).or_default();
        if steps.iter().any(|c| c.step == step) {
            return Err(CheckpointError::StepTaken {
                thread_id: thread_id.to_owned(),
                step,
            });
        }
        steps.push(Checkpoint {
            thread_id: thread_id.to_owned(),
            step,
            node: node.to_owned(),
            state: state.to_owned(),
        });
        steps.sort_by_key(|c| c.step);
        Ok(())
    }

    fn latest(&self, thread_id: &str) -> Result<Option<Checkpoint>, CheckpointError> {
        let threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(threads.get(thread_id).and_then(|s| s.last().cloned()))
    }

    fn history(&self, thread_id: &str) -> Result<Vec<Checkpoint>, CheckpointError> {
        let threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(threads.get(thread_id).cloned().unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_kept_in_order_per_thread() {
        let store = MemoryCheckpointer::new();
        store.save("t", 1, "join", "{\"n\":1}").expect("save 1");
        store.save("t", 0, "observe", "{\"n\":0}").expect("save 0");
        store.save("u", 0, "observe", "{}").expect("other thread");
        let steps: Vec<u64> = store
            .history("t")
            .expect("history")
            .iter()
            .map(|c| c.step)
            .collect();
        assert_eq!(steps, [0, 1]);
        let latest = store.latest("t").expect("latest").expect("some");
        assert_eq!((latest.step, latest.node.as_str()), (1, "join"));
        assert_eq!(store.latest("never").expect("latest"), None);
        assert!(store.history("never").expect("history").is_empty());
    }

    #[test]
    fn a_recorded_step_is_never_overwritten() {
        let store = MemoryCheckpointer::new();
        store.save("t", 0, "observe", "first").expect("save");
        assert!(matches!(
            store.save("t", 0, "observe", "second"),
            Err(CheckpointError::StepTaken { step: 0, .. })
        ));
        assert_eq!(
            store.latest("t").expect("latest").expect("some").state,
            "first"
        );
    }
}
