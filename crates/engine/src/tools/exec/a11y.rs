//! Accessibility tools: snapshot, activate and input, always against the latest
//! snapshot and after re-checking the element's identity.

use cc_desktop::{ElementInfo, SemanticAction};
use cc_protocol::{ErrorCode, Role, ToolError};
use serde_json::{Value, json};

use super::{Exec, drv};
use crate::snapshot::{Caps, Entry};
use crate::tools::a11y_activate::{self, Method};
use crate::tools::{a11y_input, a11y_snapshot};

/// What `a11y.activate` and `a11y.input` answer.
pub(crate) const OUTPUTS: &[(&str, &str)] = &[
    ("node_id", "the node acted on"),
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
    Ok(json!({
        "snapshot_id": built.snapshot_id,
        "node_count": built.node_count,
        "truncated": built.truncated,
        "generated_at": crate::clock::rfc3339(std::time::SystemTime::now()),
        "tree": built.tree,
    }))
}

fn count(n: &cc_desktop::RawNode) -> usize {
    1 + n.children.iter().map(count).sum::<usize>()
}

/// Resolves a node of the latest snapshot and re-checks that it is still the same
/// element (role, name, owning window): a changed element is never acted on.
fn resolve(snap: &str, node: u32, ex: &mut Exec<'_>) -> Result<(Entry, ElementInfo), ToolError> {
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

fn center(info: &ElementInfo, node: u32) -> Result<(i32, i32), ToolError> {
    let r = info.rect.ok_or_else(|| {
        ToolError::new(
            ErrorCode::DriverFailed,
            format!("node {node} has no on-screen rect to click"),
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
    let node = args.node_id;
    let (entry, info) = resolve(&args.snapshot_id, node, ex)?;
    let method = args.method;
    if method != Method::Pointer {
        if let Some(a) = preferred(&info) {
            ex.check_stop()?;
            drv(ex.driver.a11y_perform(&entry.handle, a))?;
            return Ok(json!({"node_id": node, "method_used": action_name(a)}));
        }
        if method == Method::Pattern {
            return Err(ToolError::with_data(
                ErrorCode::DriverFailed,
                format!(
                    "node {node} offers no semantic action (invoke, toggle, select); method \"pattern\" never falls back to a click"
                ),
                json!({"reason": "no_semantic_action"}),
            ));
        }
    }
    let pos = click_at(ex, center(&info, node)?)?;
    Ok(json!({"node_id": node, "method_used": "pointer", "position": pos}))
}

pub(crate) fn input(args: &a11y_input::Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
    let node = args.node_id;
    let text = args.text.as_str();
    let (entry, info) = resolve(&args.snapshot_id, node, ex)?;
    if info.settable_text {
        ex.check_stop()?;
        drv(ex.driver.a11y_set_text(&entry.handle, text))?;
        // Read back (never for passwords, whose value is not readable by design).
        if !entry.password {
            let after = drv(ex.driver.a11y_element(&entry.handle))?.and_then(|i| i.value);
            if after.as_deref() != Some(text) {
                return Err(ToolError::new(
                    ErrorCode::DriverFailed,
                    format!("node {node} did not take the text (read-back differs)"),
                ));
            }
        }
        return Ok(json!({"node_id": node, "method_used": "value"}));
    }
    click_at(ex, center(&info, node)?)?;
    let mut chars = 0usize;
    drv(ex.driver.prepare_typing(text))?;
    for c in text.chars() {
        ex.check_stop()?;
        drv(ex.driver.type_char(c))?;
        chars += 1;
    }
    Ok(json!({"node_id": node, "method_used": "pointer_type", "chars": chars}))
}
