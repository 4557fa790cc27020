//! Helpers shared by the virtual desktop's tests: they drive it through `Driver` only.

use cc_protocol::{Key, PhysicalRect, Role};

use super::VirtualDesktop;
use crate::{Button, Driver, RawNode};

pub(super) fn desk() -> VirtualDesktop {
    VirtualDesktop::default()
}

pub(super) fn rect(x: i32, y: i32, width: u32, height: u32) -> PhysicalRect {
    PhysicalRect {
        x,
        y,
        width,
        height,
    }
}

fn walk<'a>(nodes: &'a [RawNode], out: &mut Vec<&'a RawNode>) {
    for n in nodes {
        out.push(n);
        walk(&n.children, out);
    }
}

/// Every node of the full tree, flattened in pre-order.
pub(super) fn all_nodes(d: &mut VirtualDesktop) -> Vec<RawNode> {
    let tree = d.a11y_tree(None, usize::MAX).expect("tree");
    let mut flat = Vec::new();
    walk(&tree, &mut flat);
    flat.into_iter().cloned().collect()
}

/// The first node with this role and name.
pub(super) fn find(d: &mut VirtualDesktop, role: Role, name: &str) -> RawNode {
    all_nodes(d)
        .into_iter()
        .find(|n| n.role == role && n.name == name)
        .unwrap_or_else(|| panic!("no {role:?} {name:?}"))
}

pub(super) fn center(r: PhysicalRect) -> (i32, i32) {
    (r.x + r.width as i32 / 2, r.y + r.height as i32 / 2)
}

/// Moves to (x, y) and clicks a button there.
pub(super) fn click_with(d: &mut VirtualDesktop, b: Button, x: i32, y: i32) {
    d.pointer_move(x, y).unwrap();
    d.button(b, true).unwrap();
    d.button(b, false).unwrap();
}

/// Left-clicks the centre of a rectangle.
pub(super) fn click_rect(d: &mut VirtualDesktop, r: PhysicalRect) {
    let (x, y) = center(r);
    click_with(d, Button::Left, x, y);
}

/// Left-clicks the element with this role and name.
pub(super) fn click_on(d: &mut VirtualDesktop, role: Role, name: &str) {
    let r = find(d, role, name).rect.expect("on screen");
    click_rect(d, r);
}

/// Presses and releases a key by name.
pub(super) fn tap(d: &mut VirtualDesktop, name: &str) {
    let k = Key::parse(name).expect("key");
    d.key(k, true).unwrap();
    d.key(k, false).unwrap();
}

/// Holds `modifier` while tapping `name`.
pub(super) fn chord(d: &mut VirtualDesktop, modifier: &str, name: &str) {
    let m = Key::parse(modifier).expect("key");
    d.key(m, true).unwrap();
    tap(d, name);
    d.key(m, false).unwrap();
}

pub(super) fn type_str(d: &mut VirtualDesktop, s: &str) {
    for c in s.chars() {
        d.type_char(c).unwrap();
    }
}

/// The value of the first node with this role and name.
pub(super) fn value_of(d: &mut VirtualDesktop, role: Role, name: &str) -> Option<String> {
    find(d, role, name).value
}
