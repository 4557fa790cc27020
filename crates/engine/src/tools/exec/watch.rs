//! Waiting until the desktop meets a condition, instead of sleeping: an element or a
//! window appears or goes, a title changes, a region changes, the screen is stable.
//!
//! The driver says which kinds of change it reports as events while watching
//! ([`cc_desktop::Watching`]): then the condition is looked at again only when a
//! relevant change arrives (and once a second, in case an event was missed). For the
//! other kinds it is looked at again at a fixed interval (polling). Every slice of the
//! wait checks the emergency stop, as `wait.pause` does.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

use cc_desktop::{Changes, RgbImage, Watching};
use cc_protocol::{ErrorCode, PhysicalRect, Rect, StateFlag, ToolError};
use serde_json::{Value, json};

use super::{Exec, drv};
use crate::selector::{self, Selector};
use crate::snapshot::Entry;

/// A top-level window as a condition names it; every given member must hold.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub(crate) struct WindowMatch {
    pub id: Option<u64>,
    pub title: Option<String>,
    pub title_contains: Option<String>,
    pub app_id: Option<String>,
}

impl WindowMatch {
    fn matches(&self, w: &cc_desktop::WindowInfo) -> bool {
        self.id.is_none_or(|id| w.id == id)
            && self.title.as_ref().is_none_or(|t| w.title == *t)
            && self
                .title_contains
                .as_ref()
                .is_none_or(|t| w.title.to_lowercase().contains(&t.to_lowercase()))
            && self.app_id.as_ref().is_none_or(|a| w.app_id == *a)
    }
}

/// An element a condition is about: a selector over the live tree, or one element by
/// its reference (which, with a selector, must also match it: "this checkbox,
/// checked").
#[derive(Debug, Clone)]
pub(crate) enum Element {
    Select(Selector),
    Ref(Entry, Option<Selector>),
}

/// What to wait for.
#[derive(Debug, Clone)]
pub(crate) enum Cond {
    ElementAppears(Element),
    ElementGone(Element),
    WindowAppears(WindowMatch),
    WindowGone(WindowMatch),
    /// The matched window's title differs from the one it had when the wait began.
    TitleChanges(WindowMatch),
    /// Pixels of a canvas rectangle differ from what they were when the wait began.
    RegionChanges(Rect),
    /// No pixel of a canvas rectangle changed for this long.
    Stable(Rect, Duration),
}

/// Which kind of change can make a condition true.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    A11y,
    Windows,
    Pixels,
}

impl Cond {
    fn kind(&self) -> Kind {
        match self {
            Cond::ElementAppears(_) | Cond::ElementGone(_) => Kind::A11y,
            Cond::WindowAppears(_) | Cond::WindowGone(_) | Cond::TitleChanges(_) => Kind::Windows,
            Cond::RegionChanges(_) | Cond::Stable(..) => Kind::Pixels,
        }
    }
}

/// How a wait ended.
#[derive(Debug, Clone)]
pub(crate) struct Waited {
    /// The condition held.
    pub met: bool,
    /// What it saw when it held, or last saw when it timed out.
    pub saw: Value,
    pub waited_ms: u64,
    /// `"events"` or `"polling"`: how changes were noticed.
    pub driven_by: &'static str,
    /// How many times the desktop was looked at.
    pub looks: u32,
}

/// How often a condition is looked at again when the driver reports no events for it.
fn poll_interval(k: Kind) -> Duration {
    match k {
        // A tree walk costs an application round trips: not too often.
        Kind::A11y => Duration::from_millis(200),
        Kind::Windows => Duration::from_millis(100),
        Kind::Pixels => Duration::from_millis(50),
    }
}

/// With events, the condition is still looked at this often, in case one was missed.
const HEARTBEAT: Duration = Duration::from_secs(1);
/// The longest the wait blocks between two checks of the emergency stop.
const SLICE: Duration = Duration::from_millis(10);
/// However busy the events, two looks are at least this far apart (a repaint storm
/// elsewhere must not turn the wait into a busy loop).
const MIN_GAP: Duration = Duration::from_millis(25);

