//! `batch.execute`: several calls of other tools, in order, under one confirmation.
//! The worker gates it whole and then item by item (`worker/batch.rs`); this file
//! says what it accepts, and `call.rs` types its items.

use cc_protocol::{Description, Risk};
use serde_json::{Value, json};

use super::def::{Checked, Lands, Nature, Needs, Runs, TextEntry, ToolDef, Validate};
use super::describe::{Judged, count};
use super::table::find;
use crate::spec::{Field, Issue, Ty};

/// The most calls one batch holds.
pub(crate) const MAX_ITEMS: usize = 100;

/// A batch as the operator is told it: its items, each described by its own tool, and
/// every point they touch marked.
pub(super) fn describe(judged: &Judged<'_>) -> Description {
    Description {
        title: format!(
            "Run a batch of {}",
            count(judged.items.len(), "action", "actions")
        ),
        marks: judged.items.iter().flat_map(|d| d.marks.clone()).collect(),
        items: judged.items.to_vec(),
        ..Default::default()
    }
}

/// Checks every item against its own tool and stores its normalized arguments.
fn items(c: &mut Checked<'_>) {
    let config = c.config;
    match c
        .out
        .as_deref_mut()
        .and_then(|o| o.get_mut("items"))
        .and_then(Value::as_array_mut)
    {
        Some(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                if let Some(norm) = check_item(i, item, (config, c.validate), c.issues)
                    && let Value::Object(m) = item
                {
                    m.insert("arguments".into(), norm);
                }
            }
        }
        None => {
            // The batch itself is malformed; still check the items that are
            // well-formed enough to name a tool (the rest were reported already).
            let raw = c.raw.get("items").and_then(Value::as_array);
            for (i, item) in raw.into_iter().flatten().enumerate().take(100) {
                if item
                    .get("tool")
                    .and_then(Value::as_str)
                    .is_some_and(|t| !t.is_empty())
                {
                    check_item(i, item, (config, c.validate), c.issues);
                }
            }
        }
    }
}

/// Checks one batch item against its own tool; returns its normalized arguments.
fn check_item(
    i: usize,
    item: &Value,
    (config, validate): (&Value, Validate),
    issues: &mut Vec<Issue>,
) -> Option<Value> {
    let tool = item.get("tool").and_then(Value::as_str).unwrap_or_default();
    let Some(item_def) = find(tool) else {
        issues.push(Issue {
            path: format!("items[{i}].tool"),
            message: format!("unknown tool {tool:?}"),
        });
        return None;
    };
    if item_def.is_batch() {
        issues.push(Issue {
            path: format!("items[{i}].tool"),
            message: "batches do not nest".into(),
        });
        return None;
    }
    let item_args = match item.get("arguments") {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(a) => a.clone(),
    };
    match validate(item_def, &item_args, config) {
        Ok(norm) => Some(norm),
        Err(sub) => {
            issues.extend(sub.into_iter().map(|s| item_issue(i, s)));
            None
        }
    }
}

/// A problem with item `i`'s arguments, as the batch reports it.
pub(crate) fn item_issue(i: usize, s: Issue) -> Issue {
    Issue {
        path: if s.path == "$" {
            format!("items[{i}].arguments")
        } else {
            format!("items[{i}].arguments.{}", s.path)
        },
        message: s.message,
    }
}

pub(crate) fn def() -> ToolDef {
    let batch_item = Ty::Object(vec![
        Field::req(
            "tool",
            Ty::Str {
                max_chars: Some(64),
                non_empty: true,
            },
            "a tool name",
        ),
        Field::def("arguments", Ty::Any, json!({}), "that tool's arguments"),
    ]);
    ToolDef {
        name: "batch.execute",
        summary: "Run several tool calls in order; one confirmation covers the whole batch.",
        risk: Risk::Benign,
        needs: Needs::Nothing,
        nature: Nature::Acts,
        text: TextEntry::No,
        moves_focus: false,
        lands: Lands::Items,
        outputs: &[
            ("status", "the batch's outcome"),
            ("items", "one envelope per item"),
        ],
        params: Ty::Object(vec![
            Field::req(
                "items",
                Ty::list(batch_item, 1, Some(MAX_ITEMS)),
                "the calls, in order",
            ),
            Field::def(
                "continue_on_error",
                Ty::Bool,
                json!(false),
                "keep going after a failed item",
            ),
            Field::cfg(
                "gap_ms",
                Ty::int(0, 60_000),
                "runtime.batch_gap_ms",
                "pause between items",
            ),
        ]),
        examples: vec![
            json!({"items": [{"tool": "pointer.click", "arguments": {"x": 100, "y": 100}}, {"tool": "keyboard.type", "arguments": {"text": "hi"}}]}),
        ],
        check: items,
        runs: Runs::Items,
    }
}
