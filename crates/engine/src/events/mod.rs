//! The event bus: one sequence, a replay ring of the last 200 events (at most
//! [`RING_BYTES`] of JSON), and bounded subscribers whose losses are counted and never
//! block an emitter.
//!
//! Each event is serialized once, when it is emitted, and shared: the ring and every
//! subscriber's queue hold a reference ([`SharedEvent`]), never a copy, so a subscriber that
//! never reads costs its queue of references and nothing more.

use std::collections::VecDeque;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};

use cc_protocol::Event;
use serde::{Serialize, Serializer};
use serde_json::Value;

mod queue;

use crate::clock::{Clock, rfc3339};
pub(crate) use queue::answering;
pub use queue::{Answering, EventQueue};

/// How many events a new subscriber gets replayed, at most.
pub const RING_SIZE: usize = 200;
/// How many bytes of serialized events the replay ring keeps, at most (the newest
/// event is kept whatever its size).
pub const RING_BYTES: usize = 4 * 1024 * 1024;

/// An emitted event and its JSON, written once; clones share both.
#[derive(Clone)]
pub struct SharedEvent(Arc<Written>);

struct Written {
    event: Event,
    json: String,
}

impl SharedEvent {
    fn new(event: Event) -> SharedEvent {
        let json = serde_json::to_string(&event).unwrap_or_else(|e| {
            // An event payload is built from JSON values; this cannot happen, but an
            // event must never be lost for it.
            serde_json::json!({"type": event.kind, "payload": {"unserializable": e.to_string()},
                "seq": event.seq, "at": event.at})
            .to_string()
        });
        SharedEvent(Arc::new(Written { event, json }))
    }

    /// The event's compact JSON (`{type, payload, seq, at}`; never a raw newline).
    pub fn json(&self) -> &str {
        &self.0.json
    }

    /// The event itself, copied (for a consumer that keeps or changes it).
    pub fn to_event(&self) -> Event {
        self.0.event.clone()
    }
}

impl Deref for SharedEvent {
    type Target = Event;

    fn deref(&self) -> &Event {
        &self.0.event
    }
}

impl AsRef<[u8]> for SharedEvent {
    /// The JSON, so the bytes can be handed to a writer without a copy.
    fn as_ref(&self) -> &[u8] {
        self.0.json.as_bytes()
    }
}

impl Serialize for SharedEvent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.event.serialize(s)
    }
}

impl std::fmt::Debug for SharedEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.event.fmt(f)
    }
}

/// Where a subscriber's events go.
enum Sink {
    /// A channel its reader blocks on.
    Channel {
        tx: SyncSender<SharedEvent>,
        dropped: Arc<AtomicU64>,
    },
    /// A queue its connection drains itself ([`EventQueue`]).
    Queue(Arc<EventQueue>),
}

impl Sink {
    /// Hands over an event: `Some(delivered)`, or `None` once the subscriber is gone.
    fn offer(&self, ev: &SharedEvent) -> Option<bool> {
        match self {
            Sink::Channel { tx, dropped } => match tx.try_send(ev.clone()) {
                Ok(()) => Some(true),
                Err(TrySendError::Full(_)) => {
                    dropped.fetch_add(1, Ordering::Relaxed);
                    Some(false)
                }
                Err(TrySendError::Disconnected(_)) => None,
            },
            // Only the bus holds it: the connection is gone.
            Sink::Queue(q) if Arc::strong_count(q) == 1 => None,
            Sink::Queue(q) => Some(q.offer(ev.clone())),
        }
    }
}

struct Inner {
    seq: u64,
    ring: VecDeque<SharedEvent>,
    /// Bytes of JSON in `ring`.
    ring_bytes: usize,
    subscribers: Vec<Sink>,
}

/// SharedEvent by the engine and every transport.
pub struct EventBus {
    inner: Mutex<Inner>,
    clock: Arc<dyn Clock>,
    dropped_total: AtomicU64,
}

/// A live stream of events.
pub struct Subscription {
    /// Events in `seq` order.
    pub rx: Receiver<SharedEvent>,
    /// Events this subscriber lost because its queue was full.
    pub dropped: Arc<AtomicU64>,
}

