//! How many connections and event streams each caller may hold (PROTOCOL §8), so an
//! agent, or anyone who can reach the port without a token, cannot exhaust the
//! server's descriptors and lock the operator out.
//!
//! A connection has no principal until its first authenticated request: until then it
//! is *anonymous*, and the anonymous ones are bounded together across every listener
//! of the process; when they are full the oldest is closed for the new one, so a flood
//! of idle connections cannot keep out a client that sends its request at once (the
//! operator's console, an agent). The first authenticated request gives the connection
//! to its principal: each agent principal has its own bound, all agents together
//! another, and the operator one of its own that no agent can use. A request over its
//! principal's bound gets 503 `too_many_connections` and the connection is closed.
//! `/events` streams are bounded per agent principal; the operator's are bounded by its
//! connections.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use cc_engine::config::HttpConfig;
use serde_json::json;
use tokio::sync::Notify;

use super::json_response;
use crate::transports::identity::{Identity, Role};

/// The numbers, from the operator's `http` config (never the agent's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Time to receive a request's headers, and the longest idle wait between requests.
    pub header_timeout: Duration,
    pub anonymous: usize,
    pub agent: usize,
    pub agents_total: usize,
    pub agent_streams: usize,
    pub operator: usize,
}

impl Bounds {
    /// From `http.*`.
    pub fn from_config(http: &HttpConfig) -> Bounds {
        Bounds {
            header_timeout: Duration::from_millis(http.header_timeout_ms),
            anonymous: http.anonymous_connections,
            agent: http.agent_connections,
            agents_total: http.agent_connections_total,
            agent_streams: http.agent_event_streams,
            operator: http.operator_connections,
        }
    }
}

/// Whose a connection or stream is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Owner {
    Anonymous,
    Operator,
    /// An agent principal (`""`: `http.token`, the host's principal).
    Agent(String),
}

impl Owner {
    fn of(identity: &Identity) -> Owner {
        match identity.role {
            Role::Operator => Owner::Operator,
            Role::Agent => Owner::Agent(identity.principal.clone().unwrap_or_default()),
        }
    }
}

#[derive(Default)]
struct Counts {
    next_id: u64,
    /// Anonymous connections, oldest first: their ids and how to close them.
    anonymous: VecDeque<(u64, Arc<Notify>)>,
    operator: usize,
    agents: HashMap<String, usize>,
    agents_total: usize,
    streams: HashMap<String, usize>,
}

/// The process's counts, shared by every listener.
pub struct Limits {
    bounds: Bounds,
    counts: Mutex<Counts>,
}

impl Limits {
    /// Empty counts under `bounds`.
    pub fn new(bounds: Bounds) -> Arc<Limits> {
        Arc::new(Limits {
            bounds,
            counts: Mutex::new(Counts::default()),
        })
    }

    /// The numbers.
    pub fn bounds(&self) -> Bounds {
        self.bounds
    }

    fn lock(&self) -> MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new, anonymous connection; when the anonymous ones are full, the oldest is
    /// told to close.
    pub fn open(self: &Arc<Limits>) -> Arc<Conn> {
        let evict = Arc::new(Notify::new());
        let mut c = self.lock();
        c.next_id += 1;
        let id = c.next_id;
        while c.anonymous.len() >= self.bounds.anonymous {
            match c.anonymous.pop_front() {
                Some((_, oldest)) => oldest.notify_one(),
                None => break,
            }
        }
        c.anonymous.push_back((id, evict.clone()));
        Arc::new(Conn {
            id,
            limits: self.clone(),
            owner: Mutex::new(Owner::Anonymous),
            evict,
        })
    }

    /// Gives an anonymous connection to `owner`, if its bound allows.
    fn claim(&self, conn: &Conn, owner: Owner) -> Result<(), String> {
        let mut c = self.lock();
        let mut current = conn.owner.lock().unwrap_or_else(|p| p.into_inner());
        if *current != Owner::Anonymous {
            return Ok(());
        }
        let b = self.bounds;
        match &owner {
            Owner::Operator if c.operator >= b.operator => {
                return Err(format!(
                    "the operator holds {} connections, its bound",
                    b.operator
                ));
            }
            Owner::Operator => c.operator += 1,
            Owner::Agent(p) => {
                let held = c.agents.get(p).copied().unwrap_or(0);
                if held >= b.agent {
                    return Err(format!(
                        "this principal holds {held} connections, its bound"
                    ));
                }
                if c.agents_total >= b.agents_total {
                    return Err(format!(
                        "agents hold {} connections, their bound together",
                        c.agents_total
                    ));
                }
                *c.agents.entry(p.clone()).or_default() += 1;
                c.agents_total += 1;
            }
            Owner::Anonymous => return Ok(()),
        }
        c.anonymous.retain(|(id, _)| *id != conn.id);
        *current = owner;
        Ok(())
    }

