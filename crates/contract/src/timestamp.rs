//! Wire timestamps: RFC 3339, UTC, milliseconds (`2026-11-29T10:00:00.000Z`), the form of
//! JavaScript's `Date#toISOString`.
//!
//! They stay `String`s in the types so a decoded object re-encodes byte for byte; code that
//! compares times parses them here. Parsing is strict RFC 3339 and fails loudly: an expiry
//! that does not parse must reject the object that carries it, never be skipped.

use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

/// A wire timestamp that is not RFC 3339.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("timestamp `{input}` is not RFC 3339: {reason}")]
pub struct TimestampError {
    /// The text that failed to parse.
    pub input: String,
    /// Why it failed.
    pub reason: String,
}

/// Parses an RFC 3339 timestamp (any offset, any fraction precision).
pub fn parse_timestamp(input: &str) -> Result<OffsetDateTime, TimestampError> {
    OffsetDateTime::parse(input, &Rfc3339).map_err(|e| TimestampError {
        input: input.to_owned(),
        reason: e.to_string(),
    })
}

/// Formats `at` as the wire form: UTC, milliseconds, `Z` (what `Date#toISOString` prints;
/// years outside 0..=9999 use its signed six-digit form).
pub fn format_timestamp(at: OffsetDateTime) -> String {
    let at = at.to_offset(UtcOffset::UTC);
    let year = at.year();
    let year = if (0..=9999).contains(&year) {
        format!("{year:04}")
    } else {
        format!(
            "{}{:06}",
            if year < 0 { '-' } else { '+' },
            year.unsigned_abs()
        )
    };
    format!(
        "{year}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.millisecond()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_the_wire_form() {
        let text = "2026-07-13T10:00:30.500Z";
        let at = parse_timestamp(text).expect("valid");
        assert_eq!(at.unix_timestamp(), 1_783_936_830);
        assert_eq!(format_timestamp(at), text);
    }

    #[test]
    fn offsets_are_normalised_to_utc() {
        let at = parse_timestamp("2026-07-13T12:00:00.123456+02:00").expect("valid");
        assert_eq!(format_timestamp(at), "2026-07-13T10:00:00.123Z");
    }

    #[test]
    fn garbage_is_an_error() {
        for bad in [
            "",
            "soon",
            "2026-07-13",
            "2026-07-13T10:00:00",
            "2026-13-01T00:00:00Z",
        ] {
            let err = parse_timestamp(bad).expect_err(bad);
            assert_eq!(err.input, bad);
        }
    }
}
