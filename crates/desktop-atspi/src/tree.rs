//! Reading an application's accessible objects: in bulk through `Cache.GetItems`
//! (the current format, or the legacy one), else by walking the tree with pipelined
//! calls. Qt answers the legacy format but always with an empty list, so Qt
//! applications are walked. Then the per-node extras a snapshot needs (screen rectangles and
//! values) for the nodes it keeps, all in flight at once.

use std::collections::HashMap;

use futures_util::future::join_all;
use zbus::zvariant::OwnedObjectPath;

use super::bus::{ACCESSIBLE, Bus, ROOT_PATH, Ref, is_gone};
use super::roles::{self, States};
use cc_desktop::DriverError;

/// Interfaces a node offers, as bits.
pub(crate) mod iface {
    pub const COMPONENT: u32 = 1;
    pub const ACTION: u32 = 2;
    pub const TEXT: u32 = 4;
    pub const EDITABLE_TEXT: u32 = 8;
    pub const VALUE: u32 = 16;
    pub const SELECTION: u32 = 32;

    /// The bits of a list of interface names.
    pub fn bits(names: &[String]) -> u32 {
        names.iter().fold(0, |acc, n| {
            acc | match n.as_str() {
                "org.a11y.atspi.Component" => COMPONENT,
                "org.a11y.atspi.Action" => ACTION,
                "org.a11y.atspi.Text" => TEXT,
                "org.a11y.atspi.EditableText" => EDITABLE_TEXT,
                "org.a11y.atspi.Value" => VALUE,
                "org.a11y.atspi.Selection" => SELECTION,
                _ => 0,
            }
        })
    }
}

/// One accessible object of an application.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub path: String,
    pub parent: Option<String>,
    pub index: i32,
    pub role: u32,
    pub name: String,
    pub states: States,
    pub ifaces: u32,
    pub children: Vec<String>,
}

/// Every object of one application, by path.
#[derive(Debug, Clone, Default)]
pub(crate) struct App {
    pub bus: String,
    pub items: HashMap<String, Item>,
    /// Top-level objects (children of the application root), in the app's order.
    pub tops: Vec<String>,
}

/// `a((so)(so)(so)iiassusau)`: object, app, parent, index, child count, interfaces,
/// name, role, description, states.
type CacheItem = (
    Ref,
    Ref,
    Ref,
    i32,
    i32,
    Vec<String>,
    String,
    u32,
    String,
    Vec<u32>,
);
/// `a((so)(so)(so)a(so)assusau)`: object, app, parent, children, interfaces, name,
/// role, description, states.
type LegacyItem = (
    Ref,
    Ref,
    Ref,
    Vec<Ref>,
    Vec<String>,
    String,
    u32,
    String,
    Vec<u32>,
);

const CACHE_PATH: &str = "/org/a11y/atspi/cache";
const CACHE: &str = "org.a11y.atspi.Cache";

/// Objects with more children than this are not walked into (huge tables).
const MAX_CHILDREN: usize = 2000;

impl App {
    fn from_parts(bus: &str, mut items: HashMap<String, Item>, ordered: bool) -> App {
        if !ordered {
            // Children from parent links, ordered by index in parent.
            let mut kids: HashMap<String, Vec<(i32, String)>> = HashMap::new();
            for it in items.values() {
                if let Some(p) = &it.parent {
                    kids.entry(p.clone())
                        .or_default()
                        .push((it.index, it.path.clone()));
                }
            }
            for (p, mut list) in kids {
                list.sort();
                if let Some(it) = items.get_mut(&p) {
                    it.children = list.into_iter().map(|(_, c)| c).collect();
                }
            }
        }
        let mut tops: Vec<(i32, String)> = items
            .values()
            .filter(|it| match &it.parent {
                Some(p) => p == ROOT_PATH || !items.contains_key(p),
                None => true,
            })
            .filter(|it| it.path != ROOT_PATH)
            .map(|it| (it.index, it.path.clone()))
            .collect();
        tops.sort();
        // The root's own child order wins when the root is in the set.
        let tops = match items.get(ROOT_PATH) {
            Some(root) if !root.children.is_empty() => root.children.clone(),
            _ => tops.into_iter().map(|(_, p)| p).collect(),
        };
        App {
            bus: bus.to_string(),
            items,
            tops,
        }
    }
}

