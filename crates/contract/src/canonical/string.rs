//! JavaScript strings and their `JSON.stringify` quoting.
//!
//! A JavaScript string is a sequence of UTF-16 code units that need not be well formed, and
//! the upstream digests hash whatever `JSON.stringify` prints for it — including lone
//! surrogates, which it escapes as `\udXXX`. A Rust `String` cannot hold those, so the
//! canonical form works on code units.

use std::fmt;

/// A JavaScript string value: UTF-16 code units, possibly with lone surrogates.
///
/// Built from Rust strings with [`From`]; use [`JsString::from_utf16`] only for ill-formed
/// text (lone surrogates), which no JSON parser in this workspace produces.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JsString(Vec<u16>);

impl JsString {
    /// Wraps raw UTF-16 code units exactly as given (lone surrogates allowed).
    pub fn from_utf16(units: Vec<u16>) -> Self {
        Self(units)
    }

    /// The code units, as JavaScript sees them.
    pub fn as_utf16(&self) -> &[u16] {
        &self.0
    }

    /// The text with each lone surrogate replaced by U+FFFD (for display and errors only:
    /// never hash this).
    pub fn to_string_lossy(&self) -> String {
        String::from_utf16_lossy(&self.0)
    }
}

impl From<&str> for JsString {
    fn from(value: &str) -> Self {
        Self(value.encode_utf16().collect())
    }
}

impl From<String> for JsString {
    fn from(value: String) -> Self {
        Self::from(value.as_str())
    }
}

impl fmt::Debug for JsString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut quoted = String::new();
        write_quoted(&mut quoted, &self.0);
        f.write_str(&quoted)
    }
}

/// Appends `JSON.stringify(units)`: the string in double quotes, with `"` `\` and the
/// short escapes `\b \f \n \r \t`, other C0 controls as `\u00xx`, lone surrogates as
/// `\udxxx` (lowercase hex, as ECMAScript's `QuoteJSONString`), everything else literal.
pub(crate) fn write_quoted(out: &mut String, units: &[u16]) {
    out.push('"');
    for decoded in char::decode_utf16(units.iter().copied()) {
        match decoded {
            Ok(c) => match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if u32::from(c) < 0x20 => push_unicode_escape(out, u32::from(c)),
                c => out.push(c),
            },
            Err(lone) => push_unicode_escape(out, u32::from(lone.unpaired_surrogate())),
        }
    }
    out.push('"');
}

fn push_unicode_escape(out: &mut String, unit: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push_str("\\u");
    for shift in [12, 8, 4, 0] {
        out.push(char::from(HEX[((unit >> shift) & 0xf) as usize]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quote(units: &[u16]) -> String {
        let mut out = String::new();
        write_quoted(&mut out, units);
        out
    }

    #[test]
    fn escapes_like_json_stringify() {
        let s: JsString = "a\"b\\c\u{8}\u{c}\n\r\t\u{1}\u{1f}\u{7f}\u{2028}é😀/".into();
        assert_eq!(
            quote(s.as_utf16()),
            "\"a\\\"b\\\\c\\b\\f\\n\\r\\t\\u0001\\u001f\u{7f}\u{2028}é😀/\""
        );
    }

    #[test]
    fn lone_surrogates_are_escaped_lowercase() {
        assert_eq!(quote(&[0xd800]), "\"\\ud800\"");
        assert_eq!(quote(&[0x61, 0xdfff, 0x62]), "\"a\\udfffb\"");
        // A high surrogate followed by a non-low one stays lone; the pair after it decodes.
        assert_eq!(quote(&[0xdbff, 0xd83d, 0xde00]), "\"\\udbff😀\"");
    }
}
