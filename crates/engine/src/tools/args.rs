//! Argument validation: the spec's checks plus the cross-field rules a schema cannot
//! say (each tool's `check`: x with y, batch items against their own tools; an acting
//! tool's `observe` against the observing tools' own specs).

use serde_json::Value;

use super::def::{Checked, ToolDef};
use super::find;
use super::observe::{ARG, OBSERVERS};
use crate::spec::{Issue, ValidateMode, validate};

/// Validates and normalizes a tool's arguments (config defaults first). Every problem
/// is reported: the cross-field and per-item checks run even when the schema check
/// already failed, so one retry can fix everything.
pub fn validate_args(def: &ToolDef, args: &Value, config: &Value) -> Result<Value, Vec<Issue>> {
    let (mut out, mut issues) = match validate(&def.params, args, ValidateMode::Fill(config)) {
        Ok(v) => (Some(v), Vec::new()),
        Err(i) => (None, i),
    };
    let mut checked = Checked {
        out: out.as_mut(),
        raw: args,
        config,
        issues: &mut issues,
        validate: validate_args,
    };
    (def.check)(&mut checked);
    // Every acting tool's `observe`, checked in one place.
    if def.mutates() && !def.is_batch() {
        check_observe(&mut checked);
    }
    match out {
        Some(v) if issues.is_empty() => Ok(v),
        _ => Err(issues),
    }
}
/// Validates `observe.capture` and `observe.snapshot` against their tools' specs (so a
/// bad observation is refused before the action runs) and normalizes them in place.
fn check_observe(c: &mut Checked<'_>) {
    for (member, tool) in OBSERVERS {
        let raw = c
            .out
            .as_ref()
            .and_then(|o| o.get(ARG))
            .or_else(|| c.raw.get(ARG))
            .and_then(|o| o.get(member))
            .filter(|v| !v.is_null())
            .cloned();
        let (Some(raw), Some(def)) = (raw, find(tool)) else {
            continue;
        };
        match (c.validate)(def, &raw, c.config) {
            Ok(norm) => {
                if let Some(slot) = c.out.as_mut().and_then(|o| o.get_mut(ARG)) {
                    slot[member] = norm;
                }
            }
            Err(issues) => {
                for i in issues {
                    let path = if i.path.is_empty() {
                        format!("{ARG}.{member}")
                    } else {
                        format!("{ARG}.{member}.{}", i.path)
                    };
                    c.issue(path, i.message);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::defaults;
    use crate::tools::find;
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
