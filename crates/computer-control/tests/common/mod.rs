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
    /// stderr bytes, when captured.
    stderr: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    _dir: tempfile_dir::TempDir,
}

/// The tools of PROTOCOL §4, in the spec's order: written out here, independently of
/// the server's own table, so tests compare the server against the spec.
pub const SPEC_TOOLS: [&str; 20] = [
    "screen.capture",
    "pointer.move",
    "pointer.position",
    "pointer.click",
    "pointer.drag",
    "pointer.scroll",
    "keyboard.press",
    "keyboard.combo",
    "keyboard.type",
    "wait.pause",
    "wait.for",
    "a11y.snapshot",
    "a11y.activate",
    "a11y.input",
    "window.list",
    "window.focus",
    "clipboard.read",
    "clipboard.write",
    "app.launch",
    "batch.execute",
];

pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The operator's canvas of 1920 over the 1920×1080 virtual desk, so canvas units are
/// the screen's pixels: for tests whose points or sizes are written in them.
pub fn full_canvas() -> Value {
    json!({"capture": {"default_width": 1920}})
}

pub use cc_test_kit::temp as tempfile_dir;

impl Server {
    /// Starts the server on the virtual desktop with no config file.
    pub fn start() -> Server {
        Server::start_with(None, &[])
    }

    /// Starts the server with a config file holding `config`, and extra CLI args.
    pub fn start_with(config: Option<Value>, extra: &[&str]) -> Server {
        Server::start_env(config, extra, &[])
    }

    /// Like [`Server::start_with`], with extra environment variables (set after
    /// `COMPUTER_CONTROL_CONFIG` is removed, so a test may set it).
    pub fn start_env(config: Option<Value>, extra: &[&str], envs: &[(&str, &str)]) -> Server {
        Server::spawn(config, extra, envs, false)
    }

    /// Like [`Server::start_env`], keeping everything the server writes on stderr
    /// (its logs) for [`Server::stderr_text`].
    pub fn start_capturing_stderr(
        config: Option<Value>,
        extra: &[&str],
        envs: &[(&str, &str)],
    ) -> Server {
        Server::spawn(config, extra, envs, true)
    }

    /// Everything the server wrote on stderr so far (empty unless started with
    /// [`Server::start_capturing_stderr`]).
    pub fn stderr_text(&self) -> String {
        let buf = self.stderr.lock().unwrap();
        String::from_utf8_lossy(&buf).to_string()
    }

    /// The shared stderr buffer: still readable after [`Server::finish`] (the reader
    /// thread drains the pipe until the process is gone).
    pub fn stderr_buffer(&self) -> std::sync::Arc<std::sync::Mutex<Vec<u8>>> {
        self.stderr.clone()
    }

    fn spawn(
        config: Option<Value>,
        extra: &[&str],
        envs: &[(&str, &str)],
        capture_stderr: bool,
    ) -> Server {
        let dir = tempfile_dir::TempDir::new();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_computer-control"));
        cmd.arg("serve").arg("--platform").arg("virtual");
        cmd.args(extra);
        cmd.env_remove("COMPUTER_CONTROL_CONFIG");
        cmd.env("COMPUTER_CONTROL_LOG", "warn");
        for (k, v) in envs {
            cmd.env(k, v);
        }
        if let Some(c) = config {
            let path = dir.0.join("config.json");
            std::fs::write(&path, serde_json::to_vec(&c).unwrap()).unwrap();
            cmd.arg("--config").arg(&path);
        }
        Server::launch(cmd, capture_stderr, dir)
    }

    /// Starts `serve` from a command the test built (another platform, a desktop's
    /// environment), keeping its stderr for [`Server::stderr_text`].
    pub fn start_command(cmd: Command) -> Server {
        Server::launch(cmd, true, tempfile_dir::TempDir::new())
    }