fn same_bus(r: &Ref, bus: &str) -> Option<String> {
    (r.0 == bus || r.0.is_empty()).then(|| r.1.as_str().to_string())
}

/// The format of a `Cache.GetItems` reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CacheFormat {
    /// `a((so)(so)(so)iiassusau)`: at-spi2-atk ≥ 2.34 (GTK3), with index and child count.
    Current,
    /// `a((so)(so)(so)a(so)assusau)`: older at-spi2-atk, and Qt. Qt's bridge (5.15.8
    /// in Debian 12, as in Qt 6) never fills its cache: it answers an empty list, with
    /// introspection data that even claims `a((so)(so)a(so)assusau)`.
    Legacy,
}

/// Decodes a `Cache.GetItems` reply of application `app`: the current format
/// `a((so)(so)(so)iiassusau)` first, then the legacy `a((so)(so)(so)a(so)assusau)`.
/// Objects of another bus name are dropped (a reply cannot describe other apps).
/// `None` when the reply has neither shape.
pub(crate) fn decode_cache(app: &str, msg: &zbus::Message) -> Option<(CacheFormat, App)> {
    let body = msg.body();
    if let Ok(list) = body.deserialize::<Vec<CacheItem>>() {
        let items = list
            .into_iter()
            .filter_map(|(obj, _, parent, index, _, ifaces, name, role, _, st)| {
                let path = same_bus(&obj, app)?;
                Some((
                    path.clone(),
                    Item {
                        path,
                        parent: same_bus(&parent, app).filter(|p| p != "/"),
                        index,
                        role,
                        name,
                        states: States::from_words(&st),
                        ifaces: iface::bits(&ifaces),
                        children: Vec::new(),
                    },
                ))
            })
            .collect::<HashMap<_, _>>();
        return Some((CacheFormat::Current, App::from_parts(app, items, false)));
    }
    if let Ok(list) = body.deserialize::<Vec<LegacyItem>>() {
        let items = list
            .into_iter()
            .filter_map(|(obj, _, parent, children, ifaces, name, role, _, st)| {
                let path = same_bus(&obj, app)?;
                Some((
                    path.clone(),
                    Item {
                        path,
                        parent: same_bus(&parent, app).filter(|p| p != "/"),
                        index: 0,
                        role,
                        name,
                        states: States::from_words(&st),
                        ifaces: iface::bits(&ifaces),
                        children: children.iter().filter_map(|c| same_bus(c, app)).collect(),
                    },
                ))
            })
            .collect::<HashMap<_, _>>();
        return Some((CacheFormat::Legacy, App::from_parts(app, items, true)));
    }
    None
}

/// Reads one application: bulk cache first (current or legacy format), else a walk
/// (toolkits without a cache, and Qt, whose cache is always empty).
pub(crate) async fn read_app(bus: &Bus, app: &str, max_nodes: usize) -> App {
    if bus.walk_only {
        return walk(bus, app, max_nodes).await;
    }
    if let Ok(msg) = bus
        .conn
        .call_method(Some(app), CACHE_PATH, Some(CACHE), "GetItems", &())
        .await
    {
        match decode_cache(app, &msg) {
            // An empty cache (Qt's is always empty) says nothing: walk.
            Some((_, items)) if items.items.is_empty() => {}
            Some((CacheFormat::Current, items)) => return items,
            Some((CacheFormat::Legacy, mut items)) => {
                // Legacy items carry no index: order top-levels as the root lists them.
                if let Ok(kids) = bus
                    .call::<Vec<Ref>>(app, ROOT_PATH, ACCESSIBLE, "GetChildren", &())
                    .await
                {
                    let order: Vec<String> = kids.iter().filter_map(|c| same_bus(c, app)).collect();
                    if !order.is_empty() {
                        items.tops = order;
                    }
                }
                return items;
            }
            None => {}
        }
    }
    walk(bus, app, max_nodes).await
}

