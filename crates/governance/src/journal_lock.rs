//! One server per journal.
//!
//! A kernel that opens a journal recovers it: it settles receipts left `pending`, pauses
//! running sessions and revokes leases (`Governance::recover`). Two live servers on one
//! file would therefore revoke each other's leases and turn each other's in-flight
//! receipts `indeterminate`. An advisory lock on `<journal>.lock`, held for the
//! kernel's lifetime, refuses the second server instead. The operating system drops the
//! lock when the process dies, SIGKILL included, so a crash never leaves a stale lock
//! behind (unlike a pid file).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{GovResult, storage};

/// The held lock; dropping it (with the last kernel of the process) releases it.
#[derive(Debug)]
pub struct JournalLock {
    _file: File,
    /// The lock file's path when this acquisition created it (see [`Self::abandon`]).
    created: Option<PathBuf>,
}

impl JournalLock {
    /// Takes the lock of the journal at `journal`, or says which process holds it.
    pub fn acquire(journal: &Path) -> GovResult<JournalLock> {
        let mut name = journal.as_os_str().to_owned();
        name.push(".lock");
        let path = PathBuf::from(name);
        let cannot_open =
            |e: std::io::Error| storage(format!("cannot open {}: {e}", path.display()));
        let mut create = OpenOptions::new();
        create.read(true).write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut create, 0o600);
        let (mut file, created) = match create.open(&path) {
            Ok(f) => (f, true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => (
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(&path)
                    .map_err(cannot_open)?,
                false,
            ),
            Err(e) => return Err(cannot_open(e)),
        };
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                let who = if holder.is_empty() {
                    "another process".to_string()
                } else {
                    format!("process {holder}")
                };
                return Err(storage(format!(
                    "the journal {} is in use by {who}: one server per journal \
                     (give this one another --journal)",
                    journal.display()
                )));
            }
            Err(TryLockError::Error(e)) => {
                return Err(storage(format!("cannot lock {}: {e}", path.display())));
            }
        }
        // Who holds it, for the message above; best effort (the lock is what counts).
        let _ = file.set_len(0);
        let _ = file.seek(SeekFrom::Start(0));
        let _ = write!(file, "{}", std::process::id());
        let _ = file.flush();
        Ok(JournalLock {
            _file: file,
            created: created.then_some(path),
        })
    }

    /// Releases the lock of a journal that then failed to open, removing the lock file
    /// if this acquisition created it: a wrong `--journal` leaves nothing behind.
    pub fn abandon(self) {
        if let Some(path) = &self.created {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_first_ones_pid_and_then_admitted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let journal = dir.path().join("j.db");
        let first = JournalLock::acquire(&journal).expect("first");
        assert!(dir.path().join("j.db.lock").is_file());
        let err = JournalLock::acquire(&journal).expect_err("second");
        assert!(
            err.message
                .contains(&format!("process {}", std::process::id())),
            "{}",
            err.message
        );
        assert!(
            err.message.contains("one server per journal"),
            "{}",
            err.message
        );
        drop(first);
        JournalLock::acquire(&journal).expect("free again");
    }

    #[test]
    fn abandoning_removes_only_a_lock_file_it_created() {
        let dir = tempfile::tempdir().expect("tempdir");
        let journal = dir.path().join("j.db");
        let lock_file = dir.path().join("j.db.lock");
        JournalLock::acquire(&journal).expect("fresh").abandon();
        assert!(!lock_file.exists(), "created here, so removed");
        std::fs::write(&lock_file, b"").expect("an existing lock file");
        JournalLock::acquire(&journal).expect("existing").abandon();
        assert!(lock_file.is_file(), "not created here, so kept");
        JournalLock::acquire(&journal).expect("free again");
    }

    #[test]
    fn an_unwritable_place_is_a_clear_error() {
        let err = JournalLock::acquire(Path::new("/nonexistent-dir/j.db")).expect_err("no dir");
        assert!(err.message.contains("cannot open"), "{}", err.message);
    }
}
