//! Each tool's argument validation (`validate_args`): it never panics, a refusal names
//! at least one issue, and what it accepts is a fixed point: the normalized arguments
//! validate again to themselves, so a retry with what the engine executed changes
//! nothing.

use std::sync::OnceLock;

use cc_engine::config::ConfigStack;
use cc_engine::tools::tools;
use cc_engine::tools::validate_args;
use serde_json::Value;

/// The effective default config, the one tool defaults are filled from.
fn config() -> &'static Value {
    static CONFIG: OnceLock<Value> = OnceLock::new();
    CONFIG.get_or_init(|| ConfigStack::new().value().clone())
}

/// The first byte picks the tool (modulo the number of tools), the rest is the JSON of
/// its arguments.
pub fn check(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(args) = serde_json::from_slice::<Value>(rest) else {
        return;
    };
    let all = tools();
    let def = &all[usize::from(pick) % all.len()];
    match validate_args(def, &args, config()) {
        Ok(normalized) => {
            assert!(
                normalized.is_object(),
                "{}: accepted arguments normalize to a non-object {normalized}",
                def.name
            );
            match validate_args(def, &normalized, config()) {
                Ok(again) => assert_eq!(
                    again, normalized,
                    "{}: normalizing twice changed the arguments",
                    def.name
                ),
                Err(issues) => panic!(
                    "{}: the normalized form of accepted arguments {args} is refused: {issues:?}",
                    def.name
                ),
            }
        }
        Err(issues) => assert!(
            !issues.is_empty(),
            "{}: refused {args} without saying why",
            def.name
        ),
    }
}
