//! Placing accessibility rectangles on the layout. A Wayland client's extents are
//! relative to its surface (client-side shadow included), and the shell extension
//! reports exactly where that surface is (the buffer rectangle), so the mapping is a
//! shift by the buffer's origin, with no margin to guess. An X11 client under Xwayland
//! reports global extents already. A node of no known window has no place.

use cc_desktop::RawNode;
use cc_protocol::PhysicalRect;

use crate::shell::ShellWindow;

/// The layout position of a rectangle of `window`'s extents.
pub fn place(
    wins: &[ShellWindow],
    window: Option<u64>,
    rect: Option<PhysicalRect>,
) -> Option<PhysicalRect> {
    let w = wins.iter().find(|w| Some(w.info.id) == window)?;
    let r = rect?;
    if w.x11 {
        return Some(r);
    }
    Some(PhysicalRect {
        x: r.x.saturating_add(w.buffer.x),
        y: r.y.saturating_add(w.buffer.y),
        ..r
    })
}

/// Places a snapshot's rectangles, window by window.
pub fn place_tree(wins: &[ShellWindow], nodes: &mut [RawNode]) {
    fn walk(wins: &[ShellWindow], window: Option<u64>, n: &mut RawNode) {
        n.rect = place(wins, window, n.rect);
        for c in &mut n.children {
            walk(wins, window, c);
        }
    }
    for n in nodes {
        let w = n.window_id;
        walk(wins, w, n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_desktop::{ElementHandle, WindowInfo};
    use cc_protocol::Role;

    fn r(x: i32, y: i32, width: u32, height: u32) -> PhysicalRect {
        PhysicalRect {
            x,
            y,
            width,
            height,
        }
    }

    fn win(id: u64, frame: PhysicalRect, buffer: PhysicalRect, x11: bool) -> ShellWindow {
        ShellWindow {
            info: WindowInfo {
                id,
                app_id: "a".into(),
                pid: None,
                title: "t".into(),
                rect: frame,
                focused: false,
            },
            buffer,
            shown: true,
            x11,
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
    fn wayland_extents_start_at_the_surface_and_x11_ones_are_global() {
        // The measured shadow: the surface starts 26 left and 23 above the frame.
        let wins = [
            win(1, r(300, 200, 1415, 732), r(274, 177, 1467, 784), false),
            win(2, r(0, 0, 100, 100), r(0, 0, 100, 100), true),
        ];
        let mut tree = [
            node(
                Some(1),
                r(0, 0, 1467, 784),
                vec![node(Some(1), r(40, 50, 30, 20), vec![])],
            ),
            node(Some(2), r(10, 10, 5, 5), vec![]),
            node(None, r(0, 0, 10, 10), vec![]),
        ];
        place_tree(&wins, &mut tree);
        assert_eq!(tree[0].rect, Some(r(274, 177, 1467, 784)));
        assert_eq!(tree[0].children[0].rect, Some(r(314, 227, 30, 20)));
        assert_eq!(tree[1].rect, Some(r(10, 10, 5, 5)));
        assert_eq!(tree[2].rect, None, "no window, no place");
        assert_eq!(place(&wins, Some(9), Some(r(1, 1, 1, 1))), None);
    }
}
