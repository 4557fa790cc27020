//! Who may talk to the server (PROTOCOL §8): bearer tokens for the two roles, compared
//! in constant time, and the Host/Origin checks that stop a web page served from
//! anywhere else from reaching it through the browser (DNS rebinding, CSRF).

use std::io::Write;
use std::net::Ipv6Addr;
use std::path::{Path, PathBuf};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::json;

use cc_engine::config::AgentToken;

use super::secret::{ct_eq, generate};
use super::{AppState, Identity, Role, json_response};
use crate::places;

/// The two role tokens, the agent tokens with their own identity (`http.agents`), and
/// the file holding the agent token if it was generated.
pub struct Tokens {
    /// `None` only beside MCP over stdio with no `http.token` configured: that process
    /// has no agent endpoint over HTTP, so no agent token exists at all.
    agent: Option<String>,
    /// `None` when no operator token was handed in (`http.operator_token`, or
    /// `--operator-token-file` over it): then nobody is the operator over HTTP. One is
    /// never generated: whatever the server could write or print, an agent driving the
    /// desktop account could read (docs/SECURITY.md).
    operator: Option<String>,
    agents: Vec<AgentToken>,
    file: Option<PathBuf>,
}

impl Tokens {
    /// Tokens from config `http.token` / `http.operator_token`. A blank `http.token` is
    /// generated when the process has an agent endpoint over HTTP (`urls.agent`) and
    /// written to a fresh 0600 file with the URL it is for: the agent is meant to read
    /// it. A blank `http.operator_token` is never generated (see [`Tokens::operator`]).
    /// The `http.agents` tokens are never generated; each must differ from every other
    /// token, or a request could not be told apart.
    pub fn resolve(
        token: &str,
        operator_token: &str,
        agents: &[AgentToken],
        urls: &Urls,
    ) -> anyhow::Result<Tokens> {
        let agent = match token.trim() {
            "" => None,
            t => Some(t.to_string()),
        };
        let operator = match operator_token.trim() {
            "" => None,
            t => Some(t.to_string()),
        };
        if agent.is_some() && agent == operator {
            anyhow::bail!(
                "http.token and http.operator_token are equal: the roles could not be told apart"
            );
        }
        for (name, t) in [("http.token", &agent), ("http.operator_token", &operator)] {
            if t.as_ref().is_some_and(|t| t.len() < 16) {
                tracing::warn!("{name} is shorter than 16 characters; prefer a long random token");
            }
        }
        for (i, a) in agents.iter().enumerate() {
            let t = a.token.trim();
            if t.is_empty() || a.principal_id.trim().is_empty() {
                anyhow::bail!("http.agents[{i}] has a blank token or principal_id");
            }
            let clash = [&agent, &operator].into_iter().flatten().any(|o| o == t)
                || agents[..i].iter().any(|b| b.token.trim() == t);
            if clash {
                anyhow::bail!(
                    "http.agents[{i}] (principal {:?}) reuses a token: every token must be distinct",
                    a.principal_id
                );
            }
            if t.len() < 16 {
                tracing::warn!(
                    "http.agents[{i}].token is shorter than 16 characters; prefer a long random token"
                );
            }
        }
        let generate_agent = agent.is_none() && urls.agent.is_some();
        let mut tokens = Tokens {
            agent: match &agent {
                Some(t) => Some(t.clone()),
                None if generate_agent => Some(generate()?),
                None => None,
            },
            operator,
            agents: agents
                .iter()
                .map(|a| AgentToken {
                    principal_id: a.principal_id.clone(),
                    token: a.token.trim().to_string(),
                })
                .collect(),
            file: None,
        };
        if let (true, Some(url), Some(agent)) = (generate_agent, urls.agent, &tokens.agent) {
            let body = json!({"url": url, "agent": agent});
            tokens.file = Some(write_private_file(&body.to_string())?);
        }
        Ok(tokens)
    }

    /// True when an operator token was handed in: without one the operator side
    /// admits nobody.
    pub fn has_operator(&self) -> bool {
        self.operator.is_some()
    }

    /// Tokens given directly (tests).
    #[cfg(test)]
    pub fn fixed(agent: &str, operator: &str) -> Tokens {
        Tokens {
            agent: Some(agent.into()),
            operator: Some(operator.into()),
            agents: Vec::new(),
            file: None,
        }
    }

