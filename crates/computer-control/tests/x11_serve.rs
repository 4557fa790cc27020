//! The product on a real X11 desktop, end to end: `check` sees the display, `serve`
//! with `--platform auto` picks X11 (and says so), and a session captures, snapshots
//! and acts on gtk3-widget-factory; the panic hotkey pressed by another client stops
//! the session and pressed again releases it.

#[path = "../../desktop/tests/x11_support/mod.rs"]
mod x11_support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use x11_support::Desk;

const BIN: &str = env!("CARGO_BIN_EXE_computer-control");

fn command(desk: &Desk, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    desk.env(&mut cmd);
    cmd.args(args)
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env("COMPUTER_CONTROL_LOG", "info");
    cmd
}

/// A `serve` process on the desk, spoken to over stdio JSON-RPC.
struct Serve {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    stderr: Receiver<String>,
    next_id: u64,
}

impl Serve {
    fn start(desk: &Desk) -> Serve {
        let mut child = command(desk, &["serve"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn computer-control serve");
        let stdin = child.stdin.take().unwrap();
        let out = child.stdout.take().unwrap();
        let err = child.stderr.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    let _ = tx.send(v);
                }
            }
        });
        let (etx, stderr) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = etx.send(line);
            }
        });
        Serve {
            child,
            stdin,
            lines,
            stderr,
            next_id: 1,
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let req = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{req}").unwrap();
        self.stdin.flush().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(v) = self.lines.recv_timeout(Duration::from_millis(100))
                && v.get("id") == Some(&json!(id))
            {
                return v["result"].clone();
            }
        }
        panic!("no answer to {method}");
    }

    fn tool(&mut self, tool: &str, arguments: Value) -> Value {
        let env = self.call("tools.call", json!({"tool": tool, "arguments": arguments}));
        assert_eq!(env["ok"], true, "{tool}: {env}");
        env["result"].clone()
    }

    fn state(&mut self) -> String {
        let s = self.call("system.status", json!({}));
        s["result"]["state"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    fn stderr_text(&self) -> String {
        self.stderr.try_iter().collect::<Vec<_>>().join("\n")
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn find<'a>(node: &'a Value, role: &str, pred: &dyn Fn(&Value) -> bool) -> Option<&'a Value> {
    if node["role"] == role && pred(node) {
        return Some(node);
    }
    node["children"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|c| find(c, role, pred))
}

fn has_state(n: &Value, s: &str) -> bool {
    n["states"]
        .as_array()
        .is_some_and(|a| a.iter().any(|x| x == s))
}

#[test]
fn check_reports_the_x11_desktop() {
    let desk = Desk::start();
    let out = command(&desk, &["check", "--json"]).output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["platform_auto"], "x11", "{v}");
    for k in [
        "display",
        "xtest",
        "shm",
        "randr",
        "accessibility_bus",
        "hotkey_grab",
    ] {
        assert_eq!(v[k]["ok"], true, "{k}: {v}");
    }
    let text = command(&desk, &["check"]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(
        text.contains("hotkey_grab") && text.contains("ctrl+alt+f12"),
        "{text}"
    );
}

#[test]
fn a_session_on_x11_observes_acts_and_panics() {
    let mut desk = Desk::start();
    {
        let mut d = desk.driver();
        desk.widget_factory(&mut d);
    }
    let mut s = Serve::start(&desk);
    let started = s.call("session.start", json!({}));
    assert_eq!(started["ok"], true, "{started}");
    let r = &started["result"];
    assert_eq!(r["platform"], "x11", "{r}");
    let caps = &r["capabilities"];
    assert_eq!(caps["input"], true, "{caps}");
    assert_eq!(caps["accessibility"], true, "{caps}");
    assert_eq!(caps["hotkey"], true, "{caps}");
    assert_eq!(r["surface"]["display_width_px"], 1920);
    assert!(s.stderr_text().contains("platform: x11"));

    let t = Instant::now();
    let cap = s.tool("screen.capture", json!({"format": "png"}));
    eprintln!("screen.capture png end to end: {:?}", t.elapsed());
    assert_eq!(cap["width"], 1920);

    let snap = s.tool("a11y.snapshot", json!({"level": "full"}));
    // One root for the desktop; the application's window under it, bound to X11.
    let window = find(&snap["tree"], "window", &|_| true).unwrap();
    assert!(window["window_id"].is_u64(), "{window}");
    let checkbox = find(window, "checkbox", &|n| {
        has_state(n, "enabled") && !has_state(n, "checked")
    })
    .unwrap()
    .clone();
    let act = s.tool(
        "a11y.activate",
        json!({"snapshot_id": snap["snapshot_id"], "node_id": checkbox["id"], "method": "pattern"}),
    );
    assert_eq!(act["method_used"], "toggle");

    // The panic hotkey from another client stops the session; again releases it.
    let out = desk.run("xdotool", &["key", "ctrl+alt+F12"]);
    assert!(out.status.success());
    let deadline = Instant::now() + Duration::from_secs(5);
    while s.state() != "stopped" && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(s.state(), "stopped");
    let env = s.call(
        "tools.call",
        json!({"tool": "pointer.move", "arguments": {"x": 10, "y": 10}}),
    );
    assert_eq!(env["error"]["code"], "safety_stopped", "{env}");
    desk.run("xdotool", &["key", "ctrl+alt+F12"]);
    let deadline = Instant::now() + Duration::from_secs(5);
    while s.state() != "ready" && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(s.state(), "ready");
    s.tool("pointer.move", json!({"x": 10, "y": 10}));
}
