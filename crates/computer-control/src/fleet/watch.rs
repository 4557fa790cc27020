//! What the plane knows of each desk, refreshed on a timer: reachable or not, healthy
//! or which part is not (`/health`), its state and what it holds (`system.status`), what
//! waits for a person (the engine's confirmation and the governed approvals), and its
//! recent actions (its `/events` stream, one reader per desk).

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};

use super::desk::Desk;
use super::discovery::{self, Source};

/// Events of the action trail kept per desk.
pub const RECENT: usize = 20;

/// One desk as the console shows it.
#[derive(Debug, Clone, Serialize)]
pub struct DeskView {
    pub name: String,
    pub base: String,
    /// The desk answered `/health` at the last refresh.
    pub reachable: bool,
    /// `/health` said ready (display, driver and journal).
    pub healthy: bool,
    /// The last `/health` body (which part is not ready, and why).
    pub health: Value,
    /// Why the last refresh failed, if it did.
    pub error: Option<String>,
    /// `system.status`: `state`, `held`, `pending` (the engine's confirmation).
    pub status: Value,
    /// Governed actions waiting for the operator (`/approvals`).
    pub approvals: Vec<Value>,
    /// The newest action, safety and session events, newest last.
    pub recent: VecDeque<Value>,
}

impl DeskView {
    fn new(name: &str, base: &str) -> DeskView {
        DeskView {
            name: name.into(),
            base: base.into(),
            reachable: false,
            healthy: false,
            health: Value::Null,
            error: Some("not checked yet".into()),
            status: Value::Null,
            approvals: Vec::new(),
            recent: VecDeque::new(),
        }
    }
}

struct Member {
    desk: Desk,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for Member {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// The fleet: its sources, a client per desk found, and the views.
pub struct Fleet {
    sources: Vec<Source>,
    token: String,
    http: reqwest::Client,
    members: Mutex<BTreeMap<String, Member>>,
    views: Arc<RwLock<BTreeMap<String, DeskView>>>,
    discovery_errors: RwLock<Vec<String>>,
}

impl Fleet {
    /// A fleet over `sources`, talking to every desk with the operator `token`.
    pub fn new(sources: Vec<Source>, token: String) -> anyhow::Result<Fleet> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(2))
            .build()?;
        Ok(Fleet {
            sources,
            token,
            http,
            members: Mutex::new(BTreeMap::new()),
            views: Arc::new(RwLock::new(BTreeMap::new())),
            discovery_errors: RwLock::new(Vec::new()),
        })
    }

    /// The client of desk `name`, if the fleet has it.
    pub fn desk(&self, name: &str) -> Option<Desk> {
        lock(&self.members).get(name).map(|m| m.desk.clone())
    }

    /// Every desk's client, by name.
    pub fn desks(&self) -> Vec<(String, Desk)> {
        lock(&self.members)
            .iter()
            .map(|(n, m)| (n.clone(), m.desk.clone()))
            .collect()
    }

    /// The console's view of the fleet.
    pub fn view(&self) -> Value {
        let desks: Vec<DeskView> = read(&self.views).values().cloned().collect();
        json!({
            "desks": desks,
            "discovery_errors": *read(&self.discovery_errors),
        })
    }

    /// Finds the desks again, then asks each for its health, status and approvals,
    /// all at once.
    pub async fn refresh(&self) {
        let (found, errors) = discovery::resolve(&self.sources).await;
        *write(&self.discovery_errors) = errors;
        {
            let mut members = lock(&self.members);
            members.retain(|name, _| found.iter().any(|f| &f.name == name));
            write(&self.views).retain(|name, _| found.iter().any(|f| &f.name == name));
            for f in &found {
                if members.contains_key(&f.name) {
                    continue;
                }
                let Ok(desk) = Desk::new(self.http.clone(), &f.base, &self.token) else {
                    continue;
                };
                write(&self.views).insert(f.name.clone(), DeskView::new(&f.name, &f.base));
                let reader = tokio::spawn(read_events(
                    desk.clone(),
                    f.name.clone(),
                    self.views.clone(),
                ));
                members.insert(f.name.clone(), Member { desk, reader });
            }
        }
        let polls: Vec<_> = self
            .desks()
            .into_iter()
            .map(|(name, desk)| tokio::spawn(async move { (name, poll(&desk).await) }))
            .collect();
        for p in polls {
            let Ok((name, polled)) = p.await else {
                continue;
            };
            if let Some(v) = write(&self.views).get_mut(&name) {
                polled.apply(v);
            }
        }
    }
}