/// What the pixel conditions remember between looks.
#[derive(Default)]
struct Pixels {
    baseline: Option<RgbImage>,
    hash: Option<u64>,
    last_change: Option<Instant>,
}

fn hash(img: &RgbImage) -> u64 {
    let mut h = DefaultHasher::new();
    img.pixels.hash(&mut h);
    h.finish()
}

/// The physical rectangle of a canvas one, clamped into the canvas.
fn physical(ex: &Exec<'_>, r: &Rect) -> PhysicalRect {
    ex.canvas.rect_to_physical(r)
}

fn intersects(a: &PhysicalRect, b: &PhysicalRect) -> bool {
    let (ax1, ay1) = (a.x as i64 + a.width as i64, a.y as i64 + a.height as i64);
    let (bx1, by1) = (b.x as i64 + b.width as i64, b.y as i64 + b.height as i64);
    (a.x as i64) < bx1 && (b.x as i64) < ax1 && (a.y as i64) < by1 && (b.y as i64) < ay1
}

/// The canvas box (`[left, top, right, bottom]`, as snapshots give rects) of the pixels
/// that differ between two images of `area`.
fn changed_box(a: &RgbImage, b: &RgbImage, area: &PhysicalRect, ex: &Exec<'_>) -> Option<[i32; 4]> {
    if a.width != b.width || a.height != b.height {
        return Some(ex.canvas.rect_from_physical(area));
    }
    let w = a.width as usize;
    let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0, 0);
    for (i, (pa, pb)) in a.pixels.chunks(3).zip(b.pixels.chunks(3)).enumerate() {
        if pa != pb {
            let (x, y) = (i % w, i / w);
            x0 = x0.min(x);
            y0 = y0.min(y);
            x1 = x1.max(x);
            y1 = y1.max(y);
        }
    }
    (x0 != usize::MAX).then(|| {
        ex.canvas.rect_from_physical(&PhysicalRect {
            x: area.x + x0 as i32,
            y: area.y + y0 as i32,
            width: (x1 - x0 + 1) as u32,
            height: (y1 - y0 + 1) as u32,
        })
    })
}

/// Reads the element of a reference: its current description, or `None` when it is
/// gone, hidden, no longer the element it named, or does not match `also`.
fn ref_now(
    e: &Entry,
    also: Option<&Selector>,
    ex: &mut Exec<'_>,
) -> Result<Option<Value>, ToolError> {
    let Some(info) = drv(ex.driver.a11y_element(&e.handle))? else {
        return Ok(None);
    };
    if info.role != e.role
        || info.window_id != e.window_id
        || !info.states.contains(&StateFlag::Visible)
    {
        return Ok(None);
    }
    if let Some(sel) = also {
        let node = cc_desktop::RawNode {
            handle: e.handle.clone(),
            role: info.role,
            name: info.name.clone(),
            value: info.value.clone(),
            states: info.states.clone(),
            rect: info.rect,
            window_id: info.window_id,
            children: Vec::new(),
        };
        if !sel.matches(&node) {
            return Ok(None);
        }
    }
    let mut states = info.states.clone();
    states.sort();
    states.dedup();
    Ok(Some(json!({
        "ref": e.element_ref, "role": info.role, "name": info.name, "states": states,
        "window_id": info.window_id,
        "rect": info.rect.as_ref().map(|r| ex.canvas.rect_from_physical(r)),
    })))
}

/// The elements that match now (at most 5 described) and how many.
fn elements_now(el: &Element, ex: &mut Exec<'_>) -> Result<(usize, Vec<Value>), ToolError> {
    match el {
        Element::Ref(e, also) => Ok(match ref_now(e, also.as_ref(), ex)? {
            Some(v) => (1, vec![v]),
            None => (0, Vec::new()),
        }),
        Element::Select(sel) => {
            let roots = drv(ex
                .driver
                .a11y_tree(sel.window, ex.config.a11y.hard_walk_cap))?;
            let all = sel.find(&roots);
            // What the wait shows can be named by its ref next.
            let shown = all
                .iter()
                .take(5)
                .map(|f| {
                    ex.snapshots.remember(&f.entry());
                    selector::describe(f, ex.canvas)
                })
                .collect();
            Ok((all.len(), shown))
        }
    }
}

