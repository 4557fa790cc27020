//! Accessibility tools: snapshot, activate and input, always against the latest
//! snapshot and after re-checking the element's identity.

use cc_desktop::{ElementInfo, Pace, SemanticAction};
use cc_protocol::{ErrorCode, Role, ToolError};
use serde_json::{Value, json};

use super::{Exec, drv};
use crate::selector::{self, Selector};
use crate::snapshot::{Caps, Entry};
use crate::tools::a11y_activate::{self, Method};
use crate::tools::def::ElementTarget;
use crate::tools::element::ElementArg;
use crate::tools::{a11y_input, a11y_snapshot};

/// What `a11y.activate` and `a11y.input` answer.
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

pub(crate) fn snapshot(args: &a11y_snapshot::Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
    let mut caps = Caps::for_level(&args.level, ex.config.a11y.max_name_len);
    if let Some(d) = args.depth {
        caps.depth = d;
    }
    if let Some(n) = args.max_nodes {
        caps.max_nodes = n;
    }
    caps.include_rects = args.include_rects;
    let window = args.window;
    let cap = ex.config.a11y.hard_walk_cap;
    ex.check_stop()?;
    if let Some(id) = window
        && !drv(ex.driver.windows())?.iter().any(|w| w.id == id)
    {
        let msg = format!("no window with id {id}; call window.list");
        return Err(ToolError::with_data(
            ErrorCode::InvalidArguments,
            msg.clone(),
            json!({"issues": [{"path": "window", "message": msg}]}),
        ));
    }
    let roots = drv(ex.driver.a11y_tree(window, cap))?;
    let walked: usize = roots.iter().map(count).sum();
    let built = ex
        .snapshots
        .build(&roots, window.is_some(), caps, ex.canvas, walked >= cap);
    let mut out = json!({
        "snapshot_id": built.snapshot_id,
        "node_count": built.node_count,
        "truncated": built.truncated,
        "generated_at": crate::clock::rfc3339(std::time::SystemTime::now()),
    });
    // The difference replaces the tree when asked for and there is a snapshot before.
    match (args.diff, built.diff) {
        (true, Some(d)) => out["diff"] = d,
        _ => out["tree"] = json!(built.tree),
    }
    Ok(out)
}

fn count(n: &cc_desktop::RawNode) -> usize {
    1 + n.children.iter().map(count).sum::<usize>()
}

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
fn acted(entry: &Entry, node: Option<u32>) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    if let Some(n) = node {
        m.insert("node_id".into(), json!(n));
    }
    m.insert("ref".into(), json!(entry.element_ref));
    m.insert("role".into(), json!(entry.role));
    m.insert("name".into(), json!(entry.name));
    m
}

fn center(info: &ElementInfo, label: &str) -> Result<(i32, i32), ToolError> {
    let r = info.rect.ok_or_else(|| {
        ToolError::new(
            ErrorCode::DriverFailed,
            format!("{label} has no on-screen rect to point at"),
        )
    })?;
    Ok((r.x + r.width as i32 / 2, r.y + r.height as i32 / 2))
}

fn click_at(ex: &mut Exec<'_>, (px, py): (i32, i32)) -> Result<Value, ToolError> {
    ex.check_stop()?;
    drv(ex.driver.pointer_move(px, py))?;
    drv(ex.driver.button(cc_desktop::Button::Left, true))?;
    drv(ex.driver.button(cc_desktop::Button::Left, false))?;
    let (x, y) = ex.canvas.to_canvas(px, py);
    Ok(json!({"x": x, "y": y}))
}

/// The semantic action that fits a role best, if the element offers it.
fn preferred(info: &ElementInfo) -> Option<SemanticAction> {
    let want = match info.role {
        Role::Checkbox | Role::Radiobutton => SemanticAction::Toggle,
        Role::Listitem | Role::Treeitem | Role::Tabitem | Role::Row | Role::Cell => {
            SemanticAction::Select
        }
        _ => SemanticAction::Invoke,
    };
    if info.actions.contains(&want) {
        Some(want)
    } else {
        info.actions.first().copied()
    }
}

fn action_name(a: SemanticAction) -> &'static str {
    match a {
        SemanticAction::Invoke => "invoke",
        SemanticAction::Toggle => "toggle",
        SemanticAction::Select => "select",
    }
}

pub(crate) fn activate(args: &a11y_activate::Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
    let node = args.element.node_id;
    let (entry, info) = resolve(&args.element, ex)?;
    let mut out = acted(&entry, node);
    let label = node.map_or_else(|| entry.element_ref.clone(), |n| format!("node {n}"));
    let method = args.method;
    if method != Method::Pointer {
        if let Some(a) = preferred(&info) {
            ex.check_stop()?;
            drv(ex.driver.a11y_perform(&entry.handle, a))?;
            out.insert("method_used".into(), json!(action_name(a)));
            return Ok(Value::Object(out));
        }
        if method == Method::Pattern {
            return Err(ToolError::with_data(
                ErrorCode::DriverFailed,
                format!(
                    "{label} offers no semantic action (invoke, toggle, select); method \"pattern\" never falls back to a click"
                ),
                json!({"reason": "no_semantic_action"}),
            ));
        }
    }
    let pos = click_at(ex, center(&info, &label)?)?;
    out.insert("method_used".into(), json!("pointer"));
    out.insert("position".into(), pos);
    Ok(Value::Object(out))
}

pub(crate) fn input(args: &a11y_input::Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
    let node = args.element.node_id;
    let text = args.text.as_str();
    let (entry, info) = resolve(&args.element, ex)?;
    let mut out = acted(&entry, node);
    let label = node.map_or_else(|| entry.element_ref.clone(), |n| format!("node {n}"));
    if info.settable_text {
        ex.check_stop()?;
        drv(ex.driver.a11y_set_text(&entry.handle, text))?;
        // Read back (never for passwords, whose value is not readable by design).
        if !entry.password {
            let after = drv(ex.driver.a11y_element(&entry.handle))?.and_then(|i| i.value);
            if after.as_deref() != Some(text) {
                return Err(ToolError::new(
                    ErrorCode::DriverFailed,
                    format!("{label} did not take the text (read-back differs)"),
                ));
            }
        }
        out.insert("method_used".into(), json!("value"));
        return Ok(Value::Object(out));
    }
    click_at(ex, center(&info, &label)?)?;
    let mut chars = 0usize;
    drv(ex.driver.prepare_typing(text, Pace::BackToBack))?;
    for c in text.chars() {
        ex.check_stop()?;
        drv(ex.driver.type_char(c))?;
        chars += 1;
    }
    out.insert("method_used".into(), json!("pointer_type"));
    out.insert("chars".into(), json!(chars));
    Ok(Value::Object(out))
}
