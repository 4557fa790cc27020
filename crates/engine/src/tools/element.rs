//! Naming the element an accessibility tool acts on, or a pointer tool aims at: a node
//! of the latest snapshot (`snapshot_id` + `node_id`), a stable element reference
//! (`ref`), or a selector (`selector`: role, name, text, states). Exactly one way per
//! element.

use cc_desktop::ElementInfo;
use cc_protocol::{ErrorCode, ToolError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::def::{Checked, Target};
use super::element_target::ElementTarget;
use super::exec::{Exec, drv};
use crate::selector::{self, Selector};
use crate::snapshot::Entry;
use crate::spec::{Field, Ty};

/// The element arguments, flattened into a tool's own.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub(crate) struct ElementArg {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_id: Option<u32>,
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub element_ref: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
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

/// What a tool acting on an element answers (`a11y.activate`, `a11y.input`).
pub(crate) const OUTPUTS: &[(&str, &str)] = &[
    ("node_id", "the node acted on, when named by node"),
    (
        "ref",
        "the element's reference: name it again with ref while it lives",
    ),
    ("role", "the element's role"),
    ("name", "the element's name"),
    (
        "method_used",
        "semantic action, value, or the pointer fallback",
    ),
    ("position", "where the pointer fallback clicked"),
    ("chars", "characters typed by the fallback"),
];

/// Resolves a node of the latest snapshot and re-checks that it is still the same
/// element (role, name, owning window): a changed element is never acted on.
fn resolve_node(
    snap: &str,
    node: u32,
    ex: &mut Exec<'_>,
) -> Result<(Entry, ElementInfo), ToolError> {
    let entry = ex.snapshots.entry(snap, node)?.clone();
    let info = drv(ex.driver.a11y_element(&entry.handle))?.ok_or_else(|| {
        ToolError::new(
            ErrorCode::StaleSnapshot,
            format!("node {node} is gone; take a fresh a11y.snapshot first"),
        )
    })?;
    if info.role != entry.role || info.name != entry.name || info.window_id != entry.window_id {
        return Err(ToolError::with_data(
            ErrorCode::StaleSnapshot,
            format!("node {node} changed identity; take a fresh a11y.snapshot first"),
            json!({"expected": {"role": entry.role, "name": entry.name, "window_id": entry.window_id},
                   "actual": {"role": info.role, "name": info.name, "window_id": info.window_id}}),
        ));
    }
    Ok((entry, info))
}

/// Resolves an element reference: the element must still exist with the same role in
/// the same window (its name may change: a label's text is not its identity). A gone
/// or changed element is `stale_element`, never another element.
fn resolve_ref(r: &str, ex: &mut Exec<'_>) -> Result<(Entry, ElementInfo), ToolError> {
    let mut entry = ex.snapshots.by_ref(r)?.clone();
    let info = drv(ex.driver.a11y_element(&entry.handle))?.ok_or_else(|| {
        ToolError::with_data(
            ErrorCode::StaleElement,
            format!(
                "element {r} ({} {:?}) is gone; find it again (a11y.snapshot or a selector)",
                entry.role.as_str(),
                entry.name
            ),
            json!({"ref": r, "role": entry.role, "name": entry.name}),
        )
    })?;
    if info.role != entry.role || info.window_id != entry.window_id {
        return Err(ToolError::with_data(
            ErrorCode::StaleElement,
            format!("element {r} is no longer the element it named; find it again"),
            json!({"ref": r,
                   "expected": {"role": entry.role, "name": entry.name, "window_id": entry.window_id},
                   "actual": {"role": info.role, "name": info.name, "window_id": info.window_id}}),
        ));
    }
    entry.name = info.name.clone();
    ex.snapshots.remember(&entry);
    Ok((entry, info))
}

/// At most this many candidates are listed when a selector is ambiguous.
const MAX_CANDIDATES: usize = 20;

/// Finds the one element a selector means in the live tree, and remembers its
/// reference. None is `element_not_found`; several are `ambiguous_element` listing
/// them (with their refs, so the next call can name one).
fn resolve_selector(sel: &Selector, ex: &mut Exec<'_>) -> Result<(Entry, ElementInfo), ToolError> {
    let roots = drv(ex
        .driver
        .a11y_tree(sel.window, ex.config.a11y.hard_walk_cap))?;
    let entry = match sel.pick(&roots) {
        Ok(found) => found.entry(),
        Err(all) if all.is_empty() => {
            return Err(ToolError::with_data(
                ErrorCode::ElementNotFound,
                "no element matches the selector",
                json!({"selector": selector_json(sel)}),
            ));
        }
        Err(all) => {
            // Each listed candidate's ref works in the next call.
            let candidates: Vec<Value> = all
                .iter()
                .take(MAX_CANDIDATES)
                .map(|f| {
                    ex.snapshots.remember(&f.entry());
                    selector::describe(f, ex.canvas)
                })
                .collect();
            let msg = match sel.index {
                Some(i) => format!("index {i} is past the {} matches", all.len()),
                None => format!(
                    "{} elements match the selector; name one by its ref, narrow the selector, or give index",
                    all.len()
                ),
            };
            return Err(ToolError::with_data(
                ErrorCode::AmbiguousElement,
                msg,
                json!({"count": all.len(), "candidates": candidates}),
            ));
        }
    };
    let info = drv(ex.driver.a11y_element(&entry.handle))?.ok_or_else(|| {
        ToolError::new(
            ErrorCode::ElementNotFound,
            "the element matching the selector went away before it could be used",
        )
    })?;
    ex.snapshots.remember(&entry);
    Ok((entry, info))
}

fn selector_json(sel: &Selector) -> Value {
    json!({
        "role": sel.role, "name": sel.name, "name_contains": sel.name_contains,
        "text": sel.text, "states": sel.states, "not_states": sel.not_states,
        "window": sel.window, "index": sel.index,
    })
}

/// The element a call names, re-checked against the desktop.
pub(crate) fn resolve(
    el: &ElementArg,
    ex: &mut Exec<'_>,
) -> Result<(Entry, ElementInfo), ToolError> {
    let named = el.element();
    let found = match named.clone() {
        ElementTarget::Node {
            snapshot_id,
            node_id,
        } => resolve_node(&snapshot_id, node_id, ex),
        ElementTarget::Ref(r) => resolve_ref(&r, ex),
        ElementTarget::Select(sel) => resolve_selector(&sel, ex),
    }?;
    if ex.unplaced.contains(&named) {
        // It appeared between the gate and now: the rules never saw where it is.
        return Err(ToolError::with_data(
            ErrorCode::StaleElement,
            "the element was not there when the action was judged; send the action again",
            json!({"ref": found.0.element_ref, "role": found.0.role, "name": found.0.name}),
        ));
    }
    Ok(found)
}

/// Where a pointer tool aimed at an element acts: the physical centre of the element,
/// re-checked against the desktop (stale, absent or ambiguous is refused here, before
/// any input), and `{ref, role, name}` of the element for the tool's answer.
pub(crate) fn locate(el: &ElementArg, ex: &mut Exec<'_>) -> Result<((i32, i32), Value), ToolError> {
    let (entry, info) = resolve(el, ex)?;
    let at = center(&info, &entry.element_ref)?;
    Ok((at, Value::Object(acted(&entry, el.node_id))))
}

/// What an action on an element answers about it.
pub(crate) fn acted(entry: &Entry, node: Option<u32>) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    if let Some(n) = node {
        m.insert("node_id".into(), json!(n));
    }
    m.insert("ref".into(), json!(entry.element_ref));
    m.insert("role".into(), json!(entry.role));
    m.insert("name".into(), json!(entry.name));
    m
}

/// The physical centre of an element's rectangle (`label` names it in the error).
pub(crate) fn center(info: &ElementInfo, label: &str) -> Result<(i32, i32), ToolError> {
    let r = info.rect.ok_or_else(|| {
        ToolError::new(
            ErrorCode::DriverFailed,
            format!("{label} has no on-screen rect to point at"),
        )
    })?;
    Ok((r.x + r.width as i32 / 2, r.y + r.height as i32 / 2))
}

/// Clicks at a physical point: the pointer fallback of the accessibility tools.
pub(crate) fn click_at(ex: &mut Exec<'_>, (px, py): (i32, i32)) -> Result<Value, ToolError> {
    ex.check_stop()?;
    drv(ex.driver.pointer_move(px, py))?;
    drv(ex.driver.button(cc_desktop::Button::Left, true))?;
    drv(ex.driver.button(cc_desktop::Button::Left, false))?;
    let (x, y) = ex.canvas.to_canvas(px, py);
    Ok(json!({"x": x, "y": y}))
}
