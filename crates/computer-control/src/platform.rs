//! Choosing the desktop backend (`--platform auto|x11|virtual`).

use anyhow::bail;

use cc_desktop::{Driver, PhysicalDisplay, VirtualConfig, VirtualDesktop};
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

/// Builds the driver the config asks for and says which on stderr.
pub fn select(base: &ConfigStack) -> anyhow::Result<Box<dyn Driver>> {
    match base.config().platform.name.as_str() {
        "x11" => {
            bail!("the x11 platform is not built into this version yet; use --platform virtual")
        }
        "virtual" => {
            tracing::info!("platform: virtual (selected)");
            Ok(Box::new(VirtualDesktop::new(virtual_config(base))))
        }
        _ => {
            let x_display = std::env::var("DISPLAY").unwrap_or_default();
            if x_display.is_empty() {
                tracing::info!("platform: virtual (no $DISPLAY)");
            } else {
                tracing::info!(
                    "platform: virtual ($DISPLAY={x_display} is set, but this build has no X11 backend yet)"
                );
            }
            Ok(Box::new(VirtualDesktop::new(virtual_config(base))))
        }
    }
}
