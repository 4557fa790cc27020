//! Load on the HTTP transport with the real binary on the virtual desktop: 8 agents,
//! each with its own `http.agents` token, call `/rpc` back to back while 50 SSE
//! subscribers read every event and one subscriber never reads a byte.
//!
//! What must hold, whatever the timing:
//! * no answer is lost: every agent gets an answer to each of its calls, carrying the
//!   id it sent, in the order it sent them, and every call ran (`ok`);
//! * nobody is blocked: every live subscriber reads every event up to the last one, in
//!   sequence; a gap is allowed only behind the server's `: dropped` marker (the
//!   documented resync signal), and the stalled subscriber costs only its bounded
//!   queue (what it got is reported);
//! * the server's memory stays bounded (peak RSS from `/proc`).
//!
//! The bounded run is part of the suite. The full-size run (8 × 10 000 calls) is
//! ignored; docs/RELIABILITY.md has its figures and the command:
//! `cargo test -p computer-control --test integration http_load:: -- --ignored --nocapture`.

use crate::http_support;

use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use http_support::{AGENT, OPERATOR, Server, client, stalled_subscriber};
use serde_json::{Value, json};

const AGENTS: usize = 8;
const SUBSCRIBERS: usize = 50;

/// The `http.agents` token of agent `k`.
fn agent_token(k: usize) -> String {
    format!("load-agent-{k}-token-0123456789abcdef0123456789")
}

fn config() -> Value {
    let agents: Vec<Value> = (0..AGENTS)
        .map(|k| json!({"principal_id": format!("load-agent-{k}"), "token": agent_token(k)}))
        .collect();
    json!({"http": {"token": AGENT, "operator_token": OPERATOR, "agents": agents}})
}

/// What one live subscriber saw.
#[derive(Default)]
struct Seen {
    last: AtomicU64,
    events: AtomicU64,
    gaps: AtomicU64,
    dropped_markers: AtomicU64,
    finished: AtomicU64,
    /// Lines other than keep-alives: whether it is still reading.
    lines: AtomicU64,
}

/// Peak and current resident set of a process, in KiB.
fn rss_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or_else(|| panic!("{name} in /proc/{pid}/status"))
    };
    (field("VmHWM:"), field("VmRSS:"))
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// What the never-reading subscriber had been sent, read only after the run: event
/// ids in order and the `: dropped` markers among them.
struct Stalled {
    ids: Vec<u64>,
    markers: usize,
}

/// Drains the stalled socket until it has been quiet for a while.
fn drain_stalled(mut s: std::net::TcpStream) -> Stalled {
    s.set_read_timeout(Some(Duration::from_millis(500)))
        .expect("read timeout");
    let mut bytes = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
        }
    }
    // The body is chunked; every SSE frame is one chunk, so lines survive intact.
    let text = String::from_utf8_lossy(&bytes);
    let mut out = Stalled {
        ids: Vec::new(),
        markers: 0,
    };
    for line in text.lines() {
        if line.starts_with(": dropped") {
            out.markers += 1;
        } else if let Some(id) = line.strip_prefix("id: ").and_then(|v| v.parse().ok()) {
            out.ids.push(id);
        }
    }
    out
}

/// The figures of one run.
struct Report {
    calls: usize,
    wall: Duration,
    /// From the last answer until every live reader had read to the end (or was told).
    readers_settled: Duration,
    latencies: Vec<Duration>,
    last_seq: u64,
    rss_before: (u64, u64),
    rss_after: (u64, u64),
    stalled: Stalled,
    dropped_total: u64,
    subscribers_with_gaps: usize,
    resync_markers: u64,
}

