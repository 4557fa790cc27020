//! Whether the GNOME session's pieces are reachable without starting anything: the
//! session bus (`Platform::reach`, asked every few seconds by a readiness probe) and
//! PipeWire's socket, which the screen cast's frames come through.

use std::path::PathBuf;

/// `Platform::reach` for GNOME: the session bus accepts a connection.
pub(crate) fn reach_env() -> Result<String, String> {
    let addr = std::env::var("DBUS_SESSION_BUS_ADDRESS")
        .ok()
        .filter(|a| !a.is_empty())
        .or_else(|| {
            std::env::var("XDG_RUNTIME_DIR")
                .ok()
                .map(|d| format!("unix:path={d}/bus"))
        })
        .ok_or("neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set")?;
    let path = bus_path(&addr).ok_or_else(|| format!("{addr}: not a unix:path bus address"))?;
    match std::os::unix::net::UnixStream::connect(&path) {
        Ok(_) => Ok(format!("the session bus at {} accepts", path.display())),
        Err(e) => Err(format!("the session bus at {}: {e}", path.display())),
    }
}

/// The socket of a `unix:path=…` bus address (the first such entry).
fn bus_path(addr: &str) -> Option<PathBuf> {
    addr.split(';').find_map(|entry| {
        let rest = entry.strip_prefix("unix:")?;
        rest.split(',')
            .find_map(|kv| kv.strip_prefix("path="))
            .map(PathBuf::from)
    })
}

/// PipeWire's socket: `$PIPEWIRE_REMOTE` (default `pipewire-0`) in
/// `$PIPEWIRE_RUNTIME_DIR` or `$XDG_RUNTIME_DIR`, when it exists.
pub(crate) fn pipewire_socket(env: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let name = env("PIPEWIRE_REMOTE")
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "pipewire-0".into());
    let path = if name.starts_with('/') {
        PathBuf::from(&name)
    } else {
        let dir = env("PIPEWIRE_RUNTIME_DIR")
            .or_else(|| env("XDG_RUNTIME_DIR"))
            .filter(|d| !d.is_empty())
            .ok_or("XDG_RUNTIME_DIR is not set: PipeWire's socket cannot be found")?;
        PathBuf::from(dir).join(name)
    };
    if path.exists() {
        Ok(path.display().to_string())
    } else {
        Err(format!(
            "no PipeWire at {}: start pipewire and wireplumber in this session",
            path.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_addresses_and_pipewire_sockets() {
        assert_eq!(
            bus_path("unix:path=/run/user/1/bus,guid=ab"),
            Some("/run/user/1/bus".into())
        );
        assert_eq!(bus_path("tcp:host=x;unix:path=/b"), Some("/b".into()));
        assert_eq!(bus_path("unix:abstract=/tmp/x"), None);
        let none = |_: &str| None;
        assert!(
            pipewire_socket(none)
                .unwrap_err()
                .contains("XDG_RUNTIME_DIR")
        );
        let missing = |k: &str| (k == "XDG_RUNTIME_DIR").then(|| "/nonexistent".to_string());
        assert!(
            pipewire_socket(missing)
                .unwrap_err()
                .contains("/nonexistent/pipewire-0")
        );
        let tmp = std::env::temp_dir();
        let t = tmp.display().to_string();
        let present = move |k: &str| (k == "PIPEWIRE_REMOTE").then(|| t.clone());
        assert!(pipewire_socket(present).is_ok());
    }
}
