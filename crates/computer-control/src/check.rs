//! `computer-control check`: what this machine offers, so an operator knows before a
//! session why a tool would be unavailable.

use std::process::ExitCode;

use serde_json::json;

/// Prints the diagnostics; exit 0 (the virtual desktop always works).
pub fn run(as_json: bool) -> ExitCode {
    let display = std::env::var("DISPLAY").unwrap_or_default();
    let a11y_bus = std::env::var("AT_SPI_BUS_ADDRESS")
        .ok()
        .or_else(|| std::env::var("DBUS_SESSION_BUS_ADDRESS").ok());
    let report = json!({
        "platform_auto": "virtual",
        "display": {"value": display, "x11_backend": "not in this build"},
        "xtest": "not checked (no X11 backend in this build)",
        "shm": "not checked (no X11 backend in this build)",
        "randr": "not checked (no X11 backend in this build)",
        "accessibility_bus": a11y_bus.map(|_| "session bus address set").unwrap_or("none"),
        "hotkey_grab": "not available on the virtual desktop",
        "virtual_desktop": "ok",
    });
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    } else {
        for (k, v) in report.as_object().into_iter().flatten() {
            println!(
                "{k:<18} {}",
                v.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string())
            );
        }
    }
    ExitCode::SUCCESS
}
