//! Building the raw tree of a snapshot: applications read in bulk, top-levels bound to
//! X11 windows, hidden subtrees cut at their root, then rectangles and values fetched
//! for the kept nodes only.

use std::collections::{HashMap, HashSet};

use cc_protocol::{PhysicalRect, Role};
use futures_util::future::join_all;

use super::bus::{ACCESSIBLE, Bus, ROOT_PATH, Ref};
use super::matching::{self, Top};
use super::roles;
use super::tree::{self, App, Item, iface};
use crate::Toplevel;
use cc_desktop::{DriverError, ElementHandle, RawNode};

/// Deeper nesting than this is cut (cycles in broken trees, runaway recursion).
const MAX_DEPTH: usize = 64;
/// Values longer than this many characters are cut (a document's text is not a value).
pub(crate) const MAX_VALUE_CHARS: usize = 65_536;

pub(crate) fn handle(bus: &str, path: &str) -> ElementHandle {
    ElementHandle(format!("{bus}|{path}"))
}

/// A screen rectangle through the Component interface (`None` when empty).
pub(crate) async fn extents(bus: &Bus, app: &str, path: &str) -> Option<PhysicalRect> {
    let (x, y, w, h) = bus
        .call::<(i32, i32, i32, i32)>(
            app,
            path,
            "org.a11y.atspi.Component",
            "GetExtents",
            &(0u32,),
        )
        .await
        .ok()?;
    if w <= 0 || h <= 0 || x <= -30_000 || y <= -30_000 {
        return None;
    }
    Some(PhysicalRect {
        x,
        y,
        width: w as u32,
        height: h as u32,
    })
}

/// The value of a node: its text (Text interface) or its number (Value interface).
/// Never called for password fields.
pub(crate) async fn value(bus: &Bus, app: &str, it: &Item) -> Option<String> {
    if it.role == roles::r::PASSWORD_TEXT {
        return None;
    }
    if number_read(it) {
        return number(bus, app, &it.path).await;
    }
    if roles::text_valued(it.role, it.states) && it.ifaces & iface::TEXT != 0 {
        let text = bus
            .call::<String>(
                app,
                &it.path,
                "org.a11y.atspi.Text",
                "GetText",
                &(0i32, -1i32),
            )
            .await
            .ok()?;
        return Some(text.chars().take(MAX_VALUE_CHARS).collect());
    }
    None
}

/// A node of an application: (bus name, object path).
type Key = (String, String);

/// How many scopes (the whole desktop, one window each) [`Recent`] remembers.
const SCOPES: usize = 8;

/// What one snapshot asked the applications for, besides the bulk read.
#[derive(Debug, Default)]
struct Requests {
    rects: Vec<Key>,
    /// Nodes whose value is a number (the Value interface). Text values are never
    /// asked ahead: a text field may have become a password field since.
    numbers: Vec<Key>,
}

/// What the latest snapshots asked for, by scope (all windows or one window), so that
/// the next snapshot of a scope sends those requests together with the bulk read: the
/// application answers them right after it, while the bulk read is decoded and the tree
/// is built here, instead of waiting for that. A request for a node that is gone or no
/// longer kept is only wasted; every answer used is read during this snapshot.
#[derive(Debug, Default)]
pub(crate) struct Recent {
    /// Oldest first; at most [`SCOPES`].
    scopes: Vec<(Option<u64>, Requests)>,
}

impl Recent {
    fn get(&self, scope: Option<u64>) -> Option<&Requests> {
        self.scopes
            .iter()
            .find(|(s, _)| *s == scope)
            .map(|(_, r)| r)
    }

    fn put(&mut self, scope: Option<u64>, requests: Requests) {
        self.scopes.retain(|(s, _)| *s != scope);
        if self.scopes.len() >= SCOPES {
            self.scopes.remove(0);
        }
        self.scopes.push((scope, requests));
    }
}

/// Answers to the requests sent ahead ([`Recent`]).
#[derive(Debug, Default)]
pub(crate) struct Prefetched {
    rects: HashMap<Key, Option<PhysicalRect>>,
    numbers: HashMap<Key, Option<String>>,
}

impl Prefetched {
    fn rect(&self, app: &str, path: &str) -> Option<Option<PhysicalRect>> {
        self.rects
            .get(&(app.to_string(), path.to_string()))
            .copied()
    }
}

