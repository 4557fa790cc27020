//! Finding elements by what a person would say ("the OK button"): role, name, text
//! and states over the live accessibility tree, instead of a node id of one snapshot.
//! Matching is pure; the tools decide what one, none or several matches mean.

use cc_desktop::RawNode;
use cc_protocol::{Role, StateFlag};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::coords::Canvas;
use crate::snapshot::{Entry, element_ref};
use crate::spec::{Field, Ty};

/// What an element must be to match. Every given member must hold.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Selector {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    /// The whole name, ignoring case and surrounding spaces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Part of the name, ignoring case.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_contains: Option<String>,
    /// Part of the name or the value (an edit's text, a label's), ignoring case.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// States the element has (all of them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<StateFlag>,
    /// States the element does not have (none of them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_states: Vec<StateFlag>,
    /// Only inside this top-level window (an id of `window.list`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
    /// Match elements without the `visible` state too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub include_hidden: bool,
    /// Which match to take, in document order, when several match on purpose.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
}

/// One element that matched, with the window it belongs to.
#[derive(Debug, Clone)]
pub struct Found<'a> {
    pub node: &'a RawNode,
    pub window_id: Option<u64>,
}

const STATE_NAMES: [&str; 9] = [
    "focused",
    "focusable",
    "enabled",
    "checked",
    "selected",
    "expanded",
    "editable",
    "password",
    "visible",
];

/// The selector's argument spec (shared by every tool that takes one).
pub(crate) fn spec() -> Ty {
    let roles: Vec<&'static str> = Role::ALL.iter().map(|r| r.as_str()).collect();
    let text = |doc| {
        Field::opt(
            doc,
            Ty::Str {
                max_chars: Some(512),
                non_empty: true,
            },
            match doc {
                "name" => "the whole accessible name (case and outer spaces ignored)",
                "name_contains" => "part of the accessible name (case ignored)",
                _ => "part of the name or the value, e.g. an edit's text (case ignored)",
            },
        )
    };
    Ty::Object(vec![
        Field::opt("role", Ty::Enum(roles), "the element's role"),
        text("name"),
        text("name_contains"),
        text("text"),
        Field::opt(
            "states",
            Ty::list(Ty::one_of(&STATE_NAMES), 0, Some(9)),
            "states it has, all of them",
        ),
        Field::opt(
            "not_states",
            Ty::list(Ty::one_of(&STATE_NAMES), 0, Some(9)),
            "states it does not have",
        ),
        Field::opt(
            "window",
            Ty::int(0, (1i64 << 53) - 1),
            "only inside this window (an id of window.list)",
        ),
        Field::def(
            "include_hidden",
            Ty::Bool,
            json!(false),
            "also match elements that are not visible",
        ),
        Field::opt(
            "index",
            Ty::int(0, 10_000),
            "take this match (0 first, document order) when several match on purpose",
        ),
    ])
}

fn has(hay: &str, needle: &str) -> bool {
    hay.to_lowercase().contains(&needle.to_lowercase())
}

impl Selector {
    /// True when nothing narrows the search (refused by the tools: it would match
    /// every element).
    pub fn is_empty(&self) -> bool {
        self.role.is_none()
            && self.name.is_none()
            && self.name_contains.is_none()
            && self.text.is_none()
            && self.states.is_empty()
            && self.not_states.is_empty()
    }

    /// Whether one node matches (its window is checked by [`Selector::find`]).
    pub fn matches(&self, n: &RawNode) -> bool {
        if !self.include_hidden && !n.states.contains(&StateFlag::Visible) {
            return false;
        }
        if self.role.is_some_and(|r| r != n.role) {
            return false;
        }
        if let Some(name) = &self.name
            && n.name.trim().to_lowercase() != name.trim().to_lowercase()
        {
            return false;
        }
        if let Some(part) = &self.name_contains
            && !has(&n.name, part)
        {
            return false;
        }
        if let Some(t) = &self.text
            && !has(&n.name, t)
            && !n.value.as_deref().is_some_and(|v| has(v, t))
        {
            return false;
        }
        self.states.iter().all(|s| n.states.contains(s))
            && !self.not_states.iter().any(|s| n.states.contains(s))
    }

    /// Every matching node of the trees, in document order (before `index`).
    pub fn find<'a>(&self, roots: &'a [RawNode]) -> Vec<Found<'a>> {
        let mut out = Vec::new();
        let mut stack: Vec<(&RawNode, Option<u64>)> =
            roots.iter().rev().map(|r| (r, r.window_id)).collect();
        while let Some((n, win)) = stack.pop() {
            let win = n.window_id.or(win);
            if self.window.is_none_or(|w| win == Some(w)) && self.matches(n) {
                out.push(Found {
                    node: n,
                    window_id: win,
                });
            }
            stack.extend(n.children.iter().rev().map(|c| (c, win)));
        }
        out
    }

    /// The one element meant: the single match, or the `index`-th. `Err` carries every
    /// match (none: not found; several: ambiguous).
    pub fn pick<'a>(&self, roots: &'a [RawNode]) -> Result<Found<'a>, Vec<Found<'a>>> {
        let mut all = self.find(roots);
        match self.index {
            Some(i) if i < all.len() => Ok(all.swap_remove(i)),
            Some(_) => Err(all),
            None if all.len() == 1 => Ok(all.swap_remove(0)),
            None => Err(all),
        }
    }
}

