//! Bounded resources against the real server: what an agent holding only the agent
//! token, or anyone reaching the port without one, can make the server hold.
//!
//! * Memory: large confirm batches cancelled by `session.stop`, again and again, with
//!   event streams that never read and more that connect afterwards (the replay), keep
//!   the server's resident set (from `/proc/<pid>/status`) within a stated bound; the
//!   event carries the arguments cut, with their length and digest.
//! * Connections: an idle connection, one that sends half its headers, and one that
//!   waits after a request are closed (`http.header_timeout_ms`); a flood of idle
//!   connections against a descriptor limit does not keep the operator out, on the
//!   main listener or on `--operator-listen`; an agent's connections and `/events`
//!   streams stop at its bounds and the operator's still answer.
//!
//! Counts are small and fixed, every socket is on loopback, and no duration is
//! asserted: a wait has a generous ceiling only so a regression fails instead of hanging.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::http_support::{AGENT, OPERATOR, Server, TempDir, client};

/// Ceiling for anything the server is expected to do by itself (close a connection).
const CEILING: Duration = Duration::from_secs(60);

/// The server's resident set in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// `config` merged over the test tokens.
fn with_tokens(mut config: Value) -> Value {
    config["http"]["token"] = json!(AGENT);
    config["http"]["operator_token"] = json!(OPERATOR);
    config
}

/// A raw request on a new connection; the connection, left open.
fn raw(port: u16, request: &str) -> TcpStream {
    let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    c.write_all(request.as_bytes()).expect("write");
    c
}

/// `GET path` with `token`, as raw bytes (keep-alive).
fn get(port: u16, path: &str, token: &str) -> String {
    format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\r\n"
    )
}

/// Reads until the server closes `c` (true) or `CEILING` passes (false), dropping what
/// it reads.
fn closed_by_server(c: &mut TcpStream) -> bool {
    c.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let t = Instant::now();
    let mut buf = [0u8; 4096];
    while t.elapsed() < CEILING {
        match c.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return true, // reset
        }
    }
    false
}

/// Reads one response's head from `c` (up to the blank line); its status.
fn status_of(c: &mut TcpStream) -> u16 {
    c.set_read_timeout(Some(CEILING)).unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match c.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => panic!("no response head: {:?}", String::from_utf8_lossy(&head)),
        }
    }
    let head = String::from_utf8_lossy(&head);
    head.split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status line")
}

/// A confirm batch of about 4 MB: 100 `keyboard.type` items of 10 000 four-byte
/// characters (the most one item takes), each judged `confirm` by the rule.
fn big_batch() -> Value {
    let text = "\u{1F600}".repeat(10_000);
    let items: Vec<Value> = (0..100)
        .map(|_| json!({"tool": "keyboard.type", "arguments": {"text": text}}))
        .collect();
    json!({"tool": "batch.execute", "arguments": {"items": items}})
}

