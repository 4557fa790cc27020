//! The operator channel beside MCP (`serve --transport mcp|mcp-http --operator-listen
//! HOST:PORT`): the operator side of the HTTP transport — the console, `/rpc`,
//! `/events`, `/frame`, `/whoami`, `/approvals` and `/health` — on a listener of its
//! own, over the same engine and governed kernels as the MCP endpoint.
//!
//! Why: a governed action whose policy decision is `confirm` runs only after a human
//! approves it on an operator channel (GOVERNANCE.md Part A: "Approval is never a model
//! tool"). MCP over stdio has none, and `--transport mcp-http` serves `/mcp` alone, so
//! without this channel such an action could never run there.
//!
//! Only the operator passes ([`super::auth::require_operator`]): the operator token, or
//! a console session signed in with it; the agent's token, where one exists, gets 403,
//! and MCP over stdio has no agent token at all. The channel needs an operator token
//! handed in at start (it is never generated: docs/SECURITY.md); without one the start
//! fails. The Host/Origin guard checks the channel's own port and `http.allowed_hosts`.

use std::future::Future;
use std::net::Ipv6Addr;
use std::str::FromStr;
use std::sync::Arc;

use anyhow::Context;
use cc_engine::Engine;

use super::auth::{self, Authorities, Tokens, Urls};
use super::limits::{Bounds, Limits};
use super::{AppState, Routes, bind, login, router, serve_until, sse};
use cc_governance::Kernels;

/// Where the operator channel listens: `--operator-listen HOST:PORT`, `[IPv6]:PORT`,
/// or a bare `PORT` on 127.0.0.1 (loopback unless another address is named).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listen {
    /// The address to bind, as given (IPv6 without brackets).
    pub host: String,
    /// 0 picks a free port; the chosen one is printed.
    pub port: u16,
}

impl FromStr for Listen {
    type Err = String;

    fn from_str(s: &str) -> Result<Listen, String> {
        let s = s.trim();
        if let Ok(port) = s.parse::<u16>() {
            return Ok(Listen {
                host: "127.0.0.1".into(),
                port,
            });
        }
        let (host, p) = if let Some(rest) = s.strip_prefix('[') {
            let (h, p) = rest
                .split_once("]:")
                .ok_or("expected [IPv6]:PORT, e.g. [::1]:8767")?;
            h.parse::<Ipv6Addr>()
                .map_err(|_| format!("{h:?} is not an IPv6 address"))?;
            (h, p)
        } else {
            let (h, p) = s
                .rsplit_once(':')
                .ok_or("expected HOST:PORT or PORT, e.g. 127.0.0.1:8767")?;
            if h.contains(':') {
                return Err("an IPv6 address needs brackets: [::1]:PORT".into());
            }
            (h, p)
        };
        if host.is_empty() {
            return Err("the host is empty (write 127.0.0.1:PORT, or only PORT)".into());
        }
        if host.contains(['/', '@', '[', ']']) || host.contains(char::is_whitespace) {
            return Err(format!("{host:?} is not a host name or address"));
        }
        let port = p
            .parse::<u16>()
            .map_err(|_| format!("{p:?} is not a port (0 to 65535)"))?;
        Ok(Listen {
            host: host.to_string(),
            port,
        })
    }
}

/// The channel's listener, bound (so a busy port fails the start, before MCP is
/// served), with its URL and its own Host/Origin guard.
pub struct Channel {
    listener: tokio::net::TcpListener,
    base: String,
    hosts: Arc<Authorities>,
    logins: Arc<login::Logins>,
}

/// Said on stderr when the console is served but no operator token was handed in.
pub const NO_OPERATOR: &str = "no operator token was handed in (--operator-token-file or \
http.operator_token), so nobody can sign in to the console, approve, resume or release the \
stop over HTTP; none is generated, since an agent could read it (docs/SECURITY.md)";

impl Channel {
    /// Binds `listen`; its Host check also accepts `allow_hosts` (`--allow-host` and
    /// `http.allowed_hosts`).
    pub async fn bind(listen: &Listen, allow_hosts: &[String]) -> anyhow::Result<Channel> {
        let (listener, port) = bind(&listen.host, listen.port, "--operator-listen ").await?;
        Ok(Channel {
            listener,
            base: format!("http://{}", auth::authority(&listen.host, port)),
            hosts: Arc::new(Authorities::new(&listen.host, port).allowing(allow_hosts)),
            logins: Arc::new(login::Logins::new(port)),
        })
    }

