//! The monitor layout from Mutter's `DisplayConfig.GetCurrentState` (open to any
//! caller, unlike the shell's own interfaces), and its `MonitorsChanged` signal.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cc_desktop::{DriverError, Layout, PhysicalDisplay};
use cc_protocol::PhysicalRect;
use futures_util::StreamExt as _;
use zbus::zvariant::OwnedValue;

use crate::mutter::failed;

const BUS: &str = "org.gnome.Mutter.DisplayConfig";
const PATH: &str = "/org/gnome/Mutter/DisplayConfig";

type Props = HashMap<String, OwnedValue>;
type MonitorSpec = (String, String, String, String);
type Mode = (String, i32, i32, f64, f64, Vec<f64>, Props);
type Monitor = (MonitorSpec, Vec<Mode>, Props);
type Logical = (i32, i32, f64, u32, bool, Vec<MonitorSpec>, Props);
type State = (u32, Vec<Monitor>, Vec<Logical>, Props);

/// `layout-mode` 1: logical monitors are sized in logical pixels (mode ÷ scale).
const LAYOUT_LOGICAL: u32 = 1;

fn flag(props: &Props, key: &str) -> bool {
    props
        .get(key)
        .and_then(|v| bool::try_from(v).ok())
        .unwrap_or(false)
}

/// The displays a `GetCurrentState` answer describes, in layout coordinates, one per
/// logical monitor (named by its first connector, which is what a screen cast
/// records).
pub fn displays(state: &State) -> Vec<PhysicalDisplay> {
    let (_, monitors, logicals, props) = state;
    let logical_px = props
        .get("layout-mode")
        .and_then(|v| u32::try_from(v).ok())
        .is_some_and(|m| m == LAYOUT_LOGICAL);
    let mut out = Vec::new();
    for (x, y, scale, _transform, primary, specs, _) in logicals {
        let Some(spec) = specs.first() else { continue };
        let Some((_, modes, _)) = monitors.iter().find(|(s, _, _)| s.0 == spec.0) else {
            continue;
        };
        let Some((_, w, h, ..)) = modes.iter().find(|m| flag(&m.6, "is-current")) else {
            continue;
        };
        let (mut w, mut h) = (f64::from(*w), f64::from(*h));
        if logical_px && *scale > 0.0 {
            w /= scale;
            h /= scale;
        }
        out.push(PhysicalDisplay {
            id: spec.0.clone(),
            name: spec.0.clone(),
            rect: PhysicalRect {
                x: *x,
                y: *y,
                width: w.round().max(1.0) as u32,
                height: h.round().max(1.0) as u32,
            },
            primary: *primary,
        });
    }
    out
}

/// The layout as last read, and whether Mutter said it changed since.
pub struct Monitors {
    proxy: zbus::Proxy<'static>,
    pub changed: Arc<AtomicBool>,
    current: Vec<PhysicalDisplay>,
    generation: u64,
}

impl Monitors {
    /// Reads the layout and listens for its changes.
    pub async fn new(conn: &zbus::Connection) -> Result<Monitors, DriverError> {
        let proxy = zbus::Proxy::new(conn, BUS, PATH, BUS)
            .await
            .map_err(failed(BUS))?;
        let changed = Arc::new(AtomicBool::new(false));
        let mut signals = proxy
            .receive_signal("MonitorsChanged")
            .await
            .map_err(failed("MonitorsChanged"))?;
        let flag = changed.clone();
        tokio::spawn(async move {
            while signals.next().await.is_some() {
                flag.store(true, Ordering::SeqCst);
            }
        });
        let mut m = Monitors {
            proxy,
            changed,
            current: Vec::new(),
            generation: 0,
        };
        m.current = m.read().await?;
        Ok(m)
    }

    async fn read(&self) -> Result<Vec<PhysicalDisplay>, DriverError> {
        let state: State = self
            .proxy
            .call("GetCurrentState", &())
            .await
            .map_err(failed("DisplayConfig.GetCurrentState"))?;
        Ok(displays(&state))
    }

    /// Reads the layout again; true when it differs from the last one.
    pub async fn refresh(&mut self) -> Result<bool, DriverError> {
        self.changed.store(false, Ordering::SeqCst);
        let now = self.read().await?;
        if now == self.current {
            return Ok(false);
        }
        self.current = now;
        self.generation += 1;
        Ok(true)
    }

    pub fn layout(&self) -> Layout {
        Layout {
            displays: self.current.clone(),
            generation: self.generation,
        }
    }

    /// The connectors to record, one per display.
    pub fn connectors(&self) -> Vec<String> {
        self.current.iter().map(|d| d.id.clone()).collect()
    }

    /// The display containing a point, with its index.
    pub fn at(&self, x: i32, y: i32) -> Option<&PhysicalDisplay> {
        self.current.iter().find(|d| d.rect.contains(x, y))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(c: &str) -> MonitorSpec {
        (c.into(), "v".into(), "p".into(), "s".into())
    }

    fn mode(w: i32, h: i32, current: bool) -> Mode {
        let mut p = Props::new();
        p.insert("is-current".into(), OwnedValue::from(current));
        (format!("{w}x{h}"), w, h, 60.0, 1.0, vec![1.0], p)
    }

    #[test]
    fn logical_monitors_become_displays_at_their_current_mode() {
        let mut props = Props::new();
        props.insert("layout-mode".into(), OwnedValue::from(2u32));
        let state: State = (
            1,
            vec![
                (
                    spec("Meta-0"),
                    vec![mode(800, 600, false), mode(1920, 1080, true)],
                    Props::new(),
                ),
                (spec("Meta-1"), vec![mode(1280, 720, true)], Props::new()),
            ],
            vec![
                (0, 0, 1.0, 0, true, vec![spec("Meta-0")], Props::new()),
                (1920, 0, 2.0, 0, false, vec![spec("Meta-1")], Props::new()),
                // A logical monitor naming no known monitor is left out.
                (0, 0, 1.0, 0, false, vec![spec("gone")], Props::new()),
            ],
            props,
        );
        let d = displays(&state);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].id, "Meta-0");
        assert!(d[0].primary);
        assert_eq!(
            d[0].rect,
            PhysicalRect {
                x: 0,
                y: 0,
                width: 1920,
                height: 1080
            }
        );
        assert_eq!(
            d[1].rect,
            PhysicalRect {
                x: 1920,
                y: 0,
                width: 1280,
                height: 720
            }
        );
        // In the logical layout mode a scaled monitor takes mode ÷ scale.
        let mut logical = state.clone();
        logical
            .3
            .insert("layout-mode".into(), OwnedValue::from(1u32));
        assert_eq!(displays(&logical)[1].rect.width, 640);
    }
}