    /// Who a presented token is: its role, and for an `http.agents` token its
    /// principal. Every token is compared, so the time taken says nothing about which
    /// one was close.
    pub fn identify(&self, presented: &str) -> Option<Identity> {
        let extra = self.agents.iter().fold(None, |found, a| {
            let hit = ct_eq(presented.as_bytes(), a.token.as_bytes());
            found.or(hit.then(|| a.principal_id.clone()))
        });
        match (self.role_of(presented), extra) {
            (Some(role), _) => Some(Identity {
                role,
                principal: None,
            }),
            (None, Some(p)) => Some(Identity {
                role: Role::Agent,
                principal: Some(p),
            }),
            (None, None) => None,
        }
    }

    /// The role a presented token grants. Both tokens are always compared, so the time
    /// taken says nothing about which one was close.
    pub fn role_of(&self, presented: &str) -> Option<Role> {
        let is_operator = self
            .operator
            .as_deref()
            .is_some_and(|o| ct_eq(presented.as_bytes(), o.as_bytes()));
        let is_agent = self
            .agent
            .as_deref()
            .is_some_and(|a| ct_eq(presented.as_bytes(), a.as_bytes()));
        if is_operator {
            Some(Role::Operator)
        } else if is_agent {
            Some(Role::Agent)
        } else {
            None
        }
    }

    /// The file the generated agent token was written to.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// Removes the token file (at shutdown): the tokens die with the server.
    pub fn remove_file(&self) {
        if let Some(p) = &self.file {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Where the agent's token is used: written into the token file beside it.
pub struct Urls<'a> {
    /// The agent's endpoint (`/rpc`, `/mcp`) over HTTP, if this process has one.
    pub agent: Option<&'a str>,
}

/// Writes `text` to a new file only the owner can read, where `places::token_dir` says
/// (`%LOCALAPPDATA%\computer-control` on Windows, created if missing; else
/// `$XDG_RUNTIME_DIR`, or the temp directory with the file's mode 0600). `create_new`
/// refuses an existing path, so a planted file or symlink is never written through.
fn write_private_file(text: &str) -> anyhow::Result<PathBuf> {
    let os = places::Os::current();
    let dir = match places::token_dir(os, &places::from_env).map_err(anyhow::Error::msg)? {
        Some(d) if os == places::Os::Windows => {
            std::fs::create_dir_all(&d).map_err(|e| {
                anyhow::anyhow!("cannot create the token directory {}: {e}", d.display())
            })?;
            d
        }
        Some(d) if d.is_dir() => d,
        _ => std::env::temp_dir(),
    };
    let mut suffix = [0u8; 4];
    getrandom::fill(&mut suffix).map_err(|e| anyhow::anyhow!("no randomness: {e}"))?;
    let name = format!(
        "computer-control-http-{}-{}.json",
        std::process::id(),
        suffix
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    );
    let path = dir.join(name);
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let mut f = opts
        .open(&path)
        .map_err(|e| anyhow::anyhow!("cannot create the token file {}: {e}", path.display()))?;
    f.write_all(text.as_bytes())
        .and_then(|_| f.write_all(b"\n"))
        .map_err(|e| anyhow::anyhow!("cannot write the token file {}: {e}", path.display()))?;
    Ok(path)
}

/// `host:port` as it appears in a URL (IPv6 addresses bracketed).
pub fn authority(host: &str, port: u16) -> String {
    match host.parse::<Ipv6Addr>() {
        Ok(ip) => format!("[{ip}]:{port}"),
        Err(_) => format!("{host}:{port}"),
    }
}

/// The `Host` values this server answers to: the bound host and the loopback names,
/// on the bound port.
pub struct Authorities {
    names: Vec<String>,
    port: u16,
}

impl Authorities {
    /// For a server bound to `host:port`.
    pub fn new(host: &str, port: u16) -> Authorities {
        let bound = match host.parse::<Ipv6Addr>() {
            Ok(ip) => format!("[{ip}]"),
            Err(_) => host.to_ascii_lowercase(),
        };
        let mut names = vec![
            bound,
            "localhost".to_string(),
            "127.0.0.1".to_string(),
            "[::1]".to_string(),
        ];
        names.dedup();
        Authorities { names, port }
    }

    /// The same, also answering to `names` (`--allow-host`): the names and addresses
    /// other machines reach this server by, such as a pod's IP and its DNS names in a
    /// cluster. Each was checked by [`allowed_host`].
    pub fn allowing(mut self, names: &[String]) -> Authorities {
        for n in names {
            if !self.names.contains(n) {
                self.names.push(n.clone());
            }
        }
        self
    }

    /// True for a `Host` header naming this server.
    pub fn host_ok(&self, host: &str) -> bool {
        split_authority(host).is_some_and(|(h, p)| p == self.port && self.names.contains(&h))
    }
}

/// One `--allow-host` value as the `Host` check compares it: a host name or an IPv4
/// address (lowercased), or an IPv6 address (bracketed); no port, path or wildcard.
pub fn allowed_host(name: &str) -> Result<String, String> {
    let n = name.trim().to_ascii_lowercase();
    if let Ok(ip) = n
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<Ipv6Addr>()
    {
        return Ok(format!("[{ip}]"));
    }
    let ok = !n.is_empty()
        && n.len() <= 253
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
    if ok {
        Ok(n)
    } else {
        Err(format!(
            "{name:?} is not a host name or address (no port, path or wildcard: \
             desk-0.desks, 10.0.0.7 or [fd00::7])"
        ))
    }
}

/// `(lowercased host, port)` of an authority; port 80 when absent (plain HTTP).
fn split_authority(a: &str) -> Option<(String, u16)> {
    let a = a.trim().to_ascii_lowercase();
    if a.is_empty() || a.contains(['/', '@', ' ']) {
        return None;
    }
    let (host, port) = if a.starts_with('[') {
        let end = a.find(']')?;
        let (h, rest) = a.split_at(end + 1);
        match rest.strip_prefix(':') {
            Some(p) => (h.to_string(), p.parse().ok()?),
            None if rest.is_empty() => (h.to_string(), 80),
            None => return None,
        }
    } else {
        match a.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p.parse().ok()?),
            None => (a.clone(), 80),
        }
    };
    (!host.is_empty()).then_some((host, port))
}

