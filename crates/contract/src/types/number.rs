//! JavaScript numbers in typed fields.
//!
//! Upstream is JavaScript: every number is a double and an integral one prints without a
//! fraction (`"confidence": 1`). A Rust `f64` would re-encode as `1.0`, which is another JSON
//! value and another byte string, so fractional fields go through [`js_f64`].

/// Serde adapter for an `f64` that prints like JavaScript: integral values within the safe
/// integer range as integers, everything else as a float.
pub mod js_f64 {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Largest integer a double represents exactly along with all smaller ones (2^53 - 1).
    const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

    /// Writes `value` as an integer when it is integral and safe, else as a float.
    pub fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
        if value.fract() == 0.0 && value.abs() <= MAX_SAFE_INTEGER {
            // Exact: the value is an integer of at most 53 bits.
            serializer.serialize_i64(*value as i64)
        } else {
            serializer.serialize_f64(*value)
        }
    }

    /// Reads any JSON number.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
        f64::deserialize(deserializer)
    }
}
