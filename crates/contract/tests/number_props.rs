//! Property tests of the JavaScript number formatter and of the canonical form.

use cc_contract::canonical::{CanonValue, canonical_string, js_number_to_string};
use proptest::prelude::*;
use serde_json::Value;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// Any finite double prints as text that parses back to the same double (`-0` prints
    /// `0`, which compares equal), in at most 17 significant digits.
    #[test]
    fn finite_doubles_round_trip(bits in any::<u64>()) {
        let value = f64::from_bits(bits);
        prop_assume!(value.is_finite());
        let text = js_number_to_string(value);
        let parsed: f64 = text.parse().expect("parses");
        prop_assert_eq!(parsed, value, "{}", text);
        let digits = text
            .split('e')
            .next()
            .unwrap_or_default()
            .chars()
            .filter(char::is_ascii_digit)
            .collect::<String>();
        prop_assert!(digits.trim_start_matches('0').trim_end_matches('0').len() <= 17, "{}", text);
    }

    /// Integers print without fraction or exponent below 1e21, as JavaScript does.
    #[test]
    fn safe_integers_print_plainly(n in -9_007_199_254_740_991i64..=9_007_199_254_740_991i64) {
        prop_assert_eq!(js_number_to_string(n as f64), n.to_string());
    }

    /// The canonical form of plain JSON (integers, strings with any characters) is JSON
    /// that parses back to the same value.
    #[test]
    fn canonical_json_parses_back(value in json_value()) {
        let text = canonical_string(&CanonValue::from(&value));
        let parsed: Value = serde_json::from_str(&text).expect("canonical JSON parses");
        prop_assert_eq!(parsed, value);
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| Value::from(i64::from(n))),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((any::<String>(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

#[test]
fn hand_picked_js_outputs() {
    for (value, js) in [
        (0.1 + 0.2, "0.30000000000000004"),
        (1e21, "1e+21"),
        (123e-20, "1.23e-18"),
        (-0.0, "0"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (1e-7, "1e-7"),
        (0.000001, "0.000001"),
        (1e20, "100000000000000000000"),
        (2f64.powi(53) + 2.0, "9007199254740994"),
    ] {
        assert_eq!(js_number_to_string(value), js, "{value:e}");
    }
}
