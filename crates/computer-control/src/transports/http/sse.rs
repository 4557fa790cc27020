//! `GET /events`: Server-Sent Events (PROTOCOL §6).
//!
//! A new subscriber first gets the replay ring (the last 200 events), then live ones; a
//! `Last-Event-ID` gets only what came after it, as far as the ring reaches. A
//! `: keepalive` comment goes out after 15 s without an event.
//!
//! Fan-out: the transport holds *one* bus subscription, read by one thread that hands
//! the same event (serialized once, by the bus) to every open stream through its own
//! bounded queue; the replay is the bus's ring, shared the same way, never copied. When a stream's queue is full the event is dropped for that
//! stream and counted (`/health` `dropped`, and a `: dropped` comment on that stream),
//! so a client that never reads costs a bounded amount of memory and never slows the
//! worker: an action's emit costs one channel send whatever the number of streams.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Extension, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use cc_engine::{Engine, SharedEvent};
use futures_core::Stream;
use serde_json::json;
use tokio::sync::mpsc::{self, error::TrySendError};

use super::limits::StreamSlot;
use super::{AppState, Identity, json_response};

/// Events a stream may fall behind by before it loses events.
pub const QUEUE: usize = 1024;
/// Events the fan-out thread may fall behind the bus by (it only copies pointers).
const HUB_QUEUE: usize = 65_536;

/// One open stream, as the fan-out thread sees it.
struct Client {
    tx: mpsc::Sender<SharedEvent>,
    dropped: Arc<AtomicU64>,
}

/// The fan-out: every open stream, and the counters `/health` reports.
pub struct Hub {
    clients: Mutex<Vec<Client>>,
    open: Arc<AtomicUsize>,
    dropped: AtomicU64,
    keepalive: Duration,
}