impl Found<'_> {
    /// What the session remembers of it, so its ref can name it later.
    pub(crate) fn entry(&self) -> Entry {
        Entry {
            handle: self.node.handle.clone(),
            role: self.node.role,
            name: self.node.name.clone(),
            window_id: self.window_id,
            password: self.node.states.contains(&StateFlag::Password),
            element_ref: element_ref(&self.node.handle),
        }
    }
}

/// A matched element as an agent sees it in a candidate list or a wait's answer.
pub(crate) fn describe(f: &Found<'_>, canvas: &Canvas) -> Value {
    let mut states = f.node.states.clone();
    states.sort();
    states.dedup();
    json!({
        "ref": element_ref(&f.node.handle),
        "role": f.node.role,
        "name": f.node.name,
        "states": states,
        "window_id": f.window_id,
        "rect": f.node.rect.as_ref().map(|r| canvas.rect_from_physical(r)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_desktop::ElementHandle;

    fn node(h: &str, role: Role, name: &str, states: &[StateFlag], kids: Vec<RawNode>) -> RawNode {
        RawNode {
            handle: ElementHandle(h.into()),
            role,
            name: name.into(),
            value: None,
            states: states.to_vec(),
            rect: None,
            window_id: None,
            children: kids,
        }
    }

    fn desk() -> Vec<RawNode> {
        use StateFlag::*;
        let mut w1 = node(
            "w1",
            Role::Window,
            "Save",
            &[Visible],
            vec![
                node("ok1", Role::Button, "OK", &[Visible, Enabled], vec![]),
                node(
                    "cancel",
                    Role::Button,
                    "Cancel",
                    &[Visible, Enabled],
                    vec![],
                ),
                node("hidden", Role::Button, "OK", &[Enabled], vec![]),
            ],
        );
        w1.window_id = Some(1);
        let mut w2 = node(
            "w2",
            Role::Window,
            "Other",
            &[Visible],
            vec![node("ok2", Role::Button, " ok ", &[Visible], vec![])],
        );
        w2.window_id = Some(2);
        vec![w1, w2]
    }

    fn sel(v: Value) -> Selector {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn role_and_name_ignore_case_spaces_and_hidden_elements() {
        let d = desk();
        let all = sel(json!({"role": "button", "name": "OK"})).find(&d);
        let handles: Vec<&str> = all.iter().map(|f| f.node.handle.0.as_str()).collect();
        assert_eq!(
            handles,
            ["ok1", "ok2"],
            "document order, the hidden one left out"
        );
        assert_eq!(all[1].window_id, Some(2), "the window is inherited");
        let hidden = sel(json!({"role": "button", "name": "ok", "include_hidden": true}));
        assert_eq!(hidden.find(&d).len(), 3);
    }

    #[test]
    fn one_match_is_picked_several_are_refused_unless_indexed() {
        let d = desk();
        let ambiguous = sel(json!({"role": "button", "name": "ok"}));
        assert_eq!(ambiguous.pick(&d).unwrap_err().len(), 2);
        let scoped = sel(json!({"role": "button", "name": "ok", "window": 1}));
        assert_eq!(scoped.pick(&d).unwrap().node.handle.0, "ok1");
        let second = sel(json!({"role": "button", "name": "ok", "index": 1}));
        assert_eq!(second.pick(&d).unwrap().node.handle.0, "ok2");
        let past = sel(json!({"role": "button", "name": "ok", "index": 2}));
        assert_eq!(past.pick(&d).unwrap_err().len(), 2);
        assert!(
            sel(json!({"name": "nothing"}))
                .pick(&d)
                .unwrap_err()
                .is_empty()
        );
    }

    #[test]
    fn text_states_and_emptiness() {
        let mut d = desk();
        d[0].children[1].value = Some("typed here".into());
        assert_eq!(sel(json!({"text": "TYPED"})).find(&d).len(), 1);
        assert_eq!(sel(json!({"text": "canc"})).find(&d).len(), 1);
        assert_eq!(
            sel(json!({"role": "button", "states": ["enabled"]}))
                .find(&d)
                .len(),
            2
        );
        assert_eq!(
            sel(json!({"role": "button", "not_states": ["enabled"]}))
                .find(&d)
                .len(),
            1
        );
        assert!(sel(json!({"window": 1})).is_empty());
        assert!(!sel(json!({"name_contains": "a"})).is_empty());
    }
}