fn window_json(w: &cc_desktop::WindowInfo) -> Value {
    json!({"id": w.id, "title": w.title, "app_id": w.app_id, "focused": w.focused})
}

/// One look at the desktop: `Some(saw)` when the condition holds, else `None` with
/// `last` updated to what was seen.
struct Looker<'c> {
    cond: &'c Cond,
    pixels: Pixels,
    /// The title a `TitleChanges` window had at the start, and its id.
    title: Option<(u64, String)>,
    last: Value,
}

impl Looker<'_> {
    /// One look, where a failed platform call (an application or the accessibility
    /// registry too busy to answer while something starts) is not the end of the
    /// wait: it is what was seen, and the wait goes on. A missing facility
    /// (`backend_unavailable`) and the stop end it.
    fn try_look(&mut self, ex: &mut Exec<'_>) -> Result<Option<Value>, ToolError> {
        match self.look(ex) {
            Err(e) if e.code == ErrorCode::DriverFailed => {
                self.last = json!({"error": {"code": e.code, "message": e.message}});
                Ok(None)
            }
            other => other,
        }
    }

    fn look(&mut self, ex: &mut Exec<'_>) -> Result<Option<Value>, ToolError> {
        match self.cond {
            Cond::ElementAppears(el) => {
                let (n, shown) = elements_now(el, ex)?;
                if n > 0 {
                    return Ok(Some(
                        json!({"matches": n, "element": shown[0], "elements": shown}),
                    ));
                }
                self.last = json!({"matches": 0});
                Ok(None)
            }
            Cond::ElementGone(el) => {
                let (n, shown) = elements_now(el, ex)?;
                if n == 0 {
                    return Ok(Some(json!({"matches": 0})));
                }
                self.last = json!({"matches": n, "elements": shown});
                Ok(None)
            }
            Cond::WindowAppears(m) | Cond::WindowGone(m) => {
                let wins = drv(ex.driver.windows())?;
                let hits: Vec<Value> = wins
                    .iter()
                    .filter(|w| m.matches(w))
                    .map(window_json)
                    .collect();
                let appears = matches!(self.cond, Cond::WindowAppears(_));
                let met = appears != hits.is_empty();
                let saw = json!({"matches": hits.len(), "windows": hits});
                if met {
                    return Ok(Some(saw));
                }
                self.last = saw;
                Ok(None)
            }
            Cond::TitleChanges(m) => {
                let wins = drv(ex.driver.windows())?;
                let now = match &self.title {
                    Some((id, _)) => wins.iter().find(|w| w.id == *id),
                    None => wins.iter().find(|w| m.matches(w)),
                };
                let Some(w) = now else {
                    self.last = match &self.title {
                        Some((id, t)) => json!({"id": id, "title": t, "gone": true}),
                        None => json!({"matches": 0}),
                    };
                    return Ok(None);
                };
                match &self.title {
                    None => {
                        self.title = Some((w.id, w.title.clone()));
                        self.last = window_json(w);
                        Ok(None)
                    }
                    Some((id, from)) if *from != w.title => Ok(Some(
                        json!({"id": id, "from": from, "to": w.title, "window": window_json(w)}),
                    )),
                    Some(_) => {
                        self.last = window_json(w);
                        Ok(None)
                    }
                }
            }
            Cond::RegionChanges(r) => {
                let area = physical(ex, r);
                ex.check_stop()?;
                let img = drv(ex.driver.capture(area))?;
                let Some(base) = &self.pixels.baseline else {
                    self.pixels.baseline = Some(img);
                    self.last = json!({"region": r, "changed": false});
                    return Ok(None);
                };
                match changed_box(base, &img, &area, ex) {
                    Some(b) => Ok(Some(json!({"region": r, "changed": b}))),
                    None => Ok(None),
                }
            }
            Cond::Stable(r, ms) => {
                let area = physical(ex, r);
                ex.check_stop()?;
                let h = hash(&drv(ex.driver.capture(area))?);
                let now = Instant::now();
                if self.pixels.hash != Some(h) {
                    self.pixels.hash = Some(h);
                    self.pixels.last_change = Some(now);
                }
                let since = self.pixels.last_change.map_or(Duration::ZERO, |t| now - t);
                self.last = json!({"region": r, "stable_ms": since.as_millis() as u64});
                Ok((since >= *ms)
                    .then(|| json!({"region": r, "stable_ms": since.as_millis() as u64})))
            }
        }
    }
}

