//! The clock every expiry check reads: the system's, or one a test or a replay sets.

use std::sync::Mutex;

use time::OffsetDateTime;

/// The source of "now" for every expiry check.
///
/// Injected rather than read from the system inside the validators so that tests,
/// replays and checkpoint resumes decide expiry deterministically, and so that every check
/// against one envelope reads the same source.
pub trait Clock: Send + Sync {
    /// The current instant.
    fn now(&self) -> OffsetDateTime;
}

/// The system clock: what production uses.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> OffsetDateTime {
        OffsetDateTime::now_utc()
    }
}

/// A clock that moves only when told to, so a test can let time pass between a preview
/// and its execution (an approval wait, a lease acquisition) without sleeping.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<OffsetDateTime>,
}

impl ManualClock {
    /// A clock stopped at `now`.
    pub fn new(now: OffsetDateTime) -> Self {
        Self {
            now: Mutex::new(now),
        }
    }

    /// Moves the clock to `now`.
    pub fn set(&self, now: OffsetDateTime) {
        *self.lock() = now;
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: time::Duration) {
        let mut now = self.lock();
        *now += by;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, OffsetDateTime> {
        // A poisoned lock only means another thread panicked while holding a plain value;
        // the value itself is still a valid instant.
        self.now
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Clock for ManualClock {
    fn now(&self) -> OffsetDateTime {
        *self.lock()
    }
}
