//! What `/health` checks before it says a desk can serve: the display server answers,
//! the driver (through the engine) answers, and the governance journal takes writes.
//! A supervisor (a Kubernetes readiness or liveness probe) reads the status code; a
//! person reads which of the three is not ready and why.
//!
//! Each probe has a time limit, so a wedged part makes the desk unready instead of
//! holding the probe open. The probes read only: nothing is drawn, typed or written.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use cc_engine::Engine;
use cc_governance::Kernels;

/// How long one probe may take before its part counts as not ready.
const LIMIT: Duration = Duration::from_secs(2);

/// One part's readiness, as `/health` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Probe {
    pub ready: bool,
    /// What was checked, or why it is not ready.
    pub detail: String,
}

impl Probe {
    fn ready(detail: impl Into<String>) -> Probe {
        Probe {
            ready: true,
            detail: detail.into(),
        }
    }

    fn not(detail: impl Into<String>) -> Probe {
        Probe {
            ready: false,
            detail: detail.into(),
        }
    }
}

/// Where a platform's display server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// No display server to reach: the virtual desktop lives in the process.
    InProcess,
    Unix(PathBuf),
    Tcp(String, u16),
}

/// The display server `platform` talks to, from the environment the driver reads
/// (`DISPLAY` for X11; `WAYLAND_DISPLAY` and `XDG_RUNTIME_DIR` for wlroots).
pub fn endpoint(platform: &str, env: impl Fn(&str) -> Option<String>) -> Result<Endpoint, String> {
    match platform {
        "x11" => {
            let display = env("DISPLAY")
                .filter(|d| !d.is_empty())
                .ok_or("DISPLAY is not set")?;
            x11_endpoint(&display)
        }
        "wlroots" => {
            let name = env("WAYLAND_DISPLAY")
                .filter(|d| !d.is_empty())
                .unwrap_or_else(|| "wayland-0".into());
            if name.starts_with('/') {
                return Ok(Endpoint::Unix(PathBuf::from(name)));
            }
            let dir = env("XDG_RUNTIME_DIR")
                .filter(|d| !d.is_empty())
                .ok_or("XDG_RUNTIME_DIR is not set")?;
            Ok(Endpoint::Unix(PathBuf::from(dir).join(name)))
        }
        _ => Ok(Endpoint::InProcess),
    }
}

/// `[host]:N[.screen]`: a local display is the socket `/tmp/.X11-unix/XN`, a remote
/// one TCP port 6000 + N.
fn x11_endpoint(display: &str) -> Result<Endpoint, String> {
    let bad = || format!("DISPLAY {display:?} is not [host]:number[.screen]");
    let (host, rest) = display.rsplit_once(':').ok_or_else(bad)?;
    let number = rest.split('.').next().unwrap_or_default();
    let n: u16 = number.parse().map_err(|_| bad())?;
    match host {
        "" | "unix" => Ok(Endpoint::Unix(PathBuf::from(format!(
            "/tmp/.X11-unix/X{n}"
        )))),
        h => {
            let port = 6000u16.checked_add(n).ok_or_else(bad)?;
            Ok(Endpoint::Tcp(h.to_string(), port))
        }
    }
}

/// Connects to the display server (and hangs up): it is ready if it accepts.
pub async fn display(platform: &'static str) -> Probe {
    let endpoint = match endpoint(platform, |k| std::env::var(k).ok()) {
        Ok(e) => e,
        Err(e) => return Probe::not(e),
    };
    let connect = tokio::task::spawn_blocking(move || connect(&endpoint));
    match tokio::time::timeout(LIMIT, connect).await {
        Ok(Ok(p)) => p,
        Ok(Err(_)) => Probe::not("the display probe failed"),
        Err(_) => Probe::not(format!(
            "the display server did not accept within {} s",
            LIMIT.as_secs()
        )),
    }
}

fn connect(endpoint: &Endpoint) -> Probe {
    match endpoint {
        Endpoint::InProcess => Probe::ready("virtual desktop (in process)"),
        Endpoint::Unix(path) => match std::os::unix::net::UnixStream::connect(path) {
            Ok(_) => Probe::ready(format!("{} accepts", path.display())),
            Err(e) => Probe::not(format!("{}: {e}", path.display())),
        },
        Endpoint::Tcp(host, port) => {
            use std::net::ToSocketAddrs;
            let addrs = match (host.as_str(), *port).to_socket_addrs() {
                Ok(a) => a.collect::<Vec<_>>(),
                Err(e) => return Probe::not(format!("{host}:{port}: {e}")),
            };
            let mut last = format!("{host}:{port}: no address");
            for addr in addrs {
                match std::net::TcpStream::connect_timeout(&addr, LIMIT) {
                    Ok(_) => return Probe::ready(format!("{host}:{port} accepts")),
                    Err(e) => last = format!("{host}:{port}: {e}"),
                }
            }
            Probe::not(last)
        }
    }
}