/// Waits until `cond` holds or `timeout` passes. Pre-empted by the emergency stop.
pub(crate) fn until(
    ex: &mut Exec<'_>,
    cond: &Cond,
    timeout: Duration,
) -> Result<Waited, ToolError> {
    watch(ex, cond, timeout, false)
}

/// [`until`] that reports the time waited of the timeout to the caller's progress
/// sink (`wait.for`; an action's settle wait is part of that action, not reported).
pub(crate) fn until_reporting(
    ex: &mut Exec<'_>,
    cond: &Cond,
    timeout: Duration,
) -> Result<Waited, ToolError> {
    watch(ex, cond, timeout, true)
}

fn watch(
    ex: &mut Exec<'_>,
    cond: &Cond,
    timeout: Duration,
    report: bool,
) -> Result<Waited, ToolError> {
    let watching = ex.driver.watch_changes(true);
    let reporter = Reporter {
        on: report,
        timeout,
        last: None,
    };
    let out = run(ex, cond, timeout, watching, reporter);
    ex.driver.watch_changes(false);
    out
}

/// Reports a wait's progress at most every [`REPORT_EVERY`].
struct Reporter {
    on: bool,
    timeout: Duration,
    last: Option<Instant>,
}

/// How often a reported wait tells its caller how long it has waited.
const REPORT_EVERY: Duration = Duration::from_millis(250);

impl Reporter {
    fn tick(&mut self, ex: &Exec<'_>, started: Instant) {
        let now = Instant::now();
        if !self.on || self.last.is_some_and(|t| now - t < REPORT_EVERY) {
            return;
        }
        self.last = Some(now);
        ex.progress(crate::call::Progress::Waited {
            elapsed_ms: (now - started).min(self.timeout).as_millis() as u64,
            timeout_ms: self.timeout.as_millis() as u64,
        });
    }
}

fn evented(w: Watching, k: Kind) -> bool {
    match k {
        Kind::A11y => w.a11y,
        Kind::Windows => w.windows,
        Kind::Pixels => w.pixels,
    }
}

/// Whether a change report concerns the condition.
fn relevant(cond: &Cond, ch: &Changes, region: Option<&PhysicalRect>) -> bool {
    match cond.kind() {
        Kind::A11y => ch.a11y,
        // A new, closed or renamed window repaints something (its frame, its title).
        Kind::Windows => ch.windows || !ch.damaged.is_empty(),
        Kind::Pixels => region.is_none_or(|r| ch.damaged.iter().any(|d| intersects(d, r))),
    }
}

