//! Private temporary directories: a test's scratch space and the desks' runtime
//! directories, unique per call so tests in one process never share one.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Creates a new, empty directory under the system's temporary directory, named
/// `<prefix>-<pid>-<n>-<nanos>`: the process id and a counter make it unique within
/// the machine and the process, so parallel tests never meet in one.
pub fn unique_dir(prefix: &str) -> PathBuf {
    let base = std::env::temp_dir();
    for _ in 0..1000 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let p = base.join(format!(
            "{prefix}-{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        if std::fs::create_dir(&p).is_ok() {
            return p;
        }
    }
    panic!("cannot create a temporary directory in {}", base.display());
}

/// Like [`unique_dir`], readable by its owner only (mode 0700): a desk's runtime
/// directory, where sockets and a session bus live.
pub fn private_dir(prefix: &str) -> PathBuf {
    let dir = unique_dir(prefix);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
        .unwrap_or_else(|e| panic!("chmod 0700 {}: {e}", dir.display()));
    dir
}

/// A temporary directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A new, empty directory (`cc-test-…`).
    pub fn new() -> TempDir {
        TempDir(unique_dir("cc-test"))
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Default for TempDir {
    fn default() -> TempDir {
        TempDir::new()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_distinct_private_and_removed_on_drop() {
        let a = TempDir::new();
        let b = TempDir::new();
        assert_ne!(a.path(), b.path());
        assert!(a.path().is_dir() && b.path().is_dir());
        let kept = a.path().to_path_buf();
        drop(a);
        assert!(!kept.exists(), "the directory outlived its TempDir");

        let p = private_dir("cc-test-kit");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        std::fs::remove_dir(&p).unwrap();
        assert_eq!(mode, 0o700);
    }
}
