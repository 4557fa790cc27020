//! The previews this runtime returned, kept by action so that `execute_action` can refuse
//! a record that is not the one it handed out — even a record whose raw text and hash were
//! rewritten together.
//!
//! A runtime made after a restart (a checkpoint resume) has kept nothing; the record's own
//! hash and the envelope comparison still apply then.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::error::{ComputerUseError, ResponseObject};
use crate::runtime::{PreviewRecord, RuntimeResult};

/// The SHA-256 of the latest preview per `(sessionId, actionId)`.
#[derive(Debug, Default)]
pub struct KeptPreviews {
    hashes: Mutex<HashMap<(String, String), String>>,
}

impl KeptPreviews {
    /// Remembers `record` as the preview of its action (a re-preview replaces the last).
    pub fn keep(&self, record: &PreviewRecord) {
        self.lock().insert(key(record), record.sha256.clone());
    }

    /// Refuses `record` when this runtime previewed its action and returned other bytes.
    pub fn require_kept(&self, record: &PreviewRecord) -> RuntimeResult<()> {
        match self.lock().get(&key(record)) {
            Some(kept) if *kept != record.sha256 => Err(ComputerUseError::IdentityMismatch {
                object: ResponseObject::Envelope,
                field: "previewSha256",
                expected: Some(kept.clone()),
                actual: Some(record.sha256.clone()),
            }),
            _ => Ok(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), String>> {
        // A poisoned map only means a panic elsewhere mid-insert of a plain value.
        self.hashes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn key(record: &PreviewRecord) -> (String, String) {
    (
        record.proposal.session_id.clone(),
        record.proposal.action_id.clone(),
    )
}