/// The recent requests (rectangles, numbers) worth sending ahead: those of the same
/// scope, for the applications still present.
fn planned<'a>(
    recent: &'a Recent,
    scope: Option<u64>,
    apps: &[String],
) -> (Vec<&'a Key>, Vec<&'a Key>) {
    let Some(r) = recent.get(scope) else {
        return (Vec::new(), Vec::new());
    };
    let present = |k: &&Key| apps.contains(&k.0);
    (
        r.rects.iter().filter(present).collect(),
        r.numbers.iter().filter(present).collect(),
    )
}

/// Sends the recent requests of `scope` ([`planned`]) and collects the answers.
async fn prefetch(bus: &Bus, recent: &Recent, scope: Option<u64>, apps: &[String]) -> Prefetched {
    let (rects, numbers) = planned(recent, scope, apps);
    let rects = join_all(
        rects
            .into_iter()
            .map(|k| async move { (k.clone(), extents(bus, &k.0, &k.1).await) }),
    );
    let numbers = join_all(
        numbers
            .into_iter()
            .map(|k| async move { (k.clone(), number(bus, &k.0, &k.1).await) }),
    );
    let (rects, numbers) = futures_util::future::join(rects, numbers).await;
    Prefetched {
        rects: rects.into_iter().collect(),
        numbers: numbers.into_iter().collect(),
    }
}

/// The current number of a node's Value interface, as the value string.
async fn number(bus: &Bus, app: &str, path: &str) -> Option<String> {
    let v = bus
        .prop(app, path, "org.a11y.atspi.Value", "CurrentValue")
        .await
        .ok()?;
    f64::try_from(v).ok().map(roles::format_number)
}

/// True when [`value`] reads a node through the Value interface.
fn number_read(it: &Item) -> bool {
    it.role != roles::r::PASSWORD_TEXT
        && roles::number_valued(it.role)
        && it.ifaces & iface::VALUE != 0
}

/// True when a node has a screen rectangle to ask for: showing, with a Component.
pub(crate) fn on_screen(it: &Item) -> bool {
    it.states.showing() && it.ifaces & iface::COMPONENT != 0
}

/// True when a snapshot asks for a node's rectangle (on screen, and not a layout box).
fn rect_wanted(it: &Item) -> bool {
    on_screen(it) && !roles::layout_only(it.role, &it.name, it.states)
}

/// Top-levels of an application (sorted by path so every caller assigns alike) and
/// the windows they are bound to. Rectangles already in `known` are not asked again.
pub(crate) async fn bind_tops(
    bus: &Bus,
    pid: Option<u32>,
    app: &str,
    tops: &[Item],
    wins: &[Toplevel],
    known: &Prefetched,
) -> Vec<(Item, Top, Option<u64>)> {
    let mut tops: Vec<Item> = tops.to_vec();
    tops.sort_by(|a, b| a.path.cmp(&b.path));
    let rects = join_all(tops.iter().map(|t| async move {
        if on_screen(t) {
            match known.rect(app, &t.path) {
                Some(r) => r,
                None => extents(bus, app, &t.path).await,
            }
        } else {
            None
        }
    }))
    .await;
    let infos: Vec<Top> = tops
        .iter()
        .zip(&rects)
        .map(|(t, r)| Top {
            name: t.name.clone(),
            showing: t.states.showing(),
            rect: *r,
        })
        .collect();
    let ids = matching::assign(pid, &infos, wins);
    tops.into_iter()
        .zip(infos)
        .zip(ids)
        .map(|((i, t), id)| (i, t, id))
        .collect()
}

/// The name a top-level shows: its accessible name, else its window's title.
pub(crate) fn top_name(item: &Item, window: Option<u64>, wins: &[Toplevel]) -> String {
    if !item.name.is_empty() {
        return item.name.clone();
    }
    window
        .and_then(|id| wins.iter().find(|w| w.info.id == id))
        .map(|w| w.info.title.clone())
        .unwrap_or_default()
}

/// The protocol role of a node; `top` when it is a top-level (a child of its
/// application's root). Qt5 gives a plain top-level widget (a calculator, a main form)
/// the role of a generic container (`filler`), but an application's children are its
/// windows: a top-level container is reported as `window`, in snapshots and element
/// re-reads alike (the identity check compares roles).
pub(crate) fn node_role(item: &Item, top: bool) -> Role {
    match roles::role(item.role, item.states) {
        Role::Group | Role::Pane if top => Role::Window,
        r => r,
    }
}

