//! A caller that runs its own action when the worker is idle, so a short call passes
//! between none of the server's threads.
//!
//! Why: on a small machine every hand-off to a sleeping thread on another CPU is a
//! wake-up that costs more than a short action's whole work. A back-to-back stdio call
//! paid two (to the worker and back) beside its transport's own. A caller inside an
//! [`Inline`] scope instead takes the worker's state itself, when nothing is queued for
//! the worker and the worker is not running anything, and runs the action on its own
//! thread, under the same gate and with the same answers.
//!
//! What the worker thread still owes such a call, from its tick ([`Watch::check`]):
//! when the action runs long, the caller's transport is told to let another thread take
//! over what the caller left waiting (its input: a stop must still be read while a long
//! action runs); when it outlasts its bound (PROTOCOL §10: `runtime.max_wait_ms` and a
//! minute, a driver call that hangs), the caller's transport gets the `timeout` answer
//! from the worker, and the answer the hung call returns later is the transport's to
//! drop.

use std::cell::RefCell;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use cc_protocol::Envelope;

use crate::handed::Handed;

/// What a caller that runs its own actions must let the worker do for it.
pub trait InlineCaller: Send + Sync {
    /// The caller is about to wait for the worker, or its action runs long: whatever
    /// it left waiting (its transport's input) must be taken over by another thread
    /// now. Called at most a few times per call; must not block.
    fn hand_over(&self);

    /// The action outlasted its bound: `timeout` is its answer, to be sent now. The
    /// envelope the caller's own call returns later is then not sent. Called at most
    /// once per call, on a thread of its own; must not wait for the caller.
    fn answer_late(&self, timeout: Envelope);
}

thread_local! {
    static CALLER: RefCell<Option<Arc<dyn InlineCaller>>> = const { RefCell::new(None) };
}

/// Marks the current thread, until dropped, as a caller that runs its own actions when
/// the worker is idle ([`InlineCaller`]).
#[must_use = "the scope ends when this is dropped"]
pub struct Inline {
    before: Option<Arc<dyn InlineCaller>>,
}

impl Inline {
    /// Enters the scope for `caller` (scopes nest).
    pub fn begin(caller: Arc<dyn InlineCaller>) -> Inline {
        Inline {
            before: CALLER.with(|c| c.replace(Some(caller))),
        }
    }
}

impl Drop for Inline {
    fn drop(&mut self) {
        let before = self.before.take();
        CALLER.with(|c| *c.borrow_mut() = before);
    }
}

/// The current thread's caller, if it runs its own actions.
pub(crate) fn caller() -> Option<Arc<dyn InlineCaller>> {
    CALLER.with(|c| c.borrow().clone())
}

/// How long an action run by its caller may last before the caller's input is handed
/// to another thread: far longer than a short call, far shorter than a person notices.
/// The worker looks once per tick, so the hand-over comes within a tick after this.
pub(crate) const LONG: Duration = Duration::from_millis(5);

/// The action a caller runs itself now, as the worker watches it.
struct Watched {
    caller: Arc<dyn InlineCaller>,
    since: Instant,
    handed: Handed,
    handed_over: bool,
    answered: bool,
}

/// The worker's view of the action a caller runs itself (at most one: the caller
/// holds the worker's state meanwhile).
#[derive(Default)]
pub(crate) struct Watch {
    slot: Mutex<Option<Watched>>,
}

impl Watch {
    /// An action starts on its caller's thread.
    pub(crate) fn begin(&self, caller: Arc<dyn InlineCaller>, handed: Handed) {
        *self.lock() = Some(Watched {
            caller,
            since: Instant::now(),
            handed,
            handed_over: false,
            answered: false,
        });
    }

    /// It ended.
    pub(crate) fn end(&self) {
        *self.lock() = None;
    }

    /// From the worker's thread: hands the caller's input over once the action ran
    /// [`LONG`], and answers `timeout` once it outlasted its bound.
    pub(crate) fn check(&self) {
        let (hand, late) = {
            let mut g = self.lock();
            let Some(w) = g.as_mut() else {
                return;
            };
            let ran = w.since.elapsed();
            let hand = (!w.handed_over && ran >= LONG).then(|| w.caller.clone());
            w.handed_over |= hand.is_some();
            let late = (!w.answered && ran >= w.handed.wait)
                .then(|| (w.caller.clone(), w.handed.timed_out()));
            w.answered |= late.is_some();
            (hand, late)
        };
        // Outside the lock: the caller's transport writes and wakes its threads.
        if let Some(c) = hand {
            c.hand_over();
        }
        // On a thread of its own: a client that does not read its answers must not
        // stop the worker's thread writing to it.
        if let Some((c, env)) = late {
            let spawned = std::thread::Builder::new()
                .name("cc-late-answer".into())
                .spawn(move || c.answer_late(env));
            if let Err(e) = spawned {
                tracing::error!("cannot answer a call that outlasted its bound: {e}");
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Watched>> {
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Default)]
    struct Counting {
        handed: AtomicUsize,
        late: Mutex<Vec<Envelope>>,
    }

    impl InlineCaller for Counting {
        fn hand_over(&self) {
            self.handed.fetch_add(1, Ordering::SeqCst);
        }
        fn answer_late(&self, timeout: Envelope) {
            self.late.lock().unwrap().push(timeout);
        }
    }

    fn handed(wait: Duration) -> Handed {
        let engine = crate::Engine::new(
            Box::new(cc_desktop::VirtualDesktop::new(Default::default())),
            crate::config::ConfigStack::new(),
        );
        Handed::new(engine.core.clone(), "wait.pause", Instant::now(), wait)
    }

    #[test]
    fn scopes_nest_and_end_when_dropped() {
        assert!(caller().is_none());
        let a: Arc<dyn InlineCaller> = Arc::new(Counting::default());
        let b: Arc<dyn InlineCaller> = Arc::new(Counting::default());
        {
            let _outer = Inline::begin(a.clone());
            {
                let _inner = Inline::begin(b.clone());
                assert!(Arc::ptr_eq(&caller().unwrap(), &b));
            }
            assert!(Arc::ptr_eq(&caller().unwrap(), &a));
        }
        assert!(caller().is_none());
    }

    #[test]
    fn a_short_action_is_left_alone() {
        let c = Arc::new(Counting::default());
        let w = Watch::default();
        w.begin(c.clone(), handed(Duration::from_secs(60)));
        w.check();
        w.end();
        w.check();
        assert_eq!(c.handed.load(Ordering::SeqCst), 0);
        assert!(c.late.lock().unwrap().is_empty());
    }

    #[test]
    fn a_long_action_hands_over_once_and_a_hung_one_is_answered_once() {
        let c = Arc::new(Counting::default());
        let w = Watch::default();
        w.begin(c.clone(), handed(LONG * 2));
        std::thread::sleep(LONG);
        w.check();
        w.check();
        assert_eq!(c.handed.load(Ordering::SeqCst), 1, "handed over once");
        std::thread::sleep(LONG * 2);
        w.check();
        w.check();
        // Answered on a thread of its own.
        let deadline = Instant::now() + Duration::from_secs(10);
        while c.late.lock().unwrap().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(LONG);
        let late = c.late.lock().unwrap();
        assert_eq!(late.len(), 1, "answered once");
        let e = late[0].error.as_ref().unwrap();
        assert_eq!(e.code, cc_protocol::ErrorCode::Timeout);
        assert!(e.message.contains("may still have executed"));
        drop(late);
        w.end();
        w.check();
        assert_eq!(c.handed.load(Ordering::SeqCst), 1);
    }
}
