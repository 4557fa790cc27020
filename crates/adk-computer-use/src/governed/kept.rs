//! The previews this runtime returned, kept by action so that `execute_action` can refuse
//! a record that is not the one it handed out — even a record whose raw text and hash were
//! rewritten together.
//!
//! A runtime made after a restart (a checkpoint resume) has kept nothing; the record's own
//! hash and the envelope comparison still apply then. The same holds for an action whose
//! entry was evicted: the map keeps the latest [`KEPT_LIMIT`] actions, so a long-lived
//! runtime does not grow without bound.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use crate::error::{ComputerUseError, ResponseObject};
use crate::runtime::{PreviewRecord, RuntimeResult};

/// How many actions' previews are kept (oldest first out).
pub const KEPT_LIMIT: usize = 4096;

/// The SHA-256 of the latest preview per `(sessionId, actionId)`.
#[derive(Debug, Default)]
pub struct KeptPreviews {
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    hashes: HashMap<(String, String), String>,
    /// Keys in the order they were first kept, for eviction.
    order: VecDeque<(String, String)>,
}

impl KeptPreviews {
    /// Remembers `record` as the preview of its action (a re-preview replaces the last).
    pub fn keep(&self, record: &PreviewRecord) {
        let mut kept = self.lock();
        let key = key(record);
        if kept
            .hashes
            .insert(key.clone(), record.sha256.clone())
            .is_none()
        {
            kept.order.push_back(key);
            while kept.order.len() > KEPT_LIMIT {
                if let Some(old) = kept.order.pop_front() {
                    kept.hashes.remove(&old);
                }
            }
        }
    }

    /// Refuses `record` when this runtime previewed its action and returned other bytes.
    pub fn require_kept(&self, record: &PreviewRecord) -> RuntimeResult<()> {
        match self.lock().hashes.get(&key(record)) {
            Some(kept) if *kept != record.sha256 => Err(ComputerUseError::IdentityMismatch {
                object: ResponseObject::Envelope,
                field: "previewSha256",
                expected: Some(kept.clone()),
                actual: Some(record.sha256.clone()),
            }),
            _ => Ok(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        // A poisoned map only means a panic elsewhere mid-insert of a plain value.
        self.kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn key(record: &PreviewRecord) -> (String, String) {
    (
        record.proposal.session_id.clone(),
        record.proposal.action_id.clone().unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::ProposedAction;

    fn record(action: &str, sha: &str) -> PreviewRecord {
        let proposal: ProposedAction = serde_json::from_value(serde_json::json!({
            "session_id": "ses-1", "action_id": action, "tool": "pointer.click",
            "mode": "foreground"
        }))
        .expect("a proposal");
        PreviewRecord {
            proposal,
            raw: "{}".into(),
            sha256: sha.into(),
        }
    }

    #[test]
    fn another_record_for_a_kept_action_is_refused() {
        let kept = KeptPreviews::default();
        kept.keep(&record("a1", "aa"));
        assert!(kept.require_kept(&record("a1", "aa")).is_ok());
        let err = kept
            .require_kept(&record("a1", "bb"))
            .expect_err("other bytes");
        assert_eq!(err.mismatched_field(), Some("previewSha256"));
        // Never previewed here (another process, a restart): not refused by this check.
        assert!(kept.require_kept(&record("a2", "bb")).is_ok());
    }

    #[test]
    fn the_oldest_actions_are_evicted_beyond_the_limit() {
        let kept = KeptPreviews::default();
        for i in 0..=KEPT_LIMIT {
            kept.keep(&record(&format!("a{i}"), "aa"));
        }
        // Re-previewing an action does not make it a second entry.
        kept.keep(&record(&format!("a{KEPT_LIMIT}"), "aa"));
        assert_eq!(kept.lock().hashes.len(), KEPT_LIMIT);
        assert_eq!(kept.lock().order.len(), KEPT_LIMIT);
        assert!(
            kept.require_kept(&record("a0", "bb")).is_ok(),
            "a0 was evicted"
        );
        assert!(
            kept.require_kept(&record("a1", "bb")).is_err(),
            "a1 is kept"
        );
    }
}
