//! Policy rules (PROTOCOL §5.2), compiled once per configuration.

use globset::{Glob, GlobBuilder, GlobMatcher};
use regex::Regex;
use serde_json::Value;

use cc_protocol::{Key, keys::ModifierFamily};

use crate::config::{Effect, Matcher, Rule};

/// Where an action lands: its canvas points and the window it reaches.
#[derive(Debug, Clone, Default)]
pub struct Landing {
    /// Canvas points the action touches (clamped).
    pub points: Vec<(i32, i32)>,
    /// The window under the pointer (pointer tools) or focused (keyboard tools).
    pub window: Option<(String, String)>,
}

/// A compiled argument matcher: path, matcher, value, and its compiled regex or glob.
type ArgMatch = (
    Vec<String>,
    Matcher,
    Value,
    Option<Regex>,
    Option<GlobMatcher>,
);

struct Compiled {
    /// `None` when the glob failed to compile: such a rule never matches.
    tool: Option<GlobMatcher>,
    argument: Option<ArgMatch>,
    window: Option<(Option<GlobMatcher>, Option<GlobMatcher>)>,
    effect: Effect,
}

/// The rules of one configuration, ready to evaluate.
pub struct Policy {
    rules: Vec<Compiled>,
    rule_json: Vec<Value>,
}

/// Which rules matched, by effect (the index of the first match of each).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    pub deny: Option<usize>,
    pub confirm: Option<usize>,
    pub allow: Option<usize>,
}

fn ci_glob(p: &str) -> Option<GlobMatcher> {
    GlobBuilder::new(p)
        .case_insensitive(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

impl Policy {
    /// Compiles validated rules. (Validation already refused bad globs and regexes; a
    /// rule that still fails to compile never matches rather than panicking.)
    pub fn compile(rules: &[Rule]) -> Policy {
        let compiled = rules
            .iter()
            .map(|r| {
                let tool = Glob::new(&r.matches.tool).ok().map(|g| g.compile_matcher());
                let argument = r.matches.argument.as_ref().map(|a| {
                    let re = (a.matcher == Matcher::Regex)
                        .then(|| {
                            a.value.as_str().and_then(|s| {
                                regex::RegexBuilder::new(s).size_limit(1 << 20).build().ok()
                            })
                        })
                        .flatten();
                    let glob = (a.matcher == Matcher::Glob)
                        .then(|| a.value.as_str().and_then(ci_glob))
                        .flatten();
                    (
                        a.name.split('.').map(str::to_string).collect(),
                        a.matcher,
                        a.value.clone(),
                        re,
                        glob,
                    )
                });
                let window = r.matches.window.as_ref().map(|w| {
                    (
                        w.app.as_deref().and_then(ci_glob),
                        w.title.as_deref().and_then(ci_glob),
                    )
                });
                Compiled {
                    tool,
                    argument,
                    window,
                    effect: r.effect,
                }
            })
            .collect();
        Policy {
            rules: compiled,
            rule_json: rules
                .iter()
                .map(|r| serde_json::to_value(r).unwrap_or(Value::Null))
                .collect(),
        }
    }

    /// True when some rule needs the window an action lands in (worth a window query).
    pub fn needs_window(&self) -> bool {
        self.rules.iter().any(|r| r.window.is_some())
    }

    /// The rule at `i`, as configured (for `data.rule`).
    pub fn rule_json(&self, i: usize) -> Value {
        self.rule_json.get(i).cloned().unwrap_or(Value::Null)
    }

    /// Evaluates every rule.
    pub fn evaluate(&self, tool: &str, args: &Value, landing: &Landing) -> Verdict {
        let mut v = Verdict::default();
        for (i, r) in self.rules.iter().enumerate() {
            if !r.tool.as_ref().is_some_and(|g| g.is_match(tool)) {
                continue;
            }
            if let Some((path, matcher, value, re, glob)) = &r.argument
                && !argument_matches(
                    args,
                    path,
                    *matcher,
                    value,
                    re.as_ref(),
                    glob.as_ref(),
                    landing,
                )
            {
                continue;
            }
            if let Some((app, title)) = &r.window {
                let Some((wa, wt)) = &landing.window else {
                    continue;
                };
                if app.as_ref().is_some_and(|g| !g.is_match(wa))
                    || title.as_ref().is_some_and(|g| !g.is_match(wt))
                {
                    continue;
                }
            }
            let slot = match r.effect {
                Effect::Deny => &mut v.deny,
                Effect::Confirm => &mut v.confirm,
                Effect::Allow => &mut v.allow,
            };
            slot.get_or_insert(i);
        }
        v
    }
}

fn lookup<'v>(args: &'v Value, path: &[String]) -> Option<&'v Value> {
    path.iter().try_fold(args, |cur, p| cur.get(p.as_str()))
}

fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().flat_map(strings).collect(),
        Value::Number(n) => vec![n.to_string()],
        Value::Bool(b) => vec![b.to_string()],
        _ => Vec::new(),
    }
}

fn equals(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equals(p, q))
        }
        _ => a == b,
    }
}

/// `contains`: case-insensitive substring on strings; on lists, any element equal.
/// Modifier aware: `win` matches `lwin rwin super meta cmd`, `ctrl` `lctrl rctrl`, …
fn contains(arg: &Value, needle: &str) -> bool {
    let needle = needle.to_lowercase();
    let family: Option<&[&str]> = Key::parse(&needle)
        .ok()
        .and_then(|k| k.modifier_family())
        .filter(|_| {
            ["win", "ctrl", "alt", "shift", "super", "meta", "cmd"].contains(&needle.as_str())
        })
        .map(|f: ModifierFamily| f.names());
    match arg {
        Value::Array(items) => items.iter().filter_map(Value::as_str).any(|s| {
            let s = s.to_lowercase();
            s == needle || family.is_some_and(|f| f.contains(&s.as_str()))
        }),
        Value::String(s) => {
            let s = s.to_lowercase();
            if s.contains(&needle) {
                return true;
            }
            // A combo written as a string: "ctrl+lwin+r".
            family.is_some_and(|f| Key::split_combo(&s).iter().any(|k| f.contains(&k.as_str())))
        }
        other => strings(other)
            .iter()
            .any(|s| s.to_lowercase().contains(&needle)),
    }
}

fn in_region(points: &[(i32, i32)], region: &Value) -> bool {
    let g = |k: &str| region.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN);
    let (x, y, w, h) = (g("x"), g("y"), g("width"), g("height"));
    points.iter().any(|&(px, py)| {
        (px as f64) >= x && (py as f64) >= y && (px as f64) < x + w && (py as f64) < y + h
    })
}

