//! JSON Schema (draft 2020-12) generated from the same [`Ty`] tree validation uses.

use serde_json::{Map, Value, json};

use super::{Default, Ty};
use cc_protocol::Key;

/// The JSON Schema of a type. Objects are closed (`additionalProperties: false`) at
/// every depth, as validation is.
pub fn to_json_schema(ty: &Ty) -> Value {
    match ty {
        Ty::Any => json!({}),
        Ty::Bool => json!({"type": "boolean"}),
        Ty::Int { min, max } => json!({"type": "integer", "minimum": min, "maximum": max}),
        Ty::Num { min, max } => json!({"type": "number", "minimum": min, "maximum": max}),
        Ty::AutoOrInt { min, max } => json!({
            "oneOf": [
                {"type": "string", "const": "auto"},
                {"type": "integer", "minimum": min, "maximum": max}
            ]
        }),
        Ty::Str {
            max_chars,
            non_empty,
        } => {
            let mut m = Map::new();
            m.insert("type".into(), json!("string"));
            if let Some(max) = max_chars {
                m.insert("maxLength".into(), json!(max));
            }
            if *non_empty {
                m.insert("minLength".into(), json!(1));
            }
            Value::Object(m)
        }
        Ty::Enum(values) => json!({"type": "string", "enum": values}),
        Ty::KeyName => {
            json!({"type": "string", "description": "a key name (case-insensitive)", "examples": Key::all_names()})
        }
        Ty::KeyCombo => json!({
            "oneOf": [
                {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 8, "uniqueItems": true},
                {"type": "string", "description": "keys joined by '+', e.g. \"ctrl+shift+esc\""}
            ]
        }),
        Ty::List { item, min, max } => {
            let mut m = Map::new();
            m.insert("type".into(), json!("array"));
            m.insert("items".into(), to_json_schema(item));
            m.insert("minItems".into(), json!(min));
            if let Some(max) = max {
                m.insert("maxItems".into(), json!(max));
            }
            Value::Object(m)
        }
        Ty::Object(fields) => {
            let mut props = Map::new();
            let mut required = Vec::new();
            for f in fields {
                let mut s = to_json_schema(&f.ty);
                if let Value::Object(m) = &mut s {
                    if !f.doc.is_empty() {
                        m.insert("description".into(), json!(f.doc));
                    }
                    match &f.default {
                        Default::Value(d) => {
                            m.insert("default".into(), d.clone());
                        }
                        Default::Config(p) => {
                            m.insert(
                                "description".into(),
                                json!(
                                    format!("{} (default: config {p})", f.doc)
                                        .trim()
                                        .to_string()
                                ),
                            );
                        }
                        Default::None => {}
                    }
                }
                if f.required {
                    required.push(json!(f.name));
                }
                props.insert(f.name.to_string(), s);
            }
            let mut m = Map::new();
            m.insert("type".into(), json!("object"));
            m.insert("properties".into(), Value::Object(props));
            if !required.is_empty() {
                m.insert("required".into(), Value::Array(required));
            }
            m.insert("additionalProperties".into(), json!(false));
            Value::Object(m)
        }
    }
}