struct Polled {
    health: Result<(bool, Value), String>,
    status: Result<Value, String>,
    approvals: Result<Vec<Value>, String>,
}

impl Polled {
    fn apply(self, v: &mut DeskView) {
        match self.health {
            Ok((ready, body)) => {
                v.reachable = true;
                v.healthy = ready;
                v.health = body;
                v.error = None;
            }
            Err(e) => {
                v.reachable = false;
                v.healthy = false;
                v.health = Value::Null;
                v.error = Some(e);
            }
        }
        match self.status {
            Ok(s) => v.status = s,
            Err(e) => {
                v.status = Value::Null;
                v.error.get_or_insert(e);
            }
        }
        match self.approvals {
            Ok(a) => v.approvals = a,
            Err(e) => {
                v.approvals.clear();
                v.error.get_or_insert(e);
            }
        }
    }
}

async fn poll(desk: &Desk) -> Polled {
    let health = desk.health().await.map_err(|e| e.to_string());
    if health.is_err() {
        return Polled {
            health,
            status: Err("unreachable".into()),
            approvals: Err("unreachable".into()),
        };
    }
    let (status, approvals) =
        tokio::join!(desk.rpc("system.status", json!({})), desk.get("/approvals"));
    Polled {
        health,
        status: status.map_err(|e| e.to_string()),
        approvals: approvals
            .map(|a| {
                a.get("approvals")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            })
            .map_err(|e| e.to_string()),
    }
}

/// Whether an event belongs on the action trail.
fn on_trail(event: &Value) -> bool {
    let kind = event.get("type").and_then(Value::as_str).unwrap_or("");
    ["action.", "safety.", "session."]
        .iter()
        .any(|p| kind.starts_with(p))
}

/// The `data:` payloads of the complete SSE blocks in `buf`, which keeps the rest.
pub fn take_events(buf: &mut String) -> Vec<Value> {
    let mut out = Vec::new();
    while let Some(end) = buf.find("\n\n") {
        let block: String = buf.drain(..end + 2).collect();
        let data: String = block
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim_start)
            .collect::<Vec<_>>()
            .join("\n");
        if let Ok(v) = serde_json::from_str::<Value>(&data) {
            out.push(v);
        }
    }
    out
}

/// Follows one desk's `/events` for as long as the desk is in the fleet, reconnecting
/// after a second when the stream ends.
async fn read_events(desk: Desk, name: String, views: Arc<RwLock<BTreeMap<String, DeskView>>>) {
    loop {
        if let Ok(mut res) = desk.events().await {
            let mut buf = String::new();
            while let Ok(Some(chunk)) = res.chunk().await {
                buf.push_str(&String::from_utf8_lossy(&chunk));
                let events = take_events(&mut buf);
                if events.is_empty() {
                    continue;
                }
                if let Some(v) = write(&views).get_mut(&name) {
                    for e in events.into_iter().filter(on_trail) {
                        if v.recent.len() == RECENT {
                            v.recent.pop_front();
                        }
                        v.recent.push_back(e);
                    }
                }
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

// Every change under these locks is one map operation, so a poisoned lock is still
// consistent and usable.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn read<T>(m: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(|p| p.into_inner())
}

fn write<T>(m: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_blocks_are_split_and_partial_ones_kept() {
        let mut buf = String::from(
            "id: 1\nevent: message\ndata: {\"type\":\"action.started\"}\n\n: keepalive\n\nid: 2\ndata: {\"ty",
        );
        let got = take_events(&mut buf);
        assert_eq!(got, vec![json!({"type": "action.started"})]);
        assert_eq!(buf, "id: 2\ndata: {\"ty");
        buf.push_str("pe\":\"x\"}\n\n");
        assert_eq!(take_events(&mut buf), vec![json!({"type": "x"})]);
        assert!(buf.is_empty());
        assert!(on_trail(&json!({"type": "safety.panic"})));
        assert!(!on_trail(&json!({"type": "frame.captured"})));
    }
}
