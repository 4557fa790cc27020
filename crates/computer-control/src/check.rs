//! `computer-control check`: what this machine offers, so an operator knows before a
//! session why a tool would be unavailable (and which backend `--platform auto` picks).

use std::process::ExitCode;

use serde_json::{Value, json};

#[cfg(all(feature = "x11", unix))]
use cc_desktop_x11::{DEFAULT_HOTKEY, X11Desktop};

fn status(ok: bool, detail: impl Into<String>) -> Value {
    json!({"ok": ok, "detail": detail.into()})
}

/// Without the X11 driver built in, only the virtual desktop is there.
#[cfg(not(all(feature = "x11", unix)))]
fn report() -> Value {
    json!({
        "platform_auto": "virtual",
        "display": status(false, "this build has no X11 driver (cargo feature x11)"),
        "virtual_desktop": status(true, "built in"),
    })
}

/// Everything the X11 backend needs, probed on `$DISPLAY`.
#[cfg(all(feature = "x11", unix))]
fn report() -> Value {
    let display = std::env::var("DISPLAY").unwrap_or_default();
    if display.trim().is_empty() {
        let none = || status(false, "no X display ($DISPLAY is not set)");
        return json!({
            "platform_auto": "virtual",
            "display": none(),
            "xtest": none(),
            "shm": none(),
            "randr": none(),
            "accessibility_bus": none(),
            "hotkey_grab": none(),
            "virtual_desktop": status(true, "built in"),
        });
    }
    let mut d = match X11Desktop::connect(None) {
        Ok(d) => d,
        Err(e) => {
            let down = || status(false, format!("not checked: {e}"));
            return json!({
                "platform_auto": "virtual",
                "display": status(false, format!("{display}: {e}")),
                "xtest": down(),
                "shm": down(),
                "randr": down(),
                "accessibility_bus": down(),
                "hotkey_grab": down(),
                "virtual_desktop": status(true, "built in"),
            });
        }
    };
    let r = d.report();
    let randr = if r.randr_monitors {
        format!("RandR 1.5 monitors: {}", r.monitors)
    } else if r.randr {
        format!(
            "RandR without monitors (< 1.5): whole screen, {} display",
            r.monitors
        )
    } else {
        "no RandR: whole screen as one display, no change notifications".to_string()
    };
    json!({
        "platform_auto": if r.xtest { "x11" } else { "virtual" },
        "display": status(true, format!(
            "{} ({})",
            r.display,
            if r.window_manager { "EWMH window manager" } else { "no EWMH window manager: window list from the root's children" }
        )),
        "xtest": status(r.xtest, if r.xtest {
            format!("input available ({} spare keycodes for any Unicode)", r.spare_keycodes)
        } else {
            "missing: no input, --platform auto uses the virtual desktop".to_string()
        }),
        "shm": status(r.shm, if r.shm { "MIT-SHM capture" } else { "no MIT-SHM: core GetImage capture (slower)" }),
        "randr": status(r.randr, randr),
        "accessibility_bus": match &r.accessibility {
            Ok(()) => status(true, "AT-SPI bus joined"),
            Err(e) => status(false, e.clone()),
        },
        "hotkey_grab": match &r.hotkey {
            Ok(()) => status(true, format!("{} grabbed", DEFAULT_HOTKEY)),
            Err(e) => status(false, e.clone()),
        },
        "virtual_desktop": status(true, "built in"),
    })
}

/// The compositor on `$WAYLAND_DISPLAY`: each protocol the wlroots driver uses, present
/// or missing and what its absence disables; `platform_auto` becomes `wlroots` when
/// everything it needs is there (auto tries it before X11).
#[cfg(all(feature = "wlroots", target_os = "linux"))]
fn with_wayland(mut report: Value) -> Value {
    let Some(obj) = report.as_object_mut() else {
        return report;
    };
    let display = std::env::var("WAYLAND_DISPLAY").unwrap_or_default();
    if display.trim().is_empty() {
        obj.insert(
            "wayland_display".into(),
            status(false, "no Wayland compositor ($WAYLAND_DISPLAY is not set)"),
        );
        return report;
    }
    let d = match cc_desktop_wlroots::WlrootsDesktop::connect(None) {
        Ok(d) => d,
        Err(e) => {
            obj.insert(
                "wayland_display".into(),
                status(false, format!("{display}: {e}")),
            );
            return report;
        }
    };
    let r = d.report();
    obj.insert(
        "wayland_display".into(),
        status(true, format!("{} ({} outputs)", r.display, r.outputs)),
    );
    for p in &r.protocols {
        let detail = if p.present {
            "offered".to_string()
        } else if p.required {
            format!(
                "missing: {}; --platform auto does not use wlroots",
                p.without
            )
        } else {
            format!("missing: {}", p.without)
        };
        obj.insert(p.name.into(), status(p.present, detail));
    }
    obj.insert(
        "sway_ipc".into(),
        match &r.sway_ipc {
            Ok(()) => status(true, "window rectangles, pids and focus"),
            Err(e) => status(false, e.clone()),
        },
    );
    obj.insert(
        "wayland_emergency_stop".into(),
        status(
            true,
            "no global grab on Wayland: bind a compositor key to create safety.panic_file",
        ),
    );
    obj.insert(
        "wayland_accessibility".into(),
        match &r.accessibility {
            Ok(()) => status(true, "AT-SPI bus joined"),
            Err(e) => status(false, e.clone()),
        },
    );
    if r.protocols.iter().all(|p| p.present || !p.required) {
        obj.insert("platform_auto".into(), json!("wlroots"));
    }
    report
}

#[cfg(not(all(feature = "wlroots", target_os = "linux")))]
fn with_wayland(report: Value) -> Value {
    report
}

/// Prints the diagnostics; exit 0 (the virtual desktop always works).
pub fn run(as_json: bool) -> ExitCode {
    let report = with_wayland(report());
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    } else {
        for (k, v) in report.as_object().into_iter().flatten() {
            let line = match (v.get("ok").and_then(Value::as_bool), v.get("detail")) {
                (Some(ok), Some(detail)) => format!(
                    "{} {}",
                    if ok { "ok  " } else { "FAIL" },
                    detail.as_str().unwrap_or_default()
                ),
                _ => v
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string()),
            };
            println!("{k:<18} {line}");
        }
    }
    ExitCode::SUCCESS
}
