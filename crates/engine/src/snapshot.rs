//! Accessibility snapshots (PROTOCOL §4.2): levels and caps applied to the driver's
//! raw tree, canvas rects, and the store that lets only the latest snapshot's node ids
//! be acted on, while element references (`ref`) stay valid across snapshots as long
//! as their element lives.

use std::collections::HashMap;

use cc_desktop::{ElementHandle, RawNode};
use cc_protocol::{A11yNode, ErrorCode, Role, StateFlag, ToolError};

use crate::clock::random_hex;
use crate::coords::Canvas;

/// Caps of one snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    pub depth: usize,
    pub max_nodes: usize,
    pub name_len: usize,
    pub include_rects: bool,
}

impl Caps {
    /// The caps of a level; `max_name_len` is the standard level's name cap.
    pub fn for_level(level: &str, max_name_len: usize) -> Caps {
        let (depth, max_nodes, name_len) = match level {
            "skeleton" => (2, 80, 32.min(max_name_len)),
            "full" => (12, 2000, 256.max(max_name_len)),
            _ => (4, 400, max_name_len),
        };
        Caps {
            depth,
            max_nodes,
            name_len,
            include_rects: true,
        }
    }
}

/// What is remembered of a node to act on it later.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub handle: ElementHandle,
    pub role: Role,
    /// The full name (the snapshot may show it truncated).
    pub name: String,
    /// The owning top-level window.
    pub window_id: Option<u64>,
    pub password: bool,
    /// The element's stable reference ([`element_ref`]).
    pub element_ref: String,
}

/// How many element references a session remembers; past that, the ones not in the
/// latest snapshot are forgotten (and refused as stale).
const MAX_REFS: usize = 20_000;

/// The latest snapshot of a session, the element references seen so far, and what
/// the latest snapshot showed (for the next one's difference).
#[derive(Debug, Default)]
pub struct Snapshots {
    latest: Option<(String, HashMap<u32, Entry>)>,
    refs: HashMap<String, Entry>,
    shown: Option<(String, HashMap<String, A11yNode>)>,
}

/// The stable reference of an element: a digest of the driver's handle, which names
/// the element while it lives (an AT-SPI object path, a virtual widget). Identity is
/// re-checked before every use, so a reused handle is refused, never retargeted.
pub fn element_ref(handle: &ElementHandle) -> String {
    // FNV-1a: stable across builds and processes, unlike the std hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in handle.0.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("e{:012x}", h & 0xffff_ffff_ffff)
}

/// A built snapshot.
pub struct Built {
    pub snapshot_id: String,
    pub tree: A11yNode,
    pub node_count: usize,
    pub truncated: bool,
    /// What changed since the previous snapshot (none for the session's first).
    pub diff: Option<serde_json::Value>,
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

struct Builder<'a> {
    caps: Caps,
    canvas: &'a Canvas,
    next_id: u32,
    truncated: bool,
    entries: HashMap<u32, Entry>,
}

impl Builder<'_> {
    fn node(&mut self, raw: &RawNode, depth: usize, window: Option<u64>) -> Option<A11yNode> {
        if self.next_id as usize >= self.caps.max_nodes {
            self.truncated = true;
            return None;
        }
        let id = self.next_id;
        self.next_id += 1;
        let window = raw.window_id.or(window);
        let password = raw.states.contains(&StateFlag::Password);
        self.entries.insert(
            id,
            Entry {
                handle: raw.handle.clone(),
                role: raw.role,
                name: raw.name.clone(),
                window_id: window,
                password,
                element_ref: element_ref(&raw.handle),
            },
        );
        let mut states = raw.states.clone();
        states.sort();
        states.dedup();
        let mut node = A11yNode {
            id,
            element_ref: Some(element_ref(&raw.handle)),
            role: raw.role,
            name: truncate(&raw.name, self.caps.name_len),
            // Defense in depth: a password value is never returned, whatever the driver did.
            value: if password {
                None
            } else {
                raw.value
                    .as_ref()
                    .map(|v| truncate(v, self.caps.name_len.max(256)))
            },
            states,
            rect: if self.caps.include_rects {
                raw.rect.as_ref().map(|r| self.canvas.rect_from_physical(r))
            } else {
                None
            },
            window_id: raw.window_id,
            children: Vec::new(),
        };
        if !raw.children.is_empty() {
            if depth >= self.caps.depth {
                self.truncated = true;
            } else {
                for c in &raw.children {
                    match self.node(c, depth + 1, window) {
                        Some(n) => node.children.push(n),
                        None => break,
                    }
                }
            }
        }
        Some(node)
    }
}

