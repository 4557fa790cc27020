//! The secrets of the HTTP transports: the tokens and sign-in halves this server makes
//! up, and the one comparison that presented secrets go through.

/// Random bytes in a generated token (hex-encoded: twice as many characters).
const TOKEN_BYTES: usize = 32;

/// 32 random bytes as 64 hex characters.
pub(super) fn generate() -> anyhow::Result<String> {
    let mut buf = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut buf).map_err(|e| anyhow::anyhow!("no randomness for a token: {e}"))?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// Equality whose time depends only on the lengths (a token's length is no secret).
pub(crate) fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tokens_are_long_hex_and_distinct() {
        let (a, b) = (generate().unwrap(), generate().unwrap());
        assert_eq!(a.len(), 64);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn equal_only_when_every_byte_and_the_length_agree() {
        assert!(ct_eq(b"abc", b"abc"));
        assert!(!ct_eq(b"abc", b"abd"));
        assert!(!ct_eq(b"abc", b"abcd"));
        assert!(ct_eq(b"", b""));
    }
}
