//! Strict validation with the protocol's coercions (PROTOCOL §3): every problem is
//! collected, not just the first, so a model can fix all of them in one retry.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::{Default, Field, Ty};
use cc_protocol::{ErrorCode, Key, ToolError};

/// One problem: where (`from.x`, `keys[1]`) and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    /// Where, as a path into the value (`items[0].arguments.x`).
    pub path: String,
    /// What is wrong there.
    pub message: String,
}

/// The `invalid_arguments` error for a list of problems: the first three in the
/// message, all of them in `data.issues`.
pub(crate) fn invalid_args(issues: Vec<Issue>) -> ToolError {
    let summary = issues
        .iter()
        .take(3)
        .map(|i| format!("{}: {}", i.path, i.message))
        .collect::<Vec<_>>()
        .join("; ");
    ToolError::with_data(
        ErrorCode::InvalidArguments,
        format!("invalid arguments: {summary}"),
        json!({"issues": issues}),
    )
}

/// How absent values are treated.
#[derive(Debug, Clone, Copy)]
pub enum ValidateMode<'a> {
    /// Tool arguments: fill defaults, config first (`config` is the effective config).
    Fill(&'a Value),
    /// A config patch: every key optional, nothing filled in.
    Patch,
}

/// Validates `value` against `ty`; returns the normalized value (coerced, defaults
/// filled) or every issue found.
pub fn validate(ty: &Ty, value: &Value, mode: ValidateMode<'_>) -> Result<Value, Vec<Issue>> {
    let mut issues = Vec::new();
    let out = check(ty, value, "", mode, &mut issues);
    match out {
        Some(v) if issues.is_empty() => Ok(v),
        _ => Err(issues),
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

fn issue(issues: &mut Vec<Issue>, path: &str, message: impl Into<String>) {
    issues.push(Issue {
        path: if path.is_empty() {
            "$".into()
        } else {
            path.to_string()
        },
        message: message.into(),
    });
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    }
}

fn check(
    ty: &Ty,
    v: &Value,
    path: &str,
    mode: ValidateMode<'_>,
    issues: &mut Vec<Issue>,
) -> Option<Value> {
    match ty {
        Ty::Any => Some(v.clone()),
        Ty::Bool => match v {
            Value::Bool(b) => Some(Value::Bool(*b)),
            Value::String(s) if s == "true" || s == "1" => Some(Value::Bool(true)),
            Value::String(s) if s == "false" || s == "0" => Some(Value::Bool(false)),
            _ => {
                issue(
                    issues,
                    path,
                    format!("expected a boolean, got {}", type_name(v)),
                );
                None
            }
        },
        Ty::Int { min, max } => {
            let Some(f) = as_number(v) else {
                issue(
                    issues,
                    path,
                    format!("expected an integer, got {}", type_name(v)),
                );
                return None;
            };
            if !f.is_finite() {
                issue(issues, path, "must be a finite number");
                return None;
            }
            if f.fract() != 0.0 {
                issue(issues, path, format!("expected an integer, got {f}"));
                return None;
            }
            if f < *min as f64 || f > *max as f64 {
                issue(issues, path, format!("{f} is out of range {min}..={max}"));
                return None;
            }
            Some(Value::from(f as i64))
        }
        Ty::AutoOrInt { .. } if v.as_str() == Some("auto") => Some(v.clone()),
        Ty::AutoOrInt { min, max } => {
            let int = Ty::Int {
                min: *min,
                max: *max,
            };
            let mut found = Vec::new();
            let out = check(&int, v, path, mode, &mut found);
            if out.is_none() {
                issue(
                    issues,
                    path,
                    format!(
                        "expected \"auto\" or an integer in {min}..={max}, got {}",
                        short(v)
                    ),
                );
            }
            out
        }
        Ty::Num { min, max } => {
            let Some(f) = as_number(v) else {
                issue(
                    issues,
                    path,
                    format!("expected a number, got {}", type_name(v)),
                );
                return None;
            };
            if !f.is_finite() {
                issue(issues, path, "must be a finite number");
                return None;
            }
            if f < *min || f > *max {
                issue(issues, path, format!("{f} is out of range {min}..={max}"));
                return None;
            }
            serde_json::Number::from_f64(f).map(Value::Number)
        }
        Ty::Str {
            max_chars,
            non_empty,
        } => {
            let Value::String(s) = v else {
                issue(
                    issues,
                    path,
                    format!("expected a string, got {}", type_name(v)),
                );
                return None;
            };
            if *non_empty && s.is_empty() {
                issue(issues, path, "must not be empty");
                return None;
            }
            if let Some(max) = max_chars {
                let n = s.chars().count();
                if n > *max {
                    issue(
                        issues,
                        path,
                        format!("{n} characters, at most {max} allowed"),
                    );
                    return None;
                }
            }
            Some(v.clone())
        }
        Ty::Enum(values) => match v {
            Value::String(s) if values.iter().any(|x| x == s) => Some(v.clone()),
            _ => {
                issue(
                    issues,
                    path,
                    format!("expected one of {}, got {}", values.join("|"), short(v)),
                );
                None
            }
        },
        Ty::KeyName => match v {
            Value::String(s) => match Key::parse(s) {
                Ok(k) => Some(Value::String(k.name())),
                Err(e) => {
                    issue(issues, path, e.to_string());
                    None
                }
            },
            _ => {
                issue(
                    issues,
                    path,
                    format!("expected a key name, got {}", type_name(v)),
                );
                None
            }
        },
        Ty::KeyCombo => check_combo(v, path, issues),
        Ty::List { item, min, max } => {
            let Value::Array(items) = v else {
                issue(
                    issues,
                    path,
                    format!("expected a list, got {}", type_name(v)),
                );
                return None;
            };
            if items.len() < *min {
                issue(issues, path, format!("needs at least {min} item(s)"));
                return None;
            }
            if let Some(max) = max
                && items.len() > *max
            {
                issue(issues, path, format!("at most {max} items allowed"));
                return None;
            }
            let mut out = Vec::with_capacity(items.len());
            let mut ok = true;
            for (i, it) in items.iter().enumerate() {
                match check(item, it, &format!("{path}[{i}]"), mode, issues) {
                    Some(x) => out.push(x),
                    None => ok = false,
                }
            }
            ok.then_some(Value::Array(out))
        }
        Ty::Object(fields) => check_object(fields, v, path, mode, issues),
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

fn check_combo(v: &Value, path: &str, issues: &mut Vec<Issue>) -> Option<Value> {
    let names: Vec<String> = match v {
        Value::String(s) => Key::split_combo(s),
        Value::Array(items) => {
            let mut names = Vec::new();
            for (i, it) in items.iter().enumerate() {
                match it {
                    Value::String(s) => names.push(s.clone()),
                    other => {
                        issue(
                            issues,
                            &format!("{path}[{i}]"),
                            format!("expected a key name, got {}", type_name(other)),
                        );
                        return None;
                    }
                }
            }
            names
        }
        other => {
            issue(
                issues,
                path,
                format!(
                    "expected a list of key names or \"a+b\", got {}",
                    type_name(other)
                ),
            );
            return None;
        }
    };
    if names.is_empty() || (names.len() == 1 && names[0].is_empty()) {
        issue(issues, path, "needs at least one key");
        return None;
    }
    if names.len() > 8 {
        issue(issues, path, "at most 8 keys in a combo");
        return None;
    }
    let mut out: Vec<String> = Vec::new();
    let mut ok = true;
    for (i, n) in names.iter().enumerate() {
        match Key::parse(n) {
            Ok(k) => {
                let name = k.name();
                if out.contains(&name) {
                    issue(
                        issues,
                        &format!("{path}[{i}]"),
                        format!("duplicate key {name:?}"),
                    );
                    ok = false;
                } else {
                    out.push(name);
                }
            }
            Err(e) => {
                issue(issues, &format!("{path}[{i}]"), e.to_string());
                ok = false;
            }
        }
    }
    ok.then(|| Value::Array(out.into_iter().map(Value::String).collect()))
}

fn check_object(
    fields: &[Field],
    v: &Value,
    path: &str,
    mode: ValidateMode<'_>,
    issues: &mut Vec<Issue>,
) -> Option<Value> {
    let Value::Object(map) = v else {
        issue(
            issues,
            path,
            format!("expected an object, got {}", type_name(v)),
        );
        return None;
    };
    let mut ok = true;
    for key in map.keys() {
        if !fields.iter().any(|f| f.name == key) {
            let known: Vec<&str> = fields.iter().map(|f| f.name).collect();
            issue(
                issues,
                &join(path, key),
                format!("unknown key (known: {})", known.join(", ")),
            );
            ok = false;
        }
    }
    let mut out = Map::new();
    for f in fields {
        let p = join(path, f.name);
        match map.get(f.name) {
            Some(val) if !val.is_null() => match check(&f.ty, val, &p, mode, issues) {
                Some(x) => {
                    out.insert(f.name.to_string(), x);
                }
                None => ok = false,
            },
            _ => {
                let ValidateMode::Fill(config) = mode else {
                    continue;
                };
                match &f.default {
                    Default::Value(d) => {
                        out.insert(f.name.to_string(), d.clone());
                    }
                    Default::Config(cfg_path) => {
                        if let Some(d) = lookup(config, cfg_path) {
                            out.insert(f.name.to_string(), d.clone());
                        }
                    }
                    Default::None if f.required => {
                        issue(issues, &p, "is required");
                        ok = false;
                    }
                    Default::None => {}
                }
            }
        }
    }
    ok.then_some(Value::Object(out))
}

/// Reads a dotted path (`a11y.default_level`) out of a JSON value.
pub fn lookup<'v>(v: &'v Value, dotted: &str) -> Option<&'v Value> {
    dotted.split('.').try_fold(v, |cur, part| cur.get(part))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> Ty {
        Ty::Object(vec![
            Field::req("x", Ty::coord(), "x"),
            Field::def("times", Ty::int(1, 3), json!(1), "times"),
            Field::cfg("level", Ty::one_of(&["a", "b"]), "a11y.level", "level"),
            Field::opt("flag", Ty::Bool, "flag"),
            Field::opt(
                "from",
                Ty::Object(vec![
                    Field::req("x", Ty::coord(), ""),
                    Field::req("y", Ty::coord(), ""),
                ]),
                "",
            ),
            Field::opt("keys", Ty::KeyCombo, ""),
        ])
    }

    fn cfg() -> Value {
        json!({"a11y": {"level": "b"}})
    }

    #[test]
    fn fills_defaults_config_first() {
        let out = validate(&spec(), &json!({"x": 1}), ValidateMode::Fill(&cfg())).unwrap();
        assert_eq!(out, json!({"x": 1.0, "times": 1, "level": "b"}));
    }

    #[test]
    fn null_means_default_and_coercions_apply() {
        let out = validate(
            &spec(),
            &json!({"x": "12.5", "times": "2", "level": null, "flag": "0"}),
            ValidateMode::Fill(&cfg()),
        )
        .unwrap();
        assert_eq!(
            out,
            json!({"x": 12.5, "times": 2, "level": "b", "flag": false})
        );
    }

    #[test]
    fn collects_every_issue_with_paths() {
        let err = validate(
            &spec(),
            &json!({"times": 9, "bogus": 1, "from": {"x": "nan"}, "keys": ["ctrl", "CTRL"]}),
            ValidateMode::Fill(&cfg()),
        )
        .unwrap_err();
        let paths: Vec<&str> = err.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            vec!["bogus", "x", "times", "from.x", "from.y", "keys[1]"]
        );
    }

    #[test]
    fn rejects_non_finite_and_fractional_ints() {
        for bad in [
            json!({"x": "inf"}),
            json!({"x": 1, "times": 1.5}),
            json!({"x": "NaN"}),
        ] {
            assert!(
                validate(&spec(), &bad, ValidateMode::Fill(&cfg())).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn combos_accept_strings_and_normalize() {
        let out = validate(
            &spec(),
            &json!({"x": 0, "keys": "Ctrl+Shift+Escape"}),
            ValidateMode::Fill(&cfg()),
        )
        .unwrap();
        assert_eq!(out["keys"], json!(["ctrl", "shift", "esc"]));
    }

    #[test]
    fn patch_mode_fills_nothing() {
        let out = validate(&spec(), &json!({}), ValidateMode::Patch).unwrap();
        assert_eq!(out, json!({}));
    }

    #[test]
    fn auto_or_int_takes_the_word_or_a_number_in_range() {
        let ty = Ty::AutoOrInt { min: 1, max: 10 };
        let ok = |v: Value| validate(&ty, &v, ValidateMode::Patch);
        assert_eq!(ok(json!("auto")), Ok(json!("auto")));
        assert_eq!(ok(json!(7)), Ok(json!(7)));
        assert_eq!(ok(json!("7")), Ok(json!(7)));
        for bad in [json!(0), json!(11), json!("Auto"), json!(true), json!(2.5)] {
            let issues = ok(bad.clone()).expect_err("refused");
            assert_eq!(issues.len(), 1, "{bad}: {issues:?}");
            assert!(
                issues[0]
                    .message
                    .contains("\"auto\" or an integer in 1..=10"),
                "{issues:?}"
            );
        }
    }
}
