//! How fast typed characters leave for the compositor. A compositor built on libwayland
//! before 1.23 (sway before 1.11, among others) keeps at most 4 KiB per client beyond
//! what the kernel socket holds, and disconnects a client whose socket is full: a
//! terminal busy for a moment while a long text is typed at full speed is killed, and
//! the rest of the text is lost. Two defences, both measured on headless sway 1.7 with
//! the receiving terminal stopped: back-to-back characters leave in batches, which the
//! compositor forwards in a few large writes (a stopped terminal then survives 2 800
//! characters, where one key per write killed it within the first few hundred); and
//! past a first burst they leave at a bounded rate, so a client that only pauses has
//! time to read: about a quarter of a second of pause at this rate. A client that stops reading
//! for good is disconnected all the same, by any typist.
//!
//! The wait for the rate comes after a batch leaves, never before: a batch is sent as
//! soon as it is complete, and a stop raised during the wait finds nothing more sent.

use std::time::{Duration, Instant};

use cc_desktop::Pace;

/// Characters sent in one write when they follow each other (about 3.5 KiB of key
/// events, under the compositor's 4 KiB per client).
pub const BATCH: usize = 64;
/// Characters that leave at once before the rate applies: a short text is never slowed.
pub const BURST: f64 = 512.0;
/// Characters per second past the burst.
pub const RATE: f64 = 10_000.0;

/// Batching and the rate budget of one virtual keyboard.
#[derive(Debug)]
pub struct Pacer {
    budget: f64,
    refilled: Instant,
    held: usize,
    announced: usize,
}

impl Pacer {
    pub fn new(now: Instant) -> Pacer {
        Pacer {
            budget: BURST,
            refilled: now,
            held: 0,
            announced: 0,
        }
    }

    /// The next `chars` characters follow each other (or, spaced, each leaves alone).
    pub fn announce(&mut self, chars: usize, pace: Pace) {
        self.announced = match pace {
            Pace::BackToBack => chars,
            Pace::Spaced => 0,
        };
    }

    /// Counts one queued character and says whether the queue should leave now: at
    /// the last announced character, a full batch, or any unannounced one.
    pub fn typed(&mut self) -> bool {
        self.announced = self.announced.saturating_sub(1);
        self.held += 1;
        self.announced == 0 || self.held >= BATCH
    }

    /// Takes the held characters (which leave now) from the budget and says how long
    /// to wait before the next ones may be typed.
    pub fn send(&mut self, now: Instant) -> Duration {
        let refill = now.saturating_duration_since(self.refilled).as_secs_f64() * RATE;
        self.budget = (self.budget + refill).min(BURST) - self.held as f64;
        self.refilled = now;
        self.held = 0;
        if self.budget >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-self.budget / RATE)
        }
    }

    /// Whatever is queued left with another request (a key, a release): nothing is held.
    pub fn flushed(&mut self) {
        self.held = 0;
        self.announced = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_to_back_characters_leave_in_batches_and_at_the_last_one() {
        let mut p = Pacer::new(Instant::now());
        p.announce(BATCH + 3, Pace::BackToBack);
        let mut at = Vec::new();
        for i in 1..=BATCH + 3 {
            if p.typed() {
                at.push(i);
                p.send(Instant::now());
            }
        }
        assert_eq!(at, vec![BATCH, BATCH + 3]);
    }

    #[test]
    fn spaced_and_unannounced_characters_leave_one_by_one() {
        let mut p = Pacer::new(Instant::now());
        p.announce(5, Pace::Spaced);
        assert!((0..5).all(|_| p.typed()));
        let mut p = Pacer::new(Instant::now());
        assert!(p.typed());
    }

    #[test]
    fn a_short_text_never_waits_and_a_long_one_waits_at_the_rate() {
        let t0 = Instant::now();
        let mut p = Pacer::new(t0);
        let mut waited = Duration::ZERO;
        let total = 2 * BURST as usize;
        p.announce(total, Pace::BackToBack);
        let mut sent = 0;
        for _ in 0..total {
            if p.typed() {
                // The clock only moves by the waits: the typing itself takes no time.
                let w = p.send(t0 + waited);
                if sent + BATCH <= BURST as usize {
                    assert_eq!(w, Duration::ZERO, "within the burst");
                }
                waited += w;
                sent += BATCH;
            }
        }
        let expected = (total as f64 - BURST) / RATE;
        assert!(
            (waited.as_secs_f64() - expected).abs() < 1e-6,
            "{waited:?} vs {expected}"
        );
    }

    #[test]
    fn a_pause_refills_the_budget_up_to_the_burst() {
        let t0 = Instant::now();
        let mut p = Pacer::new(t0);
        p.announce(BURST as usize, Pace::BackToBack);
        for _ in 0..BURST as usize {
            if p.typed() {
                assert_eq!(p.send(t0), Duration::ZERO);
            }
        }
        // Spent: the next character waits; after a long pause nothing waits again.
        assert!(p.typed());
        assert!(p.send(t0) > Duration::ZERO);
        assert!(p.typed());
        assert_eq!(p.send(t0 + Duration::from_secs(10)), Duration::ZERO);
    }
}