fn argument_matches(
    args: &Value,
    path: &[String],
    matcher: Matcher,
    value: &Value,
    re: Option<&Regex>,
    glob: Option<&GlobMatcher>,
    landing: &Landing,
) -> bool {
    if matcher == Matcher::InRegion {
        // The named argument if it is a point, else every point the action lands on.
        if let Some(p) = lookup(args, path)
            && let (Some(x), Some(y)) = (
                p.get("x").and_then(Value::as_f64),
                p.get("y").and_then(Value::as_f64),
            )
        {
            return in_region(&[(x.round() as i32, y.round() as i32)], value);
        }
        return in_region(&landing.points, value);
    }
    let Some(arg) = lookup(args, path) else {
        return false;
    };
    match matcher {
        Matcher::Equals => equals(arg, value),
        Matcher::Contains => value.as_str().is_some_and(|n| contains(arg, n)),
        Matcher::Regex => re.is_some_and(|re| strings(arg).iter().any(|s| re.is_match(s))),
        Matcher::Glob => glob.is_some_and(|g| strings(arg).iter().any(|s| g.is_match(s))),
        Matcher::InRegion => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(rules: Value) -> Policy {
        let rules: Vec<Rule> = serde_json::from_value(rules).unwrap();
        Policy::compile(&rules)
    }

    #[test]
    fn tool_glob_is_case_sensitive() {
        let p = policy(json!([{"match": {"tool": "keyboard.*"}, "effect": "deny"}]));
        assert_eq!(
            p.evaluate("keyboard.type", &json!({}), &Landing::default())
                .deny,
            Some(0)
        );
        assert_eq!(
            p.evaluate("Keyboard.type", &json!({}), &Landing::default())
                .deny,
            None
        );
        assert_eq!(
            p.evaluate("pointer.click", &json!({}), &Landing::default())
                .deny,
            None
        );
    }

    #[test]
    fn contains_is_modifier_aware_and_case_insensitive() {
        let p = policy(
            json!([{"match": {"tool": "keyboard.combo", "argument": {"name": "keys", "matcher": "contains", "value": "WIN"}}, "effect": "deny"}]),
        );
        for keys in [
            json!(["lwin", "r"]),
            json!(["super", "e"]),
            json!(["meta"]),
            json!(["rwin"]),
        ] {
            assert_eq!(
                p.evaluate(
                    "keyboard.combo",
                    &json!({"keys": keys}),
                    &Landing::default()
                )
                .deny,
                Some(0),
                "{keys}"
            );
        }
        assert_eq!(
            p.evaluate(
                "keyboard.combo",
                &json!({"keys": ["ctrl", "w"]}),
                &Landing::default()
            )
            .deny,
            None
        );
        let t = policy(
            json!([{"match": {"tool": "keyboard.type", "argument": {"name": "text", "matcher": "contains", "value": "RM -RF"}}, "effect": "confirm"}]),
        );
        assert_eq!(
            t.evaluate(
                "keyboard.type",
                &json!({"text": "sudo rm -rf /"}),
                &Landing::default()
            )
            .confirm,
            Some(0)
        );
    }

    #[test]
    fn dotted_paths_equals_regex_glob() {
        let p = policy(json!([
            {"match": {"tool": "pointer.drag", "argument": {"name": "from.x", "matcher": "equals", "value": 10}}, "effect": "deny"},
            {"match": {"tool": "keyboard.type", "argument": {"name": "text", "matcher": "regex", "value": "^\\d{4}$"}}, "effect": "confirm"},
            {"match": {"tool": "keyboard.type", "argument": {"name": "text", "matcher": "glob", "value": "*.EXE"}}, "effect": "allow"}
        ]));
        assert_eq!(
            p.evaluate(
                "pointer.drag",
                &json!({"from": {"x": 10.0, "y": 3}}),
                &Landing::default()
            )
            .deny,
            Some(0)
        );
        assert_eq!(
            p.evaluate(
                "keyboard.type",
                &json!({"text": "1234"}),
                &Landing::default()
            )
            .confirm,
            Some(1)
        );
        assert_eq!(
            p.evaluate(
                "keyboard.type",
                &json!({"text": "setup.exe"}),
                &Landing::default()
            )
            .allow,
            Some(2)
        );
    }

    #[test]
    fn in_region_uses_landing_points() {
        let p = policy(
            json!([{"match": {"tool": "pointer.*", "argument": {"name": "x", "matcher": "in_region", "value": {"x": 0, "y": 0, "width": 100, "height": 50}}}, "effect": "deny"}]),
        );
        let inside = Landing {
            points: vec![(10, 10)],
            window: None,
        };
        let outside = Landing {
            points: vec![(10, 60)],
            window: None,
        };
        assert_eq!(
            p.evaluate("pointer.click", &json!({}), &inside).deny,
            Some(0)
        );
        assert_eq!(p.evaluate("pointer.click", &json!({}), &outside).deny, None);
        let drag = policy(
            json!([{"match": {"tool": "pointer.drag", "argument": {"name": "to", "matcher": "in_region", "value": {"x": 0, "y": 0, "width": 10, "height": 10}}}, "effect": "deny"}]),
        );
        assert_eq!(
            drag.evaluate(
                "pointer.drag",
                &json!({"from": {"x": 50, "y": 50}, "to": {"x": 5, "y": 5}}),
                &outside
            )
            .deny,
            Some(0)
        );
    }

    #[test]
    fn window_matcher() {
        let p = policy(
            json!([{"match": {"tool": "*", "window": {"app": "cc-form", "title": "Sign*"}}, "effect": "confirm"}]),
        );
        let l = Landing {
            points: vec![],
            window: Some(("cc-form".into(), "Sign in".into())),
        };
        assert_eq!(p.evaluate("keyboard.type", &json!({}), &l).confirm, Some(0));
        let other = Landing {
            points: vec![],
            window: Some(("cc-list".into(), "Items".into())),
        };
        assert_eq!(
            p.evaluate("keyboard.type", &json!({}), &other).confirm,
            None
        );
        assert_eq!(
            p.evaluate("keyboard.type", &json!({}), &Landing::default())
                .confirm,
            None
        );
    }
}
