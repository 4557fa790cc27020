//! Tool schemas every mainstream MCP client accepts (PROTOCOL §7).
//!
//! Strict clients refuse a tool list whose schemas use JSON-Schema features they do
//! not implement: a `format` they do not know (schemars writes `uint32`, `uint64`… for
//! unsigned integers), a boolean sub-schema (`true`/`false` in place of a schema), or
//! rely on `additionalProperties` being read the same way when it is absent. Every
//! published schema passes through [`portable`], which keeps its meaning: unknown
//! formats go (their bounds are already `minimum`/`maximum`), `true` becomes `{}`,
//! `false` becomes `{"not": {}}`, and every object schema says whether it takes
//! members beyond its properties (absent meant "it does", so it is written `true`).

use serde_json::{Map, Value, json};

/// The only `format` kept: the one JSON-Schema format every client knows.
pub const KNOWN_FORMATS: &[&str] = &["date-time"];

/// Keywords whose value is one schema.
const ONE: &[&str] = &[
    "items",
    "not",
    "contains",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// Keywords whose value is a list of schemas.
const LIST: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];

/// Keywords whose value maps names to schemas.
const MAP: &[&str] = &["properties", "patternProperties", "$defs", "definitions"];

/// `schema` rewritten for strict clients, with the same meaning.
pub fn portable(schema: Value) -> Value {
    match schema {
        Value::Bool(true) => json!({}),
        Value::Bool(false) => json!({"not": {}}),
        Value::Object(m) => Value::Object(object(m)),
        other => other,
    }
}

fn object(mut m: Map<String, Value>) -> Map<String, Value> {
    if m.get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| !KNOWN_FORMATS.contains(&f))
    {
        m.remove("format");
    }
    for key in ONE {
        if let Some(v) = m.remove(*key) {
            m.insert(key.to_string(), portable(v));
        }
    }
    for key in LIST {
        if let Some(Value::Array(items)) = m.remove(*key) {
            m.insert(
                key.to_string(),
                Value::Array(items.into_iter().map(portable).collect()),
            );
        }
    }
    for key in MAP {
        if let Some(Value::Object(props)) = m.remove(*key) {
            let props = props.into_iter().map(|(k, v)| (k, portable(v))).collect();
            m.insert(key.to_string(), Value::Object(props));
        }
    }
    // `additionalProperties` stays a boolean (every client reads that), or a schema
    // made portable; an object schema without it says `true`, which it meant.
    match m.remove("additionalProperties") {
        Some(Value::Bool(b)) => {
            m.insert("additionalProperties".into(), Value::Bool(b));
        }
        Some(v) => {
            m.insert("additionalProperties".into(), portable(v));
        }
        None if is_object_schema(&m) => {
            m.insert("additionalProperties".into(), Value::Bool(true));
        }
        None => {}
    }
    m
}

/// Whether a schema describes objects (its `type` says so, or it lists properties).
fn is_object_schema(m: &Map<String, Value>) -> bool {
    let typed = match m.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => false,
    };
    typed || m.contains_key("properties")
}

/// What a strict client would refuse in `schema`, as JSON pointers with the reason
/// (empty when it is portable). The tests hold every tool to it.
#[cfg(test)]
pub fn problems(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(schema, "", &mut out);
    out
}

#[cfg(test)]
fn walk(v: &Value, at: &str, out: &mut Vec<String>) {
    let m = match v {
        Value::Object(m) => m,
        Value::Bool(_) => {
            out.push(format!("{at}: a boolean schema"));
            return;
        }
        _ => {
            out.push(format!("{at}: not a schema"));
            return;
        }
    };
    if let Some(f) = m.get("format").and_then(Value::as_str)
        && !KNOWN_FORMATS.contains(&f)
    {
        out.push(format!("{at}: format {f:?}"));
    }
    if is_object_schema(m) && !m.contains_key("additionalProperties") {
        out.push(format!("{at}: additionalProperties not stated"));
    }
    if let Some(a) = m.get("additionalProperties")
        && !a.is_boolean()
    {
        walk(a, &format!("{at}/additionalProperties"), out);
    }
    for key in ONE {
        if let Some(s) = m.get(*key) {
            walk(s, &format!("{at}/{key}"), out);
        }
    }
    for key in LIST {
        for (i, s) in m
            .get(*key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            walk(s, &format!("{at}/{key}/{i}"), out);
        }
    }
    for key in MAP {
        for (name, s) in m.get(*key).and_then(Value::as_object).into_iter().flatten() {
            walk(s, &format!("{at}/{key}/{name}"), out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_formats_and_boolean_schemas_go_and_objects_say_what_they_take() {
        let raw = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "format": "uint32", "minimum": 0},
                "at": {"type": "string", "format": "date-time"},
                "any": true,
                "never": false,
                "list": {"type": "array", "items": true},
                "either": {"anyOf": [{"type": "object", "properties": {}}, true]},
                "map": {"type": "object", "additionalProperties": {"type": "integer", "format": "uint64"}}
            },
            "additionalProperties": false
        });
        assert!(!problems(&raw).is_empty());
        let p = portable(raw);
        assert_eq!(problems(&p), Vec::<String>::new(), "{p}");
        let props = &p["properties"];
        assert_eq!(props["n"], json!({"type": "integer", "minimum": 0}));
        assert_eq!(props["at"]["format"], "date-time");
        assert_eq!(props["any"], json!({}));
        assert_eq!(props["never"], json!({"not": {}}));
        assert_eq!(props["list"]["items"], json!({}));
        assert_eq!(props["either"]["anyOf"][0]["additionalProperties"], true);
        assert_eq!(props["either"]["anyOf"][1], json!({}));
        assert_eq!(
            props["map"]["additionalProperties"],
            json!({"type": "integer"})
        );
        assert_eq!(p["additionalProperties"], false, "a stated value is kept");
    }

    #[test]
    fn problems_name_where_and_why() {
        let bad = json!({"type": "object", "properties": {"a": true, "b": {"format": "uint8"}}});
        let found = problems(&bad);
        assert!(
            found
                .iter()
                .any(|p| p == ": additionalProperties not stated"),
            "{found:?}"
        );
        assert!(
            found.iter().any(|p| p == "/properties/a: a boolean schema"),
            "{found:?}"
        );
        assert!(
            found.iter().any(|p| p.contains("/properties/b: format")),
            "{found:?}"
        );
    }
}