    fn launch(mut cmd: Command, capture_stderr: bool, dir: tempfile_dir::TempDir) -> Server {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if capture_stderr {
                Stdio::piped()
            } else {
                Stdio::inherit()
            });
        let mut child = cmd.spawn().expect("spawn computer-control");
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        if let Some(mut err) = child.stderr.take() {
            let sink = stderr.clone();
            std::thread::spawn(move || {
                let mut chunk = [0u8; 8192];
                while let Ok(n) = std::io::Read::read(&mut err, &mut chunk) {
                    if n == 0 {
                        break;
                    }
                    sink.lock().unwrap().extend_from_slice(&chunk[..n]);
                }
            });
        }
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
            stderr,
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

    /// Waits for an event of this type whose payload satisfies `pred`, searching from
    /// event index `from`; returns its index and the event.
    pub fn wait_event_matching(
        &mut self,
        kind: &str,
        from: usize,
        pred: impl Fn(&Value) -> bool,
    ) -> (usize, Value) {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(i) = self
                .events
                .iter()
                .skip(from)
                .position(|e| e["type"] == json!(kind) && pred(&e["payload"]))
            {
                return (from + i, self.events[from + i].clone());
            }
            if self.pump(deadline).is_none() {
                panic!("no matching {kind} event; events: {:?}", self.events);
            }
        }
    }

    /// Reads whatever output is already available without waiting for more.
    pub fn drain_available(&mut self) {
        while let Ok(out) = self.rx.try_recv() {
            self.lines.push(out.clone());
            if let Out::Json(v) = &out {
                if v.get("method").and_then(Value::as_str) == Some("event") {
                    self.events.push(v["params"].clone());
                } else {
                    self.pending.push(v.clone());
                }
            }
        }
    }

    /// Asserts that nothing but events arrives for `d` (no response is owed).
    pub fn expect_no_response(&mut self, d: Duration) {
        let extra = self.quiet_for(d);
        assert!(extra.is_empty(), "unexpected responses: {extra:?}");
    }

    /// Sends one raw line (a `\n` is appended) and returns the next unclaimed response.
    pub fn raw_request(&mut self, line: &[u8]) -> Value {
        let mut l = line.to_vec();
        l.push(b'\n');
        self.send_raw(&l);
        self.next_response()
    }

    /// A tool call that must fail with `code`; returns the `error` object.
    pub fn fails(&mut self, tool: &str, arguments: Value, code: &str) -> Value {
        let env = self.tool(tool, arguments.clone());
        assert_eq!(
            env["ok"],
            json!(false),
            "{tool} {arguments} succeeded: {env}"
        );
        assert_eq!(
            env["error"]["code"],
            json!(code),
            "{tool} {arguments}: wrong error: {env}"
        );
        assert!(env["result"].is_null(), "failure with a result: {env}");
        env["error"].clone()
    }

    /// A method call whose envelope must fail with `code`; returns the `error` object.
    pub fn method_fails(&mut self, method: &str, params: Value, code: &str) -> Value {
        let env = self.call(method, params.clone());
        assert_eq!(
            env["ok"],
            json!(false),
            "{method} {params} succeeded: {env}"
        );
        assert_eq!(
            env["error"]["code"],
            json!(code),
            "{method} {params}: wrong error: {env}"
        );
        env["error"].clone()
    }

    /// A method call that must succeed; returns `result`.
    pub fn method_ok(&mut self, method: &str, params: Value) -> Value {
        let env = self.call(method, params.clone());
        assert_eq!(env["ok"], json!(true), "{method} {params} failed: {env}");
        env["result"].clone()
    }

    /// `system.status`'s result.
    pub fn status(&mut self) -> Value {
        self.method_ok("system.status", json!(null))
    }

    /// Asserts the server still answers (and returns the status).
    pub fn assert_alive(&mut self) -> Value {
        self.status()
    }

    /// `a11y.snapshot` with these arguments; returns `result`.
    pub fn snapshot(&mut self, arguments: Value) -> Value {
        self.ok("a11y.snapshot", arguments)
    }

    /// The current node with this role and name (from a fresh full snapshot).
    pub fn node(&mut self, role: &str, name: &str) -> Value {
        let snap = self.snapshot(json!({"level": "full"}));
        find_node(&snap["tree"], role, name)
            .unwrap_or_else(|| panic!("no {role} {name:?} in {}", snap["tree"]))
            .clone()
    }

    /// Clicks the centre of a node's canvas rect.
    pub fn click_node(&mut self, role: &str, name: &str) -> Value {
        let n = self.node(role, name);
        let (x, y) = center(&n);
        self.ok("pointer.click", json!({"x": x, "y": y}))
    }

    /// A full-resolution PNG capture: (result, width, height, color type, pixels).
    /// A lossless capture, canvas-sized unless the arguments say otherwise, always with
    /// its image (never `unchanged`), decoded to RGB or gray.
    pub fn capture_png(&mut self, arguments: Value) -> (Value, u32, u32, png::ColorType, Vec<u8>) {
        let mut args = arguments;
        args["format"] = json!("png");
        for (k, v) in [("size", json!("canvas")), ("if_changed", json!(false))] {
            if args.get(k).is_none() {
                args[k] = v;
            }
        }
        let r = self.ok("screen.capture", args);
        let bytes = data_url_bytes(r["data_url"].as_str().expect("data_url"));
        let (w, h, ct, px) = decode_png(&bytes);
        (r, w, h, ct, px)
    }

    /// Confirms (approves or denies) a pending request and returns `result`.
    pub fn confirm(&mut self, request_id: &str, approve: bool) -> Value {
        self.method_ok(
            "session.confirm",
            json!({"request_id": request_id, "approve": approve}),
        )
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
/// Decodes a PNG to its pixels, a palette expanded to RGB; the colour type returned is
/// that of the pixels (`Rgb` for a palette PNG).
pub fn decode_png(bytes: &[u8]) -> (u32, u32, png::ColorType, Vec<u8>) {
    let mut dec = png::Decoder::new(std::io::Cursor::new(bytes));
    dec.set_transformations(png::Transformations::EXPAND);
    let mut r = dec.read_info().expect("png header");
    let mut buf = vec![0; r.output_buffer_size().expect("size")];
    let info = r.next_frame(&mut buf).expect("png frame");
    buf.truncate(info.buffer_size());
    (info.width, info.height, info.color_type, buf)
}

/// The first node of an a11y tree (depth first) with `role` that `pred` accepts.
pub fn find_where<'a>(
    node: &'a Value,
    role: &str,
    pred: &dyn Fn(&Value) -> bool,
) -> Option<&'a Value> {
    if node["role"] == role && pred(node) {
        return Some(node);
    }
    node["children"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|c| find_where(c, role, pred))
}

