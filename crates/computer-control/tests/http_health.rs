//! `GET /health` as a supervisor reads it (PROTOCOL §1): 200 with the display, the
//! driver and the journal each ready, and 503 naming the journal while another process
//! holds it for writing, ready again once it lets go. A display that went away is
//! tested in `fleet.rs` (Xvfb killed inside a desk); the probes' parsing and socket
//! check beside the code (`transports/http/readiness.rs`).

use crate::http_support::{Server, client};

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

async fn health(s: &Server) -> (u16, Value) {
    let r = client().get(s.url("/health")).send().await.expect("health");
    let status = r.status().as_u16();
    (status, r.json().await.expect("a JSON body"))
}

/// Polls `/health` until `done` holds (30 s at most).
async fn until(s: &Server, what: &str, done: impl Fn(u16) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, body) = health(s).await;
        if done(status) {
            return body;
        }
        assert!(
            Instant::now() < deadline,
            "{what} not reached: {status} {body}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_part_ready_answers_200() {
    let s = Server::start();
    let (status, h) = health(&s).await;
    assert_eq!(status, 200, "{h}");
    assert_eq!(h["ok"], true);
    assert_eq!(h["ready"], true);
    for part in ["display", "driver", "journal"] {
        assert_eq!(h[part]["ready"], true, "{part}: {h}");
        assert!(h[part]["detail"].is_string(), "{part}: {h}");
    }
    assert!(
        h["display"]["detail"].as_str().unwrap().contains("virtual"),
        "{h}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_held_by_another_writer_is_not_ready() {
    let s = Server::start();
    until(&s, "ready", |st| st == 200).await;
    let journal = s.dir.0.join("computer-control/governance.db");
    assert!(journal.is_file(), "{}", journal.display());
    // Another process takes the journal's write lock and keeps it until its stdin closes.
    let mut holder = Command::new("python3")
        .args([
            "-c",
            "import sqlite3, sys\n\
             c = sqlite3.connect(sys.argv[1], isolation_level=None)\n\
             c.execute('BEGIN EXCLUSIVE')\n\
             print('locked', flush=True)\n\
             sys.stdin.read()\n\
             c.execute('ROLLBACK')\n",
        ])
        .arg(&journal)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    let mut line = String::new();
    BufReader::new(holder.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read");
    assert_eq!(line.trim(), "locked");

    let h = until(&s, "not ready", |st| st == 503).await;
    assert_eq!(h["ok"], false, "{h}");
    assert_eq!(h["ready"], false, "{h}");
    assert_eq!(h["journal"]["ready"], false, "{h}");
    assert_eq!(h["display"]["ready"], true, "{h}");
    assert_eq!(h["driver"]["ready"], true, "{h}");
    assert!(
        !h["journal"]["detail"]
            .as_str()
            .unwrap_or_default()
            .is_empty(),
        "{h}"
    );

    let mut stdin = holder.stdin.take().expect("stdin");
    let _ = stdin.write_all(b"");
    drop(stdin);
    let _ = holder.wait();
    let h = until(&s, "ready again", |st| st == 200).await;
    assert_eq!(h["journal"]["ready"], true, "{h}");
}