    fn release(&self, id: u64, owner: &Owner) {
        let mut c = self.lock();
        match owner {
            Owner::Anonymous => c.anonymous.retain(|(i, _)| *i != id),
            Owner::Operator => c.operator = c.operator.saturating_sub(1),
            Owner::Agent(p) => {
                if let Some(n) = c.agents.get_mut(p) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        c.agents.remove(p);
                    }
                }
                c.agents_total = c.agents_total.saturating_sub(1);
            }
        }
    }

    /// A slot for one `/events` stream of `identity`, held until dropped; `Err` says
    /// why there is none.
    pub fn stream(self: &Arc<Limits>, identity: &Identity) -> Result<StreamSlot, String> {
        let Owner::Agent(p) = Owner::of(identity) else {
            // The operator's streams are bounded by its connections.
            return Ok(StreamSlot(None));
        };
        let mut c = self.lock();
        let held = c.streams.entry(p.clone()).or_default();
        if *held >= self.bounds.agent_streams {
            return Err(format!(
                "at most {} event streams per agent principal",
                self.bounds.agent_streams
            ));
        }
        *held += 1;
        Ok(StreamSlot(Some((self.clone(), p))))
    }

    /// Connections held now: anonymous, by agents, by the operator (for tests and
    /// `/health`).
    pub fn held(&self) -> (usize, usize, usize) {
        let c = self.lock();
        (c.anonymous.len(), c.agents_total, c.operator)
    }
}

/// One `/events` stream's place in its principal's bound.
pub struct StreamSlot(Option<(Arc<Limits>, String)>);

impl Drop for StreamSlot {
    fn drop(&mut self) {
        if let Some((limits, p)) = self.0.take() {
            let mut c = limits.lock();
            if let Some(n) = c.streams.get_mut(&p) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    c.streams.remove(&p);
                }
            }
        }
    }
}

/// One accepted connection: in every request's extensions, counted until dropped.
pub struct Conn {
    id: u64,
    limits: Arc<Limits>,
    owner: Mutex<Owner>,
    evict: Arc<Notify>,
}

impl Conn {
    /// Completes when this connection, still anonymous, was closed for a newer one.
    pub async fn evicted(&self) {
        self.evict.notified().await;
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        let owner = self.owner.lock().unwrap_or_else(|p| p.into_inner()).clone();
        self.limits.release(self.id, &owner);
    }
}

/// Protected routes, after the token check: the request's connection goes to its
/// principal, or the request gets 503 and the connection is closed.
pub async fn admit(req: Request, next: Next) -> Response {
    let (Some(conn), Some(identity)) = (
        req.extensions().get::<Arc<Conn>>(),
        req.extensions().get::<Identity>(),
    ) else {
        return next.run(req).await;
    };
    match conn.limits.claim(conn, Owner::of(identity)) {
        Ok(()) => next.run(req).await,
        Err(message) => {
            let mut r = json_response(
                StatusCode::SERVICE_UNAVAILABLE,
                &json!({"error": "too_many_connections", "message": message}),
            );
            r.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            r
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds() -> Bounds {
        Bounds {
            header_timeout: Duration::from_secs(1),
            anonymous: 2,
            agent: 2,
            agents_total: 3,
            agent_streams: 1,
            operator: 1,
        }
    }

    fn agent(p: &str) -> Owner {
        Owner::Agent(p.into())
    }

    #[tokio::test]
    async fn the_oldest_anonymous_connection_makes_room() {
        let l = Limits::new(bounds());
        let (a, b) = (l.open(), l.open());
        let c = l.open();
        a.evicted().await; // told to close; b and c are not
        assert_eq!(l.held(), (2, 0, 0));
        drop(a);
        assert_eq!(l.held(), (2, 0, 0));
        drop((b, c));
        assert_eq!(l.held(), (0, 0, 0));
    }

    #[test]
    fn principals_have_their_own_bounds_and_the_operator_its_own() {
        let l = Limits::new(bounds());
        let conns: Vec<_> = (0..6).map(|_| l.open()).collect();
        assert_eq!(l.held().0, 2, "only the newest two stay anonymous");
        l.claim(&conns[0], agent("a")).unwrap();
        l.claim(&conns[1], agent("a")).unwrap();
        let e = l.claim(&conns[2], agent("a")).unwrap_err();
        assert!(e.contains("this principal holds 2"), "{e}");
        l.claim(&conns[2], agent("b")).unwrap();
        let e = l.claim(&conns[3], agent("c")).unwrap_err();
        assert!(e.contains("their bound together"), "{e}");
        // The agents' bounds never touch the operator's.
        l.claim(&conns[3], Owner::Operator).unwrap();
        let e = l.claim(&conns[4], Owner::Operator).unwrap_err();
        assert!(e.contains("the operator holds 1"), "{e}");
        assert_eq!(l.held().1, 3);
        // A claimed connection stays its first principal's.
        l.claim(&conns[0], Owner::Operator).unwrap();
        assert_eq!(l.held(), (2, 3, 1));
        drop(conns);
        assert_eq!(l.held(), (0, 0, 0));
    }

    #[test]
    fn event_streams_per_agent_principal() {
        let l = Limits::new(bounds());
        let id = |role, p: Option<&str>| Identity {
            role,
            principal: p.map(String::from),
        };
        let one = l.stream(&id(Role::Agent, None)).unwrap();
        assert!(l.stream(&id(Role::Agent, None)).is_err());
        let _other = l.stream(&id(Role::Agent, Some("p2"))).unwrap();
        let _ops: Vec<_> = (0..5)
            .map(|_| l.stream(&id(Role::Operator, None)).unwrap())
            .collect();
        drop(one);
        assert!(l.stream(&id(Role::Agent, None)).is_ok());
    }
}