fn run(
    ex: &mut Exec<'_>,
    cond: &Cond,
    timeout: Duration,
    watching: Watching,
    mut reporter: Reporter,
) -> Result<Waited, ToolError> {
    let started = Instant::now();
    let kind = cond.kind();
    let events = evented(watching, kind);
    let driven_by = if events { "events" } else { "polling" };
    let done = |met: bool, saw: Value, looks: u32| Waited {
        met,
        saw,
        waited_ms: started.elapsed().as_millis() as u64,
        driven_by,
        looks,
    };
    let mut looker = Looker {
        cond,
        pixels: Pixels::default(),
        title: None,
        last: Value::Null,
    };
    let region = match cond {
        Cond::RegionChanges(r) | Cond::Stable(r, _) => Some(physical(ex, r)),
        _ => None,
    };
    // Stability with damage events: the pixels are looked at only when something was
    // repainted in the region (a repaint may leave them as they were).
    if let (Cond::Stable(r, ms), true) = (cond, events) {
        if watching.still {
            let saw = json!({"region": r, "stable_ms": ms.as_millis() as u64, "still": true});
            return Ok(done(true, saw, 0));
        }
        let area = physical(ex, r);
        let mut looks = 1;
        ex.check_stop()?;
        let mut last_hash = hash(&drv(ex.driver.capture(area))?);
        let mut quiet_since = Instant::now();
        let mut last_capture = quiet_since;
        let mut due = false;
        loop {
            ex.driver.pump();
            ex.check_stop()?;
            reporter.tick(ex, started);
            let now = Instant::now();
            if due && now - last_capture >= MIN_GAP {
                due = false;
                last_capture = now;
                looks += 1;
                let h = hash(&drv(ex.driver.capture(area))?);
                if h != last_hash {
                    last_hash = h;
                    quiet_since = now;
                }
            }
            let quiet = now - quiet_since;
            let saw = json!({"region": r, "stable_ms": quiet.as_millis() as u64});
            // A repaint not looked at yet may have changed the pixels.
            if quiet >= *ms && !due {
                return Ok(done(true, saw, looks));
            }
            if now - started >= timeout {
                return Ok(done(false, saw, looks));
            }
            let until = if due {
                MIN_GAP.saturating_sub(now - last_capture)
            } else {
                ms.saturating_sub(quiet)
            };
            let wait = until.min(timeout - (now - started)).min(SLICE);
            let ch = ex.driver.wait_changes(wait);
            due |= relevant(cond, &ch, region.as_ref());
        }
    }
    let mut looks = 1;
    if let Some(saw) = looker.try_look(ex)? {
        return Ok(done(true, saw, looks));
    }
    let mut last_look = Instant::now();
    let mut due = false;
    loop {
        ex.driver.pump();
        ex.check_stop()?;
        reporter.tick(ex, started);
        let now = Instant::now();
        if now - started >= timeout {
            return Ok(done(false, looker.last, looks));
        }
        let interval = if events {
            HEARTBEAT
        } else {
            poll_interval(kind)
        };
        // A still desktop cannot change while nothing acts on it: no need to look.
        let gap = now - last_look;
        let look_now = !watching.still && ((due && gap >= MIN_GAP) || gap >= interval);
        if look_now {
            due = false;
            last_look = now;
            looks += 1;
            if let Some(saw) = looker.try_look(ex)? {
                return Ok(done(true, saw, looks));
            }
            continue;
        }
        let next =
            (last_look + if due { MIN_GAP } else { interval }).saturating_duration_since(now);
        let wait = next.min(timeout - (now - started)).min(SLICE);
        let ch = ex.driver.wait_changes(wait);
        if events && relevant(cond, &ch, region.as_ref()) {
            due = true;
        }
    }
}

/// An element reference for a condition (what the session remembers of it), with a
/// selector it must also match.
pub(crate) fn element_by_ref(
    r: &str,
    also: Option<Selector>,
    ex: &Exec<'_>,
) -> Result<Element, ToolError> {
    Ok(Element::Ref(ex.snapshots.by_ref(r)?.clone(), also))
}

