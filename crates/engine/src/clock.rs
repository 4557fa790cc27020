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

/// RFC 3339 UTC with milliseconds, e.g. `2026-11-29T10:00:00.000Z`. Every event and
/// answer carries one, so it is written digit by digit rather than through a general
/// formatter (a tenth of the instructions). Past year 9999 it is the epoch, as a
/// four-digit year cannot say it.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (year, month, day) = civil_from_days(secs / 86_400);
    if year > 9999 {
        return "1970-01-01T00:00:00.000Z".into();
    }
    let of_day = secs % 86_400;
    let mut out = [0u8; 24];
    let mut put = |at: usize, width: u32, mut n: u64| {
        for i in (0..width as usize).rev() {
            out[at + i] = b'0' + (n % 10) as u8;
            n /= 10;
        }
    };
    put(0, 4, year);
    put(5, 2, month);
    put(8, 2, day);
    put(11, 2, of_day / 3600);
    put(14, 2, of_day / 60 % 60);
    put(17, 2, of_day % 60);
    put(20, 3, u64::from(d.subsec_millis()));
    for (at, c) in [
        (4, b'-'),
        (7, b'-'),
        (10, b'T'),
        (13, b':'),
        (16, b':'),
        (19, b'.'),
        (23, b'Z'),
    ] {
        out[at] = c;
    }
    // Digits and separators only: always UTF-8.
    std::str::from_utf8(&out).map_or_else(|_| String::new(), str::to_owned)
}

/// The proleptic Gregorian (year, month, day) of a count of days since 1970-01-01
/// (Howard Hinnant's `civil_from_days`, for days on or after the epoch).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
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

    /// The digits agree with a general formatter's from the epoch to year 9999: each
    /// day's first and last millisecond to 2134, then every 97th day.
    #[test]
    fn rfc3339_agrees_with_a_general_formatter() {
        let fmt = time::macros::format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
        );
        let last_day = 2_932_896; // 9999-12-31
        let mut day = 0u64;
        while day <= last_day {
            for ms in [0, 86_399_999, (day * 7_919) % 86_400_000] {
                let t = UNIX_EPOCH + Duration::from_millis(day * 86_400_000 + ms);
                let nanos = t.duration_since(UNIX_EPOCH).unwrap().as_nanos() as i128;
                let want = time::OffsetDateTime::from_unix_timestamp_nanos(nanos)
                    .unwrap()
                    .format(&fmt)
                    .unwrap();
                assert_eq!(rfc3339(t), want, "day {day}, ms {ms}");
            }
            day += if day < 60_000 { 1 } else { 97 };
        }
        let beyond = UNIX_EPOCH + Duration::from_secs((last_day + 1) * 86_400);
        assert_eq!(rfc3339(beyond), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH - Duration::from_secs(1)),
            "1970-01-01T00:00:00.000Z"
        );
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
