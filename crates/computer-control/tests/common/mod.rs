//! A test client for the stdio transport: spawns the real binary and speaks
//! line-delimited JSON-RPC to it, keeping every stdout line for later inspection.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// One stdout line: parsed, or the raw text when it was not JSON.
#[derive(Debug, Clone)]
pub enum Out {
    Json(Value),
    NotJson(String),
}

/// A running `computer-control serve`.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Out>,
    next_id: u64,
    /// Every line read so far, in order.
    pub lines: Vec<Out>,
    /// Event notifications (`params`) read so far, in order.
    pub events: Vec<Value>,
    /// Responses read but not yet claimed.
    pending: Vec<Value>,
    _dir: tempfile_dir::TempDir,
}

pub const TIMEOUT: Duration = Duration::from_secs(30);

mod tempfile_dir {
    /// A temporary directory removed on drop (no extra crate needed).
    pub struct TempDir(pub std::path::PathBuf);
    impl TempDir {
        pub fn new() -> TempDir {
            let p = std::env::temp_dir().join(format!(
                "cc-test-{}-{}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos()
            ));
            std::fs::create_dir_all(&p).unwrap();
            TempDir(p)
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

impl Server {
    /// Starts the server on the virtual desktop with no config file.
    pub fn start() -> Server {
        Server::start_with(None, &[])
    }

    /// Starts the server with a config file holding `config`, and extra CLI args.
    pub fn start_with(config: Option<Value>, extra: &[&str]) -> Server {
        let dir = tempfile_dir::TempDir::new();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_computer-control"));
        cmd.arg("serve").arg("--platform").arg("virtual");
        cmd.args(extra);
        cmd.env_remove("COMPUTER_CONTROL_CONFIG");
        cmd.env("COMPUTER_CONTROL_LOG", "warn");
        if let Some(c) = config {
            let path = dir.0.join("config.json");
            std::fs::write(&path, serde_json::to_vec(&c).unwrap()).unwrap();
            cmd.arg("--config").arg(&path);
        }
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().expect("spawn computer-control");
        let stdout = child.stdout.take().unwrap();
        let stdin = child.stdin.take();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut buf = Vec::new();
                match r.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let text = String::from_utf8_lossy(&buf).to_string();
                let out = match serde_json::from_str::<Value>(text.trim_end_matches('\n')) {
                    Ok(v) if text.ends_with('\n') => Out::Json(v),
                    _ => Out::NotJson(text),
                };
                if tx.send(out).is_err() {
                    break;
                }
            }
        });
        Server {
            child,
            stdin,
            rx,
            next_id: 1,
            lines: Vec::new(),
            events: Vec::new(),
            pending: Vec::new(),
            _dir: dir,
        }
    }

    /// A path inside this server's private temp dir.
    pub fn temp_path(&self, name: &str) -> std::path::PathBuf {
        self._dir.0.join(name)
    }