/// Whether a snapshot node carries the state `s` (`checked`, `focused`…).
pub fn has_state(n: &Value, s: &str) -> bool {
    n["states"]
        .as_array()
        .is_some_and(|a| a.iter().any(|x| x == s))
}

/// A checkbox of `window`'s subtree a click can toggle on: enabled, unchecked, named,
/// with a rectangle (the first such, in tree order).
pub fn unchecked_checkbox(window: &Value) -> Value {
    find_where(window, "checkbox", &|n| {
        has_state(n, "enabled")
            && !has_state(n, "checked")
            && n["name"].as_str().is_some_and(|t| !t.is_empty())
            && n["rect"].is_array()
    })
    .unwrap_or_else(|| panic!("no unchecked, named checkbox with a rect in {window}"))
    .clone()
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

/// Every node of an a11y tree, depth first, with its depth (the root is 0).
pub fn nodes(tree: &Value) -> Vec<(usize, &Value)> {
    fn walk<'a>(n: &'a Value, depth: usize, out: &mut Vec<(usize, &'a Value)>) {
        out.push((depth, n));
        for c in n["children"].as_array().into_iter().flatten() {
            walk(c, depth + 1, out);
        }
    }
    let mut out = Vec::new();
    walk(tree, 0, &mut out);
    out
}

/// The centre of a node's `rect` (`[left, top, right, bottom]`, canvas coordinates).
pub fn center(node: &Value) -> (i64, i64) {
    let r = node["rect"]
        .as_array()
        .unwrap_or_else(|| panic!("node without rect: {node}"));
    let v: Vec<i64> = r.iter().map(|x| x.as_i64().unwrap()).collect();
    ((v[0] + v[2]) / 2, (v[1] + v[3]) / 2)
}

/// The `error.data.issues[].path` list of a failed envelope (or of its `error`).
pub fn issue_paths(v: &Value) -> Vec<String> {
    let err = if v.get("error").is_some_and(|e| !e.is_null()) {
        &v["error"]
    } else {
        v
    };
    err["data"]["issues"]
        .as_array()
        .unwrap_or_else(|| panic!("no data.issues in {v}"))
        .iter()
        .map(|i| {
            assert!(i["message"].is_string(), "issue without message: {i}");
            i["path"].as_str().expect("issue path").to_string()
        })
        .collect()
}

/// Width, height and component count of a baseline or progressive JPEG, read from its
/// SOF0/SOF1/SOF2 marker.
pub fn jpeg_info(bytes: &[u8]) -> (u32, u32, u8) {
    assert_eq!(&bytes[..2], &[0xFF, 0xD8], "no SOI marker");
    let mut i = 2;
    while i + 4 <= bytes.len() {
        assert_eq!(bytes[i], 0xFF, "not a marker at {i}");
        let marker = bytes[i + 1];
        if marker == 0xFF {
            i += 1;
            continue;
        }
        let len = u16::from_be_bytes([bytes[i + 2], bytes[i + 3]]) as usize;
        if matches!(marker, 0xC0..=0xC2) {
            let seg = &bytes[i + 4..i + 2 + len];
            let h = u16::from_be_bytes([seg[1], seg[2]]) as u32;
            let w = u16::from_be_bytes([seg[3], seg[4]]) as u32;
            return (w, h, seg[5]);
        }
        assert_ne!(marker, 0xDA, "start of scan before any SOF marker");
        i += 2 + len;
    }
    panic!("no SOF marker in the JPEG");
}

/// Width and height of a WebP (lossless VP8L, lossy VP8 or extended VP8X).
pub fn webp_dims(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..4], b"RIFF");
    assert_eq!(&bytes[8..12], b"WEBP");
    let riff_len = u32::from_le_bytes(bytes[4..8].try_into().unwrap()) as usize;
    assert_eq!(riff_len + 8, bytes.len(), "RIFF length");
    let chunk = &bytes[12..16];
    let data = &bytes[20..];
    match chunk {
        b"VP8L" => {
            assert_eq!(data[0], 0x2F, "VP8L signature");
            let b = u32::from_le_bytes(data[1..5].try_into().unwrap());
            ((b & 0x3FFF) + 1, ((b >> 14) & 0x3FFF) + 1)
        }
        b"VP8X" => {
            let w = u32::from_le_bytes([data[4], data[5], data[6], 0]) + 1;
            let h = u32::from_le_bytes([data[7], data[8], data[9], 0]) + 1;
            (w, h)
        }
        b"VP8 " => {
            assert_eq!(&data[3..6], &[0x9D, 0x01, 0x2A], "VP8 start code");
            let w = u16::from_le_bytes([data[6], data[7]]) as u32 & 0x3FFF;
            let h = u16::from_le_bytes([data[8], data[9]]) as u32 & 0x3FFF;
            (w, h)
        }
        other => panic!("unknown WebP chunk {other:?}"),
    }
}

/// The window of a `window.list` result with this title.
pub fn window_by_title<'a>(list: &'a Value, title: &str) -> &'a Value {
    list["windows"]
        .as_array()
        .expect("windows")
        .iter()
        .find(|w| w["title"] == json!(title))
        .unwrap_or_else(|| panic!("no window {title:?} in {list}"))
}

/// Crops an RGB image (`width` wide) to a rectangle.
pub fn crop_rgb(px: &[u8], width: u32, x: u32, y: u32, w: u32, h: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity((w * h * 3) as usize);
    for row in y..y + h {
        let start = ((row * width + x) * 3) as usize;
        out.extend_from_slice(&px[start..start + (w * 3) as usize]);
    }
    out
}
