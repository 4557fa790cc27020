//! What the desktop says about one call, just before it is judged: whether it writes
//! (or pastes) into a password field, the canvas points it touches, the elements and
//! the windows it lands in, and where it lands as a person is shown it.

use cc_desktop::{DriverError, WindowInfo};
use cc_protocol::{LANDING_TEXT_CHARS, Landing, LandingElement, LandingPoint, LandingWindow};

use super::Worker;
use crate::assess::{Assessment, Facts, Place, WindowOf};
use crate::config::CanvasWidth;
use crate::coords::Canvas;
use crate::rules;
use crate::snapshot::Entry;
use crate::tools::{ElementTarget, Spot, Target, TextEntry, ToolCall};

/// A canvas point a call touches, and the element whose centre it is.
struct Placed {
    at: (i32, i32),
    /// The pointer's position: the call gave no point.
    here: bool,
    element: Option<Entry>,
}

impl Worker {
    /// Reads the desktop facts of one call. Reads only: the latest snapshot stays the
    /// latest, so the agent's next `a11y.*` action is not made stale. Windows are read
    /// only when a rule asks about them (`needs_window`).
    pub(super) fn facts(&mut self, call: &ToolCall, needs_window: bool) -> Facts {
        let def = call.def();
        let target = call.target().unwrap_or(Target::Focused);
        let pastes = call.pastes();
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
        let (placed, mut unplaced) = self.points(&target);
        if let (Target::Element(el), None) = (&target, &entry) {
            unplaced.push(el.clone());
        }
        let points: Vec<(i32, i32)> = placed.iter().map(|p| p.at).collect();
        let mut place = Place {
            window: match &target {
                Target::Points(_) | Target::Aimed { .. } | Target::InWindow(..) => WindowOf::Points,
                Target::Window(id) => WindowOf::Id(*id),
                Target::Element(_) => WindowOf::Element(entry.as_ref().and_then(|e| e.window_id)),
                Target::Focused => WindowOf::Focused,
            },
            element: entry.as_ref().map(|e| e.handle.clone()),
            windows_read: false,
        };
        let mut shown = Landing {
            points: placed
                .into_iter()
                .map(|p| LandingPoint {
                    x: p.at.0,
                    y: p.at.1,
                    here: p.here,
                    element: p.element.as_ref().map(shown_element),
                    window: None,
                })
                .collect(),
            element: entry.as_ref().map(shown_element),
            ..Landing::default()
        };
        let mut windows = Vec::new();
        if needs_window && let Ok(list) = self.windows_for(&place.window) {
            let landed = self.landed(&list, &place.window, &points);
            windows = landed
                .iter()
                .flatten()
                .map(|w| (w.app_id.clone(), w.title.clone()))
                .collect();
            show_windows(&mut shown, &place.window, &landed);
            place.windows_read = true;
        }
        Facts {
            secret_target,
            landing: rules::Landing { points, windows },
            unplaced,
            shown,
            place,
        }
    }

    /// Completes the shown landing of every call of an action a person is about to be
    /// asked about: the windows, when the judgement did not read them, and the centre
    /// of the element an accessibility tool acts on (to mark it on the screen). The
    /// points and elements stay as they were judged.
    pub(super) fn place(&mut self, assessed: &mut Assessment) {
        let mut list = None;
        for item in &mut assessed.items {
            if let Some(handle) = item.place.element.take()
                && item.landing_shown.points.is_empty()
                && let Some(canvas) = &self.canvas
                && let Ok(Some(info)) = self.driver.a11y_element(&handle)
                && let Some(r) = info.rect
            {
                let (x, y) = canvas.to_canvas(r.x + r.width as i32 / 2, r.y + r.height as i32 / 2);
                item.landing_shown.points.push(LandingPoint {
                    x,
                    y,
                    here: false,
                    element: None,
                    window: None,
                });
            }
            if item.place.windows_read {
                continue;
            }
            // Points need no list (`windows_for`); the others share one.
            if list.is_none() && item.place.window != WindowOf::Points {
                list = Some(self.driver.windows().unwrap_or_default());
            }
            let all = list.as_deref().unwrap_or_default();
            let points: Vec<(i32, i32)> = match item.place.window {
                WindowOf::Points => item
                    .landing_shown
                    .points
                    .iter()
                    .map(|p| (p.x, p.y))
                    .collect(),
                _ => Vec::new(),
            };
            let landed = self.landed(all, &item.place.window, &points);
            show_windows(&mut item.landing_shown, &item.place.window, &landed);
            item.place.windows_read = true;
        }
    }

