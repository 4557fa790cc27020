//! The desktop areas when the built-in virtual desktop is served: asked for, or what
//! `auto` falls back to when there is no X display (which `--platform x11` reports as
//! missing).

use serde_json::json;

use super::{Finding, Status};

/// The virtual desktop: everything works except a physical hotkey.
pub fn findings(platform: Finding) -> Vec<(&'static str, Finding)> {
    vec![
        ("platform", platform.with("backend", json!("virtual"))),
        (
            "display",
            Finding::ok("the virtual desktop: rendered pixels, no real screen"),
        ),
        ("input", Finding::ok("virtual pointer and keyboard")),
        ("capture", Finding::ok("frames rendered in process")),
        (
            "accessibility",
            Finding::ok("the virtual desktop's accessibility tree"),
        ),
        (
            "hotkey",
            Finding::problem(
                Status::Degraded,
                "the virtual desktop has no physical keyboard: no emergency hotkey (stop with \
                 control.panic or the operator console)",
                "serve a real desktop (set DISPLAY, --platform x11) to have the emergency hotkey",
            ),
        ),
    ]
}

/// No X display: `auto` serves the virtual desktop instead, `x11` cannot start.
#[cfg_attr(all(feature = "windows", windows), allow(dead_code))]
pub fn no_x11(platform: &str, reason: &str, step: &str) -> Vec<(&'static str, Finding)> {
    let p = if platform == "x11" {
        Finding::problem(
            Status::Missing,
            format!("--platform x11 cannot start: {reason}"),
            step,
        )
    } else {
        Finding::problem(
            Status::Degraded,
            format!("--platform auto serves the built-in virtual desktop: {reason}"),
            step,
        )
    };
    let display = Finding::problem(Status::Missing, reason, step);
    super::cannot_start(
        p.with("backend", json!("virtual")),
        Some(display),
        "no X display (see display)",
        step,
    )
}
