//! The HTTP transport's admission decisions and SSE framing, without a socket:
//! `Authorization` (a request without one of the exact tokens is never admitted, an
//! agent token never gets the operator role), `Host`/`Origin` (only this server's own
//! names and origin pass), `Last-Event-ID` (never resumes after a sequence number the
//! server has not reached), and an event frame is always exactly one SSE event, whatever
//! its text holds.

use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use cc_engine::config::AgentToken;
use cc_protocol::Event;
use computer_control::transports::http::auth::{
    Authorities, Urls, authenticate, check_host_origin,
};
use computer_control::transports::http::sse::{frame, resume_after};
use computer_control::transports::http::{Role, Tokens};

const AGENT: &str = "agent-token-0123456789";
const OPERATOR: &str = "operator-token-012345";
const AGENT_B: (&str, &str) = ("agent-b", "agent-b-token-0123456789");
const PORT: u16 = 8765;
const NAMES: &[&str] = &["127.0.0.1", "localhost", "[::1]"];

/// The input is `\n`-separated fields: `Authorization`, `Host`, `Origin`,
/// `Last-Event-ID`, then optionally an agent and an operator token to configure instead
/// of the fixed ones. A missing field is a missing header.
pub fn check(data: &[u8]) {
    let fields: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    let field = |i: usize| fields.get(i).copied();
    let mut headers = HeaderMap::new();
    for (i, name) in [
        header::AUTHORIZATION,
        header::HOST,
        header::ORIGIN,
        HeaderName::from_static("last-event-id"),
    ]
    .into_iter()
    .enumerate()
    {
        if let Some(v) = field(i).and_then(|b| HeaderValue::from_bytes(b).ok()) {
            headers.insert(name, v);
        }
    }
    let text = |i: usize| field(i).and_then(|b| std::str::from_utf8(b).ok());
    let agent = text(4).filter(|t| !t.trim().is_empty()).unwrap_or(AGENT);
    let operator = text(5).filter(|t| !t.trim().is_empty()).unwrap_or(OPERATOR);
    admission(&headers, agent, operator);
    host_origin(&headers);
    last_event_id(&headers);
    if let Some(t) = text(1) {
        sse_frame(t, text(0).unwrap_or("x"));
    }
}

fn admission(headers: &HeaderMap, agent: &str, operator: &str) {
    let agents = [AgentToken {
        principal_id: AGENT_B.0.into(),
        token: AGENT_B.1.into(),
    }];
    let urls = Urls {
        agent: Some("http://127.0.0.1:8765"),
    };
    // Both tokens are given (never generated), so no token file is written.
    let Ok(tokens) = Tokens::resolve(agent, operator, &agents, &urls) else {
        return; // equal or clashing tokens are refused at start-up
    };
    let (agent, operator) = (agent.trim(), operator.trim());
    assert_eq!(
        tokens.role_of(agent).map(Role::as_str),
        Some("agent"),
        "the agent token is not the agent"
    );
    assert_eq!(
        tokens.identify(AGENT_B.1).map(|i| i.role),
        Some(Role::Agent)
    );
    let identity = match authenticate(&tokens, headers) {
        Ok(identity) => identity,
        Err(r) => {
            assert_eq!(r.status.as_u16(), 401);
            return;
        }
    };
    // Admitted: the header must be `Bearer` (any case), spaces, and one token exactly.
    let value = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .expect("admitted without a readable Authorization header");
    let value = value.trim();
    let (scheme, rest) = value.split_at(
        value
            .find(' ')
            .expect("admitted without a space after the scheme"),
    );
    assert!(
        scheme.eq_ignore_ascii_case("bearer"),
        "admitted with scheme {scheme:?}"
    );
    let presented = rest.trim();
    let expected = match (identity.role, identity.principal.as_deref()) {
        (Role::Operator, None) => operator,
        (Role::Agent, None) => agent,
        (Role::Agent, Some(p)) if p == AGENT_B.0 => AGENT_B.1,
        other => panic!("admitted as an unknown identity {other:?}"),
    };
    assert_eq!(
        presented, expected,
        "admitted as {:?} with a token that is not its own",
        identity.role
    );
    if presented == agent {
        assert_eq!(
            identity.role,
            Role::Agent,
            "the agent token got the operator role"
        );
    }
}

/// `(name, port)` of an authority as a person would read it: a port of digits only.
fn plain_authority(a: &str) -> Option<(String, u16)> {
    let a = a.trim().to_ascii_lowercase();
    let (name, port) = a.rsplit_once(':')?;
    let digits = port.trim_start_matches('+');
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((name.to_string(), digits.parse().ok()?))
}

fn host_origin(headers: &HeaderMap) {
    let hosts = Authorities::new("127.0.0.1", PORT);
    let Ok(()) = check_host_origin(&hosts, headers) else {
        return;
    };
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .expect("passed without a readable Host");
    let (name, port) = plain_authority(host).unwrap_or_else(|| panic!("passed with Host {host:?}"));
    assert!(
        NAMES.contains(&name.as_str()) && port == PORT,
        "passed with Host {host:?}"
    );
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().expect("passed with an unreadable Origin");
        let rest = origin
            .get(..7)
            .filter(|s| s.eq_ignore_ascii_case("http://"))
            .and_then(|_| origin.get(7..))
            .unwrap_or_else(|| panic!("passed with Origin {origin:?}"));
        assert_eq!(
            plain_authority(rest),
            Some((name, port)),
            "passed with Origin {origin:?} for Host {host:?}"
        );
    }
}

fn last_event_id(headers: &HeaderMap) {
    for last_seq in [0, 1, 7, 1_000_000, u64::MAX] {
        if let Some(after) = resume_after(headers, last_seq) {
            assert!(
                after <= last_seq,
                "resumes after {after}, beyond the last event {last_seq}"
            );
            let v = headers
                .get("last-event-id")
                .and_then(|v| v.to_str().ok())
                .expect("resumed without a readable Last-Event-ID");
            assert_eq!(v.trim().parse::<u64>().ok(), Some(after));
        }
    }
}

/// One event, whatever its type and text, is one SSE event: `id`, `event`, one `data`
/// line and a blank line, with no other line break (`\r` ends a line in SSE too).
fn sse_frame(text: &str, kind: &str) {
    // Through a bus, as the server makes every event: serialized once, when emitted.
    let bus = cc_engine::EventBus::new(std::sync::Arc::new(cc_engine::clock::SystemClock));
    bus.emit(kind, serde_json::json!({"text": text}));
    let (replay, _) = bus.subscribe(1, None);
    let ev = replay[0].to_event();
    let chunks = frame(&replay[0]);
    let s: String = chunks
        .iter()
        .map(|b| std::str::from_utf8(b).expect("a frame is UTF-8"))
        .collect();
    let body = s
        .strip_prefix("id: 1\nevent: message\ndata: ")
        .and_then(|b| b.strip_suffix("\n\n"))
        .unwrap_or_else(|| panic!("malformed frame {s:?}"));
    assert!(
        !body.contains(['\n', '\r']),
        "a line break inside the data line: {s:?}"
    );
    let back: Event = serde_json::from_str(body).expect("the data line is the event");
    assert_eq!(back, ev);
    assert_eq!(
        (back.kind.as_str(), &back.payload["text"]),
        (kind, &serde_json::json!(text))
    );
}
