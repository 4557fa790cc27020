//! Whether the compositor `$WAYLAND_DISPLAY` names accepts a connection
//! (`Platform::reach`), without binding anything: a readiness probe asks it every few
//! seconds.

use std::path::PathBuf;

/// `Platform::reach` for wlroots, from the process environment.
pub(crate) fn reach_env() -> Result<String, String> {
    let path = socket(|k| std::env::var(k).ok())?;
    match std::os::unix::net::UnixStream::connect(&path) {
        Ok(_) => Ok(format!("{} accepts", path.display())),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// The compositor's socket: `$WAYLAND_DISPLAY` (default `wayland-0`) in
/// `$XDG_RUNTIME_DIR`, or the absolute path it names.
fn socket(env: impl Fn(&str) -> Option<String>) -> Result<PathBuf, String> {
    let name = env("WAYLAND_DISPLAY")
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "wayland-0".into());
    if name.starts_with('/') {
        return Ok(PathBuf::from(name));
    }
    let dir = env("XDG_RUNTIME_DIR")
        .filter(|d| !d.is_empty())
        .ok_or("XDG_RUNTIME_DIR is not set")?;
    Ok(PathBuf::from(dir).join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn wayland_sockets_live_in_the_runtime_directory() {
        assert_eq!(
            socket(env(&[("XDG_RUNTIME_DIR", "/run/user/1000")])),
            Ok("/run/user/1000/wayland-0".into())
        );
        assert_eq!(
            socket(env(&[
                ("XDG_RUNTIME_DIR", "/r"),
                ("WAYLAND_DISPLAY", "wayland-7")
            ])),
            Ok("/r/wayland-7".into())
        );
        assert_eq!(
            socket(env(&[("WAYLAND_DISPLAY", "/abs/sock")])),
            Ok("/abs/sock".into())
        );
        assert_eq!(socket(env(&[])), Err("XDG_RUNTIME_DIR is not set".into()));
    }
}