/// True when `origin` is this request's own origin: `http://` + its `Host`.
fn same_origin(origin: &str, host: &str) -> bool {
    let Some(rest) = origin
        .get(..7)
        .filter(|s| s.eq_ignore_ascii_case("http://"))
        .and_then(|_| origin.get(7..))
    else {
        return false;
    };
    match (split_authority(rest), split_authority(host)) {
        (Some(o), Some(h)) => o == h,
        _ => false,
    }
}

fn refuse(status: StatusCode, reason: &str, message: String) -> Response {
    json_response(status, &json!({"error": reason, "message": message}))
}

/// Why a request was turned away before reaching its route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    /// 403 for Host/Origin, 401 for a missing or unknown token.
    pub status: StatusCode,
    /// The wire `error`.
    pub reason: &'static str,
    /// The wire `message`.
    pub message: &'static str,
}

/// The decision of [`guard`], apart from axum so it can be tested and fuzzed alone: the
/// `Host` must name this server and an `Origin`, when present, must be this server's
/// own. A page on another site, even one whose DNS name was rebound to 127.0.0.1, fails
/// one of the two.
pub fn check_host_origin(hosts: &Authorities, headers: &HeaderMap) -> Result<(), Refusal> {
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    let Some(host) = host.filter(|h| hosts.host_ok(h)) else {
        return Err(Refusal {
            status: StatusCode::FORBIDDEN,
            reason: "bad_host",
            message: "the Host header does not name this server (DNS-rebinding protection)",
        });
    };
    if let Some(origin) = headers.get(header::ORIGIN) {
        let ok = origin.to_str().is_ok_and(|o| same_origin(o, host));
        if !ok {
            return Err(Refusal {
                status: StatusCode::FORBIDDEN,
                reason: "bad_origin",
                message: "requests from another origin are refused",
            });
        }
    }
    Ok(())
}

/// Every route: [`check_host_origin`].
pub async fn guard(State(st): State<AppState>, req: Request, next: Next) -> Response {
    match check_host_origin(&st.hosts, req.headers()) {
        Ok(()) => next.run(req).await,
        Err(r) => refuse(r.status, r.reason, r.message.into()),
    }
}

/// The operator channel (`--operator-listen`), after [`require_token`]: only the
/// operator token passes. The agent acts through MCP and must not reach the channel a
/// human uses to approve what the agent asked for (GOVERNANCE.md: "Approval is never a
/// model tool"), so a recognised agent token gets 403 rather than a narrower view.
pub async fn require_operator(req: Request, next: Next) -> Response {
    match req.extensions().get::<Role>() {
        Some(Role::Operator) => next.run(req).await,
        _ => refuse(
            StatusCode::FORBIDDEN,
            "forbidden",
            "the operator channel needs the operator token; the agent acts through MCP".into(),
        ),
    }
}

/// The bearer token of a request, if it has one.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = v.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