/// Rectangle and value fetched per (application index, path).
type Extras = HashMap<(usize, String), (Option<PhysicalRect>, Option<String>)>;

/// A node before its rectangle and value are known.
struct Skel {
    app: usize,
    /// A top-level of its application.
    top: bool,
    item: Item,
    name: String,
    window_id: Option<u64>,
    rect: Option<PhysicalRect>,
    children: Vec<Skel>,
}

fn build(
    app: &App,
    ai: usize,
    path: &str,
    budget: &mut usize,
    depth: usize,
    seen: &mut HashSet<(usize, String)>,
) -> Option<Skel> {
    let item = app.items.get(path)?;
    if depth > MAX_DEPTH || !seen.insert((ai, path.to_string())) {
        return None;
    }
    *budget = budget.checked_sub(1)?;
    let mut node = Skel {
        app: ai,
        top: false,
        item: item.clone(),
        name: item.name.clone(),
        window_id: None,
        rect: None,
        children: Vec::new(),
    };
    // A hidden container is listed but not entered: its contents are not on screen.
    if item.states.showing() {
        for c in &item.children {
            if *budget == 0 {
                break;
            }
            if let Some(n) = build(app, ai, c, budget, depth + 1, seen) {
                node.children.push(n);
            }
        }
    }
    Some(node)
}

fn collect<'a>(n: &'a Skel, out: &mut Vec<&'a Skel>) {
    out.push(n);
    for c in &n.children {
        collect(c, out);
    }
}

/// The accessibility tree of every application, top-levels in the windows' stacking
/// order (unbound but showing ones last), or only the top-levels of `window`.
pub(crate) async fn tree(
    bus: &Bus,
    pids: &mut HashMap<String, Option<u32>>,
    recent: &mut Recent,
    wins: &[Toplevel],
    window: Option<u64>,
    max_nodes: usize,
) -> Result<Vec<RawNode>, DriverError> {
    let apps: Vec<Ref> = bus.applications().await?;
    let names: Vec<String> = apps.into_iter().map(|(n, _)| n).collect();
    // The bulk reads go out first, then the requests the latest snapshot of this scope
    // made, then the bus daemon is asked for the process ids not known yet (binding
    // needs them; on a desktop's first snapshot that is every application).
    let unknown: Vec<&String> = names.iter().filter(|n| !pids.contains_key(*n)).collect();
    let ((read, pre), found) = futures_util::future::join(
        futures_util::future::join(
            join_all(names.iter().map(|n| tree::read_app(bus, n, max_nodes))),
            prefetch(bus, recent, window, &names),
        ),
        join_all(
            unknown
                .into_iter()
                .map(|n| async move { (n.clone(), bus.pid(n).await) }),
        ),
    )
    .await;
    pids.extend(found);
    // (stacking index or MAX, app index, top path order) → skeleton
    let mut roots: Vec<(usize, usize, usize, Skel)> = Vec::new();
    let mut budget = max_nodes;
    let mut seen = HashSet::new();
    // Every top-level whose rectangle binding asked for (the kept ones and the others;
    // `bind_tops` asks exactly for those `on_screen`).
    let mut top_keys: Vec<Key> = Vec::new();
    // Every application's top-levels bound to windows, all at once.
    let pre = &pre;
    let bound_all = join_all(read.iter().map(|app| {
        let pid = pids.get(&app.bus).copied().flatten();
        let tops: Vec<Item> = app
            .tops
            .iter()
            .filter_map(|p| app.items.get(p).cloned())
            .collect();
        async move {
            let bound = bind_tops(bus, pid, &app.bus, &tops, wins, pre).await;
            (tops, bound)
        }
    }))
    .await;
    for ((ai, app), (tops, bound)) in read.iter().enumerate().zip(bound_all) {
        top_keys.extend(
            tops.iter()
                .filter(|t| on_screen(t))
                .map(|t| (app.bus.clone(), t.path.clone())),
        );
        let order: HashMap<&str, usize> = app
            .tops
            .iter()
            .enumerate()
            .map(|(i, p)| (p.as_str(), i))
            .collect();
        for (item, top, id) in bound {
            let wanted = match window {
                Some(w) => id == Some(w),
                None => top.showing,
            };
            if !wanted {
                continue;
            }
            let stack = id
                .and_then(|id| wins.iter().position(|w| w.info.id == id))
                .unwrap_or(usize::MAX);
            let pos = order.get(item.path.as_str()).copied().unwrap_or(usize::MAX);
            roots.push((stack, ai, pos, {
                let mut s = Skel {
                    app: ai,
                    top: true,
                    item: item.clone(),
                    name: top_name(&item, id, wins),
                    window_id: id,
                    rect: top.rect,
                    children: Vec::new(),
                };
                s.item.children.clear();
                s
            }));
        }
    }
    roots.sort_by_key(|r| (r.0, r.1, r.2));
    let mut out_skels = Vec::new();
    for (_, ai, _, mut root) in roots {
        let Some(rest) = budget.checked_sub(1) else {
            break;
        };
        budget = rest;
        seen.insert((ai, root.item.path.clone()));
        let app = &read[ai];
        if let Some(full) = app.items.get(&root.item.path)
            && full.states.showing()
        {
            for c in &full.children {
                if budget == 0 {
                    break;
                }
                if let Some(n) = build(app, ai, c, &mut budget, 1, &mut seen) {
                    root.children.push(n);
                }
            }
        }
        out_skels.push(root);
    }
    // Rectangles (not of layout-only boxes) and values of every kept node: the answers
    // sent ahead, the rest all in flight together.
    let mut flat = Vec::new();
    for s in &out_skels {
        collect(s, &mut flat);
    }
    let extras = join_all(flat.iter().map(|s| {
        let app = read[s.app].bus.as_str();
        async move {
            let key = (app.to_string(), s.item.path.clone());
            let rect = if s.rect.is_some() {
                s.rect
            } else if rect_wanted(&s.item) {
                match pre.rects.get(&key) {
                    Some(r) => *r,
                    None => extents(bus, app, &s.item.path).await,
                }
            } else {
                None
            };
            let value = match pre.numbers.get(&key) {
                Some(v) if number_read(&s.item) => v.clone(),
                _ => value(bus, app, &s.item).await,
            };
            (rect, value)
        }
    }))
    .await;
    let requests = Requests {
        rects: top_keys
            .into_iter()
            .chain(
                flat.iter()
                    .filter(|s| !s.top && rect_wanted(&s.item))
                    .map(|s| (read[s.app].bus.clone(), s.item.path.clone())),
            )
            .collect(),
        numbers: flat
            .iter()
            .filter(|s| number_read(&s.item))
            .map(|s| (read[s.app].bus.clone(), s.item.path.clone()))
            .collect(),
    };
    recent.put(window, requests);
    let mut extra: Extras = HashMap::new();
    for (s, e) in flat.iter().zip(extras) {
        extra.insert((s.app, s.item.path.clone()), e);
    }
    Ok(out_skels
        .into_iter()
        .map(|s| finish(s, &read, &extra))
        .collect())
}