/// The engine answers `system.status` (it takes the lock the driver's worker
/// shares) within the limit: a wedged driver call makes the desk unready.
pub async fn driver(engine: &Engine) -> Probe {
    let platform = engine.platform();
    let engine = engine.clone();
    let status = tokio::task::spawn_blocking(move || engine.status().ok);
    match tokio::time::timeout(LIMIT, status).await {
        Ok(Ok(true)) => Probe::ready(format!("{platform} driver answers")),
        Ok(Ok(false)) => Probe::not(format!("the {platform} driver reported an error")),
        Ok(Err(_)) => Probe::not("the driver probe failed"),
        Err(_) => Probe::not(format!(
            "the {platform} driver did not answer within {} s",
            LIMIT.as_secs()
        )),
    }
}

/// The journal takes a write transaction (rolled back at once) within the limit.
pub async fn journal(kernels: &Arc<Kernels>) -> Probe {
    let kernels = kernels.clone();
    let probe = tokio::task::spawn_blocking(move || kernels.probe_journal());
    match tokio::time::timeout(LIMIT, probe).await {
        Ok(Ok(Ok(()))) => Probe::ready("takes writes"),
        Ok(Ok(Err(e))) => Probe::not(e.message),
        Ok(Err(_)) => Probe::not("the journal probe failed"),
        Err(_) => Probe::not(format!(
            "no write transaction within {} s (another process holds the journal?)",
            LIMIT.as_secs()
        )),
    }
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
    fn x11_displays_name_their_socket_or_port() {
        let unix = |n: &str| Ok(Endpoint::Unix(PathBuf::from(n)));
        assert_eq!(
            endpoint("x11", env(&[("DISPLAY", ":99")])),
            unix("/tmp/.X11-unix/X99")
        );
        assert_eq!(
            endpoint("x11", env(&[("DISPLAY", ":0.1")])),
            unix("/tmp/.X11-unix/X0")
        );
        assert_eq!(
            endpoint("x11", env(&[("DISPLAY", "unix:3")])),
            unix("/tmp/.X11-unix/X3")
        );
        assert_eq!(
            endpoint("x11", env(&[("DISPLAY", "desk-0:2")])),
            Ok(Endpoint::Tcp("desk-0".into(), 6002))
        );
    }

    #[test]
    fn a_missing_or_malformed_display_says_so() {
        assert_eq!(endpoint("x11", env(&[])), Err("DISPLAY is not set".into()));
        for bad in ["99", ":x", "host:", "host:65535"] {
            let e = endpoint("x11", env(&[("DISPLAY", bad)])).unwrap_err();
            assert!(e.contains("is not [host]:number"), "{bad}: {e}");
        }
    }

    #[test]
    fn wayland_sockets_live_in_the_runtime_directory() {
        assert_eq!(
            endpoint("wlroots", env(&[("XDG_RUNTIME_DIR", "/run/user/1000")])),
            Ok(Endpoint::Unix("/run/user/1000/wayland-0".into()))
        );
        assert_eq!(
            endpoint(
                "wlroots",
                env(&[("XDG_RUNTIME_DIR", "/r"), ("WAYLAND_DISPLAY", "wayland-7")])
            ),
            Ok(Endpoint::Unix("/r/wayland-7".into()))
        );
        assert_eq!(
            endpoint("wlroots", env(&[("WAYLAND_DISPLAY", "/abs/sock")])),
            Ok(Endpoint::Unix("/abs/sock".into()))
        );
        assert_eq!(
            endpoint("wlroots", env(&[])),
            Err("XDG_RUNTIME_DIR is not set".into())
        );
        assert_eq!(endpoint("virtual", env(&[])), Ok(Endpoint::InProcess));
    }

    #[test]
    fn a_closed_socket_is_not_ready() {
        let dir = std::env::temp_dir().join(format!("cc-readiness-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sock");
        let _ = std::fs::remove_file(&path);
        let p = connect(&Endpoint::Unix(path.clone()));
        assert!(!p.ready, "{p:?}");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let p = connect(&Endpoint::Unix(path.clone()));
        assert!(p.ready, "{p:?}");
        drop(listener);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
