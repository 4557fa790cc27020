//! Layering (defaults < file < `session.start` < `session.configure`) with validation of
//! every layer before it is applied, so a bad patch changes nothing.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{Config, config_spec, defaults};
use crate::rules::Policy;
use crate::spec::{Issue, Ty, ValidateMode, validate};

/// Why a config layer was refused; carries every issue.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    /// One line for the caller.
    pub message: String,
    /// Every problem, by config path.
    pub issues: Vec<Issue>,
}

impl ConfigError {
    fn new(message: impl Into<String>, issues: Vec<Issue>) -> Self {
        ConfigError {
            message: message.into(),
            issues,
        }
    }

    /// `data` for the `invalid_config` envelope.
    pub fn data(&self) -> Value {
        json!({ "issues": self.issues })
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.message)?;
        for i in &self.issues {
            write!(f, "; {}: {}", i.path, i.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

/// An effective config, the value it came from, and its rules compiled.
#[derive(Clone)]
pub struct ConfigStack {
    value: Value,
    typed: Config,
    policy: Arc<Policy>,
}

impl std::fmt::Debug for ConfigStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfigStack")
            .field("value", &self.value)
            .finish_non_exhaustive()
    }
}

fn merge(base: &mut Value, patch: &Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                match b.get_mut(k) {
                    Some(slot) if slot.is_object() && v.is_object() => merge(slot, v),
                    _ => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (b, p) => *b = p.clone(),
    }
}

fn typed(value: &Value) -> Result<Config, ConfigError> {
    serde_json::from_value(value.clone()).map_err(|e| {
        ConfigError::new(
            "config does not form a valid whole",
            vec![Issue {
                path: "$".into(),
                message: e.to_string(),
            }],
        )
    })
}

/// The rules of `next` (the built-in ones included), compiled; those of `current` when
/// they did not change.
fn compiled(next: &Config, current: Option<&ConfigStack>) -> Result<Arc<Policy>, ConfigError> {
    if let Some(c) = current
        && c.typed.safety.rules == next.safety.rules
        && c.typed.safety.protect_console == next.safety.protect_console
    {
        return Ok(c.policy.clone());
    }
    Policy::for_safety(&next.safety)
        .map(Arc::new)
        .map_err(|issues| ConfigError::new("invalid config", issues))
}

/// Checks what `Ty::Any` fields cannot and rule compilation does not: regions are
/// rectangles. (Patterns are checked by compiling them: [`Policy::compile`].)
fn check_rules(patch: &Value, issues: &mut Vec<Issue>) {
    let Some(rules) = patch.pointer("/safety/rules").and_then(Value::as_array) else {
        return;
    };
    for (i, rule) in rules.iter().enumerate() {
        let Some(arg) = rule.pointer("/match/argument") else {
            continue;
        };
        let value = arg.get("value").unwrap_or(&Value::Null);
        if arg.get("matcher").and_then(Value::as_str) == Some("in_region") {
            let ok = ["x", "y", "width", "height"].iter().all(|k| {
                value
                    .get(k)
                    .and_then(Value::as_f64)
                    .is_some_and(f64::is_finite)
            }) && value.as_object().is_some_and(|m| m.len() == 4);
            if !ok {
                issues.push(Issue {
                    path: format!("safety.rules[{i}].match.argument.value"),
                    message: "in_region needs {x, y, width, height} numbers".into(),
                });
            }
        }
    }
}

/// `governance.principal_id` names who acts in every journal entry and grant: no
/// surrounding whitespace, no control characters (a principal that prints the same as
/// another, or breaks a log line, is refused).
fn check_governance(patch: &Value, issues: &mut Vec<Issue>) {
    let Some(p) = patch
        .pointer("/governance/principal_id")
        .and_then(Value::as_str)
    else {
        return;
    };
    let message = if p.trim() != p {
        "must not start or end with whitespace"
    } else if p.chars().any(char::is_control) {
        "must not contain control characters"
    } else {
        return;
    };
    issues.push(Issue {
        path: "governance.principal_id".into(),
        message: message.into(),
    });
}

/// Validates one layer as a patch.
pub fn validate_patch(patch: &Value) -> Result<Value, ConfigError> {
    let spec: &Ty = config_spec();
    let normalized = validate(spec, patch, ValidateMode::Patch)
        .map_err(|i| ConfigError::new("invalid config", i))?;
    let mut issues = Vec::new();
    check_rules(&normalized, &mut issues);
    check_governance(&normalized, &mut issues);
    if !issues.is_empty() {
        return Err(ConfigError::new("invalid config", issues));
    }
    Ok(normalized)
}

impl ConfigStack {
    /// The built-in defaults.
    pub fn new() -> Self {
        let value = defaults();
        let typed = typed(&value).unwrap_or_else(|e| panic!("built-in defaults are invalid: {e}"));
        let policy = compiled(&typed, None)
            .unwrap_or_else(|e| panic!("built-in default rules are invalid: {e}"));
        ConfigStack {
            value,
            typed,
            policy,
        }
    }

