//! Benchmark of the HTTP transport against the release binary on the virtual
//! desktop. `/rpc` round trip of `wait.pause {ms:0}` (one client, then 8 concurrent
//! clients: p50, p99, requests per second), and event delivery latency to 50 SSE
//! subscribers (from sending the request to the event having reached all 50).
//!
//! Run: `cargo bench -p computer-control --bench http` (prints a markdown table).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const AGENT: &str = "bench-agent-token-0123456789abcdef0123456789";
const OPERATOR: &str = "bench-operator-token-0123456789abcdef012345";

struct Server {
    child: std::process::Child,
    base: String,
    _config: std::path::PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self._config);
    }
}

fn start() -> Server {
    let config = std::env::temp_dir().join(format!("cc-http-bench-{}.json", std::process::id()));
    std::fs::write(
        &config,
        json!({"http": {"token": AGENT, "operator_token": OPERATOR}}).to_string(),
    )
    .expect("config");
    let mut child = Command::new(env!("CARGO_BIN_EXE_computer-control"))
        .args([
            "serve",
            "--transport",
            "http",
            "--port",
            "0",
            "--platform",
            "virtual",
            "--config",
        ])
        .arg(&config)
        .env("COMPUTER_CONTROL_LOG", "error")
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let base = loop {
        let line = lines.next().expect("server exited").expect("stderr");
        if let Some(url) = line.strip_prefix("computer-control: http listening on ") {
            break url.trim().to_string();
        }
    };
    // Keep draining stderr so the server never blocks on it.
    std::thread::spawn(move || for _ in lines {});
    Server {
        child,
        base,
        _config: config,
    }
}

fn client() -> reqwest::Client {
    // With every workspace feature on, reqwest's rustls comes without a crypto provider
    // (the client library's `rustls` feature installs its own at run time): install ring's
    // once, before any client is built.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client")
}

async fn call(c: &reqwest::Client, base: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let res = c
        .post(format!("{base}/rpc"))
        .bearer_auth(AGENT)
        .body(body)
        .send()
        .await
        .expect("send");
    serde_json::from_slice(&res.bytes().await.expect("body")).expect("json")
}

/// One `wait.pause {ms:0}` round trip.
async fn pause(c: &reqwest::Client, base: &str, body: &str) -> Duration {
    let t = Instant::now();
    let res = c
        .post(format!("{base}/rpc"))
        .bearer_auth(AGENT)
        .body(body.to_string())
        .send()
        .await
        .expect("send");
    let b = res.bytes().await.expect("body");
    assert!(
        b.windows(9).any(|w| w == b"\"ok\":true"),
        "{}",
        String::from_utf8_lossy(&b)
    );
    t.elapsed()
}

/// `(seq, when it was read)` for every event one subscriber read.
type Arrivals = Arc<std::sync::Mutex<Vec<(u64, Duration)>>>;

fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let s = start();
    let base = s.base.clone();
    let c = client();
    let started = call(&c, &base, "session.start", json!({})).await;
    assert_eq!(started["result"]["ok"], true, "{started}");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools.call",
        "params": {"tool": "wait.pause", "arguments": {"ms": 0}}})
    .to_string();
    for _ in 0..300 {
        pause(&c, &base, &body).await;
    }

    // One client, sequential.
    let mut one: Vec<Duration> = Vec::new();
    for _ in 0..3000 {
        one.push(pause(&c, &base, &body).await);
    }
    one.sort();

    // 8 concurrent clients, each on its own connection.
    const CLIENTS: usize = 8;
    const EACH: usize = 1500;
    let t = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let (base, body) = (base.clone(), body.clone());
        tasks.push(tokio::spawn(async move {
            let c = client();
            let mut v = Vec::with_capacity(EACH);
            for _ in 0..EACH {
                v.push(pause(&c, &base, &body).await);
            }
            v
        }));
    }
    let mut eight: Vec<Duration> = Vec::new();
    for t in tasks {
        eight.extend(t.await.expect("task"));
    }
    let wall = t.elapsed();
    eight.sort();
    let rps = (CLIENTS * EACH) as f64 / wall.as_secs_f64();

    // The same paced loop as below (1 ms between calls), without subscribers: the fair
    // baseline for the round trip while subscribers read.
    const CALLS: usize = 500;
    let mut paced: Vec<Duration> = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        paced.push(pause(&c, &base, &body).await);
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    paced.sort();

    // 50 subscribers; each call's action.started must reach all of them.
    const SUBS: usize = 50;
    let mut last: Vec<Arc<AtomicU64>> = Vec::new();
    let epoch = Instant::now();
    let mut arrivals: Vec<Arrivals> = Vec::new();
    for _ in 0..SUBS {
        let mut res = client()
            .get(format!("{base}/events"))
            .bearer_auth(AGENT)
            .send()
            .await
            .expect("events");
        let seen = Arc::new(AtomicU64::new(0));
        let log = Arc::new(std::sync::Mutex::new(Vec::with_capacity(2 * CALLS + 400)));
        last.push(seen.clone());
        arrivals.push(log.clone());
        tokio::spawn(async move {
            let mut carry: Vec<u8> = Vec::new();
            while let Ok(Some(chunk)) = res.chunk().await {
                let at = epoch.elapsed();
                carry.extend_from_slice(&chunk);
                let mut start = 0;
                while let Some(i) = carry[start..].iter().position(|b| *b == b'\n') {
                    let line = &carry[start..start + i];
                    if let Some(id) = line
                        .strip_prefix(b"id: ")
                        .and_then(|v| std::str::from_utf8(v).ok())
                        .and_then(|v| v.parse::<u64>().ok())
                    {
                        log.lock().unwrap().push((id, at));
                        seen.store(id, Ordering::Relaxed);
                    }
                    start += i + 1;
                }
                carry.drain(..start);
            }
        });
    }
    let health: Value = serde_json::from_slice(
        &c.get(format!("{base}/health"))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap(),
    )
    .unwrap();
    let mut seq = health["last_seq"].as_u64().unwrap();
    while last.iter().any(|l| l.load(Ordering::Relaxed) < seq) {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let mut sends: Vec<(u64, Duration)> = Vec::with_capacity(CALLS);
    let mut with_subs: Vec<Duration> = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let sent = epoch.elapsed();
        with_subs.push(pause(&c, &base, &body).await);
        // action.started, then action.finished.
        sends.push((seq + 1, sent));
        seq += 2;
        while last.iter().any(|l| l.load(Ordering::Relaxed) < seq) {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    with_subs.sort();
    let logs: Vec<Vec<(u64, Duration)>> =
        arrivals.iter().map(|l| l.lock().unwrap().clone()).collect();
    let mut to_all: Vec<Duration> = Vec::new();
    let mut to_each: Vec<Duration> = Vec::new();
    for (started_seq, sent) in &sends {
        let mut worst = Duration::ZERO;
        for log in &logs {
            if let Some((_, at)) = log.iter().find(|(id, _)| id == started_seq) {
                let d = at.saturating_sub(*sent);
                to_each.push(d);
                worst = worst.max(d);
            }
        }
        to_all.push(worst);
    }
    to_all.sort();
    to_each.sort();

    println!("| HTTP transport, release binary, virtual desktop | p50 | p99 | throughput |");
    println!("|---|---|---|---|");
    println!(
        "| `/rpc` `wait.pause {{ms:0}}`, 1 client, {} calls | {} | {} | {:.0} req/s |",
        one.len(),
        ms(pct(&one, 0.5)),
        ms(pct(&one, 0.99)),
        one.len() as f64 / one.iter().map(Duration::as_secs_f64).sum::<f64>()
    );
    println!(
        "| `/rpc` `wait.pause {{ms:0}}`, {CLIENTS} concurrent clients, {} calls | {} | {} | {rps:.0} req/s |",
        eight.len(),
        ms(pct(&eight, 0.5)),
        ms(pct(&eight, 0.99)),
    );
    println!(
        "| `/rpc` `wait.pause {{ms:0}}`, 1 client, 1 ms between calls, no subscriber | {} | {} | |",
        ms(pct(&paced, 0.5)),
        ms(pct(&paced, 0.99)),
    );
    println!(
        "| same, while {SUBS} SSE subscribers read every event | {} | {} | |",
        ms(pct(&with_subs, 0.5)),
        ms(pct(&with_subs, 0.99)),
    );
    println!(
        "| event delivery: request sent → `action.started` at one subscriber ({} samples) | {} | {} | |",
        to_each.len(),
        ms(pct(&to_each, 0.5)),
        ms(pct(&to_each, 0.99)),
    );
    println!(
        "| event delivery: request sent → `action.started` at all {SUBS} subscribers ({CALLS} events) | {} | {} | |",
        ms(pct(&to_all, 0.5)),
        ms(pct(&to_all, 0.99)),
    );
}
