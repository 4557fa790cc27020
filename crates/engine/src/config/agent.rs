//! What an agent may configure for itself. Everything else — safety, redaction,
//! resource limits, the platform, tokens, governance, and whatever changes what an
//! operator's rule means (the canvas its `in_region` rectangles are written in) —
//! belongs to the operator, whose configuration the agent runs under. An allowlist, so
//! a key added to the config is operator-only until someone decides otherwise.

use serde_json::Value;

/// The `section.key` paths an agent may set with `session.start` or
/// `session.configure`: how it likes its images, snapshots and batch pacing. Not the
/// canvas width: it is the space the operator's rules are written in.
pub const AGENT_SETTABLE: &[&str] = &[
    "capture.default_format",
    "capture.default_quality",
    "capture.grayscale",
    "a11y.default_level",
    "a11y.max_name_len",
    "a11y.include_rects",
    "runtime.batch_gap_ms",
];

/// The patch a method's params carry: `{key: {...}}` or the bare object, the same
/// choice the engine makes for `session.start {config}` and `session.configure {patch}`.
pub fn patch_of(params: &Value, key: &str) -> Value {
    match params {
        Value::Object(m) if m.len() == 1 && m.get(key).is_some_and(Value::is_object) => {
            m[key].clone()
        }
        Value::Null => Value::Object(Default::default()),
        other => other.clone(),
    }
}

/// The first path of `patch` that an agent may not set, if any. A section with no
/// agent key at all (`safety`, even empty) or that is not an object is named whole; a
/// patch that is not an object names nothing, and the engine refuses it as
/// `invalid_config`.
pub fn first_operator_only(patch: &Value) -> Option<String> {
    let sections = patch.as_object()?;
    for (section, body) in sections {
        let prefix = format!("{section}.");
        let agent_section = AGENT_SETTABLE.iter().any(|p| p.starts_with(&prefix));
        let Some(keys) = body.as_object().filter(|_| agent_section) else {
            return Some(section.clone());
        };
        for key in keys.keys() {
            let path = format!("{section}.{key}");
            if !AGENT_SETTABLE.contains(&path.as_str()) {
                return Some(path);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_listed_keys_pass() {
        assert_eq!(first_operator_only(&json!({})), None);
        assert_eq!(
            first_operator_only(&json!({"capture": {"default_format": "png", "grayscale": true}})),
            None
        );
        for (patch, path) in [
            (
                json!({"capture": {"redact_sensitive": false}}),
                "capture.redact_sensitive",
            ),
            (json!({"safety": {"rules": []}}), "safety"),
            (json!({"safety": {}}), "safety"),
            (json!({"capture": {"max_bytes": 1}}), "capture.max_bytes"),
            // The canvas is the space of the operator's `in_region` rules: rescaling it
            // would move every rule's rectangle out from under the agent's clicks.
            (
                json!({"capture": {"default_width": 800}}),
                "capture.default_width",
            ),
            (
                json!({"capture": {"grayscale": true, "default_width": "auto"}}),
                "capture.default_width",
            ),
            (json!({"platform": {"name": "x11"}}), "platform"),
            (json!({"http": {"token": "x"}}), "http"),
            (json!({"runtime": 3}), "runtime"),
            (json!({"a11y": {"hard_walk_cap": 9}}), "a11y.hard_walk_cap"),
            // Which programs launch at moderate risk is the operator's trust, never
            // the agent's.
            (json!({"apps": {"launch_allowed": ["sh"]}}), "apps"),
        ] {
            assert_eq!(
                first_operator_only(&patch),
                Some(path.to_string()),
                "{patch}"
            );
        }
    }

    /// Every key an agent may set, with why it cannot change what an operator's rule
    /// means or weaken a limit: a key is added here and to the list together.
    const WHY_SAFE: &[(&str, &str)] = &[
        (
            "capture.default_format",
            "the image encoding only; the canvas, the points and the rules stay",
        ),
        (
            "capture.default_quality",
            "JPEG quality only; capture.max_bytes and max_area still bound the image",
        ),
        (
            "capture.grayscale",
            "the image's colours only; redaction is capture.redact_sensitive, the operator's",
        ),
        (
            "a11y.default_level",
            "how much of the tree a snapshot returns; rects stay on the canvas and a11y.hard_walk_cap bounds the walk",
        ),
        (
            "a11y.max_name_len",
            "how long names are in a snapshot; selectors and rules see the element, not the cut name",
        ),
        (
            "a11y.include_rects",
            "whether a snapshot shows rects; an element's centre is still read from the desktop",
        ),
        (
            "runtime.batch_gap_ms",
            "the pause between batch items; every item is judged and gated on its own",
        ),
    ];

    #[test]
    fn every_agent_key_says_why_it_is_safe() {
        let mut listed: Vec<&str> = AGENT_SETTABLE.to_vec();
        let mut reasoned: Vec<&str> = WHY_SAFE.iter().map(|(k, _)| *k).collect();
        listed.sort_unstable();
        reasoned.sort_unstable();
        assert_eq!(listed, reasoned);
        for (key, why) in WHY_SAFE {
            assert!(!why.is_empty(), "{key}");
        }
        // Nothing in the sections that hold the operator's rules and limits, and not
        // the canvas those rules are written in.
        for key in AGENT_SETTABLE {
            assert!(
                !["safety.", "platform.", "http.", "governance.", "apps."]
                    .iter()
                    .any(|p| key.starts_with(p)),
                "{key}"
            );
        }
        assert!(!AGENT_SETTABLE.contains(&"capture.default_width"));
    }

    #[test]
    fn every_listed_key_exists_in_the_config() {
        let defaults = crate::config::defaults();
        for path in AGENT_SETTABLE {
            let (section, key) = path.split_once('.').expect("section.key");
            assert!(defaults[section].get(key).is_some(), "{path}");
        }
    }

    #[test]
    fn patch_shapes_match_the_engine() {
        assert_eq!(
            patch_of(&json!({"patch": {"a": {}}}), "patch"),
            json!({"a": {}})
        );
        assert_eq!(patch_of(&json!({"a": {}}), "patch"), json!({"a": {}}));
        assert_eq!(patch_of(&Value::Null, "patch"), json!({}));
        assert_eq!(
            patch_of(&json!({"patch": {}, "safety": {}}), "patch"),
            json!({"patch": {}, "safety": {}})
        );
    }
}
