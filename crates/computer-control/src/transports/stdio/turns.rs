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
