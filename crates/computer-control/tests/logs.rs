//! What the server logs of an action: its arguments in the bounded form events carry
//! (PROTOCOL §6), at every level, so a long text costs the log what it costs an event.

use crate::common;

use std::time::{Duration, Instant};

use common::Server;
use serde_json::json;

#[test]
fn a_long_argument_is_logged_cut_as_events_carry_it() {
    let mut s = Server::start_capturing_stderr(None, &[], &[("COMPUTER_CONTROL_LOG", "trace")]);
    s.start_session(json!({}));
    s.ok("clipboard.write", json!({"text": "x".repeat(40_000)}));
    // The log is written by the server as it goes; its stderr is read beside it.
    let t = Instant::now();
    let mut logs = s.stderr_text();
    while !logs.contains("action started") && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
        logs = s.stderr_text();
    }
    assert!(logs.contains("action started"), "{logs}");
    assert!(logs.contains("[cut: 40000 bytes, sha256 "), "{logs}");
    assert!(
        !logs.contains(&"x".repeat(1_000)),
        "the whole text reached the log"
    );
}
