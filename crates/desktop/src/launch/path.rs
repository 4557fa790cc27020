//! Executables on `PATH`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The `PATH` a desktop session has when the server's has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The first executable file named `name` in `$PATH`.
pub(super) fn find(name: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH")
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| DEFAULT_PATH.into());
    path.split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(name))
        .find(|p| is_executable(p))
}

/// A regular file someone may execute.
pub(super) fn is_executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
