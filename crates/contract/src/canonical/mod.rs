//! The canonical JSON of the upstream server (`canonical()` in computer-use-mcp's
//! `src/runtime/coordinator.ts`), the input of every `argsDigest`.
//!
//! It is not RFC 8785: keys are sorted with JavaScript `localeCompare` (ICU root
//! collation, not code-unit order), a member whose value is `undefined` prints as the bare
//! word `undefined`, and an `undefined` or missing array element prints as nothing
//! (`[1,,2]`). Primitives print as `JSON.stringify` prints them. Because those rules need
//! values JSON cannot express, the input is a [`CanonValue`] that models JavaScript values;
//! [`CanonValue::from`] converts ordinary JSON.

mod collate;
mod number;
mod string;

pub use collate::locale_compare;
pub use number::js_number_to_string;
pub use string::JsString;

/// A JavaScript value as the canonical form sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum CanonValue {
    /// `undefined`: prints as `undefined` as an object member or at the top level, and as
    /// nothing as an array element.
    Undefined,
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A JavaScript number. `-0` prints `0`; NaN and the infinities print `null`.
    Number(f64),
    /// A string, as UTF-16 code units so lone surrogates can be expressed.
    String(JsString),
    /// An array; `None` is a hole (`[1, , 3]`), printed like `undefined`: as nothing.
    Array(Vec<Option<CanonValue>>),
    /// An object's own enumerable entries in insertion order. Array-index keys are moved
    /// to the front (ascending) when printed, as JavaScript enumerates them; keys must be
    /// distinct, as in any JavaScript object.
    Object(Vec<(JsString, CanonValue)>),
}

impl CanonValue {
    /// A string value from Rust text.
    pub fn string(value: impl Into<JsString>) -> Self {
        CanonValue::String(value.into())
    }

    /// An object from `(key, value)` pairs in insertion order.
    pub fn object<K: Into<JsString>>(entries: impl IntoIterator<Item = (K, CanonValue)>) -> Self {
        CanonValue::Object(entries.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// `Some(value)` as itself, `None` as [`CanonValue::Undefined`]: an optional member that
    /// upstream passes through even when absent.
    pub fn or_undefined(value: Option<CanonValue>) -> Self {
        value.unwrap_or(CanonValue::Undefined)
    }
}

impl From<&serde_json::Value> for CanonValue {
    /// Plain JSON: every member present, numbers as the double JavaScript would parse
    /// (integers beyond 2^53 round as they do in `JSON.parse`), member order kept (the
    /// workspace enables `serde_json`'s `preserve_order`, which matters for keys that
    /// collate equal).
    fn from(value: &serde_json::Value) -> Self {
        use serde_json::Value;
        match value {
            Value::Null => CanonValue::Null,
            Value::Bool(b) => CanonValue::Bool(*b),
            Value::Number(n) => CanonValue::Number(n.as_f64().unwrap_or(f64::NAN)),
            Value::String(s) => CanonValue::string(s.as_str()),
            Value::Array(items) => {
                CanonValue::Array(items.iter().map(|v| Some(CanonValue::from(v))).collect())
            }
            Value::Object(map) => CanonValue::from(map),
        }
    }
}

impl From<&serde_json::Map<String, serde_json::Value>> for CanonValue {
    /// A JSON object, members in the map's order.
    fn from(map: &serde_json::Map<String, serde_json::Value>) -> Self {
        CanonValue::Object(
            map.iter()
                .map(|(k, v)| (JsString::from(k.as_str()), CanonValue::from(v)))
                .collect(),
        )
    }
}

impl From<serde_json::Value> for CanonValue {
    fn from(value: serde_json::Value) -> Self {
        CanonValue::from(&value)
    }
}

/// The canonical string of `value`, exactly as upstream's `canonical(value)` builds it.
///
/// A top-level `undefined` gives `"undefined"` (upstream would return no string at all and
/// fail to hash it; printing it like a member keeps this total).
pub fn canonical_string(value: &CanonValue) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

fn write_value(out: &mut String, value: &CanonValue) {
    match value {
        CanonValue::Undefined => out.push_str("undefined"),
        CanonValue::Null => out.push_str("null"),
        CanonValue::Bool(true) => out.push_str("true"),
        CanonValue::Bool(false) => out.push_str("false"),
        CanonValue::Number(n) if n.is_finite() => out.push_str(&js_number_to_string(*n)),
        CanonValue::Number(_) => out.push_str("null"),
        CanonValue::String(s) => string::write_quoted(out, s.as_utf16()),
        CanonValue::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                match item {
                    None | Some(CanonValue::Undefined) => {}
                    Some(item) => write_value(out, item),
                }
            }
            out.push(']');
        }
        CanonValue::Object(entries) => {
            out.push('{');
            for (i, (key, item)) in collate::sorted_entries(entries).into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                string::write_quoted(out, key.as_utf16());
                out.push(':');
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prints_like_upstream() {
        let v = CanonValue::from(&json!({"b": [1, null, "x"], "a": {"B": true, "a": -0.0}}));
        assert_eq!(
            canonical_string(&v),
            r#"{"a":{"a":0,"B":true},"b":[1,null,"x"]}"#
        );
    }

    #[test]
    fn undefined_and_holes() {
        let v = CanonValue::object([
            ("u", CanonValue::Undefined),
            (
                "arr",
                CanonValue::Array(vec![
                    Some(CanonValue::Number(1.0)),
                    None,
                    Some(CanonValue::Undefined),
                    Some(CanonValue::Number(f64::NAN)),
                ]),
            ),
        ]);
        assert_eq!(canonical_string(&v), r#"{"arr":[1,,,null],"u":undefined}"#);
        assert_eq!(canonical_string(&CanonValue::Undefined), "undefined");
    }
}
