//! Test support for the HTTP transport: spawns the real binary with `--transport http
//! --port 0`, learns its address from stderr, and talks to it with a real HTTP client.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub const AGENT: &str = "agent-token-0123456789abcdef0123456789abcdef";
pub const OPERATOR: &str = "operator-token-fedcba9876543210fedcba98765432";

pub use cc_test_kit::TempDir;

/// A running `computer-control serve --transport http`.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    pub port: u16,
    /// Every stderr line so far.
    pub stderr: Arc<Mutex<Vec<String>>>,
    pub dir: TempDir,
}

/// `serve --transport http` on a free port of loopback and the virtual desktop, with no
/// config from the environment and its generated files (the agent's token file, the
/// governed journal) in `dir`, not the user's: every HTTP test's server, whether it
/// is expected to come up or to refuse to start.
pub fn serve_command(dir: &TempDir) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_computer-control"));
    cmd.args([
        "serve",
        "--transport",
        "http",
        "--port",
        "0",
        "--platform",
        "virtual",
    ])
    .env_remove("COMPUTER_CONTROL_CONFIG")
    .env("XDG_RUNTIME_DIR", &dir.0)
    .env("XDG_STATE_HOME", &dir.0);
    cmd
}

impl Server {
    /// With the two test tokens in its config.
    pub fn start() -> Server {
        Server::start_with(Some(tokens_config()), &[], &[])
    }

    /// With a config (`None`: no config file at all), extra CLI args and env vars.
    pub fn start_with(config: Option<Value>, extra: &[&str], envs: &[(&str, &str)]) -> Server {
        Server::start_fed(config, extra, envs, None)
    }

    /// As [`Server::start_with`], with `stdin` written to the server's standard input
    /// (a pipe, closed after it), as a host hands in a secret.
    pub fn start_fed(
        config: Option<Value>,
        extra: &[&str],
        envs: &[(&str, &str)],
        stdin: Option<&str>,
    ) -> Server {
        let dir = TempDir::new();
        let mut cmd = serve_command(&dir);
        if let Some(c) = config {
            let path = dir.0.join("config.json");
            std::fs::write(&path, serde_json::to_vec(&c).unwrap()).unwrap();
            cmd.arg("--config").arg(&path);
        }
        cmd.args(extra)
            .env("COMPUTER_CONTROL_LOG", "warn")
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn computer-control");
        if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
            use std::io::Write;
            pipe.write_all(text.as_bytes()).expect("write stdin");
        }
        let stderr = child.stderr.take().expect("stderr");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix("computer-control: http listening on ") {
                    let _ = tx.send(url.trim().to_string());
                }
                sink.lock().unwrap().push(line);
            }
        });
        let base = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(b) => b,
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "the server did not start; stderr:\n{}",
                    lines.lock().unwrap().join("\n")
                );
            }
        };
        let port = base.rsplit(':').next().unwrap().parse().unwrap();
        Server {
            child,
            base,
            port,
            stderr: lines,
            dir,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }

    /// The process id (for signals).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the process to exit (after a signal).
    pub fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let t = Instant::now();
        while t.elapsed() < limit {
            if let Ok(Some(s)) = self.child.try_wait() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// One JSON-RPC call; the JSON-RPC response (panics on a non-200).
    pub async fn rpc(&self, token: &str, method: &str, params: Value) -> Value {
        let (status, body) = self
            .post_rpc(
                token,
                &json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
            )
            .await;
        assert_eq!(status, 200, "{method}: {body}");
        body
    }

    /// The envelope of one call (`result` of the response).
    pub async fn call(&self, token: &str, method: &str, params: Value) -> Value {
        let r = self.rpc(token, method, params).await;
        r.get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{method}: no result: {r}"))
    }

    /// A raw `/rpc` POST; `(status, body as JSON or Null)`.
    pub async fn post_rpc(&self, token: &str, body: &Value) -> (u16, Value) {
        let res = client()
            .post(self.url("/rpc"))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(serde_json::to_vec(body).unwrap())
            .send()
            .await
            .expect("POST /rpc");
        let status = res.status().as_u16();
        let bytes = res.bytes().await.expect("body");
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    /// `GET /health`.
    pub async fn health(&self) -> Value {
        let res = client()
            .get(self.url("/health"))
            .send()
            .await
            .expect("health");
        assert_eq!(res.status().as_u16(), 200);
        serde_json::from_slice(&res.bytes().await.unwrap()).unwrap()
    }

    /// Opens `/events` (optionally resuming).
    pub async fn events(&self, token: &str, last_event_id: Option<u64>) -> Sse {
        let mut req = stream_client().get(self.url("/events")).bearer_auth(token);
        if let Some(id) = last_event_id {
            req = req.header("last-event-id", id.to_string());
        }
        let res = req.send().await.expect("GET /events");
        assert_eq!(res.status().as_u16(), 200, "GET /events");
        let ct = res
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        assert!(ct.starts_with("text/event-stream"), "{ct}");
        Sse {
            res,
            buf: String::new(),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn tokens_config() -> Value {
    json!({"http": {"token": AGENT, "operator_token": OPERATOR}})
}

/// A plain-HTTP client that ignores any proxy settings of the environment.
pub fn client() -> reqwest::Client {
    // With every workspace feature on, reqwest's rustls comes without a crypto provider
    // (the client library's `rustls` feature installs its own at run time): install ring's
    // once, before any client is built.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(120))
        .build()
        .expect("client")
}

/// A client for event streams: no limit on the whole response (a stream may be read
/// for longer than any request takes), only on each read; keep-alives come every 15 s.
pub fn stream_client() -> reqwest::Client {
    // The same crypto provider as `client`: this one may be the test's first.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .no_proxy()
        .connect_timeout(Duration::from_secs(30))
        .read_timeout(Duration::from_secs(120))
        .build()
        .expect("client")
}

/// One SSE message: its fields as sent.
#[derive(Debug, Clone, Default)]
pub struct SseMsg {
    pub id: Option<u64>,
    pub event: Option<String>,
    pub data: Option<Value>,
    pub comments: Vec<String>,
}

/// An open event stream.
pub struct Sse {
    res: reqwest::Response,
    buf: String,
}

impl Sse {
    /// The next message (events and comment-only blocks alike); `None` at the end or
    /// after `limit`.
    pub async fn next(&mut self, limit: Duration) -> Option<SseMsg> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if let Some(i) = self.buf.find("\n\n") {
                let block: String = self.buf[..i].to_string();
                self.buf.drain(..i + 2);
                return Some(parse_block(&block));
            }
            let chunk = tokio::time::timeout_at(deadline, self.res.chunk())
                .await
                .ok()?;
            match chunk {
                Ok(Some(bytes)) => self
                    .buf
                    .push_str(std::str::from_utf8(&bytes).expect("utf-8")),
                _ => return None,
            }
        }
    }

    /// Reads to the end without parsing JSON, handing every line to `on_line`: for many
    /// cheap readers at once.
    pub async fn scan_lines(mut self, mut on_line: impl FnMut(&[u8])) {
        let mut carry: Vec<u8> = Vec::new();
        carry.extend_from_slice(self.buf.as_bytes());
        while let Ok(Some(chunk)) = self.res.chunk().await {
            carry.extend_from_slice(&chunk);
            let mut start = 0;
            while let Some(i) = carry[start..].iter().position(|b| *b == b'\n') {
                on_line(&carry[start..start + i]);
                start += i + 1;
            }
            carry.drain(..start);
        }
    }

    /// The next event (skipping comments).
    pub async fn next_event(&mut self, limit: Duration) -> Option<SseMsg> {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            let m = self.next(left).await?;
            if m.data.is_some() {
                return Some(m);
            }
        }
    }

    /// Events until one with `seq >= last` (inclusive), or panics after `limit`.
    pub async fn until_seq(&mut self, last: u64, limit: Duration) -> Vec<SseMsg> {
        let mut out = Vec::new();
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline
                .checked_duration_since(Instant::now())
                .unwrap_or_else(|| panic!("no event {last} in time; got {}", out.len()));
            let m = self
                .next_event(left)
                .await
                .unwrap_or_else(|| panic!("stream ended before event {last}; got {}", out.len()));
            let seq = m.id.unwrap();
            out.push(m);
            if seq >= last {
                return out;
            }
        }
    }
}

