//! Which of the connection's two threads reads stdin, and what a request run by the
//! thread that read it owes the other.
//!
//! The thread that reads a request for the ordered lane runs it itself, and nobody
//! reads stdin meanwhile: a short call then passes between none of the server's
//! threads (on a small machine each hand-off to a sleeping thread costs more than the
//! call). The other thread stands by. It is woken to read only when the running request
//! will wait (for the worker, for a person) or runs long ([`Runner`] as the engine's
//! [`InlineCaller`]), so a stop or an approval is still read while it runs; a short call
//! wakes nobody.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use cc_engine::InlineCaller;
use cc_protocol::Envelope;
use serde_json::Value;

use super::output::Output;
use crate::transports::jsonrpc::Answer;

/// The standby thread's wake-up.
#[derive(Default)]
pub struct Turns {
    state: Mutex<State>,
    cv: Condvar,
}

#[derive(Default)]
struct State {
    /// The standby thread is asked to read.
    wanted: bool,
    /// Input ended: nobody waits for a turn any more.
    closed: bool,
}

impl Turns {
    /// Asks the standby thread to read stdin.
    pub fn want_reader(&self) {
        self.lock().wanted = true;
        self.cv.notify_one();
    }

    /// Stands by until asked to read (or input ended).
    pub fn stand_by(&self) {
        let mut s = self.lock();
        while !s.wanted && !s.closed {
            s = self.cv.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
        s.wanted = false;
    }

    /// Input ended: the standby thread comes to see it too.
    pub fn close(&self) {
        self.lock().closed = true;
        self.cv.notify_all();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One request run by the thread that read it.
pub struct Runner {
    turns: Arc<Turns>,
    /// Shared by the requests of one turn: the other thread was asked to read.
    handed: Arc<AtomicBool>,
    /// The request's answer was written (by the worker's `timeout`, or by the runner).
    answered: AtomicBool,
    writer: Output,
    /// The request's id; `None` for a notification (nothing is owed).
    id: Option<Value>,
}

impl Runner {
    /// A runner for `msg`, handing over through `turns` once per turn (`handed`).
    pub fn new(
        turns: &Arc<Turns>,
        handed: &Arc<AtomicBool>,
        writer: &Output,
        msg: &Value,
    ) -> Runner {
        Runner {
            turns: turns.clone(),
            handed: handed.clone(),
            answered: AtomicBool::new(false),
            writer: writer.clone(),
            id: msg.get("id").cloned(),
        }
    }

    /// Whether the runner may still write the request's answer (once).
    pub fn claim(&self) -> bool {
        !self.answered.swap(true, Ordering::SeqCst)
    }
}

impl InlineCaller for Runner {
    fn hand_over(&self) {
        if !self.handed.swap(true, Ordering::SeqCst) {
            self.turns.want_reader();
        }
    }

    fn answer_late(&self, timeout: Envelope) {
        if self.claim()
            && let Some(id) = &self.id
        {
            self.writer.send(Some(&Answer::result(id.clone(), timeout)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_desktop::{VirtualConfig, VirtualDesktop};
    use cc_engine::Engine;
    use cc_engine::config::ConfigStack;
    use serde_json::json;
    use std::io::Write;
    use std::time::Duration;

    /// A writer whose bytes the test reads.
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn engine() -> Engine {
        Engine::new(
            Box::new(VirtualDesktop::new(VirtualConfig::default())),
            ConfigStack::new(),
        )
    }

    #[test]
    fn the_standby_thread_reads_only_when_asked_and_sees_the_end() {
        let turns = Arc::new(Turns::default());
        let (tx, rx) = std::sync::mpsc::channel();
        let t = turns.clone();
        let standby = std::thread::spawn(move || {
            t.stand_by();
            tx.send("asked").unwrap();
            t.stand_by();
            tx.send("closed").unwrap();
        });
        assert!(
            rx.recv_timeout(Duration::from_millis(50)).is_err(),
            "not asked yet"
        );
        turns.want_reader();
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok("asked"));
        turns.close();
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok("closed"));
        standby.join().unwrap();
        // Once closed, nobody waits.
        turns.stand_by();
    }

    #[test]
    fn a_turn_hands_over_once_and_a_late_answer_is_the_only_one() {
        let e = engine();
        let sink = Sink::default();
        let writer = Output::new(&e, Box::new(sink.clone()));
        let turns = Arc::new(Turns::default());
        let handed = Arc::new(AtomicBool::new(false));
        let msg = json!({"jsonrpc": "2.0", "id": 7, "method": "tools.call"});
        let first = Runner::new(&turns, &handed, &writer, &msg);
        first.hand_over();
        let second = Runner::new(&turns, &handed, &writer, &msg);
        second.hand_over();
        // One wake-up asked for: the standby thread takes it, then waits again.
        turns.stand_by();
        assert!(!turns.lock().wanted, "asked once for the turn");
        let timeout = e.refuse_stopping("wait.pause");
        first.answer_late(timeout.clone());
        first.answer_late(timeout);
        assert!(!first.claim(), "the runner's own answer is dropped");
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .filter(|v: &Value| v.get("id").is_some())
            .collect();
        assert_eq!(lines.len(), 1, "{text}");
        assert_eq!(lines[0]["id"], 7);
        assert_eq!(lines[0]["result"]["error"]["code"], "safety_stopped");
        // A notification is owed nothing, late or not.
        let note = Runner::new(&turns, &handed, &writer, &json!({"method": "tools.call"}));
        note.answer_late(e.refuse_stopping("wait.pause"));
        assert_eq!(
            String::from_utf8(sink.0.lock().unwrap().clone()).unwrap(),
            text
        );
    }
}