impl Snapshots {
    /// Builds a snapshot from the driver's windows and makes it the latest.
    /// `scoped`: the tree is one window (depth 1) rather than a desktop root (depth 0).
    pub fn build(
        &mut self,
        roots: &[RawNode],
        scoped: bool,
        caps: Caps,
        canvas: &Canvas,
        walk_capped: bool,
    ) -> Built {
        let mut b = Builder {
            caps,
            canvas,
            next_id: 0,
            truncated: walk_capped,
            entries: HashMap::new(),
        };
        let tree = if scoped && roots.len() == 1 {
            b.node(&roots[0], 1, None)
        } else {
            None
        };
        let tree = match tree {
            Some(t) => t,
            None => {
                let id = b.next_id;
                b.next_id += 1;
                let s = &canvas.surface;
                let mut root = A11yNode {
                    id,
                    element_ref: None,
                    role: Role::Pane,
                    name: "Desktop".into(),
                    value: None,
                    states: vec![StateFlag::Visible],
                    rect: caps.include_rects.then_some([
                        0,
                        0,
                        s.display_width_px as i32,
                        s.display_height_px as i32,
                    ]),
                    window_id: None,
                    children: Vec::new(),
                };
                for r in roots {
                    match b.node(r, 1, None) {
                        Some(n) => root.children.push(n),
                        None => break,
                    }
                }
                root
            }
        };
        let snapshot_id = format!("snap-{}", random_hex(8));
        let node_count = b.next_id as usize;
        if self.refs.len() + b.entries.len() > MAX_REFS {
            self.refs.clear();
        }
        for e in b.entries.values() {
            self.refs.insert(e.element_ref.clone(), e.clone());
        }
        self.latest = Some((snapshot_id.clone(), b.entries));
        let flat = flatten(&tree);
        let diff = self
            .shown
            .as_ref()
            .map(|(since, before)| diff(since, before, &flat));
        self.shown = Some((snapshot_id.clone(), flat));
        Built {
            snapshot_id,
            tree,
            node_count,
            truncated: b.truncated,
            diff,
        }
    }

    /// The element a reference names, as it was last seen; `stale_element` when this
    /// session never saw it (or forgot it).
    pub fn by_ref(&self, r: &str) -> Result<&Entry, ToolError> {
        self.refs.get(r).ok_or_else(|| {
            ToolError::with_data(
                ErrorCode::StaleElement,
                format!("{r:?} names no element this session has seen; take a fresh a11y.snapshot"),
                serde_json::json!({"ref": r}),
            )
        })
    }

    /// Remembers an element found by a selector, so its reference works from now on.
    pub fn remember(&mut self, e: &Entry) {
        if self.refs.len() >= MAX_REFS {
            self.refs.clear();
        }
        self.refs.insert(e.element_ref.clone(), e.clone());
    }

    /// Resolves a node of the latest snapshot; any other snapshot is `stale_snapshot`.
    pub fn entry(&self, snapshot_id: &str, node_id: u32) -> Result<&Entry, ToolError> {
        match &self.latest {
            Some((id, entries)) if id == snapshot_id => entries.get(&node_id).ok_or_else(|| {
                let msg = format!("snapshot {snapshot_id} has no node {node_id}");
                ToolError::with_data(
                    ErrorCode::InvalidArguments,
                    msg.clone(),
                    serde_json::json!({"issues": [{"path": "node_id", "message": msg}]}),
                )
            }),
            _ => Err(ToolError::new(
                ErrorCode::StaleSnapshot,
                format!(
                    "{snapshot_id} is not the latest snapshot; take a fresh a11y.snapshot first"
                ),
            )),
        }
    }

    /// Forgets the latest snapshot and every reference (a new session starts clean).
    pub fn clear(&mut self) {
        self.latest = None;
        self.refs.clear();
        self.shown = None;
    }
}

/// Every referenced node of a tree, without its children, by reference.
fn flatten(tree: &A11yNode) -> HashMap<String, A11yNode> {
    let mut out = HashMap::new();
    let mut stack = vec![tree];
    while let Some(n) = stack.pop() {
        stack.extend(n.children.iter());
        if let Some(r) = &n.element_ref {
            let mut flat = n.clone();
            flat.children = Vec::new();
            out.insert(r.clone(), flat);
        }
    }
    out
}

