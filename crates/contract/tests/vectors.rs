//! Every golden vector of `v8-digest-vectors.json` (produced by the upstream JavaScript)
//! reproduces its canonical string and digest. None is skipped: the JSON-expressible ones
//! are built from `input_json` plus `undefined_member_paths`, the others by hand from
//! `input_js`. The `preview_*` vectors are also recomputed through the typed
//! [`ArgsDigestInput`] wherever their arguments are plain JSON.

use crate::common;

use std::collections::BTreeSet;

use cc_contract::canonical::{CanonValue, JsString, canonical_string};
use cc_contract::digest::{ArgsDigestInput, args_digest};
use cc_contract::sha256::sha256_hex;
use cc_contract::types::{
    ActionPostcondition, ActionProvenance, ActionResource, DataLabel, ExecutionMode, TargetEvidence,
};
use serde_json::Value;

struct Vector {
    name: String,
    input_json: Value,
    json_expressible: bool,
    undefined_member_paths: Vec<String>,
    canonical: String,
    digest: String,
}

fn vectors() -> Vec<Vector> {
    let Value::Array(items) = common::fixture_json("v8-digest-vectors.json") else {
        panic!("the vectors file is an array");
    };
    items
        .into_iter()
        .map(|v| Vector {
            name: v["name"].as_str().expect("name").to_owned(),
            input_json: v["input_json"].clone(),
            json_expressible: v["json_expressible"].as_bool().expect("json_expressible"),
            undefined_member_paths: v["undefined_member_paths"]
                .as_array()
                .expect("paths")
                .iter()
                .map(|p| p.as_str().expect("path").to_owned())
                .collect(),
            canonical: v["canonical"].as_str().expect("canonical").to_owned(),
            digest: v["digest"].as_str().expect("digest").to_owned(),
        })
        .collect()
}

/// Adds an `undefined` member at a JSON Pointer. It is appended to its object: no vector
/// has an `undefined` member whose key collates equal to another, so its insertion
/// position cannot change the output.
fn insert_undefined(value: &mut CanonValue, pointer: &str) {
    let segments: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect();
    let (last, parents) = segments.split_last().expect("non-empty pointer");
    let mut node = value;
    for segment in parents {
        node = match node {
            CanonValue::Object(entries) => {
                let key = JsString::from(segment.as_str());
                &mut entries
                    .iter_mut()
                    .find(|(k, _)| *k == key)
                    .expect("member")
                    .1
            }
            CanonValue::Array(items) => {
                let index: usize = segment.parse().expect("index");
                items[index].as_mut().expect("element")
            }
            other => panic!("cannot descend into {other:?}"),
        };
    }
    let CanonValue::Object(entries) = node else {
        panic!("{pointer} does not name an object member");
    };
    entries.push((JsString::from(last.as_str()), CanonValue::Undefined));
}

/// The five inputs JSON cannot express, built from their `input_js`.
fn hand_built(name: &str) -> CanonValue {
    let n = |x: f64| Some(CanonValue::Number(x));
    match name {
        // ({ s: "\ud800" })
        "lone_surrogate_value" => {
            CanonValue::object([("s", CanonValue::String(JsString::from_utf16(vec![0xd800])))])
        }
        // ({ nan: NaN, inf: Infinity, ninf: -Infinity })
        "non_finite_numbers" => CanonValue::object([
            ("nan", CanonValue::Number(f64::NAN)),
            ("inf", CanonValue::Number(f64::INFINITY)),
            ("ninf", CanonValue::Number(f64::NEG_INFINITY)),
        ]),
        // [1, undefined, 2]
        "undefined_in_array" => {
            CanonValue::Array(vec![n(1.0), Some(CanonValue::Undefined), n(2.0)])
        }
        // [undefined]
        "undefined_only_element" => CanonValue::Array(vec![Some(CanonValue::Undefined)]),
        // [1, , 3]
        "array_hole" => CanonValue::Array(vec![n(1.0), None, n(3.0)]),
        other => panic!("vector {other} is not JSON-expressible and has no hand-built input"),
    }
}

fn input_of(vector: &Vector) -> CanonValue {
    if !vector.json_expressible {
        assert!(vector.input_json.is_null(), "{}", vector.name);
        return hand_built(&vector.name);
    }
    let mut value = CanonValue::from(&vector.input_json);
    for pointer in &vector.undefined_member_paths {
        insert_undefined(&mut value, pointer);
    }
    value
}

#[test]
fn every_vector_reproduces_canonical_and_digest() {
    let vectors = vectors();
    assert_eq!(
        vectors.len(),
        56,
        "the vector file changed: review the new vectors"
    );
    let mut failures = Vec::new();
    for vector in &vectors {
        let canonical = canonical_string(&input_of(vector));
        let digest = sha256_hex(&canonical);
        if canonical != vector.canonical || digest != vector.digest {
            failures.push(format!(
                "{}:\n  expected {}\n  actual   {}",
                vector.name, vector.canonical, canonical
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} vectors differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn exactly_five_vectors_need_hand_built_input() {
    let hand: BTreeSet<String> = vectors()
        .into_iter()
        .filter(|v| !v.json_expressible)
        .map(|v| v.name)
        .collect();
    let expected: BTreeSet<String> = [
        "lone_surrogate_value",
        "non_finite_numbers",
        "undefined_in_array",
        "undefined_only_element",
        "array_hole",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(hand, expected);
}

fn typed<T: serde::de::DeserializeOwned>(input: &Value, key: &str) -> Option<T> {
    input
        .get(key)
        .map(|v| serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{key}: {e}")))
}

#[test]
fn preview_vectors_reproduce_through_the_typed_args_digest() {
    let mut checked = Vec::new();
    for vector in vectors().iter().filter(|v| v.name.starts_with("preview_")) {
        if vector
            .undefined_member_paths
            .iter()
            .any(|p| p.starts_with("/args/"))
        {
            // `undefined` inside the arguments cannot arrive as JSON; covered above.
            continue;
        }
        let input = &vector.input_json;
        let args = input["args"].as_object().expect("args object");
        let mode: ExecutionMode = typed(input, "mode").expect("mode");
        let target: Option<TargetEvidence> = typed(input, "target");
        let resource: Option<ActionResource> = typed(input, "resource");
        let data_labels: Vec<DataLabel> = typed(input, "dataLabels").expect("dataLabels");
        let provenance: Option<ActionProvenance> = typed(input, "provenance");
        let postcondition: Option<ActionPostcondition> = typed(input, "postcondition");
        let digest_input = ArgsDigestInput {
            tool: input["tool"].as_str().expect("tool"),
            operation: input["operation"].as_str().expect("operation"),
            args,
            mode,
            target: target.as_ref(),
            resource: resource.as_ref(),
            data_labels: &data_labels,
            provenance: provenance.as_ref(),
            postcondition: postcondition.as_ref(),
            target_sensitivity: None,
        };
        assert_eq!(
            digest_input.canonical(),
            vector.canonical,
            "{}",
            vector.name
        );
        assert_eq!(args_digest(&digest_input), vector.digest, "{}", vector.name);
        checked.push(vector.name.clone());
    }
    assert_eq!(checked.len(), 11, "checked {checked:?}");
}
