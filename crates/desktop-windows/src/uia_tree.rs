//! Walking a UI Automation tree into the driver's raw tree, without a desktop. The walk
//! (node budget, depth limit, roles, states, handles, the password rule) runs over
//! [`UiaNode`], which `win/uia.rs` implements over elements whose properties came
//! across in one cache request per window, and the tests here over a tree built in
//! memory: the logic is tested on every platform, the COM calls stay thin.
//!
//! Rectangles are `BoundingRectangle`, which UI Automation gives in physical screen
//! pixels (the driver is per-monitor DPI aware), so they are what every other driver
//! call reports and the engine maps them to the canvas like any other.

use cc_desktop::{ElementHandle, ElementInfo, RawNode, SemanticAction};
use cc_protocol::{PhysicalRect, Role};

use crate::tree_limits::MAX_DEPTH;
use crate::uia_model::{self, Call, Facts, Patterns};

/// What one element's cache holds: everything but its value, which is asked for
/// apart ([`UiaNode::value`]) so that a password field's is never read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Props {
    /// `RuntimeId`: what the element's handle carries to find it again.
    pub runtime_id: Vec<i32>,
    /// `Name`.
    pub name: String,
    /// `ControlType` (`UIA_*ControlTypeId`).
    pub control_type: i32,
    /// `BoundingRectangle` in physical pixels (`uia_model::rect`).
    pub rect: Option<PhysicalRect>,
    /// The properties that become states (`IsPassword` among them).
    pub facts: Facts,
    /// The patterns present, with their states.
    pub patterns: Patterns,
}

/// One UI Automation element as the walker reads it.
pub trait UiaNode: Sized {
    /// The element's cached properties.
    fn props(&self) -> Props;
    /// The Value pattern's value. Never asked of a password field (`IsPassword`).
    fn value(&self) -> Option<String>;
    /// Its children in the control view, in order.
    fn children(&self) -> Vec<Self>;
}

/// A top-level window's root is a window whatever its control type (some frameworks
/// answer `Pane`), as the MSAA walker has it.
fn role_of(p: &Props, top: bool) -> Role {
    if top {
        Role::Window
    } else {
        uia_model::role(p.control_type)
    }
}

fn value_of<N: UiaNode>(n: &N, role: Role, p: &Props) -> Option<String> {
    let read = if p.facts.password { None } else { n.value() };
    uia_model::value(role, p.facts.password, read)
}

/// The raw tree of the top-level window `window` from its root element, taking one
/// node of `budget` per element. `None` once the budget is spent; a subtree the budget
/// runs out in is cut there (its earlier siblings kept), as the MSAA walker does.
pub fn window_tree<N: UiaNode>(window: u64, root: &N, budget: &mut usize) -> Option<RawNode> {
    node(window, root, 0, budget)
}

fn node<N: UiaNode>(window: u64, n: &N, depth: usize, budget: &mut usize) -> Option<RawNode> {
    *budget = budget.checked_sub(1)?;
    let p = n.props();
    let top = depth == 0;
    let role = role_of(&p, top);
    let value = value_of(n, role, &p);
    let mut children = Vec::new();
    if depth < MAX_DEPTH && *budget > 0 {
        for c in n.children() {
            match node(window, &c, depth + 1, budget) {
                Some(k) => children.push(k),
                None => break,
            }
        }
    }
    Some(RawNode {
        handle: ElementHandle(uia_model::handle(window, &p.runtime_id)),
        role,
        name: p.name,
        value,
        states: uia_model::states(&p.facts, &p.patterns),
        rect: p.rect,
        window_id: top.then_some(window),
        children,
    })
}

/// The element with `runtime_id` under `root` (itself included), depth first within
/// the walk's depth limit, and whether it is the root.
pub fn find<N: UiaNode>(root: N, runtime_id: &[i32]) -> Option<(N, bool)> {
    if root.props().runtime_id == runtime_id {
        return Some((root, true));
    }
    find_below(root, runtime_id, 1).map(|n| (n, false))
}

fn find_below<N: UiaNode>(n: N, runtime_id: &[i32], depth: usize) -> Option<N> {
    if depth > MAX_DEPTH {
        return None;
    }
    for c in n.children() {
        if c.props().runtime_id == runtime_id {
            return Some(c);
        }
        if let Some(found) = find_below(c, runtime_id, depth + 1) {
            return Some(found);
        }
    }
    None
}

/// The semantic actions the element offers: its patterns', and `Invoke` for an edit
/// or document that takes the keyboard ([`uia_model::invoke_focuses`]).
fn actions_of(role: Role, p: &Props) -> Vec<SemanticAction> {
    let mut out = uia_model::actions(&p.patterns);
    if uia_model::invoke_focuses(role, &p.facts, &p.patterns) {
        out.insert(0, SemanticAction::Invoke);
    }
    out
}