impl Hub {
    /// Subscribes to the engine's bus and starts the fan-out thread. Keep-alive every
    /// 15 s; `COMPUTER_CONTROL_SSE_KEEPALIVE_MS` shortens it (tests).
    pub fn start(engine: &Engine) -> anyhow::Result<Arc<Hub>> {
        let ms = std::env::var("COMPUTER_CONTROL_SSE_KEEPALIVE_MS")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|ms| *ms > 0)
            .unwrap_or(15_000);
        let hub = Arc::new(Hub {
            clients: Mutex::new(Vec::new()),
            open: Arc::new(AtomicUsize::new(0)),
            dropped: AtomicU64::new(0),
            keepalive: Duration::from_millis(ms),
        });
        let (_, sub) = engine.subscribe(HUB_QUEUE, Some(engine.bus_stats().last_seq));
        let h = hub.clone();
        std::thread::Builder::new()
            .name("cc-sse-fanout".into())
            .spawn(move || {
                while let Ok(ev) = sub.rx.recv() {
                    h.fan_out(&ev);
                }
            })?;
        Ok(hub)
    }

    /// Hands one event to every stream; never waits for any of them.
    fn fan_out(&self, ev: &SharedEvent) {
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        clients.retain(|c| match c.tx.try_send(ev.clone()) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                c.dropped.fetch_add(1, Ordering::Relaxed);
                self.dropped.fetch_add(1, Ordering::Relaxed);
                true
            }
            Err(TrySendError::Closed(_)) => false,
        });
    }

    /// Open `/events` streams.
    pub fn clients(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    /// Events lost by streams that did not keep up.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// Counts an open stream (and holds its place in its principal's bound); uncounts it
/// when the connection drops the stream.
struct Slot {
    open: Arc<AtomicUsize>,
    _bound: Option<StreamSlot>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The SSE form of an event: `id: <seq>`, `event: message`, `data: {type,payload,seq,at}`,
/// as three chunks, the middle one the bus's own JSON (shared, not copied). Compact JSON
/// never holds a raw newline, which an SSE data line must not contain.
pub fn frame(ev: &SharedEvent) -> [Bytes; 3] {
    [
        Bytes::from(format!("id: {}\nevent: message\ndata: ", ev.seq)),
        Bytes::from_owner(ev.clone()),
        Bytes::from_static(b"\n\n"),
    ]
}

/// `Last-Event-ID` as a sequence number. An id from the future (the server restarted
/// and numbers began again) or one that is not a number replays the whole ring.
pub fn resume_after(headers: &HeaderMap, last_seq: u64) -> Option<u64> {
    headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|id| *id <= last_seq)
}

/// The handler. An agent principal holds at most `http.agent_event_streams` streams
/// (503 `too_many_subscribers` beyond); the operator's are bounded by its connections.
pub async fn events(
    State(st): State<AppState>,
    identity: Option<Extension<Identity>>,
    headers: HeaderMap,
) -> Response {
    let hub = &st.sse;
    let bound = match identity
        .map(|Extension(i)| st.limits.stream(&i))
        .transpose()
    {
        Ok(bound) => bound,
        Err(message) => {
            return json_response(
                StatusCode::SERVICE_UNAVAILABLE,
                &json!({"error": "too_many_subscribers", "message": message}),
            );
        }
    };
    hub.open.fetch_add(1, Ordering::Relaxed);
    let slot = Slot {
        open: hub.open.clone(),
        _bound: bound,
    };
    let (tx, rx) = mpsc::channel(QUEUE);
    let dropped = Arc::new(AtomicU64::new(0));
    // Register first, then read the ring: an event emitted in between arrives both ways
    // and is skipped live by its seq, so nothing falls between replay and live.
    hub.clients
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(Client {
            tx,
            dropped: dropped.clone(),
        });
    let after = resume_after(&headers, st.engine.bus_stats().last_seq);
    // The returned subscription is not needed: dropping it unsubscribes.
    let (replay, _) = st.engine.subscribe(1, after);
    let mut pending: VecDeque<Bytes> = VecDeque::with_capacity(3 * replay.len() + 1);
    if let (Some(after), Some(first)) = (after, replay.first())
        && first.seq > after + 1
    {
        pending.push_back(Bytes::from(format!(
            ": gap: events {}..{} are no longer in the replay ring\n\n",
            after + 1,
            first.seq - 1
        )));
    }
    let replayed_to = replay.last().map(|e| e.seq).or(after).unwrap_or(0);
    pending.extend(replay.iter().flat_map(frame));
    let stream = EventStream {
        pending,
        replayed_to,
        rx,
        dropped,
        reported: 0,
        keepalive: hub.keepalive,
        timer: Box::pin(tokio::time::sleep(hub.keepalive)),
        _slot: slot,
    };
    let mut r = Body::from_stream(stream).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

/// Gap notes and the replay, then live events, with keep-alives in the silences.
struct EventStream {
    pending: VecDeque<Bytes>,
    /// Live events up to this seq were already replayed.
    replayed_to: u64,
    rx: mpsc::Receiver<SharedEvent>,
    dropped: Arc<AtomicU64>,
    reported: u64,
    keepalive: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
    _slot: Slot,
}

impl EventStream {
    fn emit(&mut self, b: Bytes) -> Poll<Option<Result<Bytes, Infallible>>> {
        let next = tokio::time::Instant::now() + self.keepalive;
        self.timer.as_mut().reset(next);
        Poll::Ready(Some(Ok(b)))
    }
}

impl Stream for EventStream {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(b) = self.pending.pop_front() {
            return self.emit(b);
        }
        let lost = self.dropped.load(Ordering::Relaxed);
        if lost > self.reported {
            self.reported = lost;
            return self.emit(Bytes::from(format!(
                ": dropped: this stream has lost {lost} events (it did not keep up)\n\n"
            )));
        }
        loop {
            match self.rx.poll_recv(cx) {
                Poll::Ready(Some(ev)) if ev.seq <= self.replayed_to => continue,
                Poll::Ready(Some(ev)) => {
                    let [head, json, tail] = frame(&ev);
                    self.pending.extend([json, tail]);
                    return self.emit(head);
                }
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => break,
            }
        }
        match self.timer.as_mut().poll(cx) {
            Poll::Ready(()) => self.emit(Bytes::from_static(b": keepalive\n\n")),
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn last_event_id() {
        let mut h = HeaderMap::new();
        assert_eq!(resume_after(&h, 10), None);
        h.insert("last-event-id", HeaderValue::from_static("7"));
        assert_eq!(resume_after(&h, 10), Some(7));
        assert_eq!(
            resume_after(&h, 5),
            None,
            "an id from the future replays all"
        );
        h.insert("last-event-id", HeaderValue::from_static("x"));
        assert_eq!(resume_after(&h, 10), None);
    }

    #[test]
    fn frames() {
        let bus = cc_engine::EventBus::new(std::sync::Arc::new(cc_engine::clock::SystemClock));
        bus.emit("x", json!({"text": "line\nbreak"}));
        let (replay, _) = bus.subscribe(1, None);
        let text: String = frame(&replay[0])
            .iter()
            .map(|b| std::str::from_utf8(b).unwrap())
            .collect();
        let data = format!(
            "{{\"type\":\"x\",\"payload\":{{\"text\":\"line\\nbreak\"}},\"seq\":1,\"at\":\"{}\"}}",
            replay[0].at
        );
        assert_eq!(text, format!("id: 1\nevent: message\ndata: {data}\n\n"));
    }
}
