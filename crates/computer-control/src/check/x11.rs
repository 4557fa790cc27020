//! The desktop areas of `check` on X11: a fresh connection's report (its own, so a
//! running server's hotkey grab shows as held elsewhere unless the server asks).

use serde_json::json;

use cc_desktop_x11::{X11Desktop, X11Report};

use super::buses::{START_A11Y_BUS, START_SESSION_BUS};
use super::virtual_desktop::no_x11;
use super::{Finding, ServerView, Status};

/// How to give the server a display when it has none.
const SET_DISPLAY: &str = "start the server from the desktop session, or set DISPLAY (and \
XAUTHORITY when the X server wants a cookie) in the host's `env` for this server, e.g. \
DISPLAY=:0 XAUTHORITY=$HOME/.Xauthority";

const ENABLE_XTEST: &str = "restart the X server with the XTEST extension (Xvfb: drop \
`-extension XTEST`; Xorg: remove `Option \"XTEST\" \"Disable\"` from xorg.conf)";

/// The six desktop findings from `$DISPLAY` (`platform` is `auto` or `x11`).
pub fn findings(platform: &str, server: Option<&ServerView>) -> Vec<(&'static str, Finding)> {
    let display = std::env::var("DISPLAY").unwrap_or_default();
    if display.trim().is_empty() {
        let reason = "no X display: DISPLAY is not set and no X server of this user was found";
        return no_x11(platform, reason, SET_DISPLAY);
    }
    match X11Desktop::connect(None) {
        Ok(mut d) => x11(platform, &d.report(), server),
        Err(e) => {
            let reason = format!("cannot open the X display {display}: {e}");
            let step = if e.to_string().to_ascii_lowercase().contains("author") {
                "set XAUTHORITY to the X session's cookie file (often $HOME/.Xauthority or \
                 $XDG_RUNTIME_DIR/gdm/Xauthority) in the host's `env`"
            } else {
                SET_DISPLAY
            };
            no_x11(platform, &reason, step)
        }
    }
}

fn x11(platform: &str, r: &X11Report, server: Option<&ServerView>) -> Vec<(&'static str, Finding)> {
    let backend = match (platform, r.xtest) {
        ("x11", _) | (_, true) => "x11",
        _ => "virtual",
    };
    let platform = if backend == "x11" {
        Finding::ok(format!("X11 on {}", r.display))
    } else {
        Finding::problem(
            Status::Degraded,
            format!(
                "--platform auto serves the built-in virtual desktop: the X server {} has no \
                 XTest extension",
                r.display
            ),
            ENABLE_XTEST,
        )
    };
    let display = if !r.window_manager {
        Finding::problem(
            Status::Degraded,
            format!(
                "{}: no EWMH window manager (windows listed from the root's children; \
                 window.focus cannot ask a manager)",
                r.display
            ),
            "start a window manager in the session (any EWMH one: openbox, xfwm4, mutter, kwin)",
        )
    } else if !r.randr_monitors {
        Finding::problem(
            Status::Degraded,
            format!(
                "{}: no RandR 1.5 monitors (the whole screen is one display{})",
                r.display,
                if r.randr {
                    ""
                } else {
                    ", layout changes go unnoticed"
                }
            ),
            "use an X server with RandR 1.5 (Xorg 1.18 or later, Xvfb)",
        )
    } else {
        Finding::ok(format!(
            "{}: {} monitor(s), EWMH window manager",
            r.display, r.monitors
        ))
    }
    .with("name", json!(r.display))
    .with("monitors", json!(r.monitors));
    let input = if r.xtest {
        Finding::ok(format!(
            "XTest pointer and keyboard ({} spare keycodes for characters the layout lacks)",
            r.spare_keycodes
        ))
    } else {
        Finding::problem(
            Status::Missing,
            format!(
                "the X server {} has no XTest extension: no pointer or keyboard input",
                r.display
            ),
            ENABLE_XTEST,
        )
    };
    let capture = if r.shm {
        Finding::ok("MIT-SHM shared-memory capture")
    } else {
        Finding::problem(
            Status::Degraded,
            "core GetImage capture (no MIT-SHM: several times slower)",
            "run the server on the X server's machine, in its IPC namespace (not in a \
             container with a private /dev/shm)",
        )
    };
    let accessibility = match &r.accessibility {
        Ok(()) => Finding::ok("AT-SPI accessibility bus joined"),
        Err(e) => {
            let step = if e.contains("no session bus") {
                START_SESSION_BUS
            } else {
                START_A11Y_BUS
            };
            Finding::problem(Status::Missing, e.clone(), step)
        }
    };
    let combo = cc_desktop_x11::DEFAULT_HOTKEY;
    let held_here = server.is_some_and(|s| s.capabilities["hotkey"] == true);
    let hotkey = match &r.hotkey {
        _ if held_here => Finding::ok(format!("{combo} grabbed by this server")),
        Ok(()) => Finding::ok(format!("{combo} can be grabbed")),
        Err(e) => Finding::problem(
            Status::Degraded,
            format!("{combo} cannot be grabbed: {e}"),
            format!(
                "free {combo} (another client holds it, perhaps another computer-control) or \
                 set safety.emergency_hotkey in the config to a free combination"
            ),
        ),
    };
    vec![
        ("platform", platform.with("backend", json!(backend))),
        ("display", display),
        ("input", input),
        ("capture", capture),
        ("accessibility", accessibility),
        ("hotkey", hotkey),
    ]
}