/// The decision of [`require_token`], apart from axum: who the request's bearer token
/// is, or why it is refused (401).
pub fn authenticate(tokens: &Tokens, headers: &HeaderMap) -> Result<Identity, Refusal> {
    let (identity, message) = match bearer(headers) {
        None => (None, "missing Authorization: Bearer <token>"),
        Some(t) => (tokens.identify(t), "the bearer token is not valid"),
    };
    identity.ok_or(Refusal {
        status: StatusCode::UNAUTHORIZED,
        reason: "unauthorized",
        message,
    })
}

/// A request without a bearer token may be the console's: its session cookie and its
/// per-tab key ([`super::login`]) make it the operator. A request changing anything
/// must also carry an `Origin` (the guard already refused a foreign one), as every
/// browser sends for a `fetch` POST.
fn console_session(st: &AppState, req: &Request) -> Result<Option<Identity>, Refusal> {
    let headers = req.headers();
    let Some(id) = st.logins.cookie_of(headers) else {
        return Ok(None);
    };
    let key = headers
        .get(super::login::KEY_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !st.logins.check(id, key, std::time::Instant::now()) {
        return Err(Refusal {
            status: StatusCode::UNAUTHORIZED,
            reason: "unauthorized",
            message: "the console session has ended or is not this tab's: sign in again",
        });
    }
    let safe = matches!(
        *req.method(),
        axum::http::Method::GET | axum::http::Method::HEAD
    );
    if !safe && !headers.contains_key(header::ORIGIN) {
        return Err(Refusal {
            status: StatusCode::FORBIDDEN,
            reason: "bad_origin",
            message: "a console request that changes something must carry its page's Origin",
        });
    }
    Ok(Some(Identity {
        role: Role::Operator,
        principal: None,
    }))
}

fn unauthorized(r: Refusal) -> Response {
    let mut resp = refuse(r.status, r.reason, r.message.into());
    if r.status == StatusCode::UNAUTHORIZED {
        resp.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"computer-control\""),
        );
    }
    resp
}

fn admit(mut req: Request, identity: Identity) -> Request {
    req.extensions_mut().insert(identity.role);
    req.extensions_mut().insert(identity);
    req
}

/// Protected routes but `/mcp`: a valid bearer token ([`authenticate`]) or, without
/// one, a console session; the [`Role`] and [`Identity`] go into the request
/// extensions.
pub async fn require_token(State(st): State<AppState>, req: Request, next: Next) -> Response {
    if bearer(req.headers()).is_none() {
        match console_session(&st, &req) {
            Ok(Some(identity)) => return next.run(admit(req, identity)).await,
            Ok(None) => {}
            Err(r) => return unauthorized(r),
        }
    }
    match authenticate(&st.tokens, req.headers()) {
        Ok(identity) => next.run(admit(req, identity)).await,
        Err(r) => unauthorized(r),
    }
}

