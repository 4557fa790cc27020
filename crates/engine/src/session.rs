//! Session state (PROTOCOL §5.1) shared between the callers and the worker.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use cc_desktop::HeldInputs;
use cc_protocol::{Envelope, Risk, SessionState, Surface};
use serde_json::Value;

use crate::config::ConfigStack;
use crate::latch::Latches;
use crate::tools::ToolCall;

/// How long an expired confirmation id is remembered (`confirmation_expired`).
pub const EXPIRED_MEMORY_S: u64 = 300;

/// A confirmation waiting for a human.
#[derive(Debug, Clone)]
pub struct Pending {
    pub request_id: String,
    /// Exactly what will run once approved.
    pub call: ToolCall,
    /// The arguments as shown to people (secrets redacted).
    pub shown_arguments: Value,
    /// What it does, in the operator's words (its text redacted as `shown_arguments`).
    pub description: cc_protocol::Description,
    pub risk: Risk,
    pub reason: String,
    /// Where it lands, as the gate judged it.
    pub landing: cc_protocol::Landing,
    pub expires_at: String,
    pub deadline: Instant,
}

/// One running session.
pub struct Session {
    /// The live config, its rules compiled.
    pub config: Arc<ConfigStack>,
    /// `Ready`, `Stopped` or `Standby` (`Confirming` is derived from `pending`).
    pub state: SessionState,
    /// `session.stop` was called: everything new is refused.
    pub stopping: bool,
    pub started_at: String,
    pub action_count: u64,
    pub last_activity: Instant,
    pub idle_reported: bool,
    pub pending: Option<Pending>,
    /// What the vendors' vocabularies fixed for this session (screenshot spaces).
    pub vendor: crate::vendor::VendorSession,
}

impl Session {
    /// The state as reported.
    pub fn reported_state(&self) -> SessionState {
        if self.stopping {
            SessionState::Idle
        } else if self.state == SessionState::Ready && self.pending.is_some() {
            SessionState::Confirming
        } else {
            self.state
        }
    }
}

/// Who waits for an action's answer.
#[derive(Clone)]
pub enum AnswerTo {
    /// A thread blocked on the receiving end ([`crate::Engine::run_with`]), of a
    /// channel of one: an answer is one message, and a channel made per call with room
    /// for one allocates a slot, not a zeroed block of them.
    Thread(SyncSender<Envelope>),
    /// Nobody blocks: whoever answers hands the envelope over
    /// ([`crate::Engine::run_then`]), so an async caller needs no thread of its own
    /// to wait on. Taken by the first answer; dropped unanswered when the job is.
    Hand(Arc<Mutex<Option<HandOver>>>),
}

/// What takes an answer over from the thread that answers.
pub type HandOver = Box<dyn FnOnce(Envelope) + Send>;

impl fmt::Debug for AnswerTo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AnswerTo::Thread(_) => "Thread",
            AnswerTo::Hand(_) => "Hand",
        })
    }
}

/// Where an action's answer goes. Exactly one party answers: the worker when it starts
/// the action, or `session.stop` when the action was still queued.
#[derive(Debug, Clone)]
pub struct Reply {
    to: AnswerTo,
    answered: Arc<AtomicBool>,
    /// The caller writes the action's events out with its answer
    /// ([`crate::Answering`]): the worker emits them in the same scope.
    pub answering: bool,
    /// The caller's waits look before they sleep ([`crate::Looking`]): so does the
    /// worker's wait for the job after this one.
    pub looking: bool,
}

impl Reply {
    /// A fresh, unanswered reply, for a caller on the current thread.
    pub fn new(to: AnswerTo) -> Reply {
        Reply {
            to,
            answered: Arc::new(AtomicBool::new(false)),
            answering: crate::events::answering(),
            looking: crate::lookout::looking(),
        }
    }

    /// Answers: the waiting thread wakes, or the hand-over runs on this thread.
    pub fn send(&self, env: Envelope) {
        match &self.to {
            AnswerTo::Thread(tx) => {
                // Never blocks: one answer, room for one.
                let _ = tx.try_send(env);
            }
            AnswerTo::Hand(slot) => {
                let hand = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
                if let Some(hand) = hand {
                    hand(env);
                }
            }
        }
    }

    /// Claims the right to answer; false when someone already has.
    pub fn claim(&self) -> bool {
        !self.answered.swap(true, Ordering::SeqCst)
    }

    /// True when both are the same reply.
    pub fn same(&self, other: &Reply) -> bool {
        Arc::ptr_eq(&self.answered, &other.answered)
    }
}

/// An action sent to the worker and not started yet.
#[derive(Debug, Clone)]
pub struct Queued {
    pub tool: &'static str,
    pub reply: Reply,
}

/// Everything behind the engine's one mutex.
#[derive(Default)]
pub struct Shared {
    pub session: Option<Session>,
    /// Session generation: jobs queued under an older one are refused.
    pub epoch: u64,
    /// Expired confirmation ids and when they expired.
    pub expired: HashMap<String, Instant>,
    pub surface: Option<Surface>,
    /// What the driver held down after the last action or release (`system.status`).
    pub held: HeldInputs,
    /// Actions waiting for the worker (`session.stop` refuses them at once).
    pub queued: Vec<Queued>,
    /// The emergency stop and standby, which outlive every session.
    pub latches: Latches,
}

impl Shared {
    /// The state a session starting now begins in: the latches decide.
    pub fn initial_state(&self) -> SessionState {
        if self.latches.stop.is_some() {
            SessionState::Stopped
        } else if self.latches.standby {
            SessionState::Standby
        } else {
            SessionState::Ready
        }
    }

    /// The reported state (`idle` without a session).
    pub fn state(&self) -> SessionState {
        self.session
            .as_ref()
            .map(Session::reported_state)
            .unwrap_or(SessionState::Idle)
    }
}
