//! Argument validation: the spec's checks plus the cross-field rules a schema cannot
//! say (x with y, batch items against their own tools).

use serde_json::Value;

use super::registry::{ToolDef, find};
use crate::spec::{Issue, ValidateMode, validate};

/// Validates and normalizes a tool's arguments (config defaults first). Every problem
/// is reported: the cross-field and per-item checks run even when the schema check
/// already failed, so one retry can fix everything.
pub fn validate_args(def: &ToolDef, args: &Value, config: &Value) -> Result<Value, Vec<Issue>> {
    let (mut out, mut issues) = match validate(&def.params, args, ValidateMode::Fill(config)) {
        Ok(v) => (Some(v), Vec::new()),
        Err(i) => (None, i),
    };
    let given = |out: &Option<Value>, k: &str| match out {
        Some(o) => o.get(k).is_some(),
        None => args.get(k).is_some_and(|v| !v.is_null()),
    };
    match def.name {
        "screen.capture" if given(&out, "region") && given(&out, "display") => {
            issues.push(Issue {
                path: "display".into(),
                message: "give region or display, not both".into(),
            });
        }
        "pointer.click" | "pointer.scroll" => {
            let (has_x, has_y) = (given(&out, "x"), given(&out, "y"));
            if has_x != has_y {
                issues.push(Issue {
                    path: if has_x { "y".into() } else { "x".into() },
                    message: "x and y go together: give both or neither".into(),
                });
            }
        }
        "batch.execute" => match out
            .as_mut()
            .and_then(|o| o.get_mut("items"))
            .and_then(Value::as_array_mut)
        {
            Some(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    if let Some(norm) = check_item(i, item, config, &mut issues)
                        && let Value::Object(m) = item
                    {
                        m.insert("arguments".into(), norm);
                    }
                }
            }
            None => {
                // The batch itself is malformed; still check the items that are
                // well-formed enough to name a tool (the rest were reported already).
                let raw = args.get("items").and_then(Value::as_array);
                for (i, item) in raw.into_iter().flatten().enumerate().take(100) {
                    if item
                        .get("tool")
                        .and_then(Value::as_str)
                        .is_some_and(|t| !t.is_empty())
                    {
                        check_item(i, item, config, &mut issues);
                    }
                }
            }
        },
        _ => {}
    }
    match out {
        Some(v) if issues.is_empty() => Ok(v),
        _ => Err(issues),
    }
}

/// Checks one batch item against its own tool; returns its normalized arguments.
fn check_item(i: usize, item: &Value, config: &Value, issues: &mut Vec<Issue>) -> Option<Value> {
    let tool = item.get("tool").and_then(Value::as_str).unwrap_or_default();
    let Some(item_def) = find(tool) else {
        issues.push(Issue {
            path: format!("items[{i}].tool"),
            message: format!("unknown tool {tool:?}"),
        });
        return None;
    };
    if item_def.name == "batch.execute" {
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
    match validate_args(item_def, &item_args, config) {
        Ok(norm) => Some(norm),
        Err(sub) => {
            issues.extend(sub.into_iter().map(|s| Issue {
                path: if s.path == "$" {
                    format!("items[{i}].arguments")
                } else {
                    format!("items[{i}].arguments.{}", s.path)
                },
                message: s.message,
            }));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::defaults;
    use serde_json::json;

    fn check(tool: &str, args: Value) -> Result<Value, Vec<Issue>> {
        validate_args(find(tool).unwrap(), &args, &defaults())
    }

    #[test]
    fn click_needs_x_with_y() {
        let err = check("pointer.click", json!({"x": 1})).unwrap_err();
        assert_eq!(err[0].path, "y");
        assert!(check("pointer.click", json!({})).is_ok());
    }

    #[test]
    fn batch_items_checked_against_their_tools() {
        let err = check(
            "batch.execute",
            json!({"items": [
                {"tool": "pointer.click", "arguments": {"x": 1, "y": 2, "times": 7}},
                {"tool": "nope"},
                {"tool": "batch.execute", "arguments": {"items": []}},
                {"tool": "wait.pause", "arguments": 5}
            ]}),
        )
        .unwrap_err();
        let paths: Vec<_> = err.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            vec![
                "items[0].arguments.times",
                "items[1].tool",
                "items[2].tool",
                "items[3].arguments"
            ]
        );
    }

    #[test]
    fn every_issue_even_when_the_schema_check_fails() {
        let err = check("pointer.click", json!({"x": 1, "bogus": true})).unwrap_err();
        let paths: Vec<_> = err.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, vec!["bogus", "y"]);
        let err = check(
            "batch.execute",
            json!({"items": [
                {"tool": "pointer.click", "arguments": {"times": 9}},
                {"tool": "window.list", "extra": 1}
            ], "gap_ms": -1}),
        )
        .unwrap_err();
        let paths: Vec<_> = err.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            vec!["items[1].extra", "gap_ms", "items[0].arguments.times"]
        );
    }

    #[test]
    fn batch_gap_defaults_from_config() {
        let out = check(
            "batch.execute",
            json!({"items": [{"tool": "wait.pause", "arguments": {"ms": 0}}]}),
        )
        .unwrap();
        assert_eq!(out["gap_ms"], json!(150));
        assert_eq!(out["items"][0]["arguments"], json!({"ms": 0}));
    }
}
