//! Accessibility snapshots (PROTOCOL §4.2): levels and caps applied to the driver's
//! raw tree, canvas rects, and the store that lets only the latest snapshot be acted on.

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
}

/// The latest snapshot of a session.
#[derive(Debug, Default)]
pub struct Snapshots {
    latest: Option<(String, HashMap<u32, Entry>)>,
}

/// A built snapshot.
pub struct Built {
    pub snapshot_id: String,
    pub tree: A11yNode,
    pub node_count: usize,
    pub truncated: bool,
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
            },
        );
        let mut states = raw.states.clone();
        states.sort();
        states.dedup();
        let mut node = A11yNode {
            id,
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
        self.latest = Some((snapshot_id.clone(), b.entries));
        Built {
            snapshot_id,
            tree,
            node_count,
            truncated: b.truncated,
        }
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

    /// Forgets the latest snapshot (a new session starts clean).
    pub fn clear(&mut self) {
        self.latest = None;
    }
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
