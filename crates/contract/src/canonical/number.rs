//! JavaScript `Number#toString` for finite doubles.
//!
//! The upstream digests print numbers with `JSON.stringify`, which uses
//! `Number::toString(x, 10)` (ECMA-262 §6.1.6.1.20): the shortest digit string that
//! round-trips, laid out in plain or exponent form by fixed thresholds (`1e21`, `1e-7`).
//! The digits come from Ryū, which also resolves an exact tie between two shortest
//! candidates to the even one, as ECMAScript requires (Rust's own `{:e}` rounds such ties
//! up: `28729120033145.5625` prints `…145.563` there and `…145.562` in JavaScript). Only
//! the layout is done here.

/// `Number.prototype.toString()` of `value`: `"NaN"`, `"Infinity"`, `"-Infinity"` for the
/// non-finite values, `"0"` for both zeros, otherwise the ECMAScript layout.
pub fn js_number_to_string(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_owned();
    }
    if value == 0.0 {
        return "0".to_owned();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-Infinity" } else { "Infinity" }.to_owned();
    }
    let mut out = String::new();
    if value < 0.0 {
        out.push('-');
    }
    let (digits, n) = shortest_digits(value.abs());
    let k = digits.len() as i32;
    if k <= n && n <= 21 {
        // Integer with trailing zeros: 1e20 -> "100000000000000000000".
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        let (int, frac) = digits.split_at(n as usize);
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        let e = n - 1;
        out.push('e');
        out.push(if e < 0 { '-' } else { '+' });
        out.push_str(&e.unsigned_abs().to_string());
    }
    out
}

/// The shortest round-trip decimal digits `s` (no leading or trailing zeros) and the
/// exponent `n` such that `value = 0.s × 10^n`, for a finite positive `value`.
fn shortest_digits(value: f64) -> (String, i32) {
    // Ryū prints e.g. "0.001", "100.0", "1.2345e-7", "1e21": shortest digits, in a layout
    // of its own that is read back here as digits, a dot position and an exponent.
    let mut buffer = ryu::Buffer::new();
    let formatted = buffer.format_finite(value);
    let (mantissa, exponent) = formatted.split_once('e').unwrap_or((formatted, "0"));
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits: String = int_part.chars().chain(frac_part.chars()).collect();
    let mut n = int_part.len() as i32 + parse_exponent(exponent);
    let leading = digits.len() - digits.trim_start_matches('0').len();
    digits.drain(..leading);
    n -= leading as i32;
    digits.truncate(digits.trim_end_matches('0').len());
    (digits, n)
}

/// Reads Ryū's exponent (`-7`, `21`); it only ever prints an optional `-` and digits.
fn parse_exponent(text: &str) -> i32 {
    let (negative, magnitude) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let magnitude = magnitude
        .bytes()
        .filter(u8::is_ascii_digit)
        .fold(0i32, |acc, b| acc * 10 + i32::from(b - b'0'));
    if negative { -magnitude } else { magnitude }
}

#[cfg(test)]
mod tests {
    use super::js_number_to_string as js;

    #[test]
    fn matches_hand_picked_js_outputs() {
        assert_eq!(js(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(js(1e21), "1e+21");
        assert_eq!(js(1e20), "100000000000000000000");
        assert_eq!(js(123e-20), "1.23e-18");
        assert_eq!(js(-0.0), "0");
        assert_eq!(js(5e-324), "5e-324");
        assert_eq!(js(1.7976931348623157e308), "1.7976931348623157e+308");
        assert_eq!(js(1e-7), "1e-7");
        assert_eq!(js(0.000001), "0.000001");
        assert_eq!(js(1.5e-7), "1.5e-7");
        assert_eq!(js(123456789.125), "123456789.125");
        assert_eq!(js(-2.25), "-2.25");
        assert_eq!(js(100.0), "100");
        assert_eq!(js(1.0 / 3.0), "0.3333333333333333");
        assert_eq!(js(18446744073709551615.0), "18446744073709552000");
        assert_eq!(
            js(123456789012345678901234567890.0),
            "1.2345678901234568e+29"
        );
        assert_eq!(js(-1e21), "-1e+21");
        // Exact ties between two 17-digit candidates go to the even digit (bit patterns
        // that Node 20 prints so; Rust's `{:e}` rounds them up).
        assert_eq!(
            js(f64::from_bits(0x42ba_2104_fe89_7990)),
            "28729120033145.562"
        );
        assert_eq!(
            js(f64::from_bits(0x42b0_c463_6e3e_3310)),
            "18435667803699.062"
        );
        assert_eq!(js(0.001), "0.001");
        assert_eq!(js(123.456), "123.456");
        assert_eq!(js(f64::NAN), "NaN");
        assert_eq!(js(f64::INFINITY), "Infinity");
        assert_eq!(js(f64::NEG_INFINITY), "-Infinity");
    }
}
