//! The connection's one writer. Answers and event notifications share stdout, each a
//! whole line; the events emitted before an answer go out before it, in the same
//! write. A thread that will write an answer handles its request inside
//! [`cc_engine::Answering`], so the events emitted for it meanwhile (by the engine's
//! worker too) wake no other thread: for a short call, its events and its answer reach
//! the client in one write and one wake-up. Any other event (a stop, an approval, the
//! idle watchdog) wakes the event thread at once; one emitted for the call during a
//! long action goes out at the event thread's next look ([`EVENT_POLL`]).

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cc_engine::{Engine, EventQueue, SharedEvent};

use crate::transports::jsonrpc::Answer;

/// How often the event thread looks at the queue when nobody woke it: the longest an
/// event emitted during a long action waits, and how soon the thread sees the end.
pub const EVENT_POLL: Duration = Duration::from_millis(50);

/// How many events one write carries at most.
const EVENTS_PER_WRITE: usize = 64;

/// How many events wait for the client at most; more are lost and counted. Large,
/// because stdio must not lose events a harness relies on.
const QUEUE: usize = 65_536;

/// Stdout and the connection's event queue.
#[derive(Clone)]
pub struct Output {
    out: Arc<Mutex<Box<dyn Write + Send>>>,
    events: Arc<EventQueue>,
}

impl Output {
    /// Subscribes to the engine's events from now on and wraps the writer.
    pub fn new(engine: &Engine, w: Box<dyn Write + Send>) -> Output {
        let last = engine.bus_stats().last_seq;
        let (_, events) = engine.bus().subscribe_queue(QUEUE, Some(last));
        Output {
            out: Arc::new(Mutex::new(w)),
            events,
        }
    }

    /// Writes the events queued so far, then `answer` (if any) as one line: one write
    /// when they fit in one.
    pub fn send(&self, answer: Option<&Answer>) {
        let mut line = Vec::new();
        if let Some(a) = answer {
            line = a.to_bytes();
            if !line.is_empty() {
                line.push(b'\n');
            }
        }
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        let mut buf = Vec::new();
        loop {
            let events = self.events.take(EVENTS_PER_WRITE);
            let last = events.len() < EVENTS_PER_WRITE;
            for ev in &events {
                event_line(&mut buf, ev);
            }
            if last {
                buf.extend_from_slice(&line);
            }
            if !buf.is_empty() {
                if let Err(e) = out.write_all(&buf).and_then(|_| out.flush()) {
                    tracing::warn!("stdout write failed: {e}");
                }
                buf.clear();
            }
            if last {
                return;
            }
        }
    }

    /// Writes what is queued as soon as something is, or after [`EVENT_POLL`]: one
    /// turn of the event thread. False when nothing was queued.
    pub fn wait_and_write_events(&self) -> bool {
        let queued = self.events.wait(EVENT_POLL);
        if queued {
            self.send(None);
        }
        queued
    }
}

/// Appends an event's notification line: the event's JSON as the bus wrote it, inside
/// the JSON-RPC frame, without parsing or serializing it again.
fn event_line(out: &mut Vec<u8>, ev: &SharedEvent) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","method":"event","params":"#);
    out.extend_from_slice(ev.json().as_bytes());
    out.extend_from_slice(b"}\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_desktop::{VirtualConfig, VirtualDesktop};
    use cc_engine::Answering;
    use cc_engine::config::ConfigStack;
    use serde_json::{Value, json};

    /// A writer whose bytes the test reads, and how many writes it took.
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<(Vec<u8>, usize)>>);

    impl Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            let mut g = self.0.lock().unwrap();
            g.0.extend_from_slice(b);
            g.1 += 1;
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn lines(sink: &Sink) -> Vec<Value> {
        let g = sink.0.lock().unwrap();
        String::from_utf8(g.0.clone())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// An engine on the virtual desktop and an output over a sink the test reads.
    fn output() -> (Engine, Sink, Output) {
        let e = Engine::new(
            Box::new(VirtualDesktop::new(VirtualConfig::default())),
            ConfigStack::new(),
        );
        let sink = Sink::default();
        let out = Output::new(&e, Box::new(sink.clone()));
        (e, sink, out)
    }

    #[test]
    fn event_lines_frame_the_bus_json_as_notifications() {
        let bus = cc_engine::EventBus::new(Arc::new(cc_engine::clock::SystemClock));
        let (_, sub) = bus.subscribe(8, None);
        bus.emit(
            "action.started",
            json!({"tool": "wait.pause", "text": "a\nb"}),
        );
        bus.emit("action.finished", json!({"ok": true}));
        let mut lines = Vec::new();
        for ev in sub.rx.try_iter() {
            event_line(&mut lines, &ev);
        }
        let text = String::from_utf8(lines).unwrap();
        let parsed: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(parsed.len(), 2, "{text}");
        assert_eq!(parsed[0]["jsonrpc"], "2.0");
        assert_eq!(parsed[0]["method"], "event");
        assert_eq!(parsed[0]["params"]["type"], "action.started");
        assert_eq!(parsed[0]["params"]["payload"]["text"], "a\nb");
        assert_eq!(parsed[1]["params"]["type"], "action.finished");
        assert_eq!(parsed[1]["params"]["seq"], 2);
    }

    #[test]
    fn the_events_before_an_answer_go_out_before_it_in_one_write() {
        let (e, sink, out) = output();
        let answer = {
            let _a = Answering::begin();
            e.bus().emit("x", json!({"n": 1}));
            e.bus().emit("x", json!({"n": 2}));
            json!({"jsonrpc": "2.0", "id": 7, "result": {}})
        };
        out.send(Some(&answer.into()));
        let got = lines(&sink);
        assert_eq!(got.len(), 3);
        assert_eq!(got[0]["params"]["payload"]["n"], 1);
        assert_eq!(got[1]["params"]["payload"]["n"], 2);
        assert_eq!(got[2]["id"], 7);
        assert_eq!(sink.0.lock().unwrap().1, 1, "one write");
    }

    #[test]
    fn many_events_go_out_in_bounded_writes_and_the_answer_last() {
        let (e, sink, out) = output();
        for n in 0..(EVENTS_PER_WRITE * 2 + 1) {
            e.bus().emit("x", json!({"n": n}));
        }
        out.send(Some(
            &json!({"jsonrpc": "2.0", "id": 1, "result": {}}).into(),
        ));
        let got = lines(&sink);
        assert_eq!(got.len(), EVENTS_PER_WRITE * 2 + 2);
        assert_eq!(got.last().unwrap()["id"], 1);
        assert_eq!(
            sink.0.lock().unwrap().1,
            3,
            "64 + 64 + (1 event and the answer)"
        );
    }

    #[test]
    fn an_event_from_another_thread_is_written_by_the_event_thread_at_once() {
        let (e, sink, out) = output();
        let writer = {
            let out = out.clone();
            std::thread::spawn(move || while !out.wait_and_write_events() {})
        };
        e.bus()
            .emit("safety.panic_triggered", json!({"source": "test"}));
        writer.join().unwrap();
        let got = lines(&sink);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0]["params"]["type"], "safety.panic_triggered");
    }

    #[test]
    fn nothing_to_write_writes_nothing() {
        let (_engine, sink, out) = output();
        out.send(None);
        assert!(!out.wait_and_write_events());
        assert_eq!(sink.0.lock().unwrap().1, 0);
    }
}
