//! The clipboard shared with the desk's other clients (PROTOCOL §4): what
//! `clipboard.write` puts there is what another client reads and what the typing
//! oracle pastes; `clipboard.read` reads another client's copy, refuses one a password
//! manager marked secret, and what it read reaches no event and no log line.

use std::time::{Duration, Instant};

use serde_json::json;

use super::can;
use crate::common::Server;
use crate::conformance::desk::{Copy, Desk, serve};

const OURS: &str = "héllo 世界 written-4417";
const THEIRS: &str = "Copied-Elsewhere-Secret-7731";

pub fn the_clipboard_is_shared_and_leaks_nowhere<D: Desk>() {
    let mut desk = D::start();
    let mut s = serve(&desk, "debug", None);
    s.start_session(json!({}));
    if !can(&desk, &mut s, "clipboard") {
        return;
    }

    let w = s.ok("clipboard.write", json!({"text": OURS}));
    assert_eq!(w["chars"], OURS.chars().count(), "{w}");
    match desk.clipboard_elsewhere(&mut s) {
        Some(text) => assert_eq!(text, OURS, "another client reads it"),
        None => eprintln!("{}: no other client reads the clipboard", D::PLATFORM),
    }
    let r = s.ok("clipboard.read", json!({}));
    assert_eq!(r["text"], OURS);
    assert_eq!(r["owner"], "computer-control");

    // The typing oracle pastes it: the desk hands our text to an ordinary client.
    if let Some(keys) = desk.paste_keys() {
        let oracle = desk.typing_oracle(&mut s);
        s.ok("clipboard.write", json!({"text": "pasted ✓"}));
        s.ok("keyboard.combo", json!({"keys": keys}));
        s.ok("keyboard.type", json!({"text": "\n"}));
        let want = oracle.shows("pasted ✓\n");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let got = oracle.received(&mut s);
            if got == want {
                break;
            }
            assert!(Instant::now() < deadline, "pasted {got:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    // Another client copies: ours is gone, theirs is read.
    let Some(other) = desk.copy_elsewhere(&mut s, THEIRS, Copy::Text) else {
        panic!("{}: every desk has another client that copies", D::PLATFORM);
    };
    let r = s.ok("clipboard.read", json!({}));
    assert_eq!(r["text"], THEIRS, "{r}");
    assert_eq!(r["chars"], THEIRS.chars().count(), "{r}");
    assert_ne!(r["owner"], "computer-control", "{r}");
    drop(other);

    // A password manager's copy: refused, the text never received.
    match desk.copy_elsewhere(&mut s, THEIRS, Copy::Password) {
        Some(owner) => {
            let e = s.fails("clipboard.read", json!({}), "policy_denied");
            assert_eq!(e["data"]["rule"], "secret_clipboard", "{e}");
            drop(owner);
        }
        None => eprintln!("{}: no client here marks a copy secret", D::PLATFORM),
    }
    // The server goes on.
    s.ok("clipboard.write", json!({"text": "after"}));
    if let Some(text) = desk.clipboard_elsewhere(&mut s) {
        assert_eq!(text, "after");
    }

    // What was read from another client (the agent's own `clipboard.write` text is its
    // argument, shown like any other).
    assert_read_leaks_nowhere(&mut s, THEIRS);
}

/// Asserts that `clipboard.read` ran (its events and log lines say so) and that
/// `text`, which it read, is in no event and no log line.
pub fn assert_read_leaks_nowhere(s: &mut Server, text: &str) {
    s.drain_available();
    let events = serde_json::to_string(&s.events).unwrap_or_default();
    assert!(events.contains("clipboard.read"));
    assert!(!events.contains(text), "the clipboard leaked into an event");
    let log = s.stderr_text();
    assert!(log.contains("clipboard.read"), "the log says what ran");
    assert!(!log.contains(text), "the clipboard leaked into the log");
}
