//! The fleet plane as a process for the tests and the stop-all benchmark: `computer-control
//! fleet --port 0` over the desks named, its address read from stderr, and a client
//! that speaks to it with a bearer token.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::http_support::{OPERATOR, TempDir, client};

/// A running `computer-control fleet`.
pub struct Plane {
    child: Child,
    pub base: String,
    pub stderr: Arc<Mutex<Vec<String>>>,
    _dir: TempDir,
}

impl Drop for Plane {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Plane {
    pub fn start(desks: &[String]) -> Plane {
        let dir = TempDir::new();
        let token = dir.0.join("operator-token");
        std::fs::write(&token, format!("{OPERATOR}\n")).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_computer-control"));
        cmd.args(["fleet", "--port", "0", "--refresh-ms", "200"])
            .arg("--operator-token-file")
            .arg(&token);
        for d in desks {
            cmd.args(["--desk", d]);
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the plane");
        let (tx, rx) = std::sync::mpsc::channel();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix("computer-control: fleet plane listening on ")
                {
                    let _ = tx.send(url.trim().to_string());
                }
                sink.lock().unwrap().push(line);
            }
        });
        let base = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| {
                let _ = child.kill();
                panic!(
                    "the plane did not start: {}",
                    lines.lock().unwrap().join("\n")
                )
            });
        Plane {
            child,
            base,
            stderr: lines,
            _dir: dir,
        }
    }

    pub async fn send(
        &self,
        token: &str,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut req = client()
            .request(method.parse().unwrap(), format!("{}{path}", self.base))
            .header("authorization", format!("Bearer {token}"));
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        let res = req.send().await.expect("the plane answers");
        let status = res.status().as_u16();
        let text = res.text().await.unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    pub async fn fleet(&self) -> Value {
        let (status, body) = self.send(OPERATOR, "GET", "/fleet", None).await;
        assert_eq!(status, 200, "{body}");
        body
    }

    /// Polls `/fleet` until `cond` holds (60 s at most).
    pub async fn until(&self, what: &str, cond: impl Fn(&Value) -> bool) -> Value {
        let t = Instant::now();
        loop {
            let f = self.fleet().await;
            if cond(&f) {
                return f;
            }
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "{what}: {f:#}\nplane:\n{}",
                self.stderr.lock().unwrap().join("\n")
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
