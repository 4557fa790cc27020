//! The benchmarks' stdio client: one `serve` child, requests written one line each,
//! event lines skipped.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

pub struct Client {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    out: BufReader<std::process::ChildStdout>,
    id: u64,
}

impl Client {
    /// `serve --platform virtual` from the benchmark's own build, or from the binary
    /// `BENCH_BIN` names (another build, to compare the two in one run).
    pub fn start() -> Client {
        let bin = std::env::var_os("BENCH_BIN")
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_computer-control").into());
        let mut cmd = Command::new(bin);
        cmd.args(["serve", "--platform", "virtual"]);
        Client::start_command(cmd)
    }

    /// Any `serve` command (its environment set by the caller).
    pub fn start_command(mut cmd: Command) -> Client {
        let mut child = cmd
            .env("COMPUTER_CONTROL_LOG", "error")
            .env_remove("COMPUTER_CONTROL_CONFIG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn");
        let stdin = child.stdin.take().expect("stdin");
        let out = BufReader::new(child.stdout.take().expect("stdout"));
        Client {
            child,
            stdin,
            out,
            id: 0,
        }
    }

    /// One request; skips event lines; returns the response.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let mut line = serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}),
        )
        .expect("json");
        line.push(b'\n');
        self.stdin.write_all(&line).expect("write");
        self.stdin.flush().expect("flush");
        let mut buf = String::new();
        loop {
            buf.clear();
            self.out.read_line(&mut buf).expect("read");
            // Cheap check first: events are skipped without a full parse.
            if buf.contains("\"method\":\"event\"") {
                continue;
            }
            return serde_json::from_str(&buf).expect("response json");
        }
    }

    /// `tools.call` whose answer line is read whole but not parsed (a capture's is a
    /// large base64 image): checks it is ok and returns its length in bytes. What a
    /// harness that hands the image on pays, without a JSON parser's cost (the only
    /// cost here that depends on how the benchmark itself was built).
    pub fn tool_unparsed(&mut self, tool: &str, arguments: Value) -> usize {
        self.id += 1;
        let mut line = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": self.id,
            "method": "tools.call", "params": {"tool": tool, "arguments": arguments}}))
        .expect("json");
        line.push(b'\n');
        self.stdin.write_all(&line).expect("write");
        self.stdin.flush().expect("flush");
        let mut buf = String::new();
        loop {
            buf.clear();
            self.out.read_line(&mut buf).expect("read");
            if buf.contains("\"method\":\"event\"") {
                continue;
            }
            assert!(
                buf.contains("\"ok\":true") && !buf.contains("\"ok\":false"),
                "{tool}: {}",
                &buf[..buf.len().min(2000)]
            );
            return buf.len();
        }
    }

    /// `tools.call`; returns the envelope, which must be ok.
    pub fn tool(&mut self, tool: &str, arguments: Value) -> Value {
        let r = self.call("tools.call", json!({"tool": tool, "arguments": arguments}));
        assert_eq!(r["result"]["ok"], json!(true), "{tool}: {r}");
        r["result"].clone()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// p50 and p99.
pub fn stats(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    (pct(&v, 0.5), pct(&v, 0.99))
}

/// p50 and p90 (the Windows benchmark's pair: its samples are too few for a p99).
pub fn p50_p90(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    (pct(&v, 0.5), pct(&v, 0.9))
}

/// A duration as µs under a millisecond, else ms.
pub fn fmt(d: Duration) -> String {
    if d < Duration::from_millis(1) {
        format!("{:.1} µs", d.as_secs_f64() * 1e6)
    } else {
        format!("{:.2} ms", d.as_secs_f64() * 1e3)
    }
}
