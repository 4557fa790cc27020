//! Waiting for a hand-off between threads without paying a sleeping CPU's wake-up
//! when the answer is about to arrive.
//!
//! On an idle machine, and above all in a virtual machine whose idle CPUs halt at
//! once, waking a thread that sleeps costs tens to hundreds of microseconds, several
//! times the work of a short call. A waiter that looks for its message for a short
//! while before it sleeps pays none of that, but burns a CPU while it looks, which a
//! client or a display server on a small machine may need. So a [`Lookout`] looks
//! only while its waits are short (a client calling back to back, or short jobs) and
//! sleeps at once otherwise: a client that pauses between calls, as an agent or a
//! person does, costs no looking after the first wait that shows it. Linux's own
//! guest halt polling adapts the same way, one level down.
//!
//! Only callers that ask for it are looked for ([`Looking`]): a transport that reads
//! its client's next request the same way (stdio). Elsewhere (an MCP client's own turn
//! takes a millisecond and more, HTTP) a looking thread would only take a CPU that the
//! client or the display server needs.

use std::cell::Cell;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use crate::flag_scope::FlagScope;

thread_local! {
    /// Set while this thread works for a caller whose waits look first.
    static LOOKING: Cell<bool> = const { Cell::new(false) };
}

/// True on a thread inside a [`Looking`] scope.
pub(crate) fn looking() -> bool {
    LOOKING.with(Cell::get)
}

/// Marks the current thread, until dropped, as working for a client that may call
/// back to back and whose transport looks for its next request itself: the engine's
/// waits for this caller's actions (its answer, and the worker's wait for the next
/// job) look before they sleep.
#[must_use = "the scope ends when this is dropped"]
pub struct Looking {
    _scope: FlagScope,
}

impl Looking {
    /// Marks the current thread (scopes nest).
    pub fn begin() -> Looking {
        Looking {
            _scope: FlagScope::enter(&LOOKING),
        }
    }
}

/// How long a waiter looks before it sleeps: a little more than a back-to-back
/// client's turn around (tens of microseconds).
pub const WINDOW: Duration = Duration::from_micros(100);

/// A wait this short makes the next one look first. Longer than [`WINDOW`]: a wait
/// that slept includes the wake-up itself (100–250 µs on an idle virtual machine), and
/// would otherwise never bring looking back; far shorter than any pause a model or a
/// person makes, and than the official MCP clients' own turn around (1 ms and more).
pub const QUICK: Duration = Duration::from_micros(500);

/// Whether a wait that took `waited` says looking would pay off next time.
fn pays_off(waited: Duration, answered: bool) -> bool {
    answered && waited < QUICK
}

/// One waiter's memory of whether looking pays off.
#[derive(Debug, Default)]
pub struct Lookout {
    /// The last wait ended within [`QUICK`].
    quick: Cell<bool>,
}

impl Lookout {
    /// Looks with `look` (which must not block) for up to 100 µs (at most `limit`),
    /// yielding the CPU between looks, when the last wait was shorter than 0.5 ms: `Ok` with what
    /// it found, or `Err(start)`, and the caller then blocks and reports how that went
    /// with [`Lookout::slept`].
    pub fn look<T>(
        &self,
        limit: Duration,
        mut look: impl FnMut() -> Option<T>,
    ) -> Result<T, Instant> {
        let start = Instant::now();
        if self.quick.get() {
            let window = WINDOW.min(limit);
            loop {
                if let Some(v) = look() {
                    return Ok(v);
                }
                if start.elapsed() >= window {
                    break;
                }
                std::thread::yield_now();
            }
        }
        Err(start)
    }

    /// After a blocking wait that began at `start`: whether it ended, with an
    /// answer, soon enough (0.5 ms) for looking to pay off next time.
    pub fn slept(&self, start: Instant, answered: bool) {
        self.quick.set(pays_off(start.elapsed(), answered));
    }

    /// [`Receiver::recv_timeout`], looking first ([`Lookout::look`]).
    pub fn recv_timeout<T>(
        &self,
        rx: &Receiver<T>,
        timeout: Duration,
    ) -> Result<T, RecvTimeoutError> {
        let found = self.look(timeout, || match rx.try_recv() {
            Ok(v) => Some(Ok(v)),
            Err(TryRecvError::Disconnected) => Some(Err(RecvTimeoutError::Disconnected)),
            Err(TryRecvError::Empty) => None,
        });
        match found {
            Ok(r) => {
                if r.is_err() {
                    self.quick.set(false);
                }
                r
            }
            Err(start) => {
                let r = rx.recv_timeout(timeout.saturating_sub(start.elapsed()));
                self.slept(start, r.is_ok());
                r
            }
        }
    }

