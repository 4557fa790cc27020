//! Arguments as an event carries them: what and where, never the whole payload.
//!
//! Why: an event is kept in the replay ring and queued for every subscriber, so an
//! action's 10 MB of text would cost 10 MB per event for as long as the ring remembers
//! it. The caller's own answer and the governed journal keep the full arguments; events
//! keep this bounded form, whatever the arguments' shape (a tool's, a batch's, or a
//! member some event adds).
//!
//! The form (PROTOCOL §6): a string longer than [`MAX_STRING`] bytes keeps its first
//! bytes, then `…[cut: N bytes, sha256 HEX]` (its whole length and digest, so an
//! operator can still tell two long texts apart); an array or object keeps its first
//! [`MAX_ITEMS`] entries and says how many more there were (an array's last item
//! `"…[N more items]"`, an object's member `"…": "[N more members]"`); once
//! [`BUDGET`] bytes have been kept, every remaining entry is counted that way too.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Bytes of a long string an event keeps.
pub const MAX_STRING: usize = 256;
/// Entries of an array or object an event keeps.
pub const MAX_ITEMS: usize = 64;
/// About how many bytes of JSON the bounded form keeps in all.
pub const BUDGET: usize = 16 * 1024;

/// `v` in its bounded form (a copy; `v` is unchanged). Small arguments come back equal.
pub fn bounded(v: &Value) -> Value {
    let mut budget = BUDGET;
    walk(v, &mut budget).unwrap_or_else(|| v.clone())
}

/// [`bounded`] of a value the caller no longer needs: returned as it is when it is
/// already in bounded form (nearly always), without copying it.
pub fn into_bounded(v: Value) -> Value {
    let mut budget = BUDGET;
    walk(&v, &mut budget).unwrap_or(v)
}

/// `v`'s bounded form when it differs from `v`, `None` when `v` already is one; spends
/// `budget` either way. What is unchanged inside a changed array or object is copied.
fn walk(v: &Value, budget: &mut usize) -> Option<Value> {
    match v {
        Value::String(s) => {
            let kept = cut(s);
            *budget = budget.saturating_sub(kept.as_deref().map_or(s.len(), str::len) + 2);
            kept.map(Value::String)
        }
        Value::Array(items) => {
            let mut out: Option<Vec<Value>> = None;
            for (i, item) in items.iter().enumerate() {
                if i == MAX_ITEMS || *budget == 0 {
                    let mut out = out.unwrap_or_else(|| items[..i].to_vec());
                    out.push(Value::String(format!("…[{} more items]", items.len() - i)));
                    return Some(out.into());
                }
                match (walk(item, budget), out.as_mut()) {
                    (Some(changed), Some(out)) => out.push(changed),
                    (Some(changed), None) => {
                        let mut copy = items[..i].to_vec();
                        copy.push(changed);
                        out = Some(copy);
                    }
                    (None, Some(out)) => out.push(item.clone()),
                    (None, None) => {}
                }
            }
            out.map(Value::from)
        }
        Value::Object(members) => {
            // The members before `i`, copied, once something has to change.
            let copied = |i: usize| -> Map<String, Value> {
                members
                    .iter()
                    .take(i)
                    .map(|(k, item)| (k.clone(), item.clone()))
                    .collect()
            };
            let mut out: Option<Map<String, Value>> = None;
            for (i, (k, item)) in members.iter().enumerate() {
                if i == MAX_ITEMS || *budget == 0 {
                    let mut out = out.unwrap_or_else(|| copied(i));
                    let more = format!("[{} more members]", members.len() - i);
                    out.insert("…".into(), more.into());
                    return Some(out.into());
                }
                let key = cut(k);
                *budget = budget.saturating_sub(key.as_deref().map_or(k.len(), str::len) + 3);
                let changed = walk(item, budget);
                if out.is_none() && (key.is_some() || changed.is_some()) {
                    out = Some(copied(i));
                }
                if let Some(out) = out.as_mut() {
                    let item = changed.unwrap_or_else(|| item.clone());
                    out.insert(key.unwrap_or_else(|| k.clone()), item);
                }
            }
            out.map(Value::from)
        }
        _ => {
            *budget = budget.saturating_sub(8);
            None
        }
    }
}

