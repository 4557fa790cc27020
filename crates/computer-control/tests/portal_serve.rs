//! The product through the desktop portal on a headless GNOME Shell, end to end:
//! `serve --platform portal` says in its log that the user is being asked, the test
//! answers the portal's dialog through the dialog's own accessibility tree (as a
//! person would), then a click focuses a terminal, ASCII typed into it arrives exactly,
//! a character GNOME's compositor would drop is refused before anything is typed, a
//! capture reads the shared monitor, and the session stops. `check --platform portal`
//! names the portal and what the user will be asked. The server runs as the desk user
//! (the portal serves only callers it can identify).

use crate::common;

use common::Server;

use std::process::Command;
use std::time::Duration;

use cc_test_kit::consent;
use cc_test_kit::gnome::{GnomeDesk, GnomeDeskOptions};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_computer-control");

fn command(desk: &GnomeDesk, args: &[&str]) -> Command {
    let mut cmd = desk.command(BIN);
    cmd.args(args)
        .env("COMPUTER_CONTROL_LOG", "info")
        // Restore tokens stay inside the desk.
        .env("XDG_STATE_HOME", desk.path("state"));
    cmd
}

#[test]
fn check_names_the_portal_and_what_the_user_is_asked() {
    let desk = GnomeDesk::start_with(GnomeDeskOptions { extension: false });
    consent::enable_portal(&desk);
    let out = command(&desk, &["check", "--json", "--platform", "portal"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["platform"]["backend"], "portal", "{v}");
    assert_eq!(v["input"]["status"], "ok", "{v}");
    assert_eq!(v["capture"]["status"], "ok", "{v}");
    // This portal (1.16) cannot remember remote-desktop consent: check says so.
    assert_eq!(v["platform"]["status"], "degraded", "{v}");
    let reason = v["platform"]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("asked at every start"), "{v}");
    assert!(
        !consent::dialog_shown(&desk.bus, "Share"),
        "check raised a dialog"
    );
}

#[test]
fn a_portal_session_asks_once_then_clicks_types_captures_and_stops() {
    let mut desk = GnomeDesk::start_with(GnomeDeskOptions { extension: false });
    consent::enable_portal(&desk);
    let file = desk.oracle_terminal("cc-portal");
    std::thread::sleep(Duration::from_millis(800));
    let bus = desk.bus.clone();
    let answering =
        std::thread::spawn(move || consent::answer(&bus, "Share", Duration::from_secs(60)));
    let mut s = Server::start_command(command(&desk, &["serve", "--platform", "portal"]));
    let started = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        s.call("session.start", json!({}))
    }))
    .unwrap_or_else(|_| panic!("no answer to session.start:\n{}", s.stderr_text()));
    let answered = answering.join().unwrap();
    let answered = answered.unwrap_or_else(|e| panic!("{e}\n{}", s.stderr_text()));
    assert!(
        answered.pressed.iter().any(|p| p.contains("remote")),
        "remote interaction allowed through the switch: {answered:?}"
    );
    assert_eq!(started["ok"], true, "{started}\n{}", s.stderr_text());
    assert_eq!(started["result"]["platform"], "portal", "{started}");
    let log = s.stderr_text();
    assert!(
        log.contains("the desktop is asking the user to allow remote control"),
        "the operator is told a dialog waits: {log}"
    );
    // The terminal sits in the middle of the monitor: a click there focuses it.
    s.ok("pointer.click", json!({"x": 960, "y": 540}));
    std::thread::sleep(Duration::from_millis(300));
    let text = "hello portal, ~{[(ok)]}!\n";
    s.ok("keyboard.type", json!({"text": text}));
    let arrived = desk.try_wait(Duration::from_secs(20), || {
        std::fs::read_to_string(&file).is_ok_and(|t| t == text)
    });
    assert!(arrived, "{:?}", std::fs::read_to_string(&file));
    // A character the compositor would drop is refused before anything is typed.
    let refused = s.tool("keyboard.type", json!({"text": "ab é"}));
    assert_ne!(refused["ok"], true, "{refused}");
    assert!(refused.to_string().contains("keyboard layout"), "{refused}");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        text,
        "nothing half-typed"
    );
    let cap = s.ok("screen.capture", json!({"scale": 0.1}));
    assert!(cap["frame"].as_u64().is_some(), "{cap}");
    let stopped = s.call("session.stop", json!({}));
    assert_eq!(stopped["ok"], true, "{stopped}");
}

/// The user declines: the server does not start, and says why.
#[test]
fn a_declined_dialog_stops_the_start_with_the_reason() {
    let desk = GnomeDesk::start_with(GnomeDeskOptions { extension: false });
    consent::enable_portal(&desk);
    let mut cmd = command(&desk, &["serve", "--platform", "portal"]);
    cmd.stdin(std::process::Stdio::null());
    let serving = std::thread::spawn(move || cmd.output().unwrap());
    let answered = consent::answer(&desk.bus, "Cancel", Duration::from_secs(60));
    let out = serving.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    answered.unwrap_or_else(|e| panic!("{e}\n{err}"));
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("the user declined"), "{err}");
}
