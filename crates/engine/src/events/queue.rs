//! A subscriber's queue for a connection that writes its events itself
//! ([`crate::EventBus::subscribe_queue`]): an event emitted for a call whose caller
//! will write the queue out before its answer ([`Answering`]) wakes nobody, and goes
//! out with that answer in one write. Any other event wakes the connection's event
//! thread at once.
//!
//! Why: a wake-up is a sleeping CPU woken, per event, and a reader woken once for the
//! events and again for the answer. A short call's `action.started` and
//! `action.finished` travel with its answer instead.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use super::SharedEvent;
use crate::flag_scope::FlagScope;

thread_local! {
    /// Set while this thread works for a caller that writes the events out with its
    /// answer.
    static ANSWERING: Cell<bool> = const { Cell::new(false) };
}

/// True on a thread inside an [`Answering`] scope.
pub(crate) fn answering() -> bool {
    ANSWERING.with(Cell::get)
}

/// Marks the current thread, until dropped, as working for a caller that writes the
/// queued events out before its answer: what it emits wakes no queue's reader. The
/// worker enters it for a job whose caller was inside one.
pub struct Answering {
    _scope: FlagScope,
}

impl Answering {
    /// Marks the current thread (scopes nest).
    pub fn begin() -> Answering {
        Answering {
            _scope: FlagScope::enter(&ANSWERING),
        }
    }
}

/// The queue; shared by the bus (which fills it) and the connection (which drains it).
pub struct EventQueue {
    events: Mutex<VecDeque<SharedEvent>>,
    ready: Condvar,
    capacity: usize,
    dropped: AtomicU64,
    /// Threads in [`EventQueue::wait`] now (changed only under the lock).
    waiting: AtomicU64,
}

impl EventQueue {
    pub(crate) fn new(capacity: usize) -> EventQueue {
        EventQueue {
            events: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
            capacity: capacity.max(1),
            dropped: AtomicU64::new(0),
            waiting: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<SharedEvent>> {
        self.events.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues an event (the bus, under its lock); false when full (it is lost and
    /// counted). Never blocks on the connection.
    pub(crate) fn offer(&self, ev: SharedEvent) -> bool {
        {
            let mut q = self.lock();
            if q.len() >= self.capacity {
                drop(q);
                self.dropped.fetch_add(1, Ordering::Relaxed);
                return false;
            }
            q.push_back(ev);
        }
        if !answering() {
            self.ready.notify_one();
        }
        true
    }

    /// Takes up to `max` queued events, oldest first, without waiting.
    pub fn take(&self, max: usize) -> Vec<SharedEvent> {
        let mut q = self.lock();
        let n = q.len().min(max);
        q.drain(..n).collect()
    }

    /// Waits until an event is queued (true) or `timeout` passes with none (false).
    /// An event queued inside an [`Answering`] scope is seen here only at the timeout,
    /// unless its caller took it first.
    pub fn wait(&self, timeout: Duration) -> bool {
        self.wait_woken(timeout).0
    }

    /// [`EventQueue::wait`], and whether it ended before its timeout (it was woken).
    fn wait_woken(&self, timeout: Duration) -> (bool, bool) {
        let q = self.lock();
        if !q.is_empty() {
            return (true, true);
        }
        self.waiting.fetch_add(1, Ordering::Relaxed);
        let (q, waited) = self
            .ready
            .wait_timeout(q, timeout)
            .unwrap_or_else(|p| p.into_inner());
        self.waiting.fetch_sub(1, Ordering::Relaxed);
        (!q.is_empty(), !waited.timed_out())
    }

    /// Events lost because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EventBus;
    use crate::clock::SystemClock;
    use serde_json::json;
    use std::sync::Arc;

    /// Emits one event from a thread of its own, quiet or not, while a waiter waits.
    fn emit_while_waiting(quietly: bool) -> (bool, bool) {
        let bus = EventBus::new(Arc::new(SystemClock));
        let (_, q) = bus.subscribe_queue(8, None);
        let waiter = {
            let q = q.clone();
            std::thread::spawn(move || q.wait_woken(Duration::from_millis(400)))
        };
        while !waiting(&q) {
            std::thread::yield_now();
        }
        std::thread::scope(|s| {
            s.spawn(|| {
                let _scope = quietly.then(Answering::begin);
                bus.emit("x", json!({}));
            });
        });
        let seen = waiter.join().unwrap();
        assert_eq!(q.take(10).len(), 1);
        seen
    }

    /// True once a waiter sleeps on the queue's condvar: it counted itself under the
    /// lock, which it gives up only inside the wait.
    fn waiting(q: &EventQueue) -> bool {
        let _held = q.lock();
        q.waiting.load(Ordering::Relaxed) == 1
    }

    #[test]
    fn a_loud_event_wakes_the_waiting_thread() {
        assert_eq!(emit_while_waiting(false), (true, true));
    }

    #[test]
    fn a_quiet_event_wakes_nobody_and_is_found_at_the_timeout() {
        // Found (the queue holds it) but not woken: the wait ran to its timeout.
        assert_eq!(emit_while_waiting(true), (true, false));
    }

    #[test]
    fn answering_scopes_nest_and_end() {
        assert!(!answering());
        {
            let _outer = Answering::begin();
            {
                let _inner = Answering::begin();
                assert!(answering());
            }
            assert!(answering());
        }
        assert!(!answering());
    }

    #[test]
    fn events_are_taken_oldest_first_and_at_most_as_many_as_asked() {
        let bus = EventBus::new(Arc::new(SystemClock));
        let (_, q) = bus.subscribe_queue(8, None);
        for n in 0..3 {
            bus.emit("x", json!({"n": n}));
        }
        let first: Vec<u64> = q.take(2).iter().map(|e| e.seq).collect();
        assert_eq!(first, vec![1, 2]);
        let rest: Vec<u64> = q.take(10).iter().map(|e| e.seq).collect();
        assert_eq!(rest, vec![3]);
    }

    #[test]
    fn a_full_queue_loses_and_counts_and_a_dropped_queue_is_forgotten() {
        let bus = EventBus::new(Arc::new(SystemClock));
        let (_, q) = bus.subscribe_queue(2, None);
        for _ in 0..5 {
            bus.emit("x", json!({}));
        }
        assert_eq!(q.dropped(), 3);
        assert_eq!(bus.stats().dropped, 3);
        assert_eq!(q.take(usize::MAX).len(), 2);
        assert_eq!(bus.stats().subscribers, 1);
        drop(q);
        bus.emit("x", json!({}));
        assert_eq!(bus.stats().subscribers, 0);
    }
}