/// What the engine re-reads before acting on the element (`top`: it is the window's
/// root).
pub fn info<N: UiaNode>(window: u64, n: &N, top: bool) -> ElementInfo {
    let p = n.props();
    let role = role_of(&p, top);
    ElementInfo {
        role,
        name: p.name.clone(),
        window_id: Some(window),
        rect: p.rect,
        states: uia_model::states(&p.facts, &p.patterns),
        value: value_of(n, role, &p),
        actions: actions_of(role, &p),
        settable_text: uia_model::settable_text(&p.patterns, p.facts.enabled),
    }
}

/// The call that performs `action` on the element, or why it cannot.
pub fn plan(action: SemanticAction, p: &Props, top: bool) -> Result<Call, String> {
    let role = role_of(p, top);
    uia_model::call_for(action, &p.patterns).or_else(|why| {
        if action == SemanticAction::Invoke
            && uia_model::invoke_focuses(role, &p.facts, &p.patterns)
        {
            Ok(Call::Focus)
        } else {
            Err(why)
        }
    })
}

/// Whether text may be written through `ValuePattern::SetValue`, or why not.
pub fn check_settable(p: &Props) -> Result<(), String> {
    if uia_model::settable_text(&p.patterns, p.facts.enabled) {
        Ok(())
    } else if !p.facts.enabled {
        Err("the element is disabled".into())
    } else if p.patterns.value_read_only == Some(true) {
        Err("the element's value is read-only".into())
    } else {
        Err("the element has no UI Automation Value pattern".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_protocol::StateFlag;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// An element built in memory; every `value()` call is recorded by name.
    #[derive(Clone)]
    struct Built {
        props: Props,
        value: Option<String>,
        children: Vec<Built>,
        asked: Rc<RefCell<Vec<String>>>,
    }

    impl UiaNode for Built {
        fn props(&self) -> Props {
            self.props.clone()
        }
        fn value(&self) -> Option<String> {
            self.asked.borrow_mut().push(self.props.name.clone());
            self.value.clone()
        }
        fn children(&self) -> Vec<Built> {
            self.children.clone()
        }
    }

    const WINDOW: i32 = 50032;
    const PANE: i32 = 50033;
    const BUTTON: i32 = 50000;
    const CHECKBOX: i32 = 50002;
    const EDIT: i32 = 50004;

    fn el(asked: &Rc<RefCell<Vec<String>>>, id: i32, name: &str, control_type: i32) -> Built {
        Built {
            props: Props {
                runtime_id: vec![42, id],
                name: name.into(),
                control_type,
                rect: uia_model::rect(f64::from(id) * 10.0, 5.0, 100.0, 20.0),
                facts: Facts {
                    enabled: true,
                    ..Facts::default()
                },
                patterns: Patterns::default(),
            },
            value: None,
            children: Vec::new(),
            asked: asked.clone(),
        }
    }

    /// A form: a window holding a pane with a button, a check box (on), a password
    /// edit holding a secret and a plain edit; then a second button.
    fn form(asked: &Rc<RefCell<Vec<String>>>) -> Built {
        let mut button = el(asked, 3, "OK", BUTTON);
        button.props.patterns.invoke = true;
        let mut check = el(asked, 4, "Remember", CHECKBOX);
        check.props.patterns.toggle = Some(1);
        let mut secret = el(asked, 5, "Password", EDIT);
        secret.props.facts.password = true;
        secret.props.facts.focusable = true;
        secret.props.patterns.value_read_only = Some(false);
        secret.value = Some("hunter2".into());
        let mut plain = el(asked, 6, "User", EDIT);
        plain.props.facts.focusable = true;
        plain.props.facts.focused = true;
        plain.props.patterns.value_read_only = Some(false);
        plain.value = Some("alice".into());
        let mut pane = el(asked, 2, "", PANE);
        pane.children = vec![button, check, secret, plain];
        let mut root = el(asked, 1, "Sign in", WINDOW);
        root.children = vec![pane, el(asked, 7, "Cancel", BUTTON)];
        root
    }

    fn count(n: &RawNode) -> usize {
        1 + n.children.iter().map(count).sum::<usize>()
    }

    fn named<'a>(n: &'a RawNode, name: &str) -> Option<&'a RawNode> {
        if n.name == name {
            return Some(n);
        }
        n.children.iter().find_map(|c| named(c, name))
    }

    #[test]
    fn a_window_becomes_a_raw_tree_with_roles_states_rects_and_handles() {
        let asked = Rc::default();
        let mut budget = 100;
        let tree = window_tree(0xbeef, &form(&asked), &mut budget).unwrap();
        assert_eq!(count(&tree), 7);
        assert_eq!(budget, 93);
        assert_eq!(tree.role, Role::Window);
        assert_eq!(tree.window_id, Some(0xbeef));
        assert_eq!(tree.handle.0, "uia:beef:2a.1");
        let pane = &tree.children[0];
        assert_eq!(pane.role, Role::Pane);
        assert_eq!(pane.window_id, None);
        let ok = named(&tree, "OK").unwrap();
        assert_eq!(ok.role, Role::Button);
        assert_eq!(ok.value, None);
        assert_eq!(
            ok.rect,
            Some(PhysicalRect {
                x: 30,
                y: 5,
                width: 100,
                height: 20
            })
        );
        let check = named(&tree, "Remember").unwrap();
        assert_eq!(check.role, Role::Checkbox);
        assert!(check.states.contains(&StateFlag::Checked));
        let user = named(&tree, "User").unwrap();
        assert_eq!(user.value.as_deref(), Some("alice"));
        assert!(user.states.contains(&StateFlag::Focused));
        assert!(user.states.contains(&StateFlag::Editable));
        // Parsing the handle back gives the window and the runtime id.
        assert_eq!(
            uia_model::parse_handle(&user.handle.0),
            Some((0xbeef, vec![42, 6]))
        );
    }

    #[test]
    fn a_password_field_is_marked_and_its_value_never_asked() {
        let asked = Rc::default();
        let root = form(&asked);
        let tree = window_tree(1, &root, &mut 100).unwrap();
        let secret = named(&tree, "Password").unwrap();
        assert_eq!(secret.value, None);
        assert!(secret.states.contains(&StateFlag::Password));
        let (found, _) = find(root, &[42, 5]).unwrap();
        let info = info(1, &found, false);
        assert_eq!(info.value, None);
        assert!(info.states.contains(&StateFlag::Password));
        let asked = asked.borrow();
        assert!(asked.contains(&"User".to_string()), "{asked:?}");
        assert!(!asked.contains(&"Password".to_string()), "{asked:?}");
    }

    #[test]
    fn the_node_budget_cuts_the_walk_keeping_earlier_siblings() {
        let asked = Rc::default();
        let mut budget = 4;
        let tree = window_tree(1, &form(&asked), &mut budget).unwrap();
        // Window, pane, OK, Remember: the rest of the pane and the second button cut.
        assert_eq!(count(&tree), 4);
        assert_eq!(budget, 0);
        assert!(named(&tree, "Cancel").is_none());
        assert!(window_tree(1, &form(&asked), &mut budget).is_none());
    }

    #[test]
    fn nesting_deeper_than_the_limit_is_not_entered() {
        let asked = Rc::default();
        let mut chain = el(&asked, 1000, "bottom", PANE);
        for i in (1..=MAX_DEPTH as i32 + 5).rev() {
            let mut up = el(&asked, i, "level", PANE);
            up.children = vec![chain];
            chain = up;
        }
        let mut budget = usize::MAX;
        let tree = window_tree(1, &chain, &mut budget).unwrap();
        // The root at depth 0 and one node per level down to the limit.
        assert_eq!(count(&tree), MAX_DEPTH + 1);
        assert!(find(chain, &[42, 1000]).is_none());
    }

    #[test]
    fn elements_are_found_by_runtime_id_and_planned_through_their_patterns() {
        let asked = Rc::default();
        let root = form(&asked);
        let (found, top) = find(root.clone(), &[42, 1]).unwrap();
        assert!(top);
        assert_eq!(info(1, &found, top).role, Role::Window);
        assert!(find(root.clone(), &[42, 99]).is_none());
        assert!(find(root.clone(), &[]).is_none());

        let ok = find(root.clone(), &[42, 3]).unwrap().0;
        let okp = ok.props();
        assert_eq!(info(1, &ok, false).actions, vec![SemanticAction::Invoke]);
        assert_eq!(plan(SemanticAction::Invoke, &okp, false), Ok(Call::Invoke));
        assert!(plan(SemanticAction::Toggle, &okp, false).is_err());
        assert!(check_settable(&okp).unwrap_err().contains("Value pattern"));

        let check = find(root.clone(), &[42, 4]).unwrap().0.props();
        assert_eq!(
            plan(SemanticAction::Toggle, &check, false),
            Ok(Call::Toggle)
        );

        // An edit is activated by focusing it, and takes text through its pattern.
        let user = find(root.clone(), &[42, 6]).unwrap().0;
        let userp = user.props();
        assert_eq!(info(1, &user, false).actions, vec![SemanticAction::Invoke]);
        assert!(info(1, &user, false).settable_text);
        assert_eq!(plan(SemanticAction::Invoke, &userp, false), Ok(Call::Focus));
        assert_eq!(check_settable(&userp), Ok(()));
        let refused = plan(SemanticAction::Select, &userp, false).unwrap_err();
        assert!(refused.contains("Select"), "{refused}");

        let mut read_only = userp.clone();
        read_only.patterns.value_read_only = Some(true);
        assert!(
            check_settable(&read_only)
                .unwrap_err()
                .contains("read-only")
        );
        let mut disabled = userp;
        disabled.facts.enabled = false;
        assert!(check_settable(&disabled).unwrap_err().contains("disabled"));
        assert!(plan(SemanticAction::Invoke, &disabled, false).is_err());
    }
}
