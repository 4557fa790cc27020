//! `observe`: what an action's caller will look at next, answered with the action
//! itself (one round trip instead of two). Every acting tool takes it; the worker runs
//! it after the action settles (`worker/observe.rs`), each observation gated as the
//! observing tool would be, so a capture is redacted and a denied one is refused. Its
//! members are checked against the observing tools' own specs with the rest of the
//! arguments (`args.rs`).

use serde::Deserialize;
use serde_json::{Value, json};

use super::def::{Nature, ToolDef};
use crate::spec::{Field, Ty};

/// The argument's name, on every acting tool.
pub(crate) const ARG: &str = "observe";

/// What to observe after the action.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Observe {
    /// `screen.capture`'s own arguments.
    pub capture: Option<Value>,
    /// `a11y.snapshot`'s own arguments (`diff: true` for what changed).
    pub snapshot: Option<Value>,
    /// How long the screen must be still before observing.
    pub settle_ms: u64,
    /// The longest the settling may take; past it, the observation is taken anyway
    /// (and says so).
    pub settle_timeout_ms: u64,
}

/// The observation tools, by the member of `observe` that asks for them.
pub(crate) const OBSERVERS: [(&str, &str); 2] =
    [("capture", "screen.capture"), ("snapshot", "a11y.snapshot")];

fn spec() -> Ty {
    Ty::Object(vec![
        // The observing tools' own schemas apply; they are checked by `check` (not
        // repeated here, which would copy them into every acting tool's schema).
        Field::opt(
            "capture",
            Ty::Any,
            "a capture after the action: an object of screen.capture's arguments ({} for the defaults)",
        ),
        Field::opt(
            "snapshot",
            Ty::Any,
            "an accessibility snapshot after the action: an object of a11y.snapshot's arguments ({\"diff\": true} for what changed)",
        ),
        Field::def(
            "settle_ms",
            Ty::int(0, 10_000),
            json!(100),
            "the screen must be still this long before observing (0: observe at once)",
        ),
        Field::def(
            "settle_timeout_ms",
            Ty::int(0, 30_000),
            json!(2_000),
            "observe anyway after this long (settled: false)",
        ),
    ])
}

/// What the answer's `observation` member holds.
const OUTPUT: (&str, &str) = (
    "observation",
    "with observe: {settled, capture?, snapshot?}, each as its tool answers it or {error}",
);

/// Adds `observe` to an acting tool (not to a batch: its items may observe each).
pub(crate) fn extend(mut def: ToolDef) -> ToolDef {
    if def.nature != Nature::Acts || def.is_batch() {
        return def;
    }
    if let Ty::Object(fields) = &mut def.params {
        fields.push(Field::opt(
            ARG,
            spec(),
            "also answer what the screen shows after the action settles: a capture and/or a snapshot (or its diff)",
        ));
    }
    let mut outputs = def.outputs.to_vec();
    outputs.push(OUTPUT);
    // Built once per tool at table initialisation.
    def.outputs = Box::leak(outputs.into_boxed_slice());
    def
}

#[cfg(test)]
mod tests {
    use crate::config::defaults;
    use crate::tools::{find, validate_args};
    use serde_json::json;

    #[test]
    fn observations_are_checked_before_the_action_and_normalized() {
        let click = find("pointer.click").unwrap();
        let ok = validate_args(
            click,
            &json!({"x": 1, "y": 2, "observe": {"capture": {}, "snapshot": {"diff": true}}}),
            &defaults(),
        )
        .unwrap();
        assert_eq!(
            ok["observe"]["capture"]["scale"], 1.0,
            "screen.capture's defaults"
        );
        assert_eq!(ok["observe"]["snapshot"]["diff"], true);
        assert_eq!(ok["observe"]["settle_ms"], 100);
        let bad = validate_args(
            click,
            &json!({"x": 1, "y": 2, "observe": {"capture": {"scale": 7}, "snapshot": 3}}),
            &defaults(),
        )
        .unwrap_err();
        let paths: Vec<&str> = bad.iter().map(|i| i.path.as_str()).collect();
        assert!(paths.contains(&"observe.capture.scale"), "{bad:?}");
        assert!(
            paths.iter().any(|p| p.starts_with("observe.snapshot")),
            "{bad:?}"
        );
        // Observers and the batch take no observe.
        let cap = find("screen.capture").unwrap();
        assert!(validate_args(cap, &json!({"observe": {}}), &defaults()).is_err());
        assert!(find("batch.execute").unwrap().schema()["properties"]["observe"].is_null());
        assert!(click.outputs.iter().any(|(k, _)| *k == "observation"));
    }
}