    /// Applies a layer (file or `session.start`): any key may be set.
    pub fn apply(&mut self, patch: &Value) -> Result<(), ConfigError> {
        let normalized = validate_patch(patch)?;
        let mut next = self.value.clone();
        merge(&mut next, &normalized);
        let t = typed(&next)?;
        let policy = compiled(&t, Some(self))?;
        self.value = next;
        self.typed = t;
        self.policy = policy;
        Ok(())
    }

    /// Applies a `session.configure` patch: only mutable sections and keys. Returns the
    /// normalized patch that was applied.
    pub fn configure(&mut self, patch: &Value) -> Result<Value, ConfigError> {
        let normalized = validate_patch(patch)?;
        let mut issues = Vec::new();
        if let (Value::Object(p), Ty::Object(sections)) = (&normalized, config_spec()) {
            for (section, keys) in p {
                let Some(sf) = sections.iter().find(|f| f.name == section) else {
                    continue;
                };
                if !sf.mutable {
                    issues.push(Issue {
                        path: section.clone(),
                        message: "cannot be changed at runtime (set it in the config file)".into(),
                    });
                    continue;
                }
                if let (Value::Object(k), Ty::Object(fields)) = (keys, &sf.ty) {
                    for key in k.keys() {
                        if fields.iter().any(|f| f.name == key && !f.mutable) {
                            issues.push(Issue {
                                path: format!("{section}.{key}"),
                                message: "cannot be changed at runtime (set it in the config file)"
                                    .into(),
                            });
                        }
                    }
                }
            }
        }
        if !issues.is_empty() {
            return Err(ConfigError::new(
                "immutable keys in session.configure",
                issues,
            ));
        }
        let mut next = self.value.clone();
        merge(&mut next, &normalized);
        let t = typed(&next)?;
        let policy = compiled(&t, Some(self))?;
        self.value = next;
        self.typed = t;
        self.policy = policy;
        Ok(normalized)
    }

    /// The effective config as JSON (for config-driven tool defaults).
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The effective config, typed.
    pub fn config(&self) -> &Config {
        &self.typed
    }

