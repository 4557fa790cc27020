//! What the gate needs to know from the desktop about one action: whether it types into
//! a password field, the canvas points it touches, and the windows it lands in.

use cc_desktop::WindowInfo;
use serde_json::Value;

use super::Worker;
use crate::risk::Context;
use crate::rules::{Landing, Policy};

impl Worker {
    /// Reads the desktop facts of one action, just before it is gated.
    pub(super) fn context(
        &mut self,
        tool: &str,
        args: &Value,
        policy: &Policy,
    ) -> (Context, Landing) {
        let mut ctx = Context::default();
        match tool {
            "keyboard.type" => {
                ctx.focused_password = self.driver.focused_is_password().unwrap_or(false)
            }
            "a11y.input" => {
                ctx.target_password = self.entry(args).is_some_and(|e| e.password);
            }
            _ => {}
        }
        let mut landing = Landing {
            points: self.points(tool, args),
            windows: Vec::new(),
        };
        if policy.needs_window() {
            landing.windows = self.windows(tool, args, &landing.points);
        }
        (ctx, landing)
    }

    /// Whether a text-entry action would write into a password field, as the desktop
    /// knows it now — the facts the gate's risk uses: the focused element for
    /// `keyboard.type`, the named node of the latest snapshot for `a11y.input`. `None`
    /// when that cannot be told (a driver error, a snapshot that is no longer the latest
    /// or lacks the node, another tool). Reads only: the latest snapshot stays the
    /// latest, so the agent's next `a11y.*` action is not made stale.
    pub(super) fn secret_target(&mut self, tool: &str, args: &Value) -> Option<bool> {
        match tool {
            "keyboard.type" => self.driver.focused_is_password().ok(),
            "a11y.input" => self.entry(args).map(|e| e.password),
            _ => None,
        }
    }

    /// The snapshot entry an accessibility tool names, if it is still the latest.
    fn entry(&self, args: &Value) -> Option<&crate::snapshot::Entry> {
        let snap = args.get("snapshot_id").and_then(Value::as_str)?;
        let node = u32::try_from(args.get("node_id").and_then(Value::as_u64)?).ok()?;
        self.snapshots.entry(snap, node).ok()
    }

    /// Canvas points a pointer action touches (clamped): its target, both ends of a
    /// drag, or the pointer's position when no point is given.
    fn points(&mut self, tool: &str, args: &Value) -> Vec<(i32, i32)> {
        let Some(canvas) = &self.canvas else {
            return Vec::new();
        };
        let pt = |v: &Value| -> Option<(i32, i32)> {
            Some(canvas.clamp(v.get("x")?.as_f64()?, v.get("y")?.as_f64()?))
        };
        match tool {
            "pointer.drag" => args
                .get("from")
                .and_then(pt)
                .into_iter()
                .chain(args.get("to").and_then(pt))
                .collect(),
            t if t.starts_with("pointer.") => match pt(args) {
                Some(p) => vec![p],
                None => match self.driver.pointer_position() {
                    Ok((px, py)) => vec![canvas.from_physical(px, py)],
                    Err(_) => Vec::new(),
                },
            },
            _ => Vec::new(),
        }
    }

    /// `(app_id, title)` of the windows the action lands in: the topmost window under
    /// each point (pointer tools), the target window (`window.focus`), the element's
    /// window (accessibility tools), else the focused window (keyboard and the rest).
    fn windows(
        &mut self,
        tool: &str,
        args: &Value,
        points: &[(i32, i32)],
    ) -> Vec<(String, String)> {
        let Ok(windows) = self.driver.windows() else {
            return Vec::new();
        };
        let name = |w: &WindowInfo| (w.app_id.clone(), w.title.clone());
        let by_id = |id: u64| windows.iter().find(|w| w.id == id).map(name);
        let focused = || windows.iter().find(|w| w.focused).map(name);
        let found: Vec<(String, String)> = match tool {
            t if t.starts_with("pointer.") => {
                let Some(canvas) = &self.canvas else {
                    return Vec::new();
                };
                points
                    .iter()
                    .filter_map(|&(x, y)| {
                        let (px, py) = canvas.to_physical(f64::from(x), f64::from(y));
                        windows.iter().find(|w| w.rect.contains(px, py)).map(name)
                    })
                    .collect()
            }
            "window.focus" => args
                .get("id")
                .and_then(Value::as_u64)
                .and_then(by_id)
                .into_iter()
                .collect(),
            "a11y.activate" | "a11y.input" => self
                .entry(args)
                .and_then(|e| e.window_id)
                .and_then(by_id)
                .or_else(focused)
                .into_iter()
                .collect(),
            _ => focused().into_iter().collect(),
        };
        found
    }
}
