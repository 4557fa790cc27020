//! The desktop areas of `check` on Windows: a fresh driver's report (its own, so a
//! running server's hotkey shows as held elsewhere unless the server asks) — the
//! capture path (DXGI Desktop Duplication or GDI), per-monitor DPI awareness, the
//! emergency hotkey, and which accessibility API answers (UI Automation or MSAA).
//! The wording is plain code over [`WindowsReport`], unit-tested on every platform.

use serde_json::json;

use cc_desktop_windows::WindowsReport;
use cc_desktop_windows::capture_path::CapturePath;

use super::{Finding, ServerView, Status};

const DPI_STEP: &str = "run on Windows 10 1703 or later and start computer-control.exe as a \
process of its own (a host that declared its own DPI awareness for the server's process \
makes coordinates logical)";

const DUPLICATION_STEP: &str = "run the server in the interactive session of a desktop with \
a GPU driver (Desktop Duplication needs Windows 8 or later; a remote or service session \
without one, and Wine, read the screen through GDI)";

const UIA_STEP: &str = "run on Windows, where UI Automation is part of the system (Wine has \
none; standard Win32 controls still answer through MSAA)";

/// The six desktop findings from a fresh driver (`platform` is `auto` or `windows`).
#[cfg(windows)]
pub fn findings(platform: &str, server: Option<&ServerView>) -> Vec<(&'static str, Finding)> {
    match cc_desktop_windows::WindowsDesktop::open() {
        Ok(mut d) => windows(&d.report(), server),
        Err(e) => no_desktop(platform, &e.to_string()),
    }
}

/// No interactive desktop (a service session, a locked window station): `auto`
/// serves the virtual desktop instead, `windows` cannot start.
#[cfg_attr(not(windows), allow(dead_code))]
fn no_desktop(platform: &str, why: &str) -> Vec<(&'static str, Finding)> {
    let step = "start the server in the signed-in user's interactive session (not as a \
                service or over a session without a desktop)";
    let reason = format!("no interactive Windows desktop: {why}");
    let p = if platform == "windows" {
        Finding::problem(
            Status::Missing,
            format!("--platform windows cannot start: {reason}"),
            step,
        )
    } else {
        Finding::problem(
            Status::Degraded,
            format!("--platform auto serves the built-in virtual desktop: {reason}"),
            step,
        )
    };
    let gone = || Finding::problem(Status::Missing, "no Windows desktop (see display)", step);
    vec![
        ("platform", p.with("backend", json!("virtual"))),
        ("display", Finding::problem(Status::Missing, reason, step)),
        ("input", gone()),
        ("capture", gone()),
        ("accessibility", gone()),
        ("hotkey", gone()),
    ]
}