/// The growth of the resident set the repeated attack may cause once its first round
/// has set the server's working size: the ring's 4 MiB, the queued references, and
/// what the allocator keeps of one round's request. Unbounded, each round adds about
/// 8 MB (its arguments in the ring and their JSON in every stream's queue) and each
/// late subscriber its own copy of the ring.
const GROWTH_BOUND_KIB: u64 = 64 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_confirm_batches_and_streams_that_never_read_keep_memory_bounded() {
    const ROUNDS: usize = 50;
    let config = with_tokens(json!({"safety": {"rules": [
        {"match": {"tool": "keyboard.type"}, "effect": "confirm"}
    ]}}));
    let s = Server::start_with(Some(config), &[], &[]);
    // Four streams that never read a byte, and one that does.
    let stalled: Vec<TcpStream> = (0..4)
        .map(|_| raw(s.port, &get(s.port, "/events", AGENT)))
        .collect();
    let mut reader = s.events(OPERATOR, None).await;
    let batch = big_batch();
    let mut first_round = 0;
    for round in 0..ROUNDS {
        assert_eq!(s.call(AGENT, "session.start", json!({})).await["ok"], true);
        let env = s.call(AGENT, "tools.call", batch.clone()).await;
        assert_eq!(env["result"]["status"], "awaiting_confirmation", "{env}");
        assert_eq!(s.call(AGENT, "session.stop", json!({})).await["ok"], true);
        if round == 0 {
            first_round = rss_kib(s.pid());
        }
    }
    // Late subscribers get the replay ring: shared, not serialized again for each.
    let late: Vec<TcpStream> = (0..4)
        .map(|_| raw(s.port, &get(s.port, "/events", AGENT)))
        .collect();
    // A stream answers once its replay is queued; /health then sees all of them.
    let t = Instant::now();
    while s.health().await["subscribers"].as_u64() < Some(9) && t.elapsed() < CEILING {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let after = rss_kib(s.pid());
    eprintln!(
        "{ROUNDS} rounds of a {} MB confirm batch: RSS {first_round} KiB after the first, {after} KiB after all and 4 late subscribers",
        batch.to_string().len() / 1_000_000
    );
    assert!(
        after <= first_round + GROWTH_BOUND_KIB,
        "the server grew from {first_round} KiB to {after} KiB"
    );

    // The event says what and where, cut: the start of the text, its length, its digest.
    let ev = loop {
        let m = reader.next_event(CEILING).await.expect("an event");
        let d = m.data.expect("data");
        if d["type"] == "safety.confirmation_requested" {
            break d;
        }
    };
    let items = ev["payload"]["arguments"]["items"]
        .as_array()
        .expect("items");
    let text = items[0]["arguments"]["text"].as_str().expect("a text");
    assert!(text.starts_with("\u{1F600}"), "{text}");
    assert!(text.contains("…[cut: 40000 bytes, sha256 "), "{text}");
    assert!(
        items
            .last()
            .unwrap()
            .as_str()
            .is_some_and(|m| m.contains("more items")),
        "the batch is cut once the event's budget is spent: {}",
        items.len()
    );
    assert!(ev.to_string().len() < 64 * 1024, "{}", ev.to_string().len());
    drop((stalled, late));
}

#[test]
fn idle_half_sent_and_kept_alive_connections_are_closed() {
    let config = with_tokens(json!({"http": {"header_timeout_ms": 300}}));
    let s = Server::start_with(Some(config), &[], &[]);
    // Connected, never a byte.
    let mut idle = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    // Half a request head, then nothing (no token is needed for this).
    let mut half = raw(s.port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    // One full request, then idle on the kept-alive connection.
    let mut kept = raw(s.port, &get(s.port, "/health", OPERATOR));
    assert_eq!(status_of(&mut kept), 200);
    for (what, c) in [
        ("idle", &mut idle),
        ("half-sent", &mut half),
        ("kept alive", &mut kept),
    ] {
        assert!(closed_by_server(c), "the {what} connection is still open");
    }
    // The server still answers.
    let mut again = raw(s.port, &get(s.port, "/whoami", OPERATOR));
    assert_eq!(status_of(&mut again), 200);
}

/// Lowers the server's descriptor limit (as an administrator's `ulimit -n` would).
fn limit_descriptors(pid: u32, n: u32) {
    let ok = Command::new("prlimit")
        .args(["--pid", &pid.to_string(), &format!("--nofile={n}:{n}")])
        .status()
        .expect("prlimit (util-linux)")
        .success();
    assert!(ok, "prlimit");
}

/// `n` connections that never send a byte; open until dropped.
fn flood(port: u16, n: usize) -> Vec<TcpStream> {
    (0..n)
        .filter_map(|_| TcpStream::connect(("127.0.0.1", port)).ok())
        .collect()
}

/// A fresh connection's `GET /whoami` with `token`: its status, or 0 if the server
/// did not answer within the ceiling.
fn whoami(port: u16, token: &str) -> u16 {
    let mut c = raw(port, &get(port, "/whoami", token));
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut head = [0u8; 12];
    match c.read_exact(&mut head) {
        Ok(()) => String::from_utf8_lossy(&head[9..12]).parse().unwrap_or(0),
        Err(_) => 0,
    }
}

#[test]
fn a_flood_of_idle_connections_does_not_lock_the_operator_out() {
    let config = with_tokens(json!({"http": {"anonymous_connections": 32}}));
    let s = Server::start_with(Some(config), &[], &[]);
    limit_descriptors(s.pid(), 128);
    // Three times the descriptors the server has, none of them sending anything.
    let held = flood(s.port, 384);
    assert_eq!(whoami(s.port, OPERATOR), 200, "the operator is locked out");
    assert_eq!(
        whoami(s.port, AGENT),
        200,
        "an agent sending at once gets in too"
    );
    drop(held);
}

/// `serve --transport mcp-http --operator-listen 127.0.0.1:0`: the child and the
/// operator channel's port.
fn start_operator_channel(config: &Value, dir: &TempDir) -> (Child, u16, Arc<Mutex<Vec<String>>>) {
    let path = dir.0.join("config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_computer-control"))
        .args([
            "serve",
            "--transport",
            "mcp-http",
            "--port",
            "0",
            "--platform",
            "virtual",
        ])
        .args(["--operator-listen", "127.0.0.1:0", "--config"])
        .arg(&path)
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env("COMPUTER_CONTROL_LOG", "warn")
        .env("XDG_RUNTIME_DIR", &dir.0)
        .env("XDG_STATE_HOME", &dir.0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn computer-control");
    let stderr = child.stderr.take().unwrap();
    let lines = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    let sink = lines.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Some(url) = line.strip_prefix("computer-control: operator channel listening on ")
            {
                let _ = tx.send(
                    url.rsplit(':')
                        .next()
                        .unwrap()
                        .trim()
                        .parse::<u16>()
                        .unwrap(),
                );
            }
            sink.lock().unwrap().push(line);
        }
    });
    let port = rx.recv_timeout(CEILING).unwrap_or_else(|_| {
        let _ = child.kill();
        panic!("no operator channel: {}", lines.lock().unwrap().join("\n"))
    });
    (child, port, lines)
}

