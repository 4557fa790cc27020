//! Choosing the desktop backend (`--platform auto|x11|virtual`). `auto` takes X11 when
//! `$DISPLAY` reaches a server with XTest (input is possible), else the virtual
//! desktop; the choice and its reason go to stderr. The engine grabs the configured
//! emergency hotkey at session start (`Driver::set_hotkey`).

use cc_desktop::{Driver, PhysicalDisplay, VirtualConfig, VirtualDesktop, X11Desktop};
use cc_engine::config::ConfigStack;
use cc_protocol::PhysicalRect;

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

/// The X11 driver when `$DISPLAY` reaches a server that can take input (XTest);
/// otherwise why not.
fn try_x11() -> Result<X11Desktop, String> {
    let display = std::env::var("DISPLAY").unwrap_or_default();
    if display.trim().is_empty() {
        return Err("no $DISPLAY".into());
    }
    let d = X11Desktop::connect(None).map_err(|e| format!("$DISPLAY={display}: {e}"))?;
    if !d.capabilities().input {
        return Err(format!("$DISPLAY={display} has no XTest extension"));
    }
    Ok(d)
}

/// Builds the driver the config asks for and says which on stderr.
pub fn select(base: &ConfigStack) -> anyhow::Result<Box<dyn Driver>> {
    match base.config().platform.name.as_str() {
        "x11" => {
            let dpy = std::env::var("DISPLAY").unwrap_or_default();
            let d = X11Desktop::connect(None)
                .map_err(|e| anyhow::anyhow!("--platform x11: cannot use $DISPLAY={dpy:?}: {e}"))?;
            tracing::info!("platform: x11 (selected, $DISPLAY={dpy})");
            Ok(Box::new(d))
        }
        "virtual" => {
            tracing::info!("platform: virtual (selected)");
            Ok(Box::new(VirtualDesktop::new(virtual_config(base))))
        }
        _ => match try_x11() {
            Ok(d) => {
                let dpy = std::env::var("DISPLAY").unwrap_or_default();
                tracing::info!("platform: x11 (auto: $DISPLAY={dpy} has XTest)");
                Ok(Box::new(d))
            }
            Err(why) => {
                tracing::info!("platform: virtual (auto: {why})");
                Ok(Box::new(VirtualDesktop::new(virtual_config(base))))
            }
        },
    }
}
