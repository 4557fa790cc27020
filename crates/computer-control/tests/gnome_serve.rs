//! What only GNOME has, end to end (the scenarios every desktop passes are the driver
//! conformance suite's, `conformance::gnome::`): `check` names GNOME and what it offers,
//! with and without the project's shell extension, without PipeWire and without its
//! client library, and `serve
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
    // PipeWire's client library cannot be loaded (the loader pointed at a file that is
    // not there): capture is missing with the packages that provide it, `auto` passes
    // over GNOME saying why, and `--platform gnome` stops with the same words.
    let gone = "/nonexistent/libpipewire-0.3.so.0";
    let run = |args: &[&str]| {
        let mut cmd = command(&bare, args);
        cmd.env("COMPUTER_CONTROL_LIBPIPEWIRE", gone)
            .stdin(std::process::Stdio::null());
        cmd.output().unwrap()
    };
    let v: Value =
        serde_json::from_slice(&run(&["check", "--json", "--platform", "gnome"]).stdout).unwrap();
    assert_eq!(v["platform"]["status"], "missing", "{v}");
    assert_eq!(v["input"]["status"], "ok", "Mutter's input is there: {v}");
    assert_eq!(v["capture"]["status"], "missing", "{v}");
    let reason = v["capture"]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains(gone), "{v}");
    let step = v["capture"]["next_step"].as_str().unwrap_or_default();
    assert!(
        step.contains("libpipewire-0.3-0") && step.contains("pipewire-libs"),
        "{v}"
    );
    let gnome = v["drivers"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["name"] == "gnome"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(gnome["status"], "missing", "{v}");
    let v: Value = serde_json::from_slice(&run(&["check", "--json"]).stdout).unwrap();
    assert_ne!(v["platform"]["backend"], "gnome", "{v}");
    let why = v["platform"]["wayland"].as_str().unwrap_or_default();
    assert!(why.contains("libpipewire-0.3.so.0"), "{v}");
    let out = run(&["serve", "--platform", "gnome"]);
    assert!(!out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--platform gnome") && err.contains("libpipewire-0.3-0"),
        "{err}"
    );
}