async fn run(calls_per_agent: usize) -> Report {
    let s = Arc::new(Server::start_with(Some(config()), &[], &[]));
    let started = s.call(AGENT, "session.start", json!({})).await;
    assert_eq!(started["ok"], true, "{started}");

    let seen: Vec<Arc<Seen>> = (0..SUBSCRIBERS).map(|_| Arc::default()).collect();
    let mut readers = Vec::new();
    for (i, v) in seen.iter().enumerate() {
        let token = if i % 2 == 0 {
            OPERATOR.to_string()
        } else {
            agent_token(i % AGENTS)
        };
        let sub = s.events(&token, None).await;
        let v = v.clone();
        // A light reader (no JSON parsing): the test's own readers take as little of
        // the machine as they can.
        readers.push(tokio::spawn(sub.scan_lines(move |line| {
            if !line.starts_with(b": keepalive") {
                v.lines.fetch_add(1, Ordering::Relaxed);
            }
            if line.starts_with(b": dropped") {
                v.dropped_markers.fetch_add(1, Ordering::Relaxed);
            } else if line.starts_with(b"data: {\"type\":\"action.finished\"") {
                v.finished.fetch_add(1, Ordering::Relaxed);
            } else if let Some(id) = line
                .strip_prefix(b"id: ")
                .and_then(|v| std::str::from_utf8(v).ok())
                .and_then(|v| v.parse::<u64>().ok())
            {
                let prev = v.last.swap(id, Ordering::Relaxed);
                if prev != 0 && id != prev + 1 {
                    v.gaps.fetch_add(1, Ordering::Relaxed);
                }
                v.events.fetch_add(1, Ordering::Relaxed);
            }
        })));
    }
    let stalled = stalled_subscriber(&s, OPERATOR);
    let first_seq = s.health().await["last_seq"].as_u64().unwrap();
    let rss_before = rss_kib(s.pid());

    let t = Instant::now();
    let mut agents = Vec::new();
    for k in 0..AGENTS {
        let (s, token) = (s.clone(), agent_token(k));
        agents.push(tokio::spawn(async move {
            let c = client();
            let mut latencies = Vec::with_capacity(calls_per_agent);
            for i in 0..calls_per_agent {
                let id = format!("agent{k}-{i}");
                let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools.call",
                    "params": {"tool": "wait.pause", "arguments": {"ms": 0}}})
                .to_string();
                let sent = Instant::now();
                let res = c
                    .post(s.url("/rpc"))
                    .bearer_auth(&token)
                    .header("content-type", "application/json")
                    .body(body)
                    .send()
                    .await
                    .unwrap_or_else(|e| panic!("agent {k} call {i}: {e}"));
                assert_eq!(res.status().as_u16(), 200, "agent {k} call {i}");
                let answer: Value = serde_json::from_slice(&res.bytes().await.expect("body"))
                    .expect("a JSON answer");
                latencies.push(sent.elapsed());
                assert_eq!(answer["id"], json!(id), "agent {k}: the answer to its call");
                assert_eq!(answer["result"]["ok"], true, "agent {k} call {i}: {answer}");
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for a in agents {
        latencies.extend(a.await.expect("an agent finished"));
    }
    let wall = t.elapsed();
    let calls = AGENTS * calls_per_agent;
    assert_eq!(latencies.len(), calls, "every call was answered");

    // Every live subscriber reaches the last event, or was told it lost events (a
    // stream whose queue was full when the last events came has nothing after them to
    // read; its `: dropped` marker is what tells it to resync): it has gone quiet.
    let h = s.health().await;
    let last_seq = h["last_seq"].as_u64().unwrap();
    let settling = Instant::now();
    let deadline = settling + Duration::from_secs(1800);
    let mut quiet = [0u32; SUBSCRIBERS];
    let mut lines = [u64::MAX; SUBSCRIBERS];
    loop {
        let mut settled = 0;
        for (i, v) in seen.iter().enumerate() {
            let now = v.lines.load(Ordering::Relaxed);
            quiet[i] = if now == lines[i] { quiet[i] + 1 } else { 0 };
            lines[i] = now;
            let at_end = v.last.load(Ordering::Relaxed) >= last_seq;
            let told = v.dropped_markers.load(Ordering::Relaxed) > 0;
            if at_end || (told && quiet[i] >= 4) {
                settled += 1;
            } else {
                // Still reading its backlog is fine; silent short of the end, untold, not.
                assert!(
                    quiet[i] < 40 && Instant::now() < deadline,
                    "live subscriber {i} stopped at event {} of {last_seq} without a \
                     `: dropped` marker ({} events, {} gaps, stream closed: {})",
                    v.last.load(Ordering::Relaxed),
                    v.events.load(Ordering::Relaxed),
                    v.gaps.load(Ordering::Relaxed),
                    readers[i].is_finished(),
                );
            }
        }
        if settled == SUBSCRIBERS {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let readers_settled = settling.elapsed();
    let rss_after = rss_kib(s.pid());
    let dropped_total = s.health().await["dropped"].as_u64().unwrap();
    let mut subscribers_with_gaps = 0;
    let mut resync_markers = 0;
    for (i, v) in seen.iter().enumerate() {
        let gaps = v.gaps.load(Ordering::Relaxed);
        let markers = v.dropped_markers.load(Ordering::Relaxed);
        if markers == 0 {
            // Nothing lost: the replay ring, then every event since in sequence,
            // including one `action.finished` per call.
            assert_eq!(
                gaps, 0,
                "subscriber {i}: a gap without a `: dropped` marker"
            );
            assert!(v.last.load(Ordering::Relaxed) >= last_seq, "subscriber {i}");
            assert!(
                v.events.load(Ordering::Relaxed) >= last_seq - first_seq,
                "subscriber {i}"
            );
            assert!(
                v.finished.load(Ordering::Relaxed) >= calls as u64,
                "subscriber {i} saw {} of {calls} action.finished",
                v.finished.load(Ordering::Relaxed)
            );
        } else {
            // Every gap is announced by a marker before it.
            assert!(
                gaps <= markers,
                "subscriber {i}: {gaps} gaps but only {markers} `: dropped` markers"
            );
            subscribers_with_gaps += 1;
        }
        resync_markers += markers;
    }
    let stalled = drain_stalled(stalled);
    // What the stalled one got is in order; where it lost events it was told so.
    assert!(
        stalled.ids.windows(2).all(|w| w[0] < w[1]),
        "the stalled subscriber's events are in order"
    );
    let stalled_gaps = stalled.ids.windows(2).filter(|w| w[1] != w[0] + 1).count();
    assert!(
        stalled_gaps <= stalled.markers,
        "the stalled subscriber: {stalled_gaps} gaps, {} markers",
        stalled.markers
    );
    // The server keeps answering.
    let r = s.call(AGENT, "system.status", json!({})).await;
    assert_eq!(r["ok"], true, "{r}");
    latencies.sort();
    Report {
        calls,
        wall,
        readers_settled,
        latencies,
        last_seq,
        rss_before,
        rss_after,
        stalled,
        dropped_total,
        subscribers_with_gaps,
        resync_markers,
    }
}

fn print(r: &Report) {
    let ms = |d: Duration| format!("{:.2} ms", d.as_secs_f64() * 1e3);
    eprintln!(
        "{} calls by {AGENTS} agents in {:.1} s: {:.0} calls/s, p50 {}, p99 {}, max {}; \
         {} events to {SUBSCRIBERS} live subscribers ({} lagged and lost events, {} `: dropped` markers, \
         all settled {:.1} s after the last answer); \
         server RSS {} KiB before, {} KiB after, peak {} KiB; \
         the stalled subscriber was sent {} events (last id {:?}) and {} `: dropped` markers, \
         server-wide dropped {}",
        r.calls,
        r.wall.as_secs_f64(),
        r.calls as f64 / r.wall.as_secs_f64(),
        ms(pct(&r.latencies, 0.5)),
        ms(pct(&r.latencies, 0.99)),
        ms(pct(&r.latencies, 1.0)),
        r.last_seq,
        r.subscribers_with_gaps,
        r.resync_markers,
        r.readers_settled.as_secs_f64(),
        r.rss_before.1,
        r.rss_after.1,
        r.rss_after.0,
        r.stalled.ids.len(),
        r.stalled.ids.last(),
        r.stalled.markers,
        r.dropped_total,
    );
}

/// 64 MiB over the resident set once everything is connected: the 51 stream queues
/// hold at most 1024 frames each (about 15 MiB of ~300-byte frames); an unbounded
/// queue for the stalled subscriber alone would pass this at full size.
const RSS_HEADROOM_KIB: u64 = 64 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_agents_fifty_readers_and_a_stalled_one_lose_nothing() {
    let r = run(100).await;
    print(&r);
    assert!(r.rss_after.0 <= r.rss_before.1 + RSS_HEADROOM_KIB);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full size (8 × 10 000 calls, minutes on a debug build); figures in docs/RELIABILITY.md"]
async fn full_size_eight_agents_ten_thousand_calls_each() {
    let r = run(10_000).await;
    print(&r);
    assert!(r.rss_after.0 <= r.rss_before.1 + RSS_HEADROOM_KIB);
    assert!(
        r.dropped_total > 0 && r.stalled.markers > 0,
        "the stalled subscriber lost events and was told so"
    );
}