    /// The next wait sleeps at once (a job for a caller that did not ask to be looked
    /// for came between).
    pub fn rest(&self) {
        self.quick.set(false);
    }

    /// True when the next wait will look before it sleeps.
    #[cfg(test)]
    fn looks(&self) -> bool {
        self.quick.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn a_wait_that_finds_its_message_while_looking_keeps_looking() {
        let l = Lookout::default();
        assert!(!l.looks(), "a fresh waiter sleeps at once");
        l.quick.set(true);
        let (tx, rx) = channel();
        tx.send(1).unwrap();
        assert_eq!(l.recv_timeout(&rx, Duration::from_secs(1)), Ok(1));
        assert!(l.looks());
        assert_eq!(l.look(Duration::MAX, || Some(2)), Ok(2));
        assert!(l.looks());
    }

    #[test]
    fn looking_scopes_nest_and_end_when_dropped() {
        assert!(!looking());
        {
            let _outer = Looking::begin();
            {
                let _inner = Looking::begin();
                assert!(looking());
            }
            assert!(looking(), "the outer scope still holds");
        }
        assert!(!looking());
    }

    #[test]
    fn resting_makes_the_next_wait_sleep_at_once() {
        let l = Lookout::default();
        l.quick.set(true);
        l.rest();
        assert!(!l.looks());
    }

    #[test]
    fn how_long_a_sleep_lasted_decides_the_next_wait() {
        // Slept past the window but within QUICK: the wake-up itself; look next time.
        assert!(pays_off(WINDOW * 3, true));
        // A pause, as an agent or a person makes: sleep at once next time.
        assert!(!pays_off(QUICK, true));
        assert!(!pays_off(Duration::from_secs(2), true));
        // Nothing came (a timeout, end of input): no looking either.
        assert!(!pays_off(Duration::ZERO, false));
    }

    #[test]
    fn a_waiter_that_does_not_look_sleeps_at_once() {
        let l = Lookout::default();
        let mut looked = 0;
        assert!(
            l.look(Duration::MAX, || {
                looked += 1;
                Some(())
            })
            .is_err()
        );
        assert_eq!(looked, 0);
    }

    #[test]
    fn a_slow_answer_is_still_received_and_stops_the_looking() {
        let l = Lookout::default();
        l.quick.set(true);
        let (tx, rx) = channel();
        let (go, ready) = channel();
        let sender = std::thread::spawn(move || {
            // Counted from just before the wait, and long: a loaded machine may delay
            // this thread's wait by milliseconds after it signals.
            ready.recv().unwrap();
            std::thread::sleep(QUICK * 100);
            tx.send(2).unwrap();
            tx
        });
        go.send(()).unwrap();
        // Looks for the window, finds nothing, sleeps until the answer.
        assert_eq!(l.recv_timeout(&rx, Duration::from_secs(10)), Ok(2));
        assert!(!l.looks(), "an answer after QUICK: no looking next time");
        drop(sender.join().unwrap());
    }

    #[test]
    fn timeouts_and_a_gone_sender_are_reported_as_recv_timeout_does() {
        let l = Lookout::default();
        let (tx, rx) = channel::<u8>();
        // Looking, then a timeout shorter than the window.
        l.quick.set(true);
        assert_eq!(
            l.recv_timeout(&rx, Duration::from_micros(10)),
            Err(RecvTimeoutError::Timeout)
        );
        assert!(!l.looks());
        // Sleeping, then a timeout.
        assert_eq!(
            l.recv_timeout(&rx, Duration::from_micros(10)),
            Err(RecvTimeoutError::Timeout)
        );
        drop(tx);
        // Looking, and the sender is gone.
        l.quick.set(true);
        assert_eq!(
            l.recv_timeout(&rx, Duration::from_secs(1)),
            Err(RecvTimeoutError::Disconnected)
        );
        assert!(!l.looks());
        // Sleeping, and the sender is gone.
        assert_eq!(
            l.recv_timeout(&rx, Duration::from_secs(1)),
            Err(RecvTimeoutError::Disconnected)
        );
    }
}
