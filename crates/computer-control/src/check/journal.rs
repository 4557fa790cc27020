//! The journal area of `check`: where the governance journal is, whether this user can
//! write it, and whether another server holds it (one server per journal). Read-only:
//! nothing is created but a probe file, removed at once, in an existing directory.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::{Finding, Status};

/// The finding for the configured journal (`""`: the default place). `in_server`: the
/// caller is the server that holds it.
pub fn finding(configured: &str, in_server: bool) -> Finding {
    let path = match crate::places::default_journal(configured) {
        Ok(p) => p,
        Err(e) => {
            return Finding::problem(
                Status::Missing,
                format!("no place for the governance journal: {e}"),
                crate::places::state_dir_step(crate::places::Os::current()),
            );
        }
    };
    let shown = json!(path.display().to_string());
    match holder(&path) {
        Holder::Free => {}
        Holder::This => {
            return Finding::ok(format!("{} (open in this server)", path.display()))
                .with("path", shown);
        }
        Holder::Other(who) if !in_server => {
            return Finding::problem(
                Status::Degraded,
                format!(
                    "{} is in use by {who}: one server per journal",
                    path.display()
                ),
                "give this server its own journal: --journal PATH (or \
                 COMPUTER_CONTROL_JOURNAL), or stop the other server",
            )
            .with("path", shown);
        }
        Holder::Other(_) => {}
    }
    let writable = if path.exists() {
        OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map(|_| "exists")
    } else {
        probe_dir(&path).map(|_| "will be created")
    };
    match writable {
        Ok(how) => Finding::ok(format!("{} ({how})", path.display())).with("path", shown),
        Err(e) => Finding::problem(
            Status::Missing,
            format!("cannot write the journal {}: {e}", path.display()),
            "make that place writable for this user, or pass --journal PATH (or \
             COMPUTER_CONTROL_JOURNAL) somewhere it is",
        )
        .with("path", shown),
    }
}

enum Holder {
    Free,
    This,
    Other(String),
}

/// Who holds the journal's lock file (`<journal>.lock`, see cc-governance's journal
/// lock), without taking it for longer than the probe.
fn holder(journal: &Path) -> Holder {
    let mut name = journal.as_os_str().to_owned();
    name.push(".lock");
    let Ok(mut file) = File::open(PathBuf::from(name)) else {
        return Holder::Free;
    };
    match file.try_lock_shared() {
        Ok(()) => Holder::Free,
        Err(TryLockError::WouldBlock) => {
            let mut pid = String::new();
            let _ = file.read_to_string(&mut pid);
            let pid = pid.trim();
            if pid == std::process::id().to_string() {
                Holder::This
            } else if pid.is_empty() {
                Holder::Other("another process".into())
            } else {
                Holder::Other(format!("process {pid}"))
            }
        }
        Err(TryLockError::Error(_)) => Holder::Free,
    }
}

/// Whether the journal's directory (or, when it does not exist yet, its nearest
/// existing ancestor, where it would be created) takes a file.
fn probe_dir(journal: &Path) -> std::io::Result<()> {
    let mut dir = journal.parent().unwrap_or(Path::new("."));
    while !dir.exists() {
        dir = dir.parent().unwrap_or(Path::new("/"));
    }
    let probe = dir.join(format!(".computer-control-check-{}", std::process::id()));
    File::create(&probe)?;
    std::fs::remove_file(&probe)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("cc-check-journal-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("dir");
        d
    }

    #[test]
    fn a_new_journal_in_a_writable_place_is_ok() {
        let d = dir("new");
        let f = finding(d.join("a/b/j.db").to_str().expect("utf-8"), false);
        assert_eq!(f.status, Status::Ok, "{f:?}");
        assert!(f.reason.contains("will be created"), "{f:?}");
        assert!(!d.join("a").exists(), "check creates nothing");
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn a_journal_held_by_another_process_is_degraded() {
        let d = dir("held");
        let j = d.join("j.db");
        let lock = File::create(d.join("j.db.lock")).expect("lock file");
        lock.lock().expect("lock");
        std::fs::write(d.join("j.db.lock"), b"4242").expect("pid");
        // The lock is this process's, but the file names another pid: as a second
        // server would see it.
        let f = finding(j.to_str().expect("utf-8"), false);
        assert_eq!(f.status, Status::Degraded, "{f:?}");
        assert!(f.reason.contains("process 4242"), "{f:?}");
        assert!(f.next_step.is_some_and(|s| s.contains("--journal")));
        drop(lock);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn an_unwritable_place_is_missing_with_a_fix() {
        // A path below a regular file can never be created.
        let d = dir("file");
        std::fs::write(d.join("f"), b"").expect("file");
        let f = finding(d.join("f/j.db").to_str().expect("utf-8"), false);
        assert_eq!(f.status, Status::Missing, "{f:?}");
        assert!(f.next_step.is_some(), "{f:?}");
        let _ = std::fs::remove_dir_all(d);
    }
}