/// Reads one object's own facts (not its children). `Ok(None)` when it is gone
/// (its application quit, the object was destroyed, or it is defunct).
pub(crate) async fn read_item(
    bus: &Bus,
    app: &str,
    path: &str,
) -> Result<Option<Item>, DriverError> {
    let (role, st, ifaces, name, parent, index) = tokio::join!(
        bus.call::<u32>(app, path, ACCESSIBLE, "GetRole", &()),
        bus.call::<Vec<u32>>(app, path, ACCESSIBLE, "GetState", &()),
        bus.call::<Vec<String>>(app, path, ACCESSIBLE, "GetInterfaces", &()),
        bus.prop(app, path, ACCESSIBLE, "Name"),
        bus.prop(app, path, ACCESSIBLE, "Parent"),
        bus.call::<i32>(app, path, ACCESSIBLE, "GetIndexInParent", &()),
    );
    let fail = |e: zbus::Error| -> Result<Option<Item>, DriverError> {
        if is_gone(&e) {
            Ok(None)
        } else {
            Err(DriverError::Failed(format!("accessible {app}{path}: {e}")))
        }
    };
    let role = match role {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let states = match st {
        Ok(s) => States::from_words(&s),
        Err(e) => return fail(e),
    };
    if states.has(roles::s::DEFUNCT) {
        return Ok(None);
    }
    let parent = parent
        .ok()
        .and_then(|v| <(String, OwnedObjectPath)>::try_from(v).ok())
        .and_then(|r| same_bus(&r, app))
        .filter(|p| p != "/");
    Ok(Some(Item {
        path: path.to_string(),
        parent,
        index: index.unwrap_or(-1),
        role,
        name: name.ok().map(super::bus::string_of).unwrap_or_default(),
        states,
        ifaces: iface::bits(&ifaces.unwrap_or_default()),
        children: Vec::new(),
    }))
}

/// Breadth-first walk for toolkits without a cache; each level's calls are in flight
/// together. The snapshot keeps nodes depth first, so the walk reads well past
/// `max_nodes` (hidden subtrees are read but not kept) before it stops.
async fn walk(bus: &Bus, app: &str, max_nodes: usize) -> App {
    let max_nodes = max_nodes.saturating_mul(4).clamp(1000, 20_000);
    let mut items: HashMap<String, Item> = HashMap::new();
    let mut level: Vec<(String, Option<String>)> = vec![(ROOT_PATH.to_string(), None)];
    let mut tops = Vec::new();
    while !level.is_empty() && items.len() < max_nodes {
        let reads = join_all(level.iter().map(|(path, _)| async move {
            let kids = bus
                .call::<Vec<Ref>>(app, path, ACCESSIBLE, "GetChildren", &())
                .await
                .unwrap_or_default();
            let item = if path == ROOT_PATH {
                None
            } else {
                read_item(bus, app, path).await.ok().flatten()
            };
            (item, kids)
        }))
        .await;
        let mut next = Vec::new();
        for ((path, parent), (item, kids)) in level.into_iter().zip(reads) {
            let kids: Vec<String> = kids
                .iter()
                .filter_map(|c| same_bus(c, app))
                .filter(|c| c != &path)
                .take(MAX_CHILDREN)
                .collect();
            if path == ROOT_PATH {
                tops = kids.clone();
            } else {
                let Some(mut it) = item else {
                    continue;
                };
                it.parent = parent;
                let manages = it.states.has(roles::s::MANAGES_DESCENDANTS);
                it.children = if manages { Vec::new() } else { kids.clone() };
                items.insert(path.clone(), it);
                if manages {
                    continue;
                }
            }
            for k in kids {
                if !items.contains_key(&k) && items.len() + next.len() < max_nodes {
                    next.push((k, Some(path.clone())));
                }
            }
        }
        level = next;
    }
    App {
        bus: app.to_string(),
        items,
        tops,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The signature of Qt's reply to `Cache.GetItems`, captured from Debian's Qt
    /// 5.15.8 with `busctl --address=<a11y bus> call <app> /org/a11y/atspi/cache
    /// org.a11y.atspi.Cache GetItems` (`tests/x11_qt.rs` checks it again live).
    const QT_REPLY_SIGNATURE: &str = "a((so)(so)(so)a(so)assusau)";

    fn path(p: &str) -> OwnedObjectPath {
        OwnedObjectPath::try_from(p).unwrap()
    }

    fn r(bus: &str, p: &str) -> Ref {
        (bus.to_string(), path(p))
    }

    fn reply<B: serde::Serialize + zbus::zvariant::DynamicType>(body: &B) -> zbus::Message {
        zbus::Message::signal(CACHE_PATH, CACHE, "GetItems")
            .unwrap()
            .build(body)
            .unwrap()
    }

    const SHOWING: [u32; 2] = [(1 << 25) | (1 << 30), 0];

    #[test]
    fn qts_empty_legacy_reply_means_walk() {
        let msg = reply(&Vec::<LegacyItem>::new());
        assert_eq!(msg.body().signature().to_string(), QT_REPLY_SIGNATURE);
        let (format, app) = decode_cache(":1.4", &msg).unwrap();
        assert_eq!(format, CacheFormat::Legacy);
        assert!(app.items.is_empty(), "read_app walks such an application");
    }

    #[test]
    fn legacy_items_keep_their_children_and_drop_other_buses() {
        let app = ":1.4";
        let items: Vec<LegacyItem> = vec![
            (
                r(app, "/w"),
                r(app, ROOT_PATH),
                r(app, ROOT_PATH),
                vec![r(app, "/b"), r(":1.9", "/x"), r(app, "/a")],
                vec!["org.a11y.atspi.Component".into()],
                "Calculator".into(),
                roles::r::FILLER,
                String::new(),
                SHOWING.to_vec(),
            ),
            (
                r(app, "/a"),
                r(app, ROOT_PATH),
                r(app, "/w"),
                vec![],
                vec![
                    "org.a11y.atspi.Action".into(),
                    "org.a11y.atspi.Component".into(),
                ],
                "7".into(),
                roles::r::BUTTON,
                String::new(),
                SHOWING.to_vec(),
            ),
            (
                r(app, "/b"),
                r(app, ROOT_PATH),
                r(app, "/w"),
                vec![],
                vec!["org.a11y.atspi.EditableText".into()],
                String::new(),
                roles::r::ENTRY,
                String::new(),
                SHOWING.to_vec(),
            ),
            // Another application's object is never taken for this one's.
            (
                r(":1.9", "/a"),
                r(":1.9", ROOT_PATH),
                r(":1.9", "/"),
                vec![],
                vec![],
                "other".into(),
                roles::r::BUTTON,
                String::new(),
                SHOWING.to_vec(),
            ),
        ];
        let (format, got) = decode_cache(app, &reply(&items)).unwrap();
        assert_eq!(format, CacheFormat::Legacy);
        assert_eq!(got.items.len(), 3);
        assert_eq!(got.tops, ["/w"]);
        let w = &got.items["/w"];
        assert_eq!(
            w.children,
            ["/b", "/a"],
            "the application's order, its own objects"
        );
        assert_eq!(w.parent.as_deref(), Some(ROOT_PATH));
        let a = &got.items["/a"];
        assert_eq!((a.name.as_str(), a.role), ("7", roles::r::BUTTON));
        assert_eq!(a.ifaces, iface::ACTION | iface::COMPONENT);
        assert!(a.states.showing());
        assert_eq!(got.items["/b"].ifaces, iface::EDITABLE_TEXT);
    }

    #[test]
    fn current_items_are_ordered_by_index() {
        let app = ":1.2";
        let item = |p: &str, parent: &str, index: i32, name: &str| -> CacheItem {
            (
                r(app, p),
                r(app, ROOT_PATH),
                r(app, parent),
                index,
                0,
                vec![],
                name.into(),
                roles::r::PUSH_BUTTON_MENU,
                String::new(),
                SHOWING.to_vec(),
            )
        };
        let items = vec![
            item("/f", ROOT_PATH, 0, "frame"),
            item("/2", "/f", 1, "second"),
            item("/1", "/f", 0, "first"),
        ];
        let (format, got) = decode_cache(app, &reply(&items)).unwrap();
        assert_eq!(format, CacheFormat::Current);
        assert_eq!(got.tops, ["/f"]);
        assert_eq!(got.items["/f"].children, ["/1", "/2"]);
    }

    #[test]
    fn another_shape_is_no_cache() {
        assert!(decode_cache(":1.2", &reply(&("not a cache",))).is_none());
        assert!(decode_cache(":1.2", &reply(&Vec::<(String, u32)>::new())).is_none());
    }
}
