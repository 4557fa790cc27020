//! The desktop areas of `check` in a GNOME session: a probe of the session bus for
//! Mutter's remote-desktop and screen-cast services, PipeWire's socket and client
//! library, the project's shell extension and the accessibility bus. It starts no session, so a running
//! server's is left as it is.

use serde_json::json;

use cc_desktop_gnome::{GnomeDesktop, GnomeOptions, GnomeReport, INSTALL_PIPEWIRE_LIBRARY};

use super::buses::{START_A11Y_BUS, START_SESSION_BUS};
use super::{Finding, ServerView, Status};

const USE_GNOME: &str = "run the server inside the GNOME session (GNOME Shell 42 or later on \
Wayland), with its DBUS_SESSION_BUS_ADDRESS and XDG_RUNTIME_DIR in the host's `env`";

const START_PIPEWIRE: &str = "start PipeWire in the session (`systemctl --user start pipewire \
wireplumber`; Debian/Ubuntu packages pipewire and wireplumber)";

const INSTALL_EXTENSION: &str = "run `computer-control setup --gnome-extension` to install the shell \
extension, then log out and in";

const BIND_STOP_KEY: &str = "add a GNOME keyboard shortcut (Settings → Keyboard → Custom \
Shortcuts) running `touch $XDG_RUNTIME_DIR/computer-control.panic`, with {\"safety\": \
{\"panic_file\": \"…/computer-control.panic\"}} in the server's config";

/// What a look at the session bus found.
pub enum Look {
    /// The six desktop findings: GNOME serves (or `--platform gnome` was asked for,
    /// and these say why it cannot).
    Found(Vec<(&'static str, Finding)>),
    /// `auto` passes over a GNOME session it cannot drive, for this reason.
    PassedOver(String),
    /// Not a GNOME session under `auto`, or another platform.
    Nothing,
}

/// The desktop findings for GNOME, as `serve` would choose it.
pub fn look(platform: &str, _server: Option<&ServerView>) -> Look {
    if platform != "gnome" && platform != "auto" {
        return Look::Nothing;
    }
    let explicit = platform == "gnome";
    match GnomeDesktop::probe(&GnomeOptions::default()) {
        Ok(r) if !r.remote_desktop && !r.screen_cast && !explicit => Look::Nothing,
        Ok(r) => match r.unusable() {
            Some(why) if !explicit => Look::PassedOver(why),
            _ => Look::Found(gnome(&r)),
        },
        Err(e) if explicit => Look::Found(missing(&e.to_string(), START_SESSION_BUS)),
        Err(_) => Look::Nothing,
    }
}

/// `--platform gnome` cannot start.
fn missing(reason: &str, step: &str) -> Vec<(&'static str, Finding)> {
    let platform = Finding::problem(
        Status::Missing,
        format!("--platform gnome cannot start: {reason}"),
        step,
    )
    .with("backend", json!("gnome"));
    super::cannot_start(platform, None, "no GNOME session (see platform)", step)
}

fn gnome(r: &GnomeReport) -> Vec<(&'static str, Finding)> {
    let platform = match r.unusable() {
        None => Finding::ok("GNOME Shell (Mutter's RemoteDesktop and ScreenCast)"),
        Some(why) => Finding::problem(
            Status::Missing,
            format!("--platform gnome cannot start: {why}"),
            if !(r.remote_desktop && r.screen_cast) {
                USE_GNOME
            } else if r.pipewire.is_err() {
                START_PIPEWIRE
            } else {
                INSTALL_PIPEWIRE_LIBRARY
            },
        ),
    }
    .with("backend", json!("gnome"))
    .with(
        "services",
        json!({
            "org.gnome.Mutter.RemoteDesktop": r.remote_desktop,
            "org.gnome.Mutter.ScreenCast": r.screen_cast,
        }),
    );
    let display = match &r.extension {
        Ok(v) => Finding::ok(format!(
            "{} monitor(s); windows from the computer-control shell extension (version {v})",
            r.outputs
        ))
        .with(
            "window_geometry",
            json!("the shell extension: rectangles, stacking and focus"),
        ),
        Err(e) => Finding::problem(
            Status::Degraded,
            format!("{} monitor(s); {e}", r.outputs),
            INSTALL_EXTENSION,
        )
        .with("window_geometry", json!("none: no window list")),
    }
    .with("outputs", json!(r.outputs));
    let input = if r.remote_desktop {
        Finding::ok(
            "Mutter RemoteDesktop: pointer and keys; characters the layout lacks are pasted \
             through the session clipboard",
        )
    } else {
        Finding::problem(
            Status::Missing,
            "org.gnome.Mutter.RemoteDesktop is not on the session bus: no input",
            USE_GNOME,
        )
    };
    let capture = match (&r.pipewire, &r.pipewire_library, r.screen_cast) {
        (_, _, false) => Finding::problem(
            Status::Missing,
            "org.gnome.Mutter.ScreenCast is not on the session bus: no capture",
            USE_GNOME,
        ),
        (Err(e), _, true) => Finding::problem(Status::Missing, e.clone(), START_PIPEWIRE),
        (Ok(_), Err(e), true) => {
            Finding::problem(Status::Missing, e.clone(), INSTALL_PIPEWIRE_LIBRARY)
        }
        (Ok(sock), Ok(lib), true) => Finding::ok(format!(
            "Mutter ScreenCast: a PipeWire stream per monitor kept open ({sock}, {lib})"
        )),
    };
    let accessibility = match &r.accessibility {
        Ok(()) => Finding::ok("AT-SPI accessibility bus joined"),
        Err(e) => Finding::problem(Status::Missing, e.clone(), START_A11Y_BUS),
    };
    let hotkey = Finding::problem(
        Status::Degraded,
        "GNOME on Wayland has no global key grab for other programs: the emergency stop is \
         a keyboard shortcut that creates the panic file",
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
