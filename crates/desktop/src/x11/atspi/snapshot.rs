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
use crate::x11::windows::XWindow;
use crate::{DriverError, ElementHandle, RawNode};

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
    if roles::number_valued(it.role) && it.ifaces & iface::VALUE != 0 {
        let v = bus
            .prop(app, &it.path, "org.a11y.atspi.Value", "CurrentValue")
            .await
            .ok()?;
        return f64::try_from(v).ok().map(roles::format_number);
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

/// Top-levels of an application (sorted by path so every caller assigns alike) and
/// the windows they are bound to.
pub(crate) async fn bind_tops(
    bus: &Bus,
    pid: Option<u32>,
    app: &str,
    tops: &[Item],
    wins: &[XWindow],
) -> Vec<(Item, Top, Option<u64>)> {
    let mut tops: Vec<Item> = tops.to_vec();
    tops.sort_by(|a, b| a.path.cmp(&b.path));
    let rects = join_all(tops.iter().map(|t| async move {
        if t.states.showing() && t.ifaces & iface::COMPONENT != 0 {
            extents(bus, app, &t.path).await
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
pub(crate) fn top_name(item: &Item, window: Option<u64>, wins: &[XWindow]) -> String {
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
    wins: &[XWindow],
    window: Option<u64>,
    max_nodes: usize,
) -> Result<Vec<RawNode>, DriverError> {
    let apps: Vec<Ref> = bus.applications().await?;
    let names: Vec<String> = apps.into_iter().map(|(n, _)| n).collect();
    for n in &names {
        if !pids.contains_key(n) {
            let pid = bus.pid(n).await;
            pids.insert(n.clone(), pid);
        }
    }
    let read = join_all(names.iter().map(|n| tree::read_app(bus, n, max_nodes))).await;
    // (stacking index or MAX, app index, top path order) → skeleton
    let mut roots: Vec<(usize, usize, usize, Skel)> = Vec::new();
    let mut budget = max_nodes;
    let mut seen = HashSet::new();
    for (ai, app) in read.iter().enumerate() {
        let pid = pids.get(&app.bus).copied().flatten();
        let tops: Vec<Item> = app
            .tops
            .iter()
            .filter_map(|p| app.items.get(p).cloned())
            .collect();
        let bound = bind_tops(bus, pid, &app.bus, &tops, wins).await;
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
    // Rectangles (not of layout-only boxes) and values of every kept node, all requests
    // in flight together.
    let mut flat = Vec::new();
    for s in &out_skels {
        collect(s, &mut flat);
    }
    let extras = join_all(flat.iter().map(|s| {
        let app = read[s.app].bus.as_str();
        async move {
            let rect = if s.rect.is_some() {
                s.rect
            } else if s.item.states.showing()
                && s.item.ifaces & iface::COMPONENT != 0
                && !roles::layout_only(s.item.role, &s.item.name, s.item.states)
            {
                extents(bus, app, &s.item.path).await
            } else {
                None
            };
            (rect, value(bus, app, &s.item).await)
        }
    }))
    .await;
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
    use crate::x11::atspi::roles::States;

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
