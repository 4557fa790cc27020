//! The two written forms of a SHA-256 digest in the contract, and their checks: bare
//! lowercase hex (`argsDigest`, `actionDigest`, `scopeDigest`, the event chain) and
//! `sha256:` + hex of a value (postcondition and observed digests). The contract's types
//! check digests they carry with these; what is digested is `digest`'s.

use sha2::{Digest, Sha256};

/// Lowercase hex SHA-256 of the UTF-8 bytes of `text`.
pub fn sha256_hex(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

/// `sha256:` + [`sha256_hex`] of `value`: the form of postcondition value and content
/// digests, so the raw value never travels.
pub fn value_digest(value: &str) -> String {
    format!("sha256:{}", sha256_hex(value))
}

/// Whether `text` is a bare lowercase 64-hex SHA-256 (`argsDigest`, `actionDigest`,
/// `scopeDigest`). An empty or malformed digest binds nothing and must be a mismatch.
pub fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Whether `text` is `sha256:` + 64 lowercase hex (a value or content digest).
pub fn is_value_digest(text: &str) -> bool {
    text.strip_prefix("sha256:").is_some_and(is_sha256_hex)
}

fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_known_text() {
        assert_eq!(
            sha256_hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            value_digest("abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn digest_shapes() {
        assert!(is_sha256_hex(&sha256_hex("x")));
        assert!(!is_sha256_hex(""));
        assert!(!is_sha256_hex(&sha256_hex("x").to_uppercase()));
        assert!(is_value_digest(&value_digest("x")));
        assert!(!is_value_digest("sha256:fixture"));
        assert!(!is_value_digest(&sha256_hex("x")));
    }
}
