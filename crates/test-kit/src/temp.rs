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

/// Removes a desk's runtime directory once its processes were told to go. What the
/// desk's session mounted there goes first: the document portal mounts
/// `$XDG_RUNTIME_DIR/doc` as soon as a GTK application asks for it, and its mount
/// outlives the portal, leaving a directory nothing can remove and one more mount on
/// the machine per test. Processes still exiting may write a last file: a few tries.
pub fn remove_runtime_dir(dir: &Path) {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    for point in mount_points_under(&mounts, dir) {
        unmount(&point);
    }
    for _ in 0..10 {
        if std::fs::remove_dir_all(dir).is_ok() || !dir.exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The mount points of a `/proc/self/mounts` text at or below `dir`, deepest first.
fn mount_points_under(mounts: &str, dir: &Path) -> Vec<PathBuf> {
    let mut points: Vec<PathBuf> = mounts
        .lines()
        .filter_map(|l| l.split(' ').nth(1))
        .map(|p| PathBuf::from(unescape_mount_path(p)))
        .filter(|p| p.starts_with(dir))
        .collect();
    points.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    points
}

/// A mount point as `/proc/self/mounts` writes it: space, tab, newline and backslash
/// as three octal digits after a backslash.
fn unescape_mount_path(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    let mut rest = p;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let code = rest
            .get(i + 1..i + 4)
            .and_then(|o| u8::from_str_radix(o, 8).ok());
        match code {
            Some(c) => {
                out.push(char::from(c));
                rest = &rest[i + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Detaches a mount: root's `umount`, else the FUSE helper a user may run on their own
/// mount; a failure leaves the directory behind, nothing worse.
fn unmount(point: &Path) {
    use std::process::{Command, Stdio};
    let tries: [(&str, &[&str]); 3] = [
        ("umount", &["-l"]),
        ("fusermount3", &["-u", "-z"]),
        ("fusermount", &["-u", "-z"]),
    ];
    for (program, args) in tries {
        let done = Command::new(program)
            .args(args)
            .arg(point)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if done {
            return;
        }
    }
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
    fn the_mounts_below_a_runtime_dir_are_found_deepest_first() {
        let mounts = "proc /proc proc rw 0 0\n\
            portal /tmp/cc-desk-1/doc fuse.portal rw,nosuid 0 0\n\
            tmpfs /tmp/cc-desk-1 tmpfs rw 0 0\n\
            portal /tmp/cc-desk-10/doc fuse.portal rw 0 0\n\
            portal /tmp/cc-desk-1/with\\040space fuse rw 0 0\n";
        let got = mount_points_under(mounts, Path::new("/tmp/cc-desk-1"));
        assert_eq!(
            got,
            [
                PathBuf::from("/tmp/cc-desk-1/doc"),
                PathBuf::from("/tmp/cc-desk-1/with space"),
                PathBuf::from("/tmp/cc-desk-1"),
            ]
        );
        assert_eq!(unescape_mount_path("a\\134b\\011c\\"), "a\\b\tc\\");
    }

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