/// What changed between two snapshots, element by element (by reference): the nodes
/// added (without their children), the ones removed, and for the others each member
/// that differs as `[before, after]`. Node ids are those of the new snapshot.
fn diff(
    since: &str,
    before: &HashMap<String, A11yNode>,
    after: &HashMap<String, A11yNode>,
) -> serde_json::Value {
    use serde_json::{Value, json};
    let mut added: Vec<&A11yNode> = after
        .iter()
        .filter(|(r, _)| !before.contains_key(*r))
        .map(|(_, n)| n)
        .collect();
    added.sort_by_key(|n| n.id);
    let mut removed: Vec<&A11yNode> = before
        .iter()
        .filter(|(r, _)| !after.contains_key(*r))
        .map(|(_, n)| n)
        .collect();
    removed.sort_by(|a, b| a.element_ref.cmp(&b.element_ref));
    let mut changed: Vec<(u32, Value)> = Vec::new();
    for (r, new) in after {
        let Some(old) = before.get(r) else { continue };
        let mut fields = serde_json::Map::new();
        if old.name != new.name {
            fields.insert("name".into(), json!([old.name, new.name]));
        }
        if old.value != new.value {
            fields.insert("value".into(), json!([old.value, new.value]));
        }
        if old.states != new.states {
            fields.insert("states".into(), json!([old.states, new.states]));
        }
        if old.rect != new.rect {
            fields.insert("rect".into(), json!([old.rect, new.rect]));
        }
        if !fields.is_empty() {
            changed.push((
                new.id,
                json!({"id": new.id, "ref": r, "role": new.role, "name": new.name, "changes": fields}),
            ));
        }
    }
    changed.sort_by_key(|(id, _)| *id);
    json!({
        "since": since,
        "added": added,
        "removed": removed
            .iter()
            .map(|n| json!({"ref": n.element_ref, "role": n.role, "name": n.name}))
            .collect::<Vec<_>>(),
        "changed": changed.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_desktop::{Layout, PhysicalDisplay};
    use cc_protocol::PhysicalRect;

    fn canvas() -> Canvas {
        Canvas::new(
            &Layout {
                displays: vec![PhysicalDisplay {
                    id: "0".into(),
                    name: "D".into(),
                    rect: PhysicalRect {
                        x: 0,
                        y: 0,
                        width: 200,
                        height: 100,
                    },
                    primary: true,
                }],
                generation: 0,
            },
            100,
        )
    }

    fn raw(name: &str, role: Role, children: Vec<RawNode>) -> RawNode {
        RawNode {
            handle: ElementHandle(name.into()),
            role,
            name: name.into(),
            value: Some("v".into()),
            states: vec![StateFlag::Visible, StateFlag::Enabled],
            rect: Some(PhysicalRect {
                x: 20,
                y: 10,
                width: 40,
                height: 20,
            }),
            window_id: None,
            children,
        }
    }

    #[test]
    fn depth_nodes_names_and_rects() {
        let mut w = raw(
            "a-very-long-window-title-indeed",
            Role::Window,
            vec![raw("b", Role::Group, vec![raw("c", Role::Button, vec![])])],
        );
        w.window_id = Some(7);
        let mut s = Snapshots::default();
        let caps = Caps {
            depth: 2,
            max_nodes: 10,
            name_len: 8,
            include_rects: true,
        };
        let b = s.build(&[w.clone()], false, caps, &canvas(), false);
        assert!(b.truncated, "depth cut the button");
        assert_eq!(b.node_count, 3);
        let win = &b.tree.children[0];
        assert_eq!(win.name.chars().count(), 8);
        assert_eq!(win.window_id, Some(7));
        assert_eq!(win.rect, Some([10, 5, 30, 15]));
        let e = s.entry(&b.snapshot_id, 2).unwrap();
        assert_eq!(e.window_id, Some(7));
        assert_eq!(e.name, "b");
        let b2 = s.build(
            &[w],
            true,
            Caps {
                depth: 5,
                max_nodes: 2,
                name_len: 64,
                include_rects: false,
            },
            &canvas(),
            false,
        );
        assert!(b2.truncated && b2.node_count == 2 && b2.tree.rect.is_none());
        assert_eq!(
            s.entry(&b.snapshot_id, 1).unwrap_err().code,
            ErrorCode::StaleSnapshot
        );
    }

    #[test]
    fn password_values_never_leave() {
        let mut p = raw("pw", Role::Edit, vec![]);
        p.states.push(StateFlag::Password);
        p.value = Some("hunter2".into());
        let mut s = Snapshots::default();
        let b = s.build(&[p], false, Caps::for_level("full", 64), &canvas(), false);
        assert!(!serde_json::to_string(&b.tree).unwrap().contains("hunter2"));
    }

    #[test]
    fn snapshot_ids_are_unique() {
        let mut s = Snapshots::default();
        let a = s
            .build(
                &[],
                false,
                Caps::for_level("standard", 64),
                &canvas(),
                false,
            )
            .snapshot_id;
        let b = s
            .build(
                &[],
                false,
                Caps::for_level("standard", 64),
                &canvas(),
                false,
            )
            .snapshot_id;
        assert_ne!(a, b);
        assert!(a.starts_with("snap-") && a.len() == 21);
    }
}