/// `/mcp`, the agent's endpoint: a bearer token only. A console session is never an
/// agent's credential, nor an operator's way into the agent's tools.
pub async fn require_bearer(State(st): State<AppState>, req: Request, next: Next) -> Response {
    match authenticate(&st.tokens, req.headers()) {
        Ok(identity) => next.run(admit(req, identity)).await,
        Err(r) => unauthorized(r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const URLS: Urls = Urls {
        agent: Some("http://127.0.0.1:1"),
    };

    #[test]
    fn an_operator_token_is_never_generated() {
        let dir = std::env::temp_dir();
        let t = Tokens::resolve("", "", &[], &URLS).unwrap();
        assert!(!t.has_operator());
        let agent = t.agent.clone().expect("the agent's is generated");
        assert_eq!(t.identify(&agent).map(|i| i.role), Some(Role::Agent));
        for guess in ["", " ", "operator", &agent] {
            assert_ne!(t.role_of(guess), Some(Role::Operator), "{guess:?}");
        }
        let path = t.file().expect("the agent token file").to_path_buf();
        assert!(path.starts_with(&dir) || std::env::var_os("XDG_RUNTIME_DIR").is_some());
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v, json!({"url": "http://127.0.0.1:1", "agent": agent}));
        t.remove_file();
        assert!(!path.exists());
    }

    #[test]
    fn beside_stdio_mcp_no_agent_token_is_made_up() {
        let urls = Urls { agent: None };
        let t = Tokens::resolve("", "operator-token-012345", &[], &urls).unwrap();
        assert_eq!(t.agent, None);
        assert!(t.file().is_none(), "nothing generated, nothing written");
        assert_eq!(t.role_of(""), None);
        assert_eq!(t.role_of("operator-token-012345"), Some(Role::Operator));
        // A configured agent token is still recognised (and refused there with 403).
        let t = Tokens::resolve(
            "agent-token-0123456789",
            "operator-token-012345",
            &[],
            &urls,
        )
        .unwrap();
        assert_eq!(t.role_of("agent-token-0123456789"), Some(Role::Agent));
    }

    #[test]
    fn roles_from_tokens() {
        let t = Tokens::fixed("agent-token-0123456789", "operator-token-012345");
        assert_eq!(t.role_of("agent-token-0123456789"), Some(Role::Agent));
        assert_eq!(t.role_of("operator-token-012345"), Some(Role::Operator));
        assert_eq!(t.role_of("agent-token-012345678"), None);
        assert_eq!(t.role_of(""), None);
    }

    #[test]
    fn agent_tokens_carry_their_principal() {
        let agents = [AgentToken {
            principal_id: "agent-b".into(),
            token: "agent-b-token-0123456789".into(),
        }];
        let t = Tokens::resolve(
            "agent-token-0123456789",
            "operator-token-012345",
            &agents,
            &URLS,
        )
        .unwrap();
        let b = t.identify("agent-b-token-0123456789").unwrap();
        assert_eq!(
            (b.role, b.principal.as_deref()),
            (Role::Agent, Some("agent-b"))
        );
        let a = t.identify("agent-token-0123456789").unwrap();
        assert_eq!((a.role, a.principal), (Role::Agent, None));
        let o = t.identify("operator-token-012345").unwrap();
        assert_eq!((o.role, o.principal), (Role::Operator, None));
        assert_eq!(t.identify("agent-b-token-012345678"), None);
    }

    #[test]
    fn blank_agent_tokens_and_principals_are_refused() {
        for (principal_id, token) in [("agent-b", "  "), (" ", "agent-b-token-0123456789")] {
            let agents = [AgentToken {
                principal_id: principal_id.into(),
                token: token.into(),
            }];
            let e = Tokens::resolve("", "", &agents, &URLS)
                .err()
                .expect("refused");
            assert!(e.to_string().contains("blank"), "{e}");
        }
    }

    #[test]
    fn reused_agent_tokens_are_refused() {
        let same = |token: &str| AgentToken {
            principal_id: "agent-b".into(),
            token: token.into(),
        };
        for agents in [
            vec![same("agent-token-0123456789")],
            vec![same("operator-token-012345")],
            vec![
                same("agent-c-token-0123456"),
                same(" agent-c-token-0123456"),
            ],
        ] {
            let e = Tokens::resolve(
                "agent-token-0123456789",
                "operator-token-012345",
                &agents,
                &URLS,
            )
            .err()
            .expect("refused");
            assert!(e.to_string().contains("reuses a token"), "{e}");
        }
    }

    #[test]
    fn hosts_and_origins() {
        let a = Authorities::new("127.0.0.1", 8765);
        for ok in [
            "127.0.0.1:8765",
            "localhost:8765",
            "LOCALHOST:8765",
            "[::1]:8765",
        ] {
            assert!(a.host_ok(ok), "{ok}");
        }
        for bad in [
            "127.0.0.1:8766",
            "evil.example:8765",
            "127.0.0.1",
            "",
            "127.0.0.1:8765/x",
            "user@127.0.0.1:8765",
            "127.0.0.1.evil.example:8765",
        ] {
            assert!(!a.host_ok(bad), "{bad}");
        }
        let v6 = Authorities::new("::1", 9000);
        assert!(v6.host_ok("[::1]:9000"));
        assert!(same_origin("http://127.0.0.1:8765", "127.0.0.1:8765"));
        assert!(same_origin("HTTP://LocalHost:8765", "localhost:8765"));
        assert!(!same_origin("http://localhost:8765", "127.0.0.1:8765"));
        assert!(!same_origin("https://127.0.0.1:8765", "127.0.0.1:8765"));
        assert!(!same_origin("null", "127.0.0.1:8765"));
        assert!(!same_origin("http://evil.example", "127.0.0.1:8765"));
        assert_eq!(authority("::1", 80), "[::1]:80");
    }

    #[test]
    fn bearer_parsing() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer(&h), None);
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer abc"),
        );
        assert_eq!(bearer(&h), Some("abc"));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer  abc "),
        );
        assert_eq!(bearer(&h), Some("abc"));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert_eq!(bearer(&h), None);
    }
}