    /// Writes raw bytes to stdin.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let w = self.stdin.as_mut().expect("stdin open");
        w.write_all(bytes).unwrap();
        w.flush().unwrap();
    }

    /// Closes stdin (the server then ends the session and exits).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Sends a request without waiting; returns its id.
    pub fn send(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        let mut line = serde_json::to_vec(&msg).unwrap();
        line.push(b'\n');
        self.send_raw(&line);
        id
    }

    /// Sends a notification (no id).
    pub fn notify(&mut self, method: &str, params: Value) {
        let mut line =
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
                .unwrap();
        line.push(b'\n');
        self.send_raw(&line);
    }

    fn pump(&mut self, deadline: Instant) -> Option<Out> {
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        match self.rx.recv_timeout(deadline - now) {
            Ok(out) => {
                self.lines.push(out.clone());
                if let Out::Json(v) = &out {
                    if v.get("method").and_then(Value::as_str) == Some("event") {
                        self.events.push(v["params"].clone());
                    } else {
                        self.pending.push(v.clone());
                    }
                }
                Some(out)
            }
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Waits for the response with this id.
    pub fn response(&mut self, id: u64) -> Value {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(i) = self
                .pending
                .iter()
                .position(|v| v.get("id") == Some(&json!(id)))
            {
                return self.pending.remove(i);
            }
            if self.pump(deadline).is_none() {
                panic!("no response to id {id}; lines so far: {:?}", self.lines);
            }
        }
    }

    /// Waits for the next response that no request id claims (e.g. `id: null`).
    pub fn next_response(&mut self) -> Value {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if !self.pending.is_empty() {
                return self.pending.remove(0);
            }
            if self.pump(deadline).is_none() {
                panic!("no response; lines so far: {:?}", self.lines);
            }
        }
    }

    /// Collects output for `d` and returns whether any response arrived.
    pub fn quiet_for(&mut self, d: Duration) -> Vec<Value> {
        let deadline = Instant::now() + d;
        while self.pump(deadline).is_some() {}
        std::mem::take(&mut self.pending)
    }

    /// Sends a request and returns the full JSON-RPC response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        self.response(id)
    }

    /// Sends a request and returns its envelope (`result`), failing on a protocol error.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let r = self.request(method, params);
        assert!(r.get("error").is_none(), "protocol error: {r}");
        r["result"].clone()
    }

    /// `tools.call` and its envelope.
    pub fn tool(&mut self, tool: &str, arguments: Value) -> Value {
        self.call("tools.call", json!({"tool": tool, "arguments": arguments}))
    }

    /// A tool call that must succeed; returns `result`.
    pub fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        let env = self.tool(tool, arguments.clone());
        assert_eq!(env["ok"], json!(true), "{tool} {arguments} failed: {env}");
        env["result"].clone()
    }

    /// `session.start` that must succeed.
    pub fn start_session(&mut self, config: Value) -> Value {
        let env = self.call("session.start", config);
        assert_eq!(env["ok"], json!(true), "session.start failed: {env}");
        env["result"].clone()
    }

    /// Waits for an event of this type (searching those already read first, from
    /// index `from`); returns it with its index.
    pub fn wait_event_from(&mut self, kind: &str, from: usize) -> (usize, Value) {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(i) = self
                .events
                .iter()
                .skip(from)
                .position(|e| e["type"] == json!(kind))
            {
                return (from + i, self.events[from + i].clone());
            }
            if self.pump(deadline).is_none() {
                panic!("no {kind} event; events: {:?}", self.events);
            }
        }
    }

    /// Waits for an event of this type anywhere in the stream.
    pub fn wait_event(&mut self, kind: &str) -> Value {
        self.wait_event_from(kind, 0).1
    }

    /// Event types read so far, in order.
    pub fn event_types(&self) -> Vec<String> {
        self.events
            .iter()
            .map(|e| e["type"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Closes stdin and waits for the exit status (the server must exit by itself).
    pub fn finish(mut self) -> (std::process::ExitStatus, Vec<Out>) {
        self.close_stdin();
        let deadline = Instant::now() + TIMEOUT;
        while self.pump(deadline).is_some() {}
        let status = self.child.wait().unwrap();
        (status, std::mem::take(&mut self.lines))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Decodes a `data:` URL's base64 payload.
pub fn data_url_bytes(url: &str) -> Vec<u8> {
    use base64::Engine as _;
    let b64 = url.split_once(',').expect("data url").1;
    base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("base64")
}

/// Decodes a PNG: (width, height, color type, pixels).
pub fn decode_png(bytes: &[u8]) -> (u32, u32, png::ColorType, Vec<u8>) {
    let dec = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut r = dec.read_info().expect("png header");
    let mut buf = vec![0; r.output_buffer_size().expect("size")];
    let info = r.next_frame(&mut buf).expect("png frame");
    buf.truncate(info.buffer_size());
    (info.width, info.height, info.color_type, buf)
}

/// Finds a node in an a11y tree by role and name.
pub fn find_node<'a>(tree: &'a Value, role: &str, name: &str) -> Option<&'a Value> {
    if tree["role"] == json!(role) && tree["name"] == json!(name) {
        return Some(tree);
    }
    tree["children"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|c| find_node(c, role, name))
}
