//! Argument validation: the spec's checks plus the cross-field rules a schema cannot
//! say (x with y, batch items against their own tools).

use serde_json::Value;

use super::registry::{ToolDef, find};
use crate::spec::{Issue, ValidateMode, validate};

/// Validates and normalizes a tool's arguments (config defaults first).
pub fn validate_args(def: &ToolDef, args: &Value, config: &Value) -> Result<Value, Vec<Issue>> {
    let mut out = validate(&def.params, args, ValidateMode::Fill(config))?;
    let mut issues = Vec::new();
    match def.name {
        "pointer.click" | "pointer.scroll" => {
            let has_x = out.get("x").is_some();
            let has_y = out.get("y").is_some();
            if has_x != has_y {
                issues.push(Issue {
                    path: if has_x { "y".into() } else { "x".into() },
                    message: "x and y go together: give both or neither".into(),
                });
            }
        }
        "batch.execute" => {
            if let Some(Value::Array(items)) = out.get_mut("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    let tool = item
                        .get("tool")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    let Some(item_def) = find(&tool) else {
                        issues.push(Issue {
                            path: format!("items[{i}].tool"),
                            message: format!("unknown tool {tool:?}"),
                        });
                        continue;
                    };
                    if item_def.name == "batch.execute" {
                        issues.push(Issue {
                            path: format!("items[{i}].tool"),
                            message: "batches do not nest".into(),
                        });
                        continue;
                    }
                    let item_args = item.get("arguments").cloned().unwrap_or(Value::Null);
                    let item_args = if item_args.is_null() {
                        Value::Object(Default::default())
                    } else {
                        item_args
                    };
                    match validate_args(item_def, &item_args, config) {
                        Ok(norm) => {
                            if let Some(slot) = item.get_mut("arguments") {
                                *slot = norm;
                            } else if let Value::Object(m) = item {
                                m.insert("arguments".into(), norm);
                            }
                        }
                        Err(sub) => issues.extend(sub.into_iter().map(|s| Issue {
                            path: if s.path == "$" {
                                format!("items[{i}].arguments")
                            } else {
                                format!("items[{i}].arguments.{}", s.path)
                            },
                            message: s.message,
                        })),
                    }
                }
            }
        }
        _ => {}
    }
    if issues.is_empty() {
        Ok(out)
    } else {
        Err(issues)
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
