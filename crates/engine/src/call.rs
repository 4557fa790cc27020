//! What one caller attaches to one tool call: its own stop (beside the server's
//! emergency stop, for this call only) and where its progress goes.
//!
//! A transport that can tell its client how a long call advances (MCP's
//! `notifications/progress`) or lets it cancel one call (`notifications/cancelled`)
//! passes a [`CallControl`] with the job; the tools report typed [`Progress`] at the
//! points where they already check the stop. Nothing here decides whether an action may
//! run: cancelling only stops what is running, as the emergency stop would (every held
//! key and button released), and never approves or retries anything.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cc_protocol::{ErrorCode, ToolError};
use serde_json::json;

/// How far a long call is, in the unit of its kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// `keyboard.type`: characters sent of the text's total.
    Typed {
        /// Characters sent.
        chars: u64,
        /// Characters in the text.
        total: u64,
    },
    /// `wait.for`: milliseconds waited of the timeout.
    Waited {
        /// Milliseconds waited so far.
        elapsed_ms: u64,
        /// The wait's timeout.
        timeout_ms: u64,
    },
    /// `batch.execute`: items finished of the batch's total.
    Items {
        /// Items finished.
        done: u64,
        /// Items in the batch.
        total: u64,
    },
    /// A vendor vocabulary's call waits for a person to answer confirmation
    /// `request_id`: milliseconds waited of the confirmation's timeout.
    Confirming {
        /// The pending confirmation (what the operator answers).
        request_id: String,
        /// Milliseconds waited so far.
        waited_ms: u64,
        /// The confirmation's timeout.
        timeout_ms: u64,
    },
}

impl Progress {
    /// `(progress, total, message)` as a client shows them.
    pub fn parts(&self) -> (f64, f64, String) {
        match *self {
            Progress::Confirming {
                waited_ms,
                timeout_ms,
                ..
            } => (
                waited_ms as f64 / 1000.0,
                timeout_ms as f64 / 1000.0,
                format!(
                    "waiting for a person to approve it on the operator channel: {} s left",
                    timeout_ms.saturating_sub(waited_ms).div_ceil(1000)
                ),
            ),
            Progress::Typed { chars, total } => (
                chars as f64,
                total as f64,
                format!("typed {chars} of {total} characters"),
            ),
            Progress::Waited {
                elapsed_ms,
                timeout_ms,
            } => (
                elapsed_ms as f64 / 1000.0,
                timeout_ms as f64 / 1000.0,
                format!(
                    "waited {:.1} s of {:.1} s",
                    elapsed_ms as f64 / 1000.0,
                    timeout_ms as f64 / 1000.0
                ),
            ),
            Progress::Items { done, total } => (
                done as f64,
                total as f64,
                format!("{done} of {total} batch items done"),
            ),
        }
    }
}

type Sink = Arc<dyn Fn(Progress) + Send + Sync>;

/// One call's stop and progress sink. Cheap to clone; the default has neither a
/// caller-held stop that anyone can raise nor a sink (the stdio and HTTP methods).
#[derive(Clone, Default)]
pub struct CallControl {
    cancel: Arc<AtomicBool>,
    sink: Option<Sink>,
}

impl fmt::Debug for CallControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallControl")
            .field("cancelled", &self.cancelled())
            .field("reports", &self.sink.is_some())
            .finish()
    }
}

impl CallControl {
    /// A control whose progress goes to `sink`. The sink runs on the worker thread
    /// between two steps of the action: it must not block (queue and return).
    pub fn reporting(sink: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        CallControl {
            cancel: Arc::default(),
            sink: Some(Arc::new(sink)),
        }
    }

    /// Stops this call at its next step, as the emergency stop would (every held key
    /// and button released); a call still queued fails before it starts.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::SeqCst);
    }

    /// Whether [`CallControl::cancel`] was called.
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
    }

    /// The same call's stop without its sink: a batch reports its items, not what
    /// each item reports of itself.
    pub(crate) fn silent(&self) -> CallControl {
        CallControl {
            cancel: self.cancel.clone(),
            sink: None,
        }
    }

    /// Hands `p` to the sink, if there is one.
    pub(crate) fn report(&self, p: Progress) {
        if let Some(sink) = &self.sink {
            sink(p);
        }
    }
}

/// What came back when a pending confirmation was announced to a person outside the
/// operator channel (an MCP client's elicitation). Never an approval: a host may
/// answer on its own, so an answer only says whether someone may have seen it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    /// The client said its user saw the announcement (it still approves nothing).
    Acknowledged,
    /// Declined, cancelled, unanswered, failed, or the client cannot show one: nobody
    /// can be assumed to have seen it. The word says which.
    DeclinedOrUnavailable(&'static str),
}

/// How a cancelled call reports itself (the caller usually no longer listens).
pub fn cancelled() -> ToolError {
    ToolError::with_data(
        ErrorCode::SafetyStopped,
        "cancelled by its caller; every held key and button was released",
        json!({"cancelled": true}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn a_control_reports_to_its_sink_and_cancels_once_told() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let c = CallControl::reporting(move |p| s.lock().unwrap().push(p));
        c.report(Progress::Typed { chars: 1, total: 3 });
        assert!(!c.cancelled());
        c.clone().cancel();
        assert!(c.cancelled(), "a clone cancels the same call");
        assert_eq!(
            *seen.lock().unwrap(),
            [Progress::Typed { chars: 1, total: 3 }]
        );
        // Without a sink, reporting does nothing.
        CallControl::default().report(Progress::Items { done: 1, total: 2 });
        let (done, total, msg) = Progress::Waited {
            elapsed_ms: 1500,
            timeout_ms: 3000,
        }
        .parts();
        assert_eq!((done, total), (1.5, 3.0));
        assert!(msg.contains("1.5 s of 3.0 s"), "{msg}");
    }
}
