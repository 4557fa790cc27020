//! Naming the element an accessibility tool acts on, or a pointer tool aims at: a node
//! of the latest snapshot (`snapshot_id` + `node_id`), a stable element reference
//! (`ref`), or a selector (`selector`: role, name, text, states). Exactly one way per
//! element.

use serde::Deserialize;
use serde_json::json;

use super::def::{Checked, ElementTarget, Target};
use crate::selector::{self, Selector};
use crate::spec::{Field, Ty};

/// The element arguments, flattened into a tool's own.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ElementArg {
    pub snapshot_id: Option<String>,
    pub node_id: Option<u32>,
    #[serde(rename = "ref")]
    pub element_ref: Option<String>,
    pub selector: Option<Selector>,
}

impl ElementArg {
    /// Where a call naming this element lands.
    pub fn target(&self) -> Target {
        Target::Element(self.element())
    }

    /// The element, as the one way it was named (validation ensured there is one).
    pub fn element(&self) -> ElementTarget {
        if let Some(r) = &self.element_ref {
            return ElementTarget::Ref(r.clone());
        }
        if let Some(s) = &self.selector {
            return ElementTarget::Select(s.clone());
        }
        ElementTarget::Node {
            snapshot_id: self.snapshot_id.clone().unwrap_or_default(),
            node_id: self.node_id.unwrap_or(u32::MAX),
        }
    }
}

/// The element fields of a tool's spec.
pub(crate) fn fields() -> Vec<Field> {
    vec![
        Field::opt(
            "snapshot_id",
            Ty::Str {
                max_chars: Some(64),
                non_empty: true,
            },
            "the latest snapshot_id (with node_id)",
        ),
        Field::opt(
            "node_id",
            Ty::int(0, u32::MAX as i64),
            "a node id of that snapshot (with snapshot_id)",
        ),
        Field::opt(
            "ref",
            Ty::Str {
                max_chars: Some(64),
                non_empty: true,
            },
            "an element reference (a node's ref): valid across snapshots while the element lives; stale_element once it is gone",
        ),
        Field::opt(
            "selector",
            selector::spec(),
            "find the element by role, name, text and states in the live tree: one match acts, none is element_not_found, several are ambiguous_element with the candidates",
        ),
    ]
}

/// Exactly one way of naming the element; a node id with its snapshot.
pub(crate) fn check(c: &mut Checked<'_>) {
    let selector = c.out.as_ref().and_then(|o| o.get("selector")).cloned();
    let found = naming_issues(|k| c.given(k), selector.as_ref(), "");
    for (path, message) in found {
        c.issue(path, message);
    }
}

/// What is wrong with how an element is named (the fields under `prefix`, which
/// `given` says were given): not exactly one way, a node id without its snapshot or the
/// other way round, or a `selector` that names nothing.
fn naming_issues(
    given: impl Fn(&str) -> bool,
    selector: Option<&serde_json::Value>,
    prefix: &str,
) -> Vec<(String, &'static str)> {
    let mut found = Vec::new();
    let node = given("snapshot_id") || given("node_id");
    match [node, given("ref"), given("selector")]
        .iter()
        .filter(|w| **w)
        .count()
    {
        0 => found.push((
            format!("{prefix}ref"),
            "name the element: ref, selector, or snapshot_id with node_id",
        )),
        1 => {}
        _ => found.push((
            format!("{prefix}selector"),
            "name the element one way only: ref, selector, or snapshot_id with node_id",
        )),
    }
    if node && given("snapshot_id") != given("node_id") {
        let missing = if given("node_id") {
            "snapshot_id"
        } else {
            "node_id"
        };
        found.push((
            format!("{prefix}{missing}"),
            "snapshot_id and node_id go together",
        ));
    }
    let empty = selector
        .and_then(|s| serde_json::from_value::<Selector>(s.clone()).ok())
        .is_some_and(|s| s.is_empty());
    if empty {
        found.push((
            format!("{prefix}selector"),
            "a selector needs a role, name, name_contains, text or states",
        ));
    }
    found
}

/// Examples of the three ways.
pub(crate) fn examples() -> Vec<serde_json::Value> {
    vec![
        json!({"snapshot_id": "snap-…", "node_id": 7}),
        json!({"ref": "e3f1a09c2b7d4"}),
        json!({"selector": {"role": "button", "name": "OK"}}),
    ]
}

/// `element` of a pointer tool: the element to aim at, named one of the three ways.
pub(crate) fn field() -> Field {
    field_named(
        "element",
        "aim at the centre of an element instead of x and y: {ref}, {selector}, or {snapshot_id, node_id}",
    )
}

/// An element object of a pointer tool under another name (`from_element` of a drag).
pub(crate) fn field_named(name: &'static str, doc: &'static str) -> Field {
    Field::opt(name, Ty::Object(fields()), doc)
}

/// The rules of [`check`] for the element object `key` of a pointer tool, which
/// replaces a point; true when it was given.
pub(crate) fn check_nested(c: &mut Checked<'_>, key: &str) -> bool {
    let el = c
        .out
        .as_ref()
        .and_then(|o| o.get(key))
        .or_else(|| c.raw.get(key))
        .filter(|v| !v.is_null())
        .cloned();
    let Some(el) = el else { return false };
    let given = |k: &str| el.get(k).is_some_and(|v| !v.is_null());
    for (path, message) in naming_issues(given, el.get("selector"), &format!("{key}.")) {
        c.issue(path, message);
    }
    true
}
