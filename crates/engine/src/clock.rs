//! Time and ids behind traits, so time-dependent logic is testable without sleeping.

use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A source of time: monotonic for deadlines, wall clock for what people read.
pub trait Clock: Send + Sync {
    /// Monotonic time.
    fn now(&self) -> Instant;
    /// Wall-clock time.
    fn wall(&self) -> SystemTime;
}

/// The real clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
    fn wall(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A clock that only moves when told to.
#[derive(Debug)]
pub struct ManualClock {
    state: Mutex<(Instant, SystemTime)>,
}

impl ManualClock {
    /// Starts at the real current time.
    pub fn new() -> Self {
        ManualClock {
            state: Mutex::new((Instant::now(), SystemTime::now())),
        }
    }

    /// Moves both clocks forward.
    pub fn advance(&self, d: Duration) {
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        g.0 += d;
        g.1 += d;
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).0
    }
    fn wall(&self) -> SystemTime {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).1
    }
}

/// RFC 3339 UTC with milliseconds, e.g. `2026-11-29T10:00:00.000Z`.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let odt = time::OffsetDateTime::from_unix_timestamp_nanos(d.as_nanos() as i128)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let fmt = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
    );
    odt.format(&fmt)
        .unwrap_or_else(|_| "1970-01-01T00:00:00.000Z".into())
}

/// `n` random bytes as lowercase hex, from the OS.
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    if getrandom::fill(&mut buf).is_err() {
        // No OS randomness: fall back to time and a counter, still unique per process.
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let c = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed) as u128;
        let mixed = nanos ^ (c << 64) ^ (std::process::id() as u128) << 32;
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (mixed >> ((i % 16) * 8)) as u8;
        }
    }
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_has_millis_and_z() {
        let t = UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
        assert_eq!(rfc3339(t), "2023-11-14T22:13:20.123Z");
    }

    #[test]
    fn manual_clock_moves_only_when_told() {
        let c = ManualClock::new();
        let a = c.now();
        c.advance(Duration::from_secs(5));
        assert_eq!(c.now() - a, Duration::from_secs(5));
    }

    #[test]
    fn random_hex_is_hex_and_varies() {
        let a = random_hex(6);
        assert_eq!(a.len(), 12);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, random_hex(6));
    }
}