    /// The same, outside any session: the layout is read for the occasion (the worker
    /// keeps no canvas before a session starts) and dropped after.
    pub(super) fn facts_any_time(
        &mut self,
        calls: &[ToolCall],
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
        let out = calls.iter().map(|c| self.facts(c, needs_window)).collect();
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

    /// An element and the physical centre of its rectangle now, as a pointer tool aimed
    /// at it would find it; `None` when it cannot be found (the call is then refused
    /// when it runs, before any input).
    fn centre(&mut self, el: &ElementTarget) -> Option<(Entry, (i32, i32))> {
        let entry = self.element(el)?;
        let r = self
            .driver
            .a11y_element(&entry.handle)
            .ok()
            .flatten()?
            .rect?;
        Some((entry, (r.x + r.width as i32 / 2, r.y + r.height as i32 / 2)))
    }

    /// Canvas points a pointer action touches (clamped): its target, both ends of a
    /// drag, the centre of each element it aims at, or the pointer's position when no
    /// point is given; and the elements it aims at that could not be placed.
    fn points(&mut self, target: &Target) -> (Vec<Placed>, Vec<ElementTarget>) {
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
                Ok((px, py)) => (
                    vec![Placed {
                        at: canvas.to_canvas(px, py),
                        here: true,
                        element: None,
                    }],
                    Vec::new(),
                ),
                Err(_) => (Vec::new(), Vec::new()),
            };
        }
        let mut unplaced = Vec::new();
        let points = spots
            .iter()
            .filter_map(|spot| match spot {
                Spot::Point(x, y) => Some(Placed {
                    at: canvas.clamp(ox + x, oy + y),
                    here: false,
                    element: None,
                }),
                Spot::Centre(el) => {
                    let at = self.centre(el).map(|(entry, (px, py))| Placed {
                        at: canvas.to_canvas(px, py),
                        here: false,
                        element: Some(entry),
                    });
                    if at.is_none() {
                        unplaced.push(el.clone());
                    }
                    at
                }
            })
            .collect();
        (points, unplaced)
    }

    /// The windows a call lands in: the one a click at each of its points would reach
    /// (pointer tools: [`cc_desktop::Driver::window_at`], the display server's own
    /// stacking, so a minimized window still listed at its old place shadows nothing),
    /// else, from the window list, the one it names, its element's or the focused one.
    /// One home for the rules' window matcher and the landing a person sees.
    /// The window list `landed` looks windows up in: none for points, where the
    /// driver names the window under each point itself (`window_at`), so the list
    /// would cost the desktop round trips for nothing.
    fn windows_for(&mut self, of: &WindowOf) -> Result<Vec<WindowInfo>, DriverError> {
        match of {
            WindowOf::Points => Ok(Vec::new()),
            _ => self.driver.windows(),
        }
    }

    fn landed(
        &mut self,
        list: &[WindowInfo],
        of: &WindowOf,
        points: &[(i32, i32)],
    ) -> Vec<Option<WindowInfo>> {
        let by_id = |id: u64| list.iter().find(|w| w.id == id).cloned();
        let focused = || list.iter().find(|w| w.focused).cloned();
        match of {
            WindowOf::Points => {
                let Some(canvas) = self.canvas.clone() else {
                    return Vec::new();
                };
                points
                    .iter()
                    .map(|&(x, y)| {
                        let (px, py) = canvas.to_physical(f64::from(x), f64::from(y));
                        self.driver.window_at(px, py).ok().flatten()
                    })
                    .collect()
            }
            WindowOf::Id(id) => vec![by_id(*id)],
            WindowOf::Element(id) => vec![id.and_then(by_id).or_else(focused)],
            WindowOf::Focused => vec![focused()],
        }
    }
}

/// Puts the windows found into a shown landing: on each point for a pointer tool (the
/// first one's is the landing's window), else on the landing.
fn show_windows(shown: &mut Landing, of: &WindowOf, landed: &[Option<WindowInfo>]) {
    if *of == WindowOf::Points {
        for (p, w) in shown.points.iter_mut().zip(landed) {
            p.window = w.as_ref().map(shown_window);
        }
    }
    shown.window = landed.first().and_then(Option::as_ref).map(shown_window);
}

fn shown_element(e: &Entry) -> LandingElement {
    LandingElement {
        role: e.role,
        name: clip(&e.name),
        element_ref: e.element_ref.clone(),
    }
}

fn shown_window(w: &WindowInfo) -> LandingWindow {
    LandingWindow {
        id: w.id,
        title: clip(&w.title),
        app_id: clip(&w.app_id),
    }
}

/// A name or title cut to [`LANDING_TEXT_CHARS`] characters, ending in `…` when cut.
fn clip(s: &str) -> String {
    match s.char_indices().nth(LANDING_TEXT_CHARS - 1) {
        Some((i, _)) if s[i..].chars().nth(1).is_some() => format!("{}…", &s[..i]),
        _ => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cut_to_the_landing_limit() {
        let n = LANDING_TEXT_CHARS;
        assert_eq!(clip("Sign in"), "Sign in");
        let exact = "é".repeat(n);
        assert_eq!(clip(&exact), exact);
        let long = "é".repeat(n + 1);
        let cut = clip(&long);
        assert_eq!(cut.chars().count(), n);
        assert!(cut.ends_with('…'));
        assert_eq!(clip(""), "");
    }
}