/// Counters for `/health`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BusStats {
    /// Events in the replay ring.
    pub buffered: usize,
    /// Bytes of JSON in the replay ring.
    pub buffered_bytes: usize,
    /// Subscribers connected now.
    pub subscribers: usize,
    /// Events a slow subscriber lost since the server started.
    pub dropped: u64,
    /// The sequence number of the latest event.
    pub last_seq: u64,
}

impl EventBus {
    /// An empty bus.
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        EventBus {
            inner: Mutex::new(Inner {
                seq: 0,
                ring: VecDeque::with_capacity(RING_SIZE),
                ring_bytes: 0,
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
        let ev = SharedEvent::new(Event {
            kind: kind.to_string(),
            payload,
            seq: g.seq,
            at: rfc3339(self.clock.wall()),
        });
        g.ring_bytes += ev.json().len();
        g.ring.push_back(ev.clone());
        while g.ring.len() > RING_SIZE || (g.ring_bytes > RING_BYTES && g.ring.len() > 1) {
            if let Some(old) = g.ring.pop_front() {
                g.ring_bytes -= old.json().len();
            }
        }
        let mut dropped_now = 0;
        g.subscribers.retain(|s| match s.offer(&ev) {
            Some(true) => true,
            Some(false) => {
                dropped_now += 1;
                true
            }
            None => false,
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
    ) -> (Vec<SharedEvent>, Subscription) {
        let (tx, rx) = sync_channel(capacity.max(1));
        let dropped = Arc::new(AtomicU64::new(0));
        let sink = Sink::Channel {
            tx,
            dropped: dropped.clone(),
        };
        (self.add(sink, replay_after), Subscription { rx, dropped })
    }

    /// Subscribes with a queue the subscriber drains itself ([`EventQueue`]): an
    /// event emitted inside an [`crate::Answering`] scope wakes nobody (its caller
    /// writes the queue out before its answer). Replay as [`EventBus::subscribe`].
    pub fn subscribe_queue(
        &self,
        capacity: usize,
        replay_after: Option<u64>,
    ) -> (Vec<SharedEvent>, Arc<EventQueue>) {
        let queue = Arc::new(EventQueue::new(capacity));
        let replay = self.add(Sink::Queue(queue.clone()), replay_after);
        (replay, queue)
    }

    /// Adds a subscriber and returns what it gets replayed, under one lock so nothing
    /// falls between the two.
    fn add(&self, sink: Sink, replay_after: Option<u64>) -> Vec<SharedEvent> {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let replay = g
            .ring
            .iter()
            .filter(|e| replay_after.is_none_or(|after| e.seq > after))
            .cloned()
            .collect();
        g.subscribers.push(sink);
        replay
    }

    /// Counters.
    pub fn stats(&self) -> BusStats {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        BusStats {
            buffered: g.ring.len(),
            buffered_bytes: g.ring_bytes,
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
    fn ring_is_bounded_in_bytes_and_shared_not_copied() {
        let bus = EventBus::new(Arc::new(SystemClock));
        let big = "x".repeat(1024 * 1024);
        let (_, sub) = bus.subscribe(1024, None);
        for _ in 0..20 {
            bus.emit("big", json!({"text": big}));
        }
        let stats = bus.stats();
        assert!(stats.buffered_bytes <= RING_BYTES, "{stats:?}");
        assert!(stats.buffered < 20 && stats.buffered >= 1, "{stats:?}");
        let (replay, _) = bus.subscribe(1, None);
        assert_eq!(replay.last().map(|e| e.seq), Some(20));
        // The subscriber's queue and the ring hold the same event, not two copies.
        let last = sub.rx.try_iter().last().unwrap();
        assert!(std::ptr::eq(last.json(), replay[replay.len() - 1].json()));
        assert_eq!(last.payload["text"].as_str().map(str::len), Some(big.len()));
        // One event larger than the whole budget is still kept: the newest always is.
        bus.emit("huge", json!({"text": "y".repeat(RING_BYTES + 1)}));
        assert_eq!(bus.stats().buffered, 1);
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
