//! Which desks the plane governs: a fixed list of operator-channel URLs, or the headless
//! Service's DNS name, whose A/AAAA records (one per ready desk) are resolved again at
//! every refresh, so desks that scale up, restart on a new address or turn unready
//! appear and disappear without restarting the plane.

use std::str::FromStr;

/// One way of finding desks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `--desk URL`, as given: `http://desk-0.desks:8766`.
    Url(String),
    /// `--discover NAME:PORT`: every address `NAME` resolves to, on `PORT`.
    Dns { name: String, port: u16 },
}

/// One desk found: a stable name for the console and the base URL of its operator
/// channel.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Found {
    /// What the console calls it (the URL's authority, or `address:port` from DNS).
    pub name: String,
    /// `http://host:port`, no trailing slash.
    pub base: String,
}

/// Parses `--desk`: an `http://host:port` URL (a path, query or credentials are
/// refused: the plane adds the paths itself and sends the token as a header).
pub fn parse_url(s: &str) -> Result<String, String> {
    let s = s.trim().trim_end_matches('/');
    let rest = s.strip_prefix("http://").ok_or_else(|| {
        format!("{s:?}: a desk is named by its operator channel's URL, http://HOST:PORT")
    })?;
    if rest.is_empty() || rest.contains(['/', '?', '#', '@']) || rest.contains(char::is_whitespace)
    {
        return Err(format!(
            "{s:?}: expected http://HOST:PORT with no path, query or credentials"
        ));
    }
    Ok(s.to_string())
}

impl FromStr for Source {
    type Err = String;

    /// `NAME:PORT` (for `--discover`).
    fn from_str(s: &str) -> Result<Source, String> {
        let s = s.trim();
        let (name, port) = s
            .rsplit_once(':')
            .ok_or_else(|| format!("{s:?}: expected NAME:PORT, e.g. desks.default.svc:8766"))?;
        if name.is_empty() || name.contains(['/', '@', ':']) || name.contains(char::is_whitespace) {
            return Err(format!("{name:?} is not a DNS name"));
        }
        let port = port
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| format!("{port:?} is not a port (1 to 65535)"))?;
        Ok(Source::Dns {
            name: name.to_string(),
            port,
        })
    }
}

/// Every desk the sources name now, sorted, each once. A name that does not resolve
/// yields no desk and its error (shown on the console: a Service with no ready desk has
/// no records).
pub async fn resolve(sources: &[Source]) -> (Vec<Found>, Vec<String>) {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    for s in sources {
        match s {
            Source::Url(base) => found.push(Found {
                name: base.trim_start_matches("http://").to_string(),
                base: base.clone(),
            }),
            Source::Dns { name, port } => {
                match tokio::net::lookup_host((name.as_str(), *port)).await {
                    Ok(addrs) => found.extend(addrs.map(|a| {
                        let authority = a.to_string();
                        Found {
                            name: authority.clone(),
                            base: format!("http://{authority}"),
                        }
                    })),
                    Err(e) => errors.push(format!("{name}: {e}")),
                }
            }
        }
    }
    found.sort();
    found.dedup();
    (found, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_names_are_checked() {
        assert_eq!(
            parse_url("http://127.0.0.1:8766/"),
            Ok("http://127.0.0.1:8766".into())
        );
        for bad in [
            "127.0.0.1:8766",
            "https://x:1",
            "http://",
            "http://a:1/rpc",
            "http://u@a:1",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
        assert_eq!(
            "desks.ns.svc:8766".parse::<Source>(),
            Ok(Source::Dns {
                name: "desks.ns.svc".into(),
                port: 8766
            })
        );
        for bad in ["desks", "desks:0", "desks:x", ":8766", "a b:1"] {
            assert!(bad.parse::<Source>().is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn dns_names_resolve_to_every_address_and_failures_are_reported() {
        let (found, errors) = resolve(&[
            Source::Dns {
                name: "localhost".into(),
                port: 8766,
            },
            Source::Url("http://10.0.0.1:1".into()),
            Source::Dns {
                name: "no-such-desk.invalid".into(),
                port: 1,
            },
        ])
        .await;
        assert!(
            found.iter().any(|f| f.base == "http://127.0.0.1:8766"),
            "{found:?}"
        );
        assert!(found.iter().any(|f| f.name == "10.0.0.1:1"));
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].starts_with("no-such-desk.invalid"));
    }
}