#[test]
fn a_flood_on_the_operator_channel_does_not_lock_the_operator_out() {
    let dir = TempDir::new();
    let config = with_tokens(json!({"http": {"anonymous_connections": 32}}));
    let (mut child, port, _) = start_operator_channel(&config, &dir);
    limit_descriptors(child.id(), 128);
    let held = flood(port, 384);
    let status = whoami(port, OPERATOR);
    let _ = child.kill();
    let _ = child.wait();
    drop(held);
    assert_eq!(status, 200, "the operator is locked out of its own channel");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_stops_at_its_bounds_and_the_operator_still_answers() {
    let config = with_tokens(json!({"http": {
        "agent_connections": 6, "agent_event_streams": 3, "operator_connections": 4
    }}));
    let s = Server::start_with(Some(config), &[], &[]);
    // Three streams, then the fourth is refused.
    let mut streams = Vec::new();
    for _ in 0..3 {
        let mut c = raw(s.port, &get(s.port, "/events", AGENT));
        assert_eq!(status_of(&mut c), 200);
        streams.push(c);
    }
    let mut fourth = raw(s.port, &get(s.port, "/events", AGENT));
    assert_eq!(status_of(&mut fourth), 503, "a fourth event stream");
    // The fourth's connection is the agent's too (kept alive): six in all, then no more.
    let mut conns = vec![fourth];
    for _ in 0..2 {
        let mut c = raw(s.port, &get(s.port, "/whoami", AGENT));
        assert_eq!(status_of(&mut c), 200);
        conns.push(c);
    }
    let mut seventh = raw(s.port, &get(s.port, "/whoami", AGENT));
    assert_eq!(status_of(&mut seventh), 503, "a seventh connection");
    assert!(
        closed_by_server(&mut seventh),
        "a refused connection is closed"
    );
    // The operator's bound is its own: its stream and its calls still answer.
    let _op = s.events(OPERATOR, None).await;
    let r = client()
        .get(s.url("/whoami"))
        .bearer_auth(OPERATOR)
        .send()
        .await
        .expect("whoami");
    assert_eq!(r.status().as_u16(), 200);
    // A stream closed gives its place back.
    drop(streams.pop());
    let t = Instant::now();
    loop {
        let mut c = raw(s.port, &get(s.port, "/events", AGENT));
        match status_of(&mut c) {
            200 => break,
            503 if t.elapsed() < CEILING => std::thread::sleep(Duration::from_millis(50)),
            other => panic!("a stream after one closed: {other}"),
        }
    }
}
