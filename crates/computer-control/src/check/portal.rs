//! The desktop areas of `check` for the desktop portal (`--platform portal`, or `auto`
//! on a desktop whose compositor has no interface of its own, such as KDE Plasma): the
//! portal's RemoteDesktop and ScreenCast versions and what the user will be asked. It
//! starts no session, so no dialog is raised by `check`.

use serde_json::json;

use cc_desktop_gnome::INSTALL_PIPEWIRE_LIBRARY;
use cc_desktop_gnome::portal::{PortalDesktop, PortalOptions, PortalReport};

use super::buses::{START_A11Y_BUS, START_SESSION_BUS};
use super::{Finding, ServerView, Status};

const INSTALL_PORTAL: &str = "install xdg-desktop-portal and the desktop's backend \
(xdg-desktop-portal-kde on KDE Plasma, xdg-desktop-portal-gnome on GNOME) and run the server \
inside the desktop session";

const BIND_STOP_KEY: &str = "add a keyboard shortcut in the desktop's settings running `touch \
$XDG_RUNTIME_DIR/computer-control.panic`, with {\"safety\": {\"panic_file\": \
\"…/computer-control.panic\"}} in the server's config";

/// What a look at the portal found.
pub enum Look {
    /// The six desktop findings.
    Found(Vec<(&'static str, Finding)>),
    /// `auto` passes over the portal, for this reason.
    PassedOver(String),
    /// No portal under `auto`, or another platform.
    Nothing,
}

/// The desktop findings for the portal, as `serve` would choose it.
pub fn look(platform: &str, _server: Option<&ServerView>) -> Look {
    if platform != "portal" && platform != "auto" {
        return Look::Nothing;
    }
    let explicit = platform == "portal";
    if !explicit && !cc_desktop_gnome::portal::wayland_session() {
        return Look::Nothing;
    }
    match PortalDesktop::probe(&PortalOptions::default()) {
        Ok(r) if r.offer.remote_desktop == 0 && r.offer.screen_cast == 0 && !explicit => {
            Look::Nothing
        }
        Ok(r) => match r.unusable() {
            Some(why) if !explicit => Look::PassedOver(why),
            _ => Look::Found(portal(&r)),
        },
        Err(e) if explicit => Look::Found(missing(&e.to_string())),
        Err(_) => Look::Nothing,
    }
}

fn missing(reason: &str) -> Vec<(&'static str, Finding)> {
    let platform = Finding::problem(
        Status::Missing,
        format!("--platform portal cannot start: {reason}"),
        START_SESSION_BUS,
    )
    .with("backend", json!("portal"));
    super::cannot_start(
        platform,
        None,
        "no desktop portal (see platform)",
        START_SESSION_BUS,
    )
}

fn portal(r: &PortalReport) -> Vec<(&'static str, Finding)> {
    let consent = r.consent();
    let platform = match r.unusable() {
        None => Finding::problem(
            Status::Degraded,
            format!("the desktop portal (RemoteDesktop and ScreenCast): {consent}"),
            "answer the desktop's dialog when the server starts (allow remote interaction, \
             then Share)",
        ),
        Some(why) => Finding::problem(
            Status::Missing,
            format!("--platform portal cannot start: {why}"),
            if r.offer.remote_desktop > 0 && r.offer.screen_cast > 0 {
                INSTALL_PIPEWIRE_LIBRARY
            } else {
                INSTALL_PORTAL
            },
        ),
    }
    .with("backend", json!("portal"))
    .with(
        "services",
        json!({
            "org.freedesktop.portal.RemoteDesktop": r.offer.remote_desktop,
            "org.freedesktop.portal.ScreenCast": r.offer.screen_cast,
        }),
    )
    .with(
        "consent",
        json!({
            "remembered": r.offer.remembers_consent(),
            "restore_token_kept": r.has_token,
            "restore_token_file": r.token_file.as_ref().map(|f| f.display().to_string()),
        }),
    );
    let display = Finding::problem(
        Status::Degraded,
        "the shared monitors, from the portal's streams; the portal gives no window list",
        "use --platform gnome on GNOME for windows and their rectangles",
    )
    .with("window_geometry", json!("none: no window list"));
    let input = if r.offer.remote_desktop > 0 {
        Finding::ok(format!(
            "portal RemoteDesktop version {}: pointer and keysyms, once the user allows \
             remote interaction",
            r.offer.remote_desktop
        ))
    } else {
        Finding::problem(
            Status::Missing,
            "the portal offers no RemoteDesktop: no input",
            INSTALL_PORTAL,
        )
    };
    let capture = match (&r.pipewire_library, r.offer.screen_cast) {
        (_, 0) => Finding::problem(
            Status::Missing,
            "the portal offers no ScreenCast: no capture",
            INSTALL_PORTAL,
        ),
        (Err(e), _) => Finding::problem(Status::Missing, e.clone(), INSTALL_PIPEWIRE_LIBRARY),
        (Ok(lib), v) => Finding::ok(format!(
            "portal ScreenCast version {v}: a PipeWire stream per shared monitor kept open \
             ({lib})"
        )),
    };
    let accessibility = Finding::problem(
        Status::Degraded,
        "accessibility rectangles need window positions, which the portal does not give \
         (the password check still reads the focused element)",
        START_A11Y_BUS,
    );
    let hotkey = Finding::problem(
        Status::Degraded,
        "the portal offers no global key grab: the emergency stop is a keyboard shortcut \
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
