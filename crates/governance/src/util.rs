//! Time and identifiers. Timestamps are RFC 3339 UTC with milliseconds (wire rules).

use cc_contract::{format_timestamp, parse_timestamp};
use time::OffsetDateTime;

/// The current wall-clock time.
pub fn now() -> OffsetDateTime {
    OffsetDateTime::now_utc()
}

/// `at` as a wire timestamp.
pub fn ts(at: OffsetDateTime) -> String {
    format_timestamp(at)
}

/// `at + ms` as a wire timestamp.
pub fn ts_after(at: OffsetDateTime, ms: u64) -> String {
    let ms = i64::try_from(ms).unwrap_or(i64::MAX);
    ts(at + time::Duration::milliseconds(ms))
}

/// True when the stored timestamp `at` is not after `now`. An unparseable stored time
/// counts as expired: an expiry we cannot read must never mean "no expiry".
pub fn is_past(at: &str, now: OffsetDateTime) -> bool {
    parse_timestamp(at).map(|t| t <= now).unwrap_or(true)
}

/// A fresh random id with a readable prefix (`ses-…`, `lea-…`): 16 random bytes, so
/// ids never collide across restarts.
pub fn new_id(prefix: &str) -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // Entropy failure is practically impossible; fall back to time + a counter so
        // ids stay unique within the process.
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let t = now().unix_timestamp_nanos();
        return format!("{prefix}-{t:x}{n:x}");
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{prefix}-{hex}")
}