/// The error a wait that timed out answers: what it waited for and last saw.
pub(crate) fn timed_out(what: &str, w: &Waited) -> ToolError {
    ToolError::with_data(
        ErrorCode::Timeout,
        format!("{what}: not met within {} ms", w.waited_ms),
        json!({"met": false, "waited_ms": w.waited_ms, "last_seen": w.saw, "driven_by": w.driven_by, "looks": w.looks}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigStack;
    use crate::coords::Canvas;
    use crate::frames::Frames;
    use crate::snapshot::Snapshots;
    use cc_desktop::{Driver, VirtualDesktop};
    use std::sync::atomic::AtomicBool;

    /// The virtual desktop, changed by "another client" (a click on the checkbox)
    /// during the engine's third wait slice; it reports that change as an event or,
    /// like a desktop without events, not at all.
    struct Outside {
        desk: VirtualDesktop,
        events: bool,
        slices: u32,
        click_at: (i32, i32),
        /// Tree reads that fail (`driver_failed`) before they work again.
        tree_failures: u32,
        /// Tree reads fail as `backend_unavailable`.
        unavailable: bool,
    }

    impl Outside {
        fn new(events: bool) -> Outside {
            let mut desk = VirtualDesktop::default();
            let roots = desk.a11y_tree(None, 5000).unwrap();
            let sel: Selector =
                serde_json::from_value(json!({"role": "checkbox", "name": "Remember me"})).unwrap();
            let r = sel.pick(&roots).unwrap().node.rect.unwrap();
            Outside {
                desk,
                events,
                slices: 0,
                click_at: (r.x + r.width as i32 / 2, r.y + r.height as i32 / 2),
                tree_failures: 0,
                unavailable: false,
            }
        }
    }

    macro_rules! forward {
        ($($name:ident($($a:ident: $t:ty),*) -> $r:ty;)*) => {
            $(fn $name(&mut self, $($a: $t),*) -> $r { self.desk.$name($($a),*) })*
        };
    }

    impl Driver for Outside {
        fn platform(&self) -> &'static str {
            "outside"
        }
        fn capabilities(&self) -> cc_desktop::Capabilities {
            self.desk.capabilities()
        }
        forward! {
            layout() -> Result<cc_desktop::Layout, cc_desktop::DriverError>;
            capture(r: PhysicalRect) -> Result<RgbImage, cc_desktop::DriverError>;
            pointer_position() -> Result<(i32, i32), cc_desktop::DriverError>;
            pointer_move(x: i32, y: i32) -> Result<(), cc_desktop::DriverError>;
            button(b: cc_desktop::Button, d: bool) -> Result<(), cc_desktop::DriverError>;
            scroll(a: cc_desktop::Axis, p: bool) -> Result<(), cc_desktop::DriverError>;
            key(k: cc_protocol::Key, d: bool) -> Result<(), cc_desktop::DriverError>;
            type_char(c: char) -> Result<(), cc_desktop::DriverError>;
            release_all() -> Result<(), cc_desktop::DriverError>;
            held_inputs() -> cc_desktop::HeldInputs;
            windows() -> Result<Vec<cc_desktop::WindowInfo>, cc_desktop::DriverError>;
            focus_window(id: u64) -> Result<(), cc_desktop::DriverError>;
            focused_is_password() -> Result<bool, cc_desktop::DriverError>;
            poll_events() -> Vec<cc_desktop::DriverEvent>;
        }
        fn a11y_tree(
            &mut self,
            w: Option<u64>,
            n: usize,
        ) -> Result<Vec<cc_desktop::RawNode>, cc_desktop::DriverError> {
            if self.unavailable {
                return Err(cc_desktop::DriverError::Unavailable("no bus".into()));
            }
            if self.tree_failures > 0 {
                self.tree_failures -= 1;
                return Err(cc_desktop::DriverError::Failed("timed out".into()));
            }
            self.desk.a11y_tree(w, n)
        }
        fn a11y_element(
            &mut self,
            h: &cc_desktop::ElementHandle,
        ) -> Result<Option<cc_desktop::ElementInfo>, cc_desktop::DriverError> {
            self.desk.a11y_element(h)
        }
        fn a11y_perform(
            &mut self,
            h: &cc_desktop::ElementHandle,
            a: cc_desktop::SemanticAction,
        ) -> Result<(), cc_desktop::DriverError> {
            self.desk.a11y_perform(h, a)
        }
        fn a11y_set_text(
            &mut self,
            h: &cc_desktop::ElementHandle,
            t: &str,
        ) -> Result<(), cc_desktop::DriverError> {
            self.desk.a11y_set_text(h, t)
        }
        fn watch_changes(&mut self, _on: bool) -> Watching {
            Watching {
                a11y: self.events,
                pixels: self.events,
                windows: self.events,
                still: false,
            }
        }
        fn wait_changes(&mut self, timeout: Duration) -> Changes {
            std::thread::sleep(timeout);
            self.slices += 1;
            if self.slices != 3 {
                return Changes::default();
            }
            let (x, y) = self.click_at;
            self.desk.pointer_move(x, y).unwrap();
            self.desk.button(cc_desktop::Button::Left, true).unwrap();
            self.desk.button(cc_desktop::Button::Left, false).unwrap();
            if !self.events {
                return Changes::default();
            }
            Changes {
                damaged: vec![PhysicalRect {
                    x: x - 5,
                    y: y - 5,
                    width: 10,
                    height: 10,
                }],
                a11y: true,
                windows: false,
            }
        }
    }

    fn wait(
        events: bool,
        cond: impl Fn(&Exec<'_>) -> Cond,
        stop: bool,
    ) -> Result<Waited, ToolError> {
        wait_with(events, cond, stop, |_| {})
    }

    fn wait_with(
        events: bool,
        cond: impl Fn(&Exec<'_>) -> Cond,
        stop: bool,
        set: impl FnOnce(&mut Outside),
    ) -> Result<Waited, ToolError> {
        let mut d = Outside::new(events);
        set(&mut d);
        let canvas = Canvas::new(&d.layout().unwrap(), 1920);
        let config = ConfigStack::new();
        let stop = AtomicBool::new(stop);
        let mut frames = Frames::default();
        let mut snapshots = Snapshots::default();
        let mut ex = Exec {
            driver: &mut d,
            canvas: &canvas,
            config: config.config(),
            stop: &stop,
            call: &crate::call::CallControl::default(),
            frames: &mut frames,
            snapshots: &mut snapshots,
            unplaced: Vec::new(),
        };
        let c = cond(&ex);
        until(&mut ex, &c, Duration::from_secs(2))
    }

    fn checked() -> Cond {
        Cond::ElementAppears(Element::Select(
            serde_json::from_value(json!({"role": "checkbox", "states": ["checked"]})).unwrap(),
        ))
    }

    #[test]
    fn a_change_from_elsewhere_ends_the_wait_by_event_or_by_polling() {
        for events in [true, false] {
            let w = wait(events, |_| checked(), false).unwrap();
            assert!(w.met, "{events}: {w:?}");
            assert_eq!(w.saw["element"]["name"], "Remember me");
            assert_eq!(w.driven_by, if events { "events" } else { "polling" });
            // By event: looked at once more, right after the change, well before the
            // once-a-second heartbeat.
            if events {
                assert_eq!(w.looks, 2, "{w:?}");
                assert!(w.waited_ms < 500, "{w:?}");
            }
        }
    }

    #[test]
    fn pixels_change_and_settle_by_event_or_by_polling() {
        for events in [true, false] {
            let whole = |ex: &Exec<'_>| {
                let s = &ex.canvas.surface;
                Rect {
                    x: 0,
                    y: 0,
                    width: s.display_width_px as i32,
                    height: s.display_height_px as i32,
                }
            };
            let w = wait(events, |ex| Cond::RegionChanges(whole(ex)), false).unwrap();
            assert!(w.met, "{events}: {w:?}");
            let b = w.saw["changed"].as_array().unwrap();
            assert!(b[2].as_i64().unwrap() > b[0].as_i64().unwrap(), "{w:?}");
            let stable = |ex: &Exec<'_>| Cond::Stable(whole(ex), Duration::from_millis(150));
            let w = wait(events, stable, false).unwrap();
            assert!(w.met, "{events}: {w:?}");
            assert!(w.waited_ms >= 150, "{w:?}");
        }
    }

    #[test]
    fn a_failed_look_is_what_was_seen_and_the_wait_goes_on() {
        // The tree cannot be read twice (a registry still starting), then the
        // checkbox is clicked from elsewhere: the wait outlives the failures.
        let w = wait_with(false, |_| checked(), false, |d| d.tree_failures = 2).unwrap();
        assert!(w.met, "{w:?}");
        assert!(w.looks >= 3, "{w:?}");
        // A timeout after failures says what failed.
        let w = wait_with(
            false,
            |_| checked(),
            false,
            |d| {
                d.tree_failures = u32::MAX;
            },
        )
        .unwrap();
        assert!(!w.met);
        assert_eq!(w.saw["error"]["code"], "driver_failed", "{w:?}");
        // A missing facility ends the wait at once.
        let e = wait_with(false, |_| checked(), false, |d| d.unavailable = true).unwrap_err();
        assert_eq!(e.code, ErrorCode::BackendUnavailable);
    }

    #[test]
    fn the_stop_ends_a_wait_at_once() {
        let e = wait(true, |_| checked(), true).unwrap_err();
        assert_eq!(e.code, ErrorCode::SafetyStopped);
        let e = wait(false, |_| Cond::WindowAppears(WindowMatch::default()), true);
        // Met at the first look (every window matches), before any slice.
        assert!(e.is_ok_and(|w| w.met));
    }
}
