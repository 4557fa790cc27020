//! The desktop areas of `check` (platform, display, input, capture, accessibility,
//! hotkey): the compositor's or the X server's report, or the built-in virtual desktop.
//! `auto` looks where `serve --platform auto` would: a wlroots compositor first, then
//! GNOME, then the desktop portal, then X11, else the virtual desktop; a Windows build
//! looks at its Windows desktop (`windows.rs`).

use super::{Finding, ServerView};

/// The six desktop findings for `platform` (`auto`, `virtual` or a driver's name).
pub fn findings(platform: &str, server: Option<&ServerView>) -> Vec<(&'static str, Finding)> {
    if platform == "virtual" {
        let why = if server.is_some() {
            "this server drives the built-in virtual desktop"
        } else {
            "--platform virtual: the built-in virtual desktop"
        };
        return super::virtual_desktop::findings(Finding::ok(why));
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
    let mut found = super::virtual_desktop::no_x11(
        platform,
        "this build has no X11 driver (cargo feature x11)",
        "install a build with the x11 feature (the default), or use --platform virtual",
    );
    // `auto` passed over a compositor: say so beside whatever it chose instead.
    if let (Some(why), Some((_, p))) = (passed_over, found.first_mut()) {
        p.reason = format!("{} (Wayland: {why})", p.reason);
        p.details.insert("wayland".into(), serde_json::json!(why));
    }
    found
}
