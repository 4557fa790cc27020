//! The desktop areas of `check` (platform, display, input, capture, accessibility,
//! hotkey): the compositor's or the X server's report, or the built-in virtual desktop.
//! `auto` looks where `serve --platform auto` would: a wlroots compositor first, then
//! GNOME, then the desktop portal, then X11, else the virtual desktop; a Windows build
//! looks at its Windows desktop (`windows.rs`).

use serde_json::json;

use super::{Finding, ServerView, Status};

#[cfg(any(
    all(feature = "x11", unix),
    all(feature = "wlroots", target_os = "linux"),
    all(feature = "gnome", target_os = "linux")
))]
pub(super) const START_SESSION_BUS: &str = "give the server the desktop's session bus: set \
DBUS_SESSION_BUS_ADDRESS=unix:path=$XDG_RUNTIME_DIR/bus in the host's `env`, or start one \
in the session with `eval $(dbus-launch --sh-syntax)` and start the server from there";

#[cfg(any(
    all(feature = "x11", unix),
    all(feature = "wlroots", target_os = "linux"),
    all(feature = "gnome", target_os = "linux")
))]
pub(super) const START_A11Y_BUS: &str = "start the accessibility bus in the desktop session: \
`/usr/libexec/at-spi-bus-launcher --launch-immediately &` (Debian/Ubuntu package \
at-spi2-core)";

/// The six desktop findings for `platform` (`auto`, `virtual` or a driver's name).
pub fn findings(platform: &str, server: Option<&ServerView>) -> Vec<(&'static str, Finding)> {
    if platform == "virtual" {
        let why = if server.is_some() {
            "this server drives the built-in virtual desktop"
        } else {
            "--platform virtual: the built-in virtual desktop"
        };
        return virtual_desktop(Finding::ok(why));
    }
    #[cfg(all(feature = "windows", windows))]
    let found = super::windows::findings(platform, server);
    #[cfg(not(all(feature = "windows", windows)))]
    let found = unix_findings(platform, server);
    found
}

/// `auto` and the Unix drivers: a wlroots compositor, GNOME, then X11.
#[cfg(not(all(feature = "windows", windows)))]
fn unix_findings(platform: &str, server: Option<&ServerView>) -> Vec<(&'static str, Finding)> {
    #[cfg(all(feature = "wlroots", target_os = "linux"))]
    let passed_over = match super::wayland::look(platform, server) {
        super::wayland::Look::Found(found) => return found,
        super::wayland::Look::PassedOver(why) => Some(why),
        super::wayland::Look::Nothing => None,
    };
    #[cfg(not(all(feature = "wlroots", target_os = "linux")))]
    let passed_over: Option<String> = None;
    #[cfg(all(feature = "gnome", target_os = "linux"))]
    let passed_over = match super::gnome::look(platform, server) {
        super::gnome::Look::Found(found) => return found,
        super::gnome::Look::PassedOver(why) => Some(why),
        super::gnome::Look::Nothing => passed_over,
    };
    #[cfg(all(feature = "gnome", target_os = "linux"))]
    let passed_over = match super::portal::look(platform, server) {
        super::portal::Look::Found(found) => return found,
        super::portal::Look::PassedOver(why) => passed_over.or(Some(why)),
        super::portal::Look::Nothing => passed_over,
    };
    #[cfg(all(feature = "x11", unix))]
    let mut found = super::x11::findings(platform, server);
    #[cfg(not(all(feature = "x11", unix)))]
    let mut found = no_x11(
        platform,
        "this build has no X11 driver (cargo feature x11)",
        "install a build with the x11 feature (the default), or use --platform virtual",
    );
    // `auto` passed over a compositor: say so beside whatever it chose instead.
    if let (Some(why), Some((_, p))) = (passed_over, found.first_mut()) {
        p.reason = format!("{} (Wayland: {why})", p.reason);
        p.details.insert("wayland".into(), json!(why));
    }
    found
}

/// The virtual desktop: everything works except a physical hotkey.
fn virtual_desktop(platform: Finding) -> Vec<(&'static str, Finding)> {
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
pub(super) fn no_x11(platform: &str, reason: &str, step: &str) -> Vec<(&'static str, Finding)> {
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
    let gone = || Finding::problem(Status::Missing, "no X display (see display)", step);
    vec![
        ("platform", p.with("backend", json!("virtual"))),
        ("display", Finding::problem(Status::Missing, reason, step)),
        ("input", gone()),
        ("capture", gone()),
        ("accessibility", gone()),
        ("hotkey", gone()),
    ]
}
