//! Accessibility: the tree, element re-reads, semantic actions and the value interface.
//!
//! Handles are `w<window id>` for a window and `w<window id>/<widget>` for a widget
//! (e.g. `w4194305/name`, `w4194306/item7`). They name what an element *is*, not where
//! it is, so they stay valid while it exists (a relabelled button keeps its handle).

use cc_protocol::{Role, StateFlag};

use super::scene::{Scene, Window};
use super::widgets::{self, WidgetId};
use crate::{DriverError, ElementHandle, ElementInfo, RawNode, SemanticAction};

/// What a handle points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Window(u64),
    Widget(u64, WidgetId),
}

fn failed(msg: String) -> DriverError {
    DriverError::Failed(msg)
}

fn handle_of(window: u64, widget: Option<WidgetId>) -> ElementHandle {
    match widget {
        Some(w) => ElementHandle(format!("w{window}/{}", w.slug())),
        None => ElementHandle(format!("w{window}")),
    }
}

/// Parses a handle: `Err` when it is not one of ours, `Ok(None)` when the element it
/// names does not exist.
fn resolve(scene: &Scene, handle: &ElementHandle) -> Result<Option<Target>, DriverError> {
    let bad = || failed(format!("unknown element handle {:?}", handle.0));
    let rest = handle.0.strip_prefix('w').ok_or_else(bad)?;
    let (id, slug) = match rest.split_once('/') {
        Some((id, slug)) => (id, Some(slug)),
        None => (rest, None),
    };
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let id: u64 = id.parse().map_err(|_| bad())?;
    let widget = match slug {
        Some(s) => Some(WidgetId::from_slug(s).ok_or_else(bad)?),
        None => None,
    };
    let Some(window) = scene.window(id) else {
        return Ok(None);
    };
    Ok(match widget {
        None => Some(Target::Window(id)),
        Some(w) if w.owner() == window.kind => Some(Target::Widget(id, w)),
        Some(_) => None,
    })
}

/// Like [`resolve`], but a missing element is an error too (for actions).
fn resolve_existing(scene: &Scene, handle: &ElementHandle) -> Result<Target, DriverError> {
    resolve(scene, handle)?.ok_or_else(|| failed(format!("no element {:?}", handle.0)))
}

fn window_states() -> Vec<StateFlag> {
    vec![StateFlag::Focusable, StateFlag::Enabled, StateFlag::Visible]
}

/// The true states of a widget, in vocabulary order.
fn widget_states(scene: &Scene, window: u64, id: WidgetId) -> Vec<StateFlag> {
    let flags = [
        (StateFlag::Focused, scene.focused() == Some((window, id))),
        (StateFlag::Focusable, id.focusable()),
        (StateFlag::Enabled, true),
        (
            StateFlag::Checked,
            id == WidgetId::Remember && scene.form.remember,
        ),
        (
            StateFlag::Selected,
            matches!(id, WidgetId::Item(i) if scene.list.selected == Some(i)),
        ),
        (StateFlag::Editable, id.is_edit()),
        (StateFlag::Password, id == WidgetId::Password),
        (StateFlag::Visible, scene.widget_rect(id).is_some()),
    ];
    flags
        .into_iter()
        .filter(|(_, on)| *on)
        .map(|(f, _)| f)
        .collect()
}

/// The value a widget exposes. The password is never read.
fn widget_value(scene: &Scene, id: WidgetId) -> Option<String> {
    match id {
        WidgetId::Name => Some(scene.form.name.clone()),
        WidgetId::Status => Some(scene.form.status.clone()),
        WidgetId::VScroll => Some(scene.list.first_row.to_string()),
        WidgetId::HScroll => Some(scene.list.h_offset.to_string()),
        _ => None,
    }
}

fn widget_actions(id: WidgetId) -> Vec<SemanticAction> {
    match id {
        WidgetId::Submit | WidgetId::Clear | WidgetId::Toggle => vec![SemanticAction::Invoke],
        WidgetId::Remember => vec![SemanticAction::Toggle],
        WidgetId::Item(_) => vec![SemanticAction::Select],
        _ => Vec::new(),
    }
}

