//! The contract's canonical JSON and digests: the canonical form of any JSON value is
//! itself JSON whose canonical form is the same text (stable under re-parse, so a
//! digest recomputed from what was stored or sent matches), and every digest function
//! is total: whatever decodes as a contract type hashes to 64 lowercase hex digits,
//! without panicking.

use cc_contract::digest::GENESIS_HASH;
use cc_contract::sha256::{is_sha256_hex, is_value_digest};
use cc_contract::{
    ActionEnvelope, ArgsDigestInput, CanonValue, SessionEvent, args_digest, canonical_string,
    event_hash, format_timestamp, parse_timestamp, sha256_hex, value_digest,
};
use serde_json::{Map, Value};

/// The input is JSON text (anything else only exercises the digests of raw text).
pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    assert!(is_sha256_hex(&sha256_hex(&text)));
    assert!(is_value_digest(&value_digest(&text)));
    timestamp_round_trip(&text);
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let canonical = canonical_string(&CanonValue::from(&value));
    let reparsed: Value = match serde_json::from_str(&canonical) {
        Ok(v) => v,
        Err(e) => panic!("the canonical form {canonical:?} of {value} is not JSON: {e}"),
    };
    let again = canonical_string(&CanonValue::from(&reparsed));
    assert_eq!(
        again, canonical,
        "the canonical form changed under re-parse"
    );
    decoded_digests(&value);
    if let Some(inner) = value.get("envelope") {
        decoded_digests(inner);
    }
}

/// Whatever decodes as an envelope or a session event hashes without panicking.
fn decoded_digests(value: &Value) {
    if let Ok(envelope) = serde_json::from_value::<ActionEnvelope>(value.clone()) {
        let empty = Map::new();
        let args = value
            .get("args")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let digest = args_digest(&ArgsDigestInput::from_envelope(&envelope, args));
        assert!(is_sha256_hex(&digest), "argsDigest {digest:?}");
        // What a store and re-read gives digests the same.
        let json = serde_json::to_value(&envelope).expect("an envelope serializes");
        let back: ActionEnvelope =
            serde_json::from_value(json).expect("a serialized envelope decodes");
        assert_eq!(
            args_digest(&ArgsDigestInput::from_envelope(&back, args)),
            digest,
            "argsDigest changed after a round trip of the envelope"
        );
    }
    if let Ok(event) = serde_json::from_value::<SessionEvent>(value.clone()) {
        let hash = event_hash(GENESIS_HASH, &event);
        assert!(is_sha256_hex(&hash), "event hash {hash:?}");
        let json = serde_json::to_value(&event).expect("an event serializes");
        let back: SessionEvent = serde_json::from_value(json).expect("a serialized event decodes");
        assert_eq!(
            event_hash(GENESIS_HASH, &back),
            hash,
            "event hash changed after a round trip"
        );
    }
}

/// A wire timestamp that parses formats to a form that parses back to the same form
/// (when its UTC year still fits RFC 3339's four digits).
fn timestamp_round_trip(text: &str) {
    let Ok(at) = parse_timestamp(text.trim()) else {
        return;
    };
    let wire = format_timestamp(at);
    if wire.starts_with(['+', '-']) {
        return; // JavaScript's six-digit years: outside RFC 3339, by design.
    }
    match parse_timestamp(&wire) {
        Ok(back) => assert_eq!(format_timestamp(back), wire, "timestamp form unstable"),
        Err(e) => panic!("{text:?} formats as {wire:?}, which does not parse: {e}"),
    }
}