fn finish(s: Skel, apps: &[App], extra: &Extras) -> RawNode {
    let (rect, value) = extra
        .get(&(s.app, s.item.path.clone()))
        .cloned()
        .unwrap_or((s.rect, None));
    let bus = apps.get(s.app).map(|a| a.bus.as_str()).unwrap_or_default();
    RawNode {
        handle: handle(bus, &s.item.path),
        role: node_role(&s.item, s.top),
        name: s.name,
        value: if s.item.role == roles::r::PASSWORD_TEXT {
            None
        } else {
            value
        },
        states: roles::states(s.item.role, s.item.states),
        rect,
        window_id: s.window_id,
        children: s
            .children
            .into_iter()
            .map(|c| finish(c, apps, extra))
            .collect(),
    }
}

/// The top-levels of an application read directly (for element re-reads).
pub(crate) async fn read_tops(bus: &Bus, app: &str) -> Vec<Item> {
    let kids = bus
        .call::<Vec<Ref>>(app, ROOT_PATH, ACCESSIBLE, "GetChildren", &())
        .await
        .unwrap_or_default();
    let items = join_all(
        kids.iter()
            .filter(|(b, _)| b == app || b.is_empty())
            .map(|(_, p)| tree::read_item(bus, app, p.as_str())),
    )
    .await;
    items.into_iter().filter_map(|r| r.ok().flatten()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roles::States;

    fn item(path: &str, showing: bool, children: &[&str]) -> Item {
        let st = if showing {
            (1u64 << roles::s::SHOWING) | (1u64 << roles::s::VISIBLE)
        } else {
            0
        };
        Item {
            path: path.into(),
            parent: None,
            index: 0,
            role: roles::r::PANEL,
            name: path.into(),
            states: States(st),
            ifaces: 0,
            children: children.iter().map(|c| c.to_string()).collect(),
        }
    }

    fn count(n: &Skel) -> usize {
        1 + n.children.iter().map(count).sum::<usize>()
    }

    #[test]
    fn only_numbers_are_asked_ahead_and_never_of_a_password_field() {
        let mut it = item("/s", true, &[]);
        it.role = roles::r::SLIDER;
        assert!(!number_read(&it), "no Value interface");
        it.ifaces = iface::VALUE | iface::COMPONENT;
        assert!(number_read(&it));
        assert!(rect_wanted(&it));
        it.role = roles::r::ENTRY;
        it.ifaces = iface::TEXT | iface::COMPONENT;
        assert!(!number_read(&it), "text is read in the snapshot itself");
        it.role = roles::r::PASSWORD_TEXT;
        it.ifaces |= iface::VALUE;
        assert!(!number_read(&it));
        it.role = roles::r::SEPARATOR;
        it.name.clear();
        assert!(!rect_wanted(&it), "a separator is a layout node");
    }

    #[test]
    fn only_the_same_scope_and_present_applications_are_asked_ahead() {
        let key = |a: &str, p: &str| (a.to_string(), p.to_string());
        let mut recent = Recent::default();
        let apps = [":1.1".to_string()];
        assert!(
            planned(&recent, None, &apps).0.is_empty(),
            "no snapshot yet"
        );
        recent.put(
            Some(7),
            Requests {
                rects: vec![key(":1.1", "/a"), key(":1.2", "/b")],
                numbers: vec![key(":1.1", "/n")],
            },
        );
        let (r, n) = planned(&recent, Some(7), &apps);
        assert_eq!(r, [&key(":1.1", "/a")], "only applications still present");
        assert_eq!(n, [&key(":1.1", "/n")]);
        let (r, n) = planned(&recent, None, &apps);
        assert!(r.is_empty() && n.is_empty(), "another scope");

        // The latest snapshot of a scope replaces its requests; the oldest scope goes
        // when there are too many.
        recent.put(
            Some(7),
            Requests {
                rects: vec![key(":1.1", "/c")],
                numbers: vec![],
            },
        );
        assert_eq!(planned(&recent, Some(7), &apps).0, [&key(":1.1", "/c")]);
        for w in 100..100 + SCOPES as u64 - 1 {
            recent.put(Some(w), Requests::default());
        }
        assert!(recent.get(Some(7)).is_some(), "{SCOPES} scopes kept");
        recent.put(None, Requests::default());
        assert!(recent.get(Some(7)).is_none(), "the oldest scope went");
        assert_eq!(recent.scopes.len(), SCOPES);
    }

    #[test]
    fn a_top_level_container_is_a_window() {
        let mut it = item("/w", true, &[]);
        it.role = roles::r::FILLER;
        assert_eq!(node_role(&it, true), Role::Window, "Qt's plain top-level");
        assert_eq!(node_role(&it, false), Role::Group);
        it.role = roles::r::PANEL;
        assert_eq!(node_role(&it, true), Role::Window);
        it.role = roles::r::DIALOG;
        assert_eq!(node_role(&it, true), Role::Dialog);
        it.role = roles::r::BUTTON;
        assert_eq!(node_role(&it, true), Role::Button, "only containers");
    }

    #[test]
    fn hidden_containers_are_leaves_and_the_budget_holds() {
        let mut app = App::default();
        for it in [
            item("/a", true, &["/b", "/c"]),
            item("/b", false, &["/d"]),
            item("/c", true, &["/e", "/a"]),
            item("/d", true, &[]),
            item("/e", true, &[]),
        ] {
            app.items.insert(it.path.clone(), it);
        }
        let mut budget = 100;
        let mut seen = HashSet::new();
        let s = build(&app, 0, "/a", &mut budget, 0, &mut seen).unwrap();
        // /a, /b (not entered), /c, /e; the cycle back to /a is cut.
        assert_eq!(count(&s), 4);
        assert_eq!(budget, 96);
        let mut budget = 2;
        let s = build(&app, 0, "/a", &mut budget, 0, &mut HashSet::new()).unwrap();
        assert_eq!(count(&s), 2);
        assert_eq!(budget, 0);
    }
}