    /// Its rules, compiled when the config was validated.
    pub fn policy(&self) -> &Arc<Policy> {
        &self.policy
    }
}

impl Default for ConfigStack {
    fn default() -> Self {
        Self::new()
    }
}

/// Reads a config file: JSON (`.json`) or JSON text; an empty path is no file.
pub fn load_file(path: &str) -> Result<Value, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        ConfigError::new(format!("cannot read config file {path}: {e}"), Vec::new())
    })?;
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        ConfigError::new(
            format!("config file {path} is not valid JSON: {e}"),
            Vec::new(),
        )
    })?;
    if !v.is_object() {
        return Err(ConfigError::new(
            format!("config file {path} must hold a JSON object"),
            Vec::new(),
        ));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CanvasWidth;

    #[test]
    fn defaults_are_valid_and_complete() {
        let s = ConfigStack::new();
        assert_eq!(s.config().capture.default_width, CanvasWidth::Auto);
        assert_eq!(
            s.config().safety.emergency_hotkey,
            vec!["ctrl", "alt", "f12"]
        );
        assert_eq!(s.config().runtime.batch_gap_ms, 150);
    }

    #[test]
    fn unknown_keys_refused_at_every_depth() {
        let mut s = ConfigStack::new();
        for bad in [
            json!({"bogus": {}}),
            json!({"capture": {"bogus": 1}}),
            json!({"safety": {"rules": [{"match": {"tool": "*", "bogus": 1}, "effect": "deny"}]}}),
            json!({"safety": {"rules": [{"match": {"tool": "*", "argument": {"name": "x", "matcher": "equals", "value": 1, "extra": 0}}, "effect": "deny"}]}}),
        ] {
            let before = s.value().clone();
            assert!(s.apply(&bad).is_err(), "{bad}");
            assert_eq!(s.value(), &before, "a refused layer changed nothing");
        }
    }

    #[test]
    fn immutable_keys_refused_by_configure() {
        let mut s = ConfigStack::new();
        let err = s
            .configure(&json!({"safety": {"emergency_hotkey": "ctrl+f1", "rules": []}}))
            .unwrap_err();
        assert_eq!(err.issues[0].path, "safety.emergency_hotkey");
        assert!(
            s.configure(&json!({"platform": {"name": "virtual"}}))
                .is_err()
        );
        assert!(
            s.configure(&json!({"capture": {"backend": "shm"}}))
                .is_err()
        );
        assert!(s.configure(&json!({"http": {"token": "x"}})).is_err());
        let applied = s
            .configure(&json!({"runtime": {"batch_gap_ms": "5"}}))
            .unwrap();
        assert_eq!(applied, json!({"runtime": {"batch_gap_ms": 5}}));
        assert_eq!(s.config().runtime.batch_gap_ms, 5);
    }

    #[test]
    fn bad_rule_values_refused() {
        let mut s = ConfigStack::new();
        for bad in [
            json!({"safety": {"rules": [{"match": {"tool": "*", "argument": {"name": "text", "matcher": "regex", "value": "("}}, "effect": "deny"}]}}),
            json!({"safety": {"rules": [{"match": {"tool": "*", "argument": {"name": "x", "matcher": "in_region", "value": {"x": 1}}}, "effect": "deny"}]}}),
            json!({"safety": {"rules": [{"match": {"tool": "[", }, "effect": "deny"}]}}),
        ] {
            assert!(s.apply(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rules_compile_once_and_a_bad_pattern_changes_nothing() {
        let mut s = ConfigStack::new();
        s.apply(
            &json!({"safety": {"rules": [{"match": {"tool": "keyboard.*"}, "effect": "deny"}]}}),
        )
        .unwrap();
        let before = s.policy().clone();
        // Another section changes: the compiled rules are kept, not compiled again.
        s.configure(&json!({"capture": {"default_quality": 50}}))
            .unwrap();
        assert!(Arc::ptr_eq(&before, s.policy()));
        let bad = json!({"safety": {"rules": [
            {"match": {"tool": "*", "window": {"app": "[oops"}}, "effect": "deny"}
        ]}});
        let e = s.configure(&bad).unwrap_err();
        assert_eq!(e.issues[0].path, "safety.rules[0].match.window.app");
        assert!(e.issues[0].message.starts_with("bad glob"), "{e}");
        // Nothing was applied: the old rules still stand, compiled as they were.
        assert!(Arc::ptr_eq(&before, s.policy()));
        assert_eq!(s.config().safety.rules.len(), 1);
    }

    #[test]
    fn governance_section() {
        let mut s = ConfigStack::new();
        assert_eq!(s.config().governance.principal_id, "local-user");
        assert_eq!(s.config().governance.journal, "");
        for (bad, path) in [
            (
                json!({"governance": {"principal_id": ""}}),
                "governance.principal_id",
            ),
            (
                json!({"governance": {"principal_id": " alice"}}),
                "governance.principal_id",
            ),
            (
                json!({"governance": {"principal_id": "al\nice"}}),
                "governance.principal_id",
            ),
            (
                json!({"governance": {"principal_id": 7}}),
                "governance.principal_id",
            ),
            (
                json!({"governance": {"principal_id": "x".repeat(129)}}),
                "governance.principal_id",
            ),
            (json!({"governance": {"journal": 1}}), "governance.journal"),
            (json!({"governance": {"bogus": 1}}), "governance.bogus"),
        ] {
            let before = s.value().clone();
            let err = s.apply(&bad).unwrap_err();
            assert_eq!(err.issues[0].path, path, "{bad}: {err}");
            assert_eq!(s.value(), &before, "a refused layer changed nothing");
        }
        s.apply(&json!({"governance": {"principal_id": "alice@example", "journal": "/tmp/j.db"}}))
            .unwrap();
        assert_eq!(s.config().governance.principal_id, "alice@example");
        assert_eq!(s.config().governance.journal, "/tmp/j.db");
        // Fixed at server start: no session may change it.
        let err = s
            .configure(&json!({"governance": {"principal_id": "mallory"}}))
            .unwrap_err();
        assert_eq!(err.issues[0].path, "governance");
    }

    #[test]
    fn layers_merge_and_later_wins() {
        let mut s = ConfigStack::new();
        s.apply(&json!({"capture": {"default_width": 1280}}))
            .unwrap();
        s.apply(&json!({"capture": {"grayscale": true}})).unwrap();
        assert_eq!(s.config().capture.default_width, CanvasWidth::Px(1280));
        assert!(s.config().capture.grayscale);
        s.configure(&json!({"capture": {"default_width": 800}}))
            .unwrap();
        assert_eq!(s.config().capture.default_width, CanvasWidth::Px(800));
        // A number set over "auto" wins, and "auto" set again takes it back.
        s.configure(&json!({"capture": {"default_width": "auto"}}))
            .unwrap();
        assert_eq!(s.config().capture.default_width, CanvasWidth::Auto);
        for bad in [json!(0), json!("wide"), json!(20000)] {
            let err = s
                .configure(&json!({"capture": {"default_width": bad}}))
                .unwrap_err();
            assert_eq!(err.issues[0].path, "capture.default_width", "{bad}");
        }
        assert_eq!(s.config().capture.default_width, CanvasWidth::Auto);
    }
}
