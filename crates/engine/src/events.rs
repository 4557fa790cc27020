//! The event bus: one sequence, a replay ring of the last 200 events, and bounded
//! subscribers whose losses are counted and never block an emitter.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};

use cc_protocol::Event;
use serde_json::Value;

use crate::clock::{Clock, rfc3339};

/// How many events a new subscriber gets replayed.
pub const RING_SIZE: usize = 200;

struct Subscriber {
    tx: SyncSender<Event>,
    dropped: Arc<AtomicU64>,
}

struct Inner {
    seq: u64,
    ring: VecDeque<Event>,
    subscribers: Vec<Subscriber>,
}

/// Shared by the engine and every transport.
pub struct EventBus {
    inner: Mutex<Inner>,
    clock: Arc<dyn Clock>,
    dropped_total: AtomicU64,
}

/// A live stream of events.
pub struct Subscription {
    /// Events in `seq` order.
    pub rx: Receiver<Event>,
    /// Events this subscriber lost because its queue was full.
    pub dropped: Arc<AtomicU64>,
}

/// Counters for `/health`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BusStats {
    pub buffered: usize,
    pub subscribers: usize,
    pub dropped: u64,
    pub last_seq: u64,
}

impl EventBus {
    /// An empty bus.
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        EventBus {
            inner: Mutex::new(Inner {
                seq: 0,
                ring: VecDeque::with_capacity(RING_SIZE),
                subscribers: Vec::new(),
            }),
            clock,
            dropped_total: AtomicU64::new(0),
        }
    }

    /// Emits an event; returns its `seq`. Never blocks on a subscriber.
    pub fn emit(&self, kind: &str, payload: Value) -> u64 {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        g.seq += 1;
        let ev = Event {
            kind: kind.to_string(),
            payload,
            seq: g.seq,
            at: rfc3339(self.clock.wall()),
        };
        if g.ring.len() == RING_SIZE {
            g.ring.pop_front();
        }
        g.ring.push_back(ev.clone());
        let mut dropped_now = 0;
        g.subscribers.retain(|s| match s.tx.try_send(ev.clone()) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                s.dropped.fetch_add(1, Ordering::Relaxed);
                dropped_now += 1;
                true
            }
            Err(TrySendError::Disconnected(_)) => false,
        });
        if dropped_now > 0 {
            self.dropped_total.fetch_add(dropped_now, Ordering::Relaxed);
        }
        g.seq
    }

    /// Subscribes with a queue of `capacity`. `replay_after`: `None` replays the whole
    /// ring, `Some(seq)` only what came after `seq` (SSE `Last-Event-ID`), and the
    /// caller gets the replayed events in the returned vector, before any live one.
    pub fn subscribe(
        &self,
        capacity: usize,
        replay_after: Option<u64>,
    ) -> (Vec<Event>, Subscription) {
        let (tx, rx) = sync_channel(capacity.max(1));
        let dropped = Arc::new(AtomicU64::new(0));
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let replay = g
            .ring
            .iter()
            .filter(|e| replay_after.is_none_or(|after| e.seq > after))
            .cloned()
            .collect();
        g.subscribers.push(Subscriber {
            tx,
            dropped: dropped.clone(),
        });
        (replay, Subscription { rx, dropped })
    }

    /// Counters.
    pub fn stats(&self) -> BusStats {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        BusStats {
            buffered: g.ring.len(),
            subscribers: g.subscribers.len(),
            dropped: self.dropped_total.load(Ordering::Relaxed),
            last_seq: g.seq,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::SystemClock;
    use serde_json::json;

    #[test]
    fn ring_keeps_last_200_and_resume_gets_only_missed() {
        let bus = EventBus::new(Arc::new(SystemClock));
        for i in 0..250 {
            bus.emit("x", json!({"i": i}));
        }
        let (replay, _s) = bus.subscribe(10, None);
        assert_eq!(replay.len(), 200);
        assert_eq!(replay[0].seq, 51);
        let (replay, _s) = bus.subscribe(10, Some(240));
        assert_eq!(
            replay.iter().map(|e| e.seq).collect::<Vec<_>>(),
            (241..=250).collect::<Vec<_>>()
        );
    }

    #[test]
    fn slow_subscriber_loses_and_is_counted_but_never_blocks() {
        let bus = EventBus::new(Arc::new(SystemClock));
        let (_, slow) = bus.subscribe(2, None);
        for _ in 0..10 {
            bus.emit("x", json!({}));
        }
        assert_eq!(slow.dropped.load(Ordering::Relaxed), 8);
        assert_eq!(bus.stats().dropped, 8);
        assert_eq!(slow.rx.try_iter().count(), 2);
    }

    #[test]
    fn disconnected_subscribers_are_removed() {
        let bus = EventBus::new(Arc::new(SystemClock));
        let (_, s) = bus.subscribe(2, None);
        drop(s);
        bus.emit("x", json!({}));
        assert_eq!(bus.stats().subscribers, 0);
    }
}