    /// `http://host:port` of the bound channel.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Where the console is, on stderr (stdout may be the MCP stream). The
    /// "listening" line is the channel's last: once it is out, the channel answers.
    pub fn announce(&self) {
        let base = &self.base;
        eprintln!(
            "computer-control: operator console at {base}/ (sign in with the operator token)"
        );
        eprintln!("computer-control: operator channel listening on {base}");
    }

    /// The listener and its router over `state` (whose engine, kernels, tokens and
    /// event fan-out it shares), for [`serve_until`].
    pub(super) fn into_app(self, state: &AppState) -> (tokio::net::TcpListener, axum::Router) {
        let state = AppState {
            hosts: self.hosts,
            logins: self.logins,
            ..state.clone()
        };
        (self.listener, router(state, &Routes::Operator))
    }
}

/// Beside MCP over stdio: the bound channel serves, with the tokens resolved (the
/// operator's from `http.operator_token`, handed in; no agent token is made up) and its
/// address printed, until `until` completes (the MCP client closed stdin, or a
/// signal).
pub async fn beside_stdio(
    engine: &Engine,
    kernels: Arc<Kernels>,
    channel: Channel,
    until: impl Future<Output = anyhow::Result<()>>,
) -> anyhow::Result<()> {
    let http = &engine.base_config().config().http;
    require_operator_token(&http.operator_token)?;
    let urls = Urls { agent: None };
    let tokens = Arc::new(Tokens::resolve(
        &http.token,
        &http.operator_token,
        &http.agents,
        &urls,
    )?);
    let result = async {
        let state = AppState {
            engine: engine.clone(),
            tokens: tokens.clone(),
            hosts: channel.hosts.clone(),
            logins: channel.logins.clone(),
            sse: sse::Hub::start(engine).context("cannot start the event fan-out")?,
            kernels,
            limits: Limits::new(Bounds::from_config(http)),
        };
        channel.announce();
        serve_until(vec![channel.into_app(&state)], &state.limits, until).await
    }
    .await;
    tokens.remove_file();
    result
}

/// The operator channel exists for the operator alone: without an operator token it
/// would admit nobody, so the start fails and says how to hand one in.
pub fn require_operator_token(operator_token: &str) -> anyhow::Result<()> {
    if !operator_token.trim().is_empty() {
        return Ok(());
    }
    anyhow::bail!(
        "--operator-listen needs an operator token handed in at start: \
         --operator-token-file PATH (a descriptor such as /dev/fd/3, or a file the desktop \
         user cannot read) or http.operator_token in a config only the operator can read; \
         none is generated, since an agent driving this desktop could read it \
         (docs/SECURITY.md)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(host: &str, port: u16) -> Listen {
        Listen {
            host: host.into(),
            port,
        }
    }

    #[test]
    fn listen_addresses() {
        assert_eq!("8767".parse::<Listen>(), Ok(at("127.0.0.1", 8767)));
        assert_eq!("0".parse::<Listen>(), Ok(at("127.0.0.1", 0)));
        assert_eq!("127.0.0.1:0".parse::<Listen>(), Ok(at("127.0.0.1", 0)));
        assert_eq!(
            "localhost:9000".parse::<Listen>(),
            Ok(at("localhost", 9000))
        );
        assert_eq!("[::1]:9000".parse::<Listen>(), Ok(at("::1", 9000)));
    }

    #[test]
    fn bad_listen_addresses_say_what_is_wrong() {
        for (bad, why) in [
            ("", "expected HOST:PORT"),
            ("localhost", "expected HOST:PORT"),
            (":8767", "the host is empty"),
            ("127.0.0.1:", "is not a port"),
            ("127.0.0.1:65536", "is not a port"),
            ("127.0.0.1:http", "is not a port"),
            ("::1:9000", "needs brackets"),
            ("[::1]", "expected [IPv6]:PORT"),
            ("[nope]:9000", "is not an IPv6 address"),
            ("user@host:9000", "is not a host name"),
            ("a b:9000", "is not a host name"),
        ] {
            let e = bad.parse::<Listen>().expect_err(bad);
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }
}
