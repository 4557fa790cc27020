//! Choosing the desktop backend (`--platform auto|virtual|<driver>`). Each driver crate
//! exports a [`Platform`]; [`DRIVERS`] lists those built in (by cargo feature and
//! target), in the order `auto` tries them. `auto` takes the first whose desktop the
//! environment names and can be driven, else the virtual desktop; the choice and its
//! reason go to stderr. The engine grabs the configured emergency hotkey at session
//! start (`Driver::set_hotkey`).

use cc_desktop::{Driver, PhysicalDisplay, Platform, VirtualConfig, VirtualDesktop};
use cc_engine::config::ConfigStack;
use cc_protocol::PhysicalRect;

/// The real-desktop drivers built into this binary, in `--platform auto` order.
/// Adding a driver is one line here (and its cargo feature).
pub const DRIVERS: &[Platform] = &[
    #[cfg(all(feature = "wlroots", target_os = "linux"))]
    cc_desktop_wlroots::PLATFORM,
    // Before X11: a GNOME session on Wayland also sets DISPLAY (Xwayland), where XTest
    // input would reach X11 windows only.
    #[cfg(all(feature = "gnome", target_os = "linux"))]
    cc_desktop_gnome::PLATFORM,
    // After GNOME's own interfaces (no consent needed there), before X11 for the same
    // reason as GNOME: KDE Plasma on Wayland also sets DISPLAY.
    #[cfg(all(feature = "gnome", target_os = "linux"))]
    cc_desktop_gnome::portal::PLATFORM,
    #[cfg(all(feature = "x11", unix))]
    cc_desktop_x11::PLATFORM,
    #[cfg(all(feature = "windows", windows))]
    cc_desktop_windows::PLATFORM,
];

/// Every `--platform` value this binary accepts.
pub fn names() -> Vec<&'static str> {
    let mut names = vec!["auto", "virtual"];
    names.extend(DRIVERS.iter().map(|p| p.name));
    names
}

/// The virtual desktop's displays from `platform.virtual_displays`.
fn virtual_config(base: &ConfigStack) -> VirtualConfig {
    let displays = base
        .config()
        .platform
        .virtual_displays
        .iter()
        .enumerate()
        .map(|(i, d)| PhysicalDisplay {
            id: d.id.clone(),
            name: d
                .name
                .clone()
                .unwrap_or_else(|| format!("VIRTUAL-{}", i + 1)),
            rect: PhysicalRect {
                x: d.x,
                y: d.y,
                width: d.width,
                height: d.height,
            },
            primary: d.primary.unwrap_or(i == 0),
        })
        .collect();
    VirtualConfig { displays }
}

/// Builds the driver the config asks for and says which on stderr.
pub fn select(base: &ConfigStack) -> anyhow::Result<Box<dyn Driver>> {
    let name = base.config().platform.name.as_str();
    if name == "virtual" {
        tracing::info!("platform: virtual (selected)");
        return Ok(Box::new(VirtualDesktop::new(virtual_config(base))));
    }
    if let Some(p) = DRIVERS.iter().find(|p| p.name == name) {
        let d = (p.open)().map_err(|e| anyhow::anyhow!("--platform {name}: {e}"))?;
        tracing::info!("platform: {name} (selected)");
        return Ok(d);
    }
    if name != "auto" {
        anyhow::bail!(
            "--platform {name}: this build has no such driver (it has: {})",
            names().join(", ")
        );
    }
    let mut why = Vec::new();
    for p in DRIVERS {
        match (p.detect)() {
            Ok(d) => {
                tracing::info!("platform: {} (auto)", p.name);
                return Ok(d);
            }
            Err(e) => why.push(format!("{}: {e}", p.name)),
        }
    }
    if why.is_empty() {
        why.push("no desktop driver built in".into());
    }
    tracing::info!("platform: virtual (auto: {})", why.join("; "));
    Ok(Box::new(VirtualDesktop::new(virtual_config(base))))
}
