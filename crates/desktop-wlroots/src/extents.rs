//! Placing accessibility rectangles of Wayland clients on the layout.
//!
//! A Wayland client does not know where its window is, so its AT-SPI extents (in every
//! coordinate type) are relative to its surface, client-side shadow included. The
//! compositor knows where the window's content is; the surface starts the shadow
//! margin before that. The margin is measured from the window's own accessible
//! frame, which spans the whole surface: what it exceeds the content by, split evenly
//! (GTK's shadow is symmetric but for a few pixels of vertical offset). A tiled window
//! has no shadow, so there the mapping is exact.

use std::collections::HashMap;

use cc_desktop::RawNode;
use cc_protocol::PhysicalRect;

use crate::windows::Window;

/// Where (0, 0) of a window's extents lies on the layout, per window id.
#[derive(Debug, Default)]
pub struct Origins {
    /// The shadow margin last measured per window (element re-reads reuse it).
    margins: HashMap<u64, (i32, i32)>,
}

fn shift(r: PhysicalRect, (dx, dy): (i32, i32)) -> PhysicalRect {
    PhysicalRect {
        x: r.x.saturating_add(dx),
        y: r.y.saturating_add(dy),
        ..r
    }
}

/// The shadow margin: how much a surface of `surface` size exceeds the content, halved.
fn margin(surface: PhysicalRect, content: PhysicalRect) -> (i32, i32) {
    let half = |s: u32, c: u32| (s.saturating_sub(c) / 2) as i32;
    (
        half(surface.width, content.width),
        half(surface.height, content.height),
    )
}

impl Origins {
    /// The offset to add to the extents of nodes of `window`, if they need one.
    pub fn offset(&self, wins: &[Window], window: Option<u64>) -> Option<(i32, i32)> {
        let w = wins.iter().find(|w| Some(w.top.info.id) == window)?;
        if !w.surface_extents {
            return None;
        }
        let (mx, my) = self.margins.get(&w.top.info.id).copied().unwrap_or((0, 0));
        Some((w.top.client.x - mx, w.top.client.y - my))
    }

    /// Maps a snapshot's rectangles to the layout, measuring each window's margin from
    /// its top-level node first.
    pub fn map_tree(&mut self, wins: &[Window], nodes: &mut [RawNode]) {
        for n in nodes {
            if let (Some(id), Some(r)) = (n.window_id, n.rect)
                && let Some(w) = wins.iter().find(|w| w.top.info.id == id)
                && w.surface_extents
            {
                self.margins.insert(id, margin(r, w.top.client));
            }
            match self.offset(wins, n.window_id) {
                Some(d) => shift_all(n, d),
                // Unbound top-levels of a Wayland client have no known place.
                None if n.window_id.is_none() => clear_rects(n),
                None => {}
            }
        }
    }
}

fn shift_all(n: &mut RawNode, d: (i32, i32)) {
    n.rect = n.rect.map(|r| shift(r, d));
    for c in &mut n.children {
        shift_all(c, d);
    }
}

fn clear_rects(n: &mut RawNode) {
    n.rect = None;
    for c in &mut n.children {
        clear_rects(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_desktop::ElementHandle;
    use cc_desktop::WindowInfo;
    use cc_desktop_atspi::Toplevel;
    use cc_protocol::Role;

    fn r(x: i32, y: i32, width: u32, height: u32) -> PhysicalRect {
        PhysicalRect {
            x,
            y,
            width,
            height,
        }
    }

    fn win(id: u64, client: PhysicalRect, surface_extents: bool) -> Window {
        Window {
            top: Toplevel {
                info: WindowInfo {
                    id,
                    app_id: "a".into(),
                    pid: None,
                    title: "t".into(),
                    rect: client,
                    focused: false,
                },
                client,
            },
            surface_extents,
        }
    }

    fn node(window_id: Option<u64>, rect: PhysicalRect, children: Vec<RawNode>) -> RawNode {
        RawNode {
            handle: ElementHandle("h".into()),
            role: Role::Window,
            name: String::new(),
            value: None,
            states: vec![],
            rect: Some(rect),
            window_id,
            children,
        }
    }

    #[test]
    fn a_floating_window_with_a_shadow_is_placed_by_its_content() {
        // The measured case: a 1415×732 frame in a 1467×784 surface, content at (300, 200).
        let wins = [win(4, r(300, 200, 1415, 732), true)];
        let button = node(Some(4), r(40, 50, 30, 20), vec![]);
        let mut tree = [node(Some(4), r(0, 0, 1467, 784), vec![button])];
        let mut o = Origins::default();
        o.map_tree(&wins, &mut tree);
        assert_eq!(tree[0].rect, Some(r(274, 174, 1467, 784)));
        assert_eq!(tree[0].children[0].rect, Some(r(314, 224, 30, 20)));
        assert_eq!(
            o.offset(&wins, Some(4)),
            Some((274, 174)),
            "kept for re-reads"
        );
    }

    #[test]
    fn tiled_and_xwayland_windows() {
        let wins = [
            win(1, r(960, 0, 960, 1080), true),
            win(2, r(0, 0, 960, 1080), false),
        ];
        let mut tree = [
            node(
                Some(1),
                r(0, 0, 960, 1080),
                vec![node(Some(1), r(10, 10, 5, 5), vec![])],
            ),
            node(
                Some(2),
                r(0, 0, 960, 1080),
                vec![node(Some(2), r(10, 10, 5, 5), vec![])],
            ),
            node(None, r(0, 0, 10, 10), vec![]),
        ];
        Origins::default().map_tree(&wins, &mut tree);
        assert_eq!(
            tree[0].children[0].rect,
            Some(r(970, 10, 5, 5)),
            "tiled: no margin"
        );
        assert_eq!(
            tree[1].children[0].rect,
            Some(r(10, 10, 5, 5)),
            "Xwayland: global"
        );
        assert_eq!(tree[2].rect, None, "an unbound surface has no place");
    }
}
