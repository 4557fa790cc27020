//! Config layering (`ConfigStack::apply` for the file and `session.start` layers,
//! `configure` for `session.configure`): a refused layer changes nothing (no
//! half-applied config), an accepted one leaves a whole config that validates again as
//! a layer of its own (the same typed config; numbers may change form, `30` to `30.0`),
//! and re-applying the patch `configure` reports changes nothing.

use cc_engine::config::{ConfigStack, validate_patch};
use serde_json::Value;

/// The input is JSON: an array of `[op, patch]` steps (`op` 0 or `"apply"` is
/// `apply`, anything else `configure`), or one patch applied with `apply`.
pub fn check(data: &[u8]) {
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let steps: Vec<(bool, Value)> = match input {
        Value::Array(items) => items
            .into_iter()
            .take(16)
            .map(|step| match step {
                Value::Array(mut pair) if pair.len() == 2 => {
                    let patch = pair.pop().unwrap_or(Value::Null);
                    let op = &pair[0];
                    let apply = op == 0 || op == "apply";
                    (apply, patch)
                }
                other => (true, other),
            })
            .collect(),
        one => vec![(true, one)],
    };
    let mut stack = ConfigStack::new();
    for (apply, patch) in steps {
        let before = stack.clone();
        let outcome = if apply {
            stack.apply(&patch).map(|()| None)
        } else {
            stack.configure(&patch).map(Some)
        };
        match outcome {
            Err(e) => {
                assert_eq!(
                    stack.value(),
                    before.value(),
                    "a refused layer ({e}) changed the config"
                );
                assert_eq!(
                    stack.config(),
                    before.config(),
                    "a refused layer ({e}) changed the typed config"
                );
            }
            Ok(applied) => {
                let whole = stack.value().clone();
                if let Err(e) = validate_patch(&whole) {
                    panic!("an accepted layer {patch} left a config that does not validate: {e}");
                }
                let mut fresh = ConfigStack::new();
                if let Err(e) = fresh.apply(&whole) {
                    panic!("the config after {patch} is refused as a layer: {e}");
                }
                assert_eq!(
                    fresh.config(),
                    stack.config(),
                    "the typed config differs on re-apply"
                );
                if let Some(normalized) = applied {
                    match stack.configure(&normalized) {
                        Ok(_) => assert_eq!(
                            stack.config(),
                            fresh.config(),
                            "re-configuring with the applied patch changed the config"
                        ),
                        Err(e) => {
                            panic!("the applied patch {normalized} is refused when sent again: {e}")
                        }
                    }
                }
            }
        }
    }
}
