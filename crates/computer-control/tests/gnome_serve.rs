//! What only GNOME has, end to end (the scenarios every desktop passes are the driver
//! conformance suite's, `conformance::gnome::`): `check` names GNOME and what it offers,
//! with and without the project's shell extension and without PipeWire, and `serve
//! --platform auto` picks the GNOME driver. The server runs as the desk's user.

use crate::common::Server;

use std::process::Command;

use cc_test_kit::gnome::{GnomeDesk, GnomeDeskOptions};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_computer-control");

fn command(desk: &GnomeDesk, args: &[&str]) -> Command {
    let mut cmd = desk.command(BIN);
    cmd.args(args).env("COMPUTER_CONTROL_LOG", "info");
    cmd
}

/// `serve --platform auto` on a desk whose session names GNOME chooses the GNOME
/// driver; without the shell extension it serves without windows and says why.
#[test]
fn auto_serves_gnome_and_without_the_extension_no_windows() {
    let desk = GnomeDesk::start();
    let mut s = Server::start_command(command(&desk, &["serve", "--platform", "auto"]));
    let r = s.start_session(json!({}));
    assert_eq!(r["platform"], "gnome", "{r}");
    assert_eq!(r["capabilities"]["windows"], true, "{r}");
    drop(s);
    drop(desk);
    let bare = GnomeDesk::start_with(GnomeDeskOptions { extension: false });
    let mut s = Server::start_command(command(&bare, &["serve"]));
    let r = s.start_session(json!({}));
    assert_eq!(r["platform"], "gnome", "{r}");
    assert_eq!(r["capabilities"]["windows"], false, "{r}");
    assert_eq!(r["capabilities"]["input"], true, "{r}");
    s.fails("window.list", json!({}), "backend_unavailable");
    // Input and capture still work.
    s.ok("pointer.move", json!({"x": 10, "y": 10}));
    s.ok("screen.capture", json!({"scale": 0.1}));
}

#[test]
fn check_names_gnome_and_what_is_missing() {
    let desk = GnomeDesk::start();
    let out = command(&desk, &["check", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["platform"]["backend"], "gnome", "{v}");
    for area in ["platform", "display", "input", "capture", "accessibility"] {
        assert_eq!(v[area]["status"], "ok", "{area}: {v}");
    }
    assert_eq!(v["hotkey"]["status"], "degraded", "{v}");
    drop(desk);
    // Without the extension: degraded display, saying how to install it.
    let bare = GnomeDesk::start_with(GnomeDeskOptions { extension: false });
    let out = command(&bare, &["check", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["platform"]["backend"], "gnome", "{v}");
    assert_eq!(v["display"]["status"], "degraded", "{v}");
    assert!(
        v["display"]["next_step"]
            .as_str()
            .is_some_and(|s| s.contains("--gnome-extension")),
        "{v}"
    );
    // PipeWire missing (another runtime directory): GNOME cannot capture, and check
    // says so rather than passing the desktop.
    let mut cmd = command(&bare, &["check", "--json", "--platform", "gnome"]);
    cmd.env("XDG_RUNTIME_DIR", "/nonexistent");
    let v: Value = serde_json::from_slice(&cmd.output().unwrap().stdout).unwrap();
    assert_eq!(v["capture"]["status"], "missing", "{v}");
    assert!(
        v["capture"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("PipeWire")),
        "{v}"
    );
}