fn widget_node(scene: &Scene, w: &Window, id: WidgetId, budget: &mut usize) -> Option<RawNode> {
    *budget = budget.checked_sub(1)?;
    let mut node = RawNode {
        handle: handle_of(w.id, Some(id)),
        role: id.role(),
        name: scene.widget_name(id),
        value: widget_value(scene, id),
        states: widget_states(scene, w.id, id),
        rect: scene.widget_rect(id),
        window_id: None,
        children: Vec::new(),
    };
    for c in widgets::children(id) {
        match widget_node(scene, w, c, budget) {
            Some(n) => node.children.push(n),
            None => break,
        }
    }
    Some(node)
}

/// The tree of every window in z-order (or of one window), at most `max_nodes` nodes.
pub(super) fn tree(
    scene: &Scene,
    window: Option<u64>,
    max_nodes: usize,
) -> Result<Vec<RawNode>, DriverError> {
    let windows: Vec<&Window> = match window {
        Some(id) => vec![
            scene
                .window(id)
                .ok_or_else(|| failed(format!("no window {id:#x}")))?,
        ],
        None => scene.windows.iter().collect(),
    };
    let mut budget = max_nodes;
    let mut out = Vec::new();
    for w in windows {
        let Some(rest) = budget.checked_sub(1) else {
            break;
        };
        budget = rest;
        let mut node = RawNode {
            handle: handle_of(w.id, None),
            role: Role::Window,
            name: w.title().into(),
            value: None,
            states: window_states(),
            rect: Some(w.rect),
            window_id: Some(w.id),
            children: Vec::new(),
        };
        for &id in widgets::top_level(w.kind) {
            match widget_node(scene, w, id, &mut budget) {
                Some(n) => node.children.push(n),
                None => break,
            }
        }
        out.push(node);
    }
    Ok(out)
}

/// Re-reads an element; `Ok(None)` when a well-formed handle names nothing.
pub(super) fn element(
    scene: &Scene,
    handle: &ElementHandle,
) -> Result<Option<ElementInfo>, DriverError> {
    Ok(resolve(scene, handle)?.and_then(|t| match t {
        Target::Window(id) => scene.window(id).map(|w| ElementInfo {
            role: Role::Window,
            name: w.title().into(),
            window_id: Some(w.id),
            rect: Some(w.rect),
            states: window_states(),
            value: None,
            actions: Vec::new(),
            settable_text: false,
        }),
        Target::Widget(window, id) => Some(ElementInfo {
            role: id.role(),
            name: scene.widget_name(id),
            window_id: Some(window),
            rect: scene.widget_rect(id),
            states: widget_states(scene, window, id),
            value: widget_value(scene, id),
            actions: widget_actions(id),
            settable_text: id.is_edit(),
        }),
    }))
}

/// Performs a semantic action the element offers.
pub(super) fn perform(
    scene: &mut Scene,
    handle: &ElementHandle,
    action: SemanticAction,
) -> Result<(), DriverError> {
    let target = resolve_existing(scene, handle)?;
    let unsupported = || failed(format!("{:?} does not offer {action:?}", handle.0));
    let Target::Widget(_, id) = target else {
        return Err(unsupported());
    };
    if !widget_actions(id).contains(&action) {
        return Err(unsupported());
    }
    match (id, action) {
        (WidgetId::Remember, SemanticAction::Toggle) => scene.toggle_remember(),
        (WidgetId::Item(i), SemanticAction::Select) => scene.select_item(i),
        _ => {
            scene.invoke(id);
        }
    }
    Ok(())
}