/// The findings from what the driver found.
#[cfg_attr(not(windows), allow(dead_code))]
fn windows(r: &WindowsReport, server: Option<&ServerView>) -> Vec<(&'static str, Finding)> {
    let platform =
        Finding::ok("the Windows desktop of this session").with("backend", json!("windows"));
    let display = if r.dpi_aware {
        Finding::ok(format!(
            "{} monitor(s), per-monitor DPI aware (physical coordinates)",
            r.monitors
        ))
    } else {
        Finding::problem(
            Status::Degraded,
            format!(
                "{} monitor(s); the process is not per-monitor DPI aware: coordinates are \
                 scaled on monitors above 100%",
                r.monitors
            ),
            DPI_STEP,
        )
    }
    .with("monitors", json!(r.monitors))
    .with("dpi_aware", json!(r.dpi_aware));
    let input = Finding::ok("SendInput pointer, keys and any Unicode text");
    let capture = match (&r.capture.path, &r.capture.fallback_reason) {
        (CapturePath::Dxgi, _) => Finding::ok(
            "DXGI Desktop Duplication of each monitor (GDI for an area across monitors)",
        ),
        (CapturePath::Gdi, why) => Finding::problem(
            Status::Degraded,
            format!(
                "GDI BitBlt capture (slower): {}",
                why.as_deref()
                    .unwrap_or("Desktop Duplication is not in use")
            ),
            DUPLICATION_STEP,
        ),
    }
    .with("path", json!(r.capture.path.name()));
    let accessibility = match r.tree_source.missing() {
        None => Finding::ok(
            "UI Automation: each window's control view in one cached request (MSAA for a \
             window UI Automation cannot read)",
        ),
        Some(missing) => Finding::problem(
            Status::Degraded,
            format!("the tree comes from MSAA (standard Win32 controls answer): {missing}"),
            UIA_STEP,
        ),
    }
    .with("api", json!(r.tree_source.name()));
    let combo = cc_desktop_windows::DEFAULT_HOTKEY;
    let held_here = server.is_some_and(|s| s.capabilities["hotkey"] == true);
    let hotkey = match &r.hotkey {
        _ if held_here => Finding::ok(format!("{combo} registered by this server")),
        Ok(()) => Finding::ok(format!("{combo} can be registered")),
        Err(e) => Finding::problem(
            Status::Degraded,
            format!("{combo} cannot be registered: {e}"),
            format!(
                "free {combo} (another program registered it, perhaps another \
                 computer-control) or set safety.emergency_hotkey in the config to a free \
                 combination"
            ),
        ),
    };
    vec![
        ("platform", platform),
        ("display", display),
        ("input", input),
        ("capture", capture),
        ("accessibility", accessibility),
        ("hotkey", hotkey),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_desktop_windows::TreeSource;
    use cc_desktop_windows::capture_path::PathChoice;

    fn wine_like() -> WindowsReport {
        WindowsReport {
            dpi_aware: true,
            monitors: 1,
            hotkey: Ok(()),
            tree_source: TreeSource::Msaa {
                why: "CoCreateInstance(CUIAutomation) failed: 0x80040154 Class not registered"
                    .into(),
            },
            capture: PathChoice {
                path: CapturePath::Gdi,
                fallback_reason: Some("Desktop Duplication is unavailable: E_NOTIMPL".into()),
            },
        }
    }

    fn area<'a>(found: &'a [(&'static str, Finding)], name: &str) -> &'a Finding {
        &found.iter().find(|(a, _)| *a == name).expect(name).1
    }

    #[test]
    fn wine_reads_gdi_and_msaa_and_says_why() {
        let found = windows(&wine_like(), None);
        assert_eq!(area(&found, "platform").details["backend"], "windows");
        let capture = area(&found, "capture");
        assert_eq!(capture.status, Status::Degraded);
        assert_eq!(capture.details["path"], "gdi");
        assert!(capture.reason.contains("E_NOTIMPL"), "{}", capture.reason);
        let a11y = area(&found, "accessibility");
        assert_eq!(a11y.details["api"], "msaa");
        assert_eq!(a11y.status, Status::Degraded);
        assert!(a11y.reason.contains("0x80040154"), "{}", a11y.reason);
        assert!(a11y.reason.contains("Chromium"), "{}", a11y.reason);
        assert!(a11y.next_step.is_some());
        assert_eq!(area(&found, "hotkey").status, Status::Ok);
        assert_eq!(area(&found, "display").status, Status::Ok);
    }

    #[test]
    fn a_real_windows_with_duplication_captures_through_dxgi() {
        let mut r = wine_like();
        r.capture = PathChoice {
            path: CapturePath::Dxgi,
            fallback_reason: None,
        };
        r.tree_source = TreeSource::UiAutomation;
        let found = windows(&r, None);
        let capture = area(&found, "capture");
        assert_eq!(capture.status, Status::Ok);
        assert_eq!(capture.details["path"], "dxgi");
        let a11y = area(&found, "accessibility");
        assert_eq!(a11y.status, Status::Ok);
        assert_eq!(a11y.details["api"], "uia");
    }

    #[test]
    fn no_dpi_awareness_and_a_taken_hotkey_are_problems_with_a_step() {
        let mut r = wine_like();
        r.dpi_aware = false;
        r.hotkey = Err("the combination is registered by another program".into());
        let found = windows(&r, None);
        let display = area(&found, "display");
        assert_eq!(display.status, Status::Degraded);
        assert_eq!(display.details["dpi_aware"], false);
        assert!(display.next_step.is_some());
        let hotkey = area(&found, "hotkey");
        assert_eq!(hotkey.status, Status::Degraded);
        assert!(hotkey.reason.contains("another program"));
        // The running server holds the chord itself: that is not a problem.
        let view = ServerView {
            platform: "windows",
            capabilities: json!({"hotkey": true}),
        };
        assert_eq!(area(&windows(&r, Some(&view)), "hotkey").status, Status::Ok);
    }

    #[test]
    fn no_desktop_is_missing_for_windows_and_virtual_for_auto() {
        let strict = no_desktop("windows", "OpenInputDesktop failed");
        assert_eq!(area(&strict, "platform").status, Status::Missing);
        let auto = no_desktop("auto", "OpenInputDesktop failed");
        assert_eq!(area(&auto, "platform").status, Status::Degraded);
        assert_eq!(area(&auto, "platform").details["backend"], "virtual");
        assert_eq!(area(&auto, "input").status, Status::Missing);
    }
}
