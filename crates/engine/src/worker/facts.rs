//! What the desktop says about one call, just before it is judged: whether it writes
//! (or pastes) into a password field, the canvas points it touches, and the windows it lands in.

use cc_desktop::WindowInfo;
use serde_json::Value;

use super::Worker;
use crate::assess::Facts;
use crate::config::CanvasWidth;
use crate::coords::Canvas;
use crate::rules::Landing;
use crate::tools::{ElementTarget, Spot, Target, TextEntry, ToolDef};

impl Worker {
    /// Reads the desktop facts of one call. Reads only: the latest snapshot stays the
    /// latest, so the agent's next `a11y.*` action is not made stale. Windows are read
    /// only when a rule asks about them (`needs_window`).
    pub(super) fn facts(&mut self, def: &ToolDef, args: &Value, needs_window: bool) -> Facts {
        let target = def.target(args).unwrap_or(Target::Focused);
        let pastes = def.ops().is_some_and(|o| o.pastes(args));
        // The element an accessibility tool names, as the desktop shows it now.
        let entry = match &target {
            Target::Element(el) => self.element(el),
            _ => None,
        };
        let secret_target = match (def.text, &target) {
            (TextEntry::No, _) if pastes => self.driver.focused_is_password().ok(),
            (TextEntry::No, _) => None,
            (TextEntry::Focused, _) => self.driver.focused_is_password().ok(),
            (TextEntry::Element, _) => entry.as_ref().map(|e| e.password),
        };
        let (points, mut unplaced) = self.points(&target);
        if let (Target::Element(el), None) = (&target, &entry) {
            unplaced.push(el.clone());
        }
        let windows = if needs_window {
            self.windows(&target, &points, entry.as_ref())
        } else {
            Vec::new()
        };
        Facts {
            secret_target,
            landing: Landing { points, windows },
            unplaced,
        }
    }

    /// The same, outside any session: the layout is read for the occasion (the worker
    /// keeps no canvas before a session starts) and dropped after.
    pub(super) fn facts_any_time(
        &mut self,
        calls: &[(&'static ToolDef, Value)],
        needs_window: bool,
        width: CanvasWidth,
    ) -> Vec<Facts> {
        let borrowed = self.canvas.is_none();
        if borrowed {
            self.canvas = self
                .driver
                .layout()
                .ok()
                .map(|layout| Canvas::configured(&layout, width));
        }
        let out = calls
            .iter()
            .map(|(def, args)| self.facts(def, args, needs_window))
            .collect();
        if borrowed {
            self.canvas = None;
        }
        out
    }

    /// An element as the desktop shows it now: a node of the latest snapshot, a
    /// remembered reference, or the single match of a selector in the live tree. Reads
    /// only: no reference is remembered and the latest snapshot stays.
    fn element(&mut self, el: &ElementTarget) -> Option<crate::snapshot::Entry> {
        match el {
            ElementTarget::Node {
                snapshot_id,
                node_id,
            } => self.snapshots.entry(snapshot_id, *node_id).ok().cloned(),
            ElementTarget::Ref(r) => self.snapshots.by_ref(r).ok().cloned(),
            ElementTarget::Select(sel) => {
                let cap = self
                    .core
                    .lock()
                    .session
                    .as_ref()
                    .map_or(5000, |s| s.config.config().a11y.hard_walk_cap);
                let roots = self.driver.a11y_tree(sel.window, cap).ok()?;
                sel.pick(&roots).ok().map(|f| f.entry())
            }
        }
    }

    /// The physical centre of an element's rectangle now, as a pointer tool aimed at it
    /// would find it; `None` when it cannot be found (the call is then refused when it
    /// runs, before any input).
    fn centre(&mut self, el: &ElementTarget) -> Option<(i32, i32)> {
        let handle = self.element(el)?.handle;
        let r = self.driver.a11y_element(&handle).ok().flatten()?.rect?;
        Some((r.x + r.width as i32 / 2, r.y + r.height as i32 / 2))
    }

    /// Canvas points a pointer action touches (clamped): its target, both ends of a
    /// drag, the centre of each element it aims at, or the pointer's position when no
    /// point is given; and the elements it aims at that could not be placed.
    fn points(&mut self, target: &Target) -> (Vec<(i32, i32)>, Vec<ElementTarget>) {
        let Some(canvas) = self.canvas.clone() else {
            return (Vec::new(), Vec::new());
        };
        let (window, spots): (Option<u64>, Vec<Spot>) = match target {
            Target::Points(p) => (None, p.iter().map(|&(x, y)| Spot::Point(x, y)).collect()),
            Target::InWindow(id, p) => (
                Some(*id),
                p.iter().map(|&(x, y)| Spot::Point(x, y)).collect(),
            ),
            Target::Aimed { window, spots } => (*window, spots.clone()),
            _ => return (Vec::new(), Vec::new()),
        };
        let (ox, oy) = match window {
            None => (0.0, 0.0),
            // Placed where the window is now; a window that is gone lands nowhere (the
            // call is refused when it runs).
            Some(id) => match self.driver.window_shown(id).ok().flatten() {
                Some(w) => {
                    let [l, t, _, _] = canvas.rect_from_physical(&w.rect);
                    (f64::from(l), f64::from(t))
                }
                None => return (Vec::new(), Vec::new()),
            },
        };
        if spots.is_empty() {
            return match self.driver.pointer_position() {
                Ok((px, py)) => (vec![canvas.to_canvas(px, py)], Vec::new()),
                Err(_) => (Vec::new(), Vec::new()),
            };
        }
        let mut unplaced = Vec::new();
        let points = spots
            .iter()
            .filter_map(|spot| match spot {
                Spot::Point(x, y) => Some(canvas.clamp(ox + x, oy + y)),
                Spot::Centre(el) => {
                    let at = self.centre(el).map(|(px, py)| canvas.to_canvas(px, py));
                    if at.is_none() {
                        unplaced.push(el.clone());
                    }
                    at
                }
            })
            .collect();
        (points, unplaced)
    }

    /// `(app_id, title)` of the windows the action lands in: the topmost window under
    /// each point (pointer tools), the target window (`window.focus`), the element's
    /// window (accessibility tools), else the focused window (keyboard and the rest).
    fn windows(
        &mut self,
        target: &Target,
        points: &[(i32, i32)],
        entry: Option<&crate::snapshot::Entry>,
    ) -> Vec<(String, String)> {
        let Ok(windows) = self.driver.windows() else {
            return Vec::new();
        };
        let name = |w: &WindowInfo| (w.app_id.clone(), w.title.clone());
        let by_id = |id: u64| windows.iter().find(|w| w.id == id).map(name);
        let focused = || windows.iter().find(|w| w.focused).map(name);
        match target {
            Target::Points(_) | Target::Aimed { .. } | Target::InWindow(..) => {
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
            Target::Window(id) => by_id(*id).into_iter().collect(),
            Target::Element(_) => entry
                .and_then(|e| e.window_id)
                .and_then(by_id)
                .or_else(focused)
                .into_iter()
                .collect(),
            Target::Focused => focused().into_iter().collect(),
        }
    }
}