/// Replaces an edit's text (the password too; it still never reads back).
pub(super) fn set_text(
    scene: &mut Scene,
    handle: &ElementHandle,
    text: &str,
) -> Result<(), DriverError> {
    match resolve_existing(scene, handle)? {
        Target::Widget(_, id) if scene.set_text(id, text) => Ok(()),
        _ => Err(failed(format!("{:?} does not take text", handle.0))),
    }
}

#[cfg(test)]
mod tests {
    use cc_protocol::{Role, StateFlag};

    use super::super::testkit::*;
    use crate::{Driver, DriverError, ElementHandle, SemanticAction};

    fn h(s: &str) -> ElementHandle {
        ElementHandle(s.into())
    }

    #[test]
    fn roots_are_windows_in_z_order_with_their_widgets() {
        let mut d = desk();
        let tree = d.a11y_tree(None, usize::MAX).unwrap();
        let windows = d.windows().unwrap();
        assert_eq!(tree.len(), 3);
        for (node, w) in tree.iter().zip(&windows) {
            assert_eq!(node.role, Role::Window);
            assert_eq!(node.name, w.title);
            assert_eq!(node.window_id, Some(w.id));
            assert_eq!(node.rect, Some(w.rect));
        }
        let form = &tree[0];
        assert_eq!(form.handle, h("w4194305"));
        let roles: Vec<Role> = form.children.iter().map(|n| n.role).collect();
        use Role::*;
        assert_eq!(
            roles,
            [Text, Edit, Text, Edit, Checkbox, Button, Button, Statusbar]
        );
        assert_eq!(form.children[1].handle, h("w4194305/name"));
        let name = &form.children[1];
        assert_eq!(
            name.states,
            [
                StateFlag::Focused,
                StateFlag::Focusable,
                StateFlag::Enabled,
                StateFlag::Editable,
                StateFlag::Visible
            ]
        );
        let list = &tree[1].children[0];
        assert_eq!((list.role, list.name.as_str()), (Role::List, "Items"));
        assert_eq!(list.children.len(), 22);
        assert_eq!(list.children[0].name, "Item 1");
        assert_eq!(list.children[19].name, "Item 20");
        assert!(list.children[7].rect.is_some());
        assert!(list.children[8].rect.is_none());
        assert!(!list.children[8].states.contains(&StateFlag::Visible));
        let bars: Vec<(&str, Option<&str>)> = list.children[20..]
            .iter()
            .map(|n| (n.name.as_str(), n.value.as_deref()))
            .collect();
        assert_eq!(bars, [("Vertical", Some("0")), ("Horizontal", Some("0"))]);
        // Every widget rect lies inside its window.
        for root in &tree {
            let wr = root.rect.unwrap();
            for n in &root.children {
                if let Some(r) = n.rect {
                    assert!(
                        wr.contains(r.x, r.y)
                            && wr.contains(r.x + r.width as i32 - 1, r.y + r.height as i32 - 1)
                    );
                }
            }
        }
    }

    fn count(nodes: &[crate::RawNode]) -> usize {
        nodes.iter().map(|n| 1 + count(&n.children)).sum()
    }

    #[test]
    fn max_nodes_caps_the_walk_and_window_filters() {
        let mut d = desk();
        let total = count(&d.a11y_tree(None, usize::MAX).unwrap());
        assert_eq!(total, 3 + 8 + (2 + 22) + 2);
        for max in [0, 1, 2, 5, 9, 10, 20, total - 1, total, total + 10] {
            let n = count(&d.a11y_tree(None, max).unwrap());
            assert_eq!(n, max.min(total), "max {max}");
        }
        let list_id = d.windows().unwrap()[1].id;
        let only = d.a11y_tree(Some(list_id), usize::MAX).unwrap();
        assert_eq!(only.len(), 1);
        assert_eq!(only[0].window_id, Some(list_id));
        assert!(
            matches!(d.a11y_tree(Some(7), 10), Err(DriverError::Failed(m)) if m.contains("no window"))
        );
    }

