//! The desktop areas of `check` on a wlroots compositor: a probe of `$WAYLAND_DISPLAY`
//! that creates no input devices (a running server's seat stays as it is).

use serde_json::json;

use cc_desktop_wlroots::{WlrootsDesktop, WlrootsReport};

use super::buses::{START_A11Y_BUS, START_SESSION_BUS};
use super::{Finding, ServerView, Status};

const USE_WLROOTS: &str = "use a wlroots compositor that offers the protocol (sway 1.5 or \
later, Hyprland, river, labwc), or run the server under Xwayland with --platform x11";

const SET_WAYLAND_DISPLAY: &str = "start the server from the Wayland session, or set \
WAYLAND_DISPLAY (and XDG_RUNTIME_DIR, SWAYSOCK for sway) in the host's `env` for this server";

const BIND_STOP_KEY: &str = "bind a compositor key that creates the panic file, e.g. in \
sway: `bindsym --locked Ctrl+Alt+F12 exec touch $XDG_RUNTIME_DIR/computer-control.panic`, \
with {\"safety\": {\"panic_file\": \"…/computer-control.panic\"}} in the server's config";

/// What a look at `$WAYLAND_DISPLAY` found.
pub enum Look {
    /// The six desktop findings: the compositor serves (or `--platform wlroots` was
    /// asked for, and these say why it cannot).
    Found(Vec<(&'static str, Finding)>),
    /// `auto` passes over a compositor it cannot drive, for this reason.
    PassedOver(String),
    /// Nothing to look at: no `$WAYLAND_DISPLAY` under `auto`, or another platform.
    Nothing,
}

/// The desktop findings for a wlroots compositor, as `serve` would choose it.
pub fn look(platform: &str, _server: Option<&ServerView>) -> Look {
    if platform != "wlroots" && platform != "auto" {
        return Look::Nothing;
    }
    let explicit = platform == "wlroots";
    let display = std::env::var("WAYLAND_DISPLAY").unwrap_or_default();
    if display.trim().is_empty() {
        if !explicit {
            return Look::Nothing;
        }
        return Look::Found(missing(
            "no Wayland compositor: WAYLAND_DISPLAY is not set and no compositor of this \
             user was found",
            SET_WAYLAND_DISPLAY,
        ));
    }
    match WlrootsDesktop::probe(None) {
        Ok(r) if explicit || usable(&r) => Look::Found(wlroots(&r)),
        Ok(r) => Look::PassedOver(format!(
            "the Wayland compositor on {} lacks {}",
            r.display,
            r.protocols
                .iter()
                .filter(|p| p.required && !p.present)
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Err(e) => {
            let why = format!("cannot connect to the Wayland compositor {display}: {e}");
            if explicit {
                Look::Found(missing(&why, SET_WAYLAND_DISPLAY))
            } else {
                Look::PassedOver(why)
            }
        }
    }
}

/// Whether `auto` would pick the driver: every required protocol is offered.
fn usable(r: &WlrootsReport) -> bool {
    r.protocols.iter().all(|p| p.present || !p.required)
}

/// `--platform wlroots` cannot start.
fn missing(reason: &str, step: &str) -> Vec<(&'static str, Finding)> {
    let platform = Finding::problem(
        Status::Missing,
        format!("--platform wlroots cannot start: {reason}"),
        step,
    )
    .with("backend", json!("wlroots"));
    let display = Finding::problem(Status::Missing, reason, step);
    super::cannot_start(
        platform,
        Some(display),
        "no Wayland compositor (see display)",
        step,
    )
}

/// The finding of the protocols behind one area: ok when all are offered, else missing
/// (a required one) or degraded, naming what their absence disables.
fn protocols(r: &WlrootsReport, names: &[&str], ok: &str) -> Finding {
    let absent: Vec<_> = r
        .protocols
        .iter()
        .filter(|p| names.contains(&p.name) && !p.present)
        .collect();
    if absent.is_empty() {
        return Finding::ok(ok);
    }
    let status = if absent.iter().any(|p| p.required) {
        Status::Missing
    } else {
        Status::Degraded
    };
    let reason = absent
        .iter()
        .map(|p| format!("{} missing: {}", p.name, p.without))
        .collect::<Vec<_>>()
        .join("; ");
    Finding::problem(status, reason, USE_WLROOTS)
}

fn wlroots(r: &WlrootsReport) -> Vec<(&'static str, Finding)> {
    let offered: Vec<_> = r
        .protocols
        .iter()
        .map(|p| json!({"name": p.name, "present": p.present, "required": p.required}))
        .collect();
    let platform = if usable(r) {
        Finding::ok(format!("a wlroots compositor on {}", r.display))
    } else {
        Finding::problem(
            Status::Missing,
            format!(
                "--platform wlroots: the compositor on {} lacks a required protocol",
                r.display
            ),
            USE_WLROOTS,
        )
    }
    .with("backend", json!("wlroots"))
    .with("protocols", json!(offered));
    let windows_from_ipc = r.sway_ipc.is_ok();
    let display = protocols(
        r,
        &["zxdg_output_manager_v1", "zwlr_foreign_toplevel_manager_v1"],
        &format!("{}: {} output(s)", r.display, r.outputs),
    )
    .with("name", json!(r.display))
    .with("outputs", json!(r.outputs))
    .with(
        "window_geometry",
        json!(match &r.sway_ipc {
            Ok(()) => "sway IPC: rectangles, pids and focus".to_string(),
            Err(e) => format!("none ({e}): windows are listed without rectangles"),
        }),
    );
    let display = if windows_from_ipc || display.status != Status::Ok {
        display
    } else {
        Finding::problem(
            Status::Degraded,
            format!(
                "{}: no compositor IPC, so windows have no rectangles and accessibility \
                 rectangles cannot be placed on the canvas",
                r.display
            ),
            "run sway (or a compositor with IPC) and set SWAYSOCK in the host's `env`",
        )
    };
    let input = protocols(
        r,
        &[
            "zwlr_virtual_pointer_manager_v1",
            "zwp_virtual_keyboard_manager_v1",
        ],
        "virtual pointer and keyboard (any Unicode character through an uploaded keymap)",
    );
    let capture = protocols(
        r,
        &["zwlr_screencopy_manager_v1"],
        "screencopy into shared memory",
    );
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
    // Whether a key binding creates the panic file is the compositor's config, which
    // no protocol shows: said as what to do, whatever the server's config names.
    let hotkey = Finding::problem(
        Status::Degraded,
        "Wayland has no global key grab: the emergency stop is a compositor key binding \
         that creates the panic file",
        BIND_STOP_KEY,
    );
    vec![
        ("platform", platform),
        ("display", display),
        ("input", input),
        ("capture", capture),
        ("accessibility", accessibility),
        ("hotkey", hotkey),
    ]
}