/// `None` when `s` is short enough to keep as it is; else its first [`MAX_STRING`]
/// bytes (at a character boundary), its length and its digest.
fn cut(s: &str) -> Option<String> {
    if s.len() <= MAX_STRING {
        return None;
    }
    let mut end = MAX_STRING;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let digest = Sha256::digest(s.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Some(format!(
        "{}…[cut: {} bytes, sha256 {hex}]",
        &s[..end],
        s.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Taking a value whole gives what copying it gives, on every side of each limit.
    #[test]
    fn into_bounded_is_bounded() {
        let long = "x".repeat(MAX_STRING + 1);
        let at = "x".repeat(MAX_STRING);
        let items = |n: usize| Value::Array((0..n).map(|i| json!(i)).collect());
        let members =
            |n: usize| Value::Object((0..n).map(|i| (format!("k{i}"), json!(i))).collect());
        let many = |n: usize, s: &str| Value::Array((0..n).map(|_| json!(s)).collect());
        let cases = [
            json!(null),
            json!("short"),
            json!(at),
            json!(long),
            items(MAX_ITEMS),
            items(MAX_ITEMS + 1),
            members(MAX_ITEMS),
            members(MAX_ITEMS + 1),
            json!({ at.clone(): 1 }),
            json!({ long.clone(): 1 }),
            // Just within the budget; then past it, inside the second array.
            many(MAX_ITEMS, &"y".repeat(250)),
            json!([many(40, &"y".repeat(250)), many(40, &"y".repeat(250))]),
            json!({"a": {"b": [1, 2, {"c": at}]}, "d": true}),
        ];
        let changed: Vec<bool> = cases.iter().map(|v| bounded(v) != *v).collect();
        assert_eq!(
            changed,
            [
                false, false, false, true, false, true, false, true, false, true, false, true,
                false
            ]
        );
        for v in cases {
            assert_eq!(into_bounded(v.clone()), bounded(&v), "{v}");
        }
    }

    #[test]
    fn small_arguments_are_unchanged() {
        let a = json!({"text": "hello", "x": 3, "items": [{"tool": "t", "arguments": {}}]});
        assert_eq!(bounded(&a), a);
    }

    #[test]
    fn a_long_string_keeps_its_start_length_and_digest() {
        let long = "é".repeat(600_000);
        let b = bounded(&json!({"text": long}));
        let text = b["text"].as_str().unwrap();
        assert!(text.len() < MAX_STRING + 120, "{}", text.len());
        assert!(text.starts_with("éé"));
        let digest = Sha256::digest(long.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert!(
            text.ends_with(&format!("…[cut: 1200000 bytes, sha256 {hex}]")),
            "{text}"
        );
    }

    #[test]
    fn many_items_and_members_are_counted_not_kept() {
        let items: Vec<Value> = (0..10_000).map(|i| json!({"i": i})).collect();
        let b = bounded(&json!({"items": items}));
        let kept = b["items"].as_array().unwrap();
        assert_eq!(kept.len(), MAX_ITEMS + 1);
        assert_eq!(
            kept[MAX_ITEMS],
            json!(format!("…[{} more items]", 10_000 - MAX_ITEMS))
        );
        let members: Map<String, Value> =
            (0..100).map(|i| (format!("k{i:03}"), json!(i))).collect();
        let b = bounded(&Value::Object(members));
        assert_eq!(b.as_object().unwrap().len(), MAX_ITEMS + 1);
        assert_eq!(b["…"], json!(format!("[{} more members]", 100 - MAX_ITEMS)));
    }

    #[test]
    fn the_whole_form_stays_within_about_the_budget() {
        // A batch of many long texts: each cut, and the batch cut once the budget is spent.
        let items: Vec<Value> = (0..64)
            .map(|_| json!({"tool": "keyboard.type", "arguments": {"text": "x".repeat(200_000)}}))
            .collect();
        let b = bounded(&json!({"items": items}));
        let size = serde_json::to_string(&b).unwrap().len();
        assert!(size < 2 * BUDGET, "{size}");
        let kept = b["items"].as_array().unwrap();
        assert!(
            kept.last()
                .unwrap()
                .as_str()
                .unwrap()
                .contains("more items")
        );
    }
}
