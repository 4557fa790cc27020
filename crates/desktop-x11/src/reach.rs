//! Whether the X server `$DISPLAY` names accepts a connection (`Platform::reach`),
//! without the handshake a driver makes: a readiness probe asks it every few seconds.

use std::path::PathBuf;
use std::time::Duration;

/// How long a TCP display may take to accept.
const LIMIT: Duration = Duration::from_secs(2);

/// Where an X server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Endpoint {
    Unix(PathBuf),
    Tcp(String, u16),
}

/// `Platform::reach` for X11, from the process environment.
pub(crate) fn reach_env() -> Result<String, String> {
    connect(&endpoint(|k| std::env::var(k).ok())?)
}

/// The X server `DISPLAY` names: `[host]:N[.screen]`, a local display being the socket
/// `/tmp/.X11-unix/XN`, a remote one TCP port 6000 + N.
fn endpoint(env: impl Fn(&str) -> Option<String>) -> Result<Endpoint, String> {
    let display = env("DISPLAY")
        .filter(|d| !d.is_empty())
        .ok_or("DISPLAY is not set")?;
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

fn connect(endpoint: &Endpoint) -> Result<String, String> {
    match endpoint {
        Endpoint::Unix(path) => match std::os::unix::net::UnixStream::connect(path) {
            Ok(_) => Ok(format!("{} accepts", path.display())),
            Err(e) => Err(format!("{}: {e}", path.display())),
        },
        Endpoint::Tcp(host, port) => {
            use std::net::ToSocketAddrs;
            let addrs = (host.as_str(), *port)
                .to_socket_addrs()
                .map_err(|e| format!("{host}:{port}: {e}"))?;
            let mut last = format!("{host}:{port}: no address");
            for addr in addrs {
                match std::net::TcpStream::connect_timeout(&addr, LIMIT) {
                    Ok(_) => return Ok(format!("{host}:{port} accepts")),
                    Err(e) => last = format!("{host}:{port}: {e}"),
                }
            }
            Err(last)
        }
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
            endpoint(env(&[("DISPLAY", ":99")])),
            unix("/tmp/.X11-unix/X99")
        );
        assert_eq!(
            endpoint(env(&[("DISPLAY", ":0.1")])),
            unix("/tmp/.X11-unix/X0")
        );
        assert_eq!(
            endpoint(env(&[("DISPLAY", "unix:3")])),
            unix("/tmp/.X11-unix/X3")
        );
        assert_eq!(
            endpoint(env(&[("DISPLAY", "desk-0:2")])),
            Ok(Endpoint::Tcp("desk-0".into(), 6002))
        );
    }

    #[test]
    fn a_missing_or_malformed_display_says_so() {
        assert_eq!(endpoint(env(&[])), Err("DISPLAY is not set".into()));
        for bad in ["99", ":x", "host:", "host:65535"] {
            let e = endpoint(env(&[("DISPLAY", bad)])).unwrap_err();
            assert!(e.contains("is not [host]:number"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_closed_socket_is_not_ready() {
        let dir = std::env::temp_dir().join(format!("cc-x11-reach-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sock");
        let _ = std::fs::remove_file(&path);
        assert!(connect(&Endpoint::Unix(path.clone())).is_err());
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        assert!(connect(&Endpoint::Unix(path.clone())).is_ok());
        drop(listener);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