    #[test]
    fn elements_re_read_and_act() {
        let mut d = desk();
        let submit = find(&mut d, Role::Button, "Submit");
        let info = d.a11y_element(&submit.handle).unwrap().unwrap();
        assert_eq!(info.actions, [SemanticAction::Invoke]);
        assert_eq!(info.window_id, Some(0x0040_0001));
        assert_eq!(info.rect, submit.rect);
        assert!(!info.settable_text);
        let name = find(&mut d, Role::Edit, "Name");
        d.a11y_set_text(&name.handle, "Linus").unwrap();
        d.a11y_perform(&submit.handle, SemanticAction::Invoke)
            .unwrap();
        assert_eq!(
            value_of(&mut d, Role::Statusbar, "Status").as_deref(),
            Some("Submitted: Linus")
        );
        let remember = find(&mut d, Role::Checkbox, "Remember me");
        assert_eq!(
            d.a11y_element(&remember.handle).unwrap().unwrap().actions,
            [SemanticAction::Toggle]
        );
        d.a11y_perform(&remember.handle, SemanticAction::Toggle)
            .unwrap();
        assert!(
            d.a11y_element(&remember.handle)
                .unwrap()
                .unwrap()
                .states
                .contains(&StateFlag::Checked)
        );
        // Selecting a row out of view scrolls it in; the handle was valid all along.
        let item = h("w4194306/item15");
        assert_eq!(d.a11y_element(&item).unwrap().unwrap().rect, None);
        d.a11y_perform(&item, SemanticAction::Select).unwrap();
        let info = d.a11y_element(&item).unwrap().unwrap();
        assert!(info.rect.is_some());
        assert!(
            info.states.contains(&StateFlag::Selected) && info.states.contains(&StateFlag::Visible)
        );
        assert_eq!(
            value_of(&mut d, Role::Scrollbar, "Vertical").as_deref(),
            Some("7")
        );
        // Window handles re-read too, whatever the z-order.
        let id = d.windows().unwrap()[0].id;
        d.focus_window(id).unwrap();
        let window = d.a11y_element(&h("w4194306")).unwrap().unwrap();
        assert_eq!((window.role, window.name.as_str()), (Role::Window, "Items"));
    }

    #[test]
    fn wrong_actions_and_unknown_handles_fail_cleanly() {
        let mut d = desk();
        let fails = |r: Result<(), DriverError>| matches!(r, Err(DriverError::Failed(_)));
        assert!(fails(
            d.a11y_perform(&h("w4194305/submit"), SemanticAction::Toggle)
        ));
        assert!(fails(
            d.a11y_perform(&h("w4194305/name"), SemanticAction::Invoke)
        ));
        assert!(fails(
            d.a11y_perform(&h("w4194305"), SemanticAction::Invoke)
        ));
        assert!(fails(d.a11y_set_text(&h("w4194305/submit"), "x")));
        assert!(fails(d.a11y_set_text(&h("w4194306"), "x")));
        for junk in [
            "",
            "w",
            "x1/name",
            "w1/",
            "w/name",
            "w99999999999999999999999/name",
            "w4194305/nope",
            "w4194305/item0",
            "w+1/name",
            "w-1",
        ] {
            assert!(d.a11y_element(&h(junk)).is_err(), "{junk}");
            assert!(
                fails(d.a11y_perform(&h(junk), SemanticAction::Invoke)),
                "{junk}"
            );
            assert!(fails(d.a11y_set_text(&h(junk), "x")), "{junk}");
        }
        // Well-formed handles naming nothing: gone for reads, failures for actions.
        for gone in ["w5/name", "w4194305/item3", "w4194306/submit"] {
            assert_eq!(d.a11y_element(&h(gone)).unwrap(), None, "{gone}");
            assert!(fails(d.a11y_perform(&h(gone), SemanticAction::Invoke)));
            assert!(fails(d.a11y_set_text(&h(gone), "x")));
        }
        assert_eq!(
            value_of(&mut d, Role::Statusbar, "Status").as_deref(),
            Some("Ready")
        );
    }
}