/// A stream read in the background as events arrive, for a test that makes more
/// events happen than the replay ring keeps before it looks at them.
pub struct Collected {
    events: Arc<Mutex<Vec<(u64, Value)>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Sse {
    /// Reads this stream in the background from now on.
    pub fn collect(mut self) -> Collected {
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = events.clone();
        let task = tokio::spawn(async move {
            while let Some(m) = self.next_event(Duration::from_secs(3600)).await {
                if let (Some(seq), Some(data)) = (m.id, m.data) {
                    sink.lock().unwrap().push((seq, data));
                }
            }
        });
        Collected { events, task }
    }
}

impl Collected {
    /// Every event read, once one with `seq >= last` has been; panics after `limit`.
    pub async fn until_seq(&self, last: u64, limit: Duration) -> Vec<Value> {
        let deadline = Instant::now() + limit;
        loop {
            {
                let events = self.events.lock().unwrap();
                if events.iter().any(|(seq, _)| *seq >= last) {
                    return events.iter().map(|(_, e)| e.clone()).collect();
                }
                assert!(
                    Instant::now() < deadline && !self.task.is_finished(),
                    "no event {last} in time; got {}",
                    events.len()
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Collected {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn parse_block(block: &str) -> SseMsg {
    let mut m = SseMsg::default();
    for line in block.split('\n') {
        if let Some(c) = line.strip_prefix(':') {
            m.comments.push(c.trim().to_string());
        } else if let Some(v) = line.strip_prefix("id: ") {
            m.id = v.trim().parse().ok();
        } else if let Some(v) = line.strip_prefix("event: ") {
            m.event = Some(v.to_string());
        } else if let Some(v) = line.strip_prefix("data: ") {
            m.data = Some(serde_json::from_str(v).expect("data is JSON"));
        }
    }
    m
}

/// A real, never-reading subscriber: a raw socket that sends the request and then
/// never reads a byte.
pub fn stalled_subscriber(server: &Server, token: &str) -> std::net::TcpStream {
    use std::io::Write;
    let mut s = std::net::TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
    write!(
        s,
        "GET /events HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {token}\r\nAccept: text/event-stream\r\n\r\n",
        server.port
    )
    .unwrap();
    s.flush().unwrap();
    s
}

/// `n` `wait.pause {ms:0}` items as `tools.call_batch` calls of at most 100 items (2
/// events per item, plus the batch's own).
pub async fn pause_batch(server: &Server, n: usize) {
    let mut left = n;
    while left > 0 {
        let k = left.min(100);
        left -= k;
        let items: Vec<Value> = (0..k)
            .map(|_| json!({"tool": "wait.pause", "arguments": {"ms": 0}}))
            .collect();
        let env = server
            .call(
                AGENT,
                "tools.call_batch",
                json!({"items": items, "gap_ms": 0}),
            )
            .await;
        assert_eq!(env["ok"], true, "{env}");
    }
}
