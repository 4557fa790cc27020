//! A call handed to the worker without blocking its caller
//! ([`crate::Engine::run_then`]).
//!
//! Why: an async transport (MCP over tokio) that waited for the worker on a thread of
//! its own paid two thread hand-offs more per call (to that thread and back), and on
//! an idle machine each is a sleeping CPU woken, most of a plain call's cost. Handed
//! over, the worker's answer wakes the async task itself.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cc_protocol::{Envelope, ErrorCode, ToolError};
use serde_json::json;

use crate::core::Core;

/// A call on its way to the worker: how long its answer may take, and the answers for
/// one that never comes. The same bound and the same answers as a call that blocks.
#[derive(Clone)]
pub struct Handed {
    core: Arc<Core>,
    tool: &'static str,
    started: Instant,
    /// The bound PROTOCOL §10 promises: `runtime.max_wait_ms` and a minute, so a hung
    /// driver still gets its caller an answer.
    pub wait: Duration,
}

impl Handed {
    pub(crate) fn new(
        core: Arc<Core>,
        tool: &'static str,
        started: Instant,
        wait: Duration,
    ) -> Self {
        Handed {
            core,
            tool,
            started,
            wait,
        }
    }

    /// The answer when [`Handed::wait`] passed first: the action may still run.
    pub fn timed_out(&self) -> Envelope {
        self.core.err(
            self.tool,
            self.started,
            ToolError::new(
                ErrorCode::Timeout,
                "no answer in time; the action may still have executed",
            ),
        )
    }

    /// The answer when the worker dropped the call unanswered: the job panicked (a bug).
    pub fn dropped(&self) -> Envelope {
        self.core.err(
            self.tool,
            self.started,
            ToolError::with_data(
                ErrorCode::DriverFailed,
                format!(
                    "internal error while running {}; the action may have executed",
                    self.tool
                ),
                json!({"internal": true}),
            ),
        )
    }
}

impl std::fmt::Debug for Handed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handed")
            .field("tool", &self.tool)
            .field("wait", &self.wait)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::channel;

    use cc_desktop::VirtualDesktop;

    use std::sync::mpsc::RecvTimeoutError;

    use super::*;
    use crate::Engine;
    use crate::call::CallControl;
    use crate::config::ConfigStack;
    use crate::tools::ToolCall;

    fn engine() -> Engine {
        Engine::new(Box::new(VirtualDesktop::default()), ConfigStack::new())
    }

    fn started(engine: Engine) -> Engine {
        let env = engine.start(&json!({}));
        assert!(env.ok, "{env:?}");
        engine
    }

    fn pause(engine: &Engine, ms: u64) -> ToolCall {
        engine
            .prepare("wait.pause", &json!({"ms": ms}))
            .expect("valid arguments")
    }

    #[test]
    fn the_worker_hands_the_answer_over_on_its_own_thread() {
        let engine = started(engine());
        let (tx, rx) = channel();
        let caller = std::thread::current().id();
        let handed = engine
            .run_then(pause(&engine, 0), CallControl::default(), move |env| {
                let _ = tx.send((env, std::thread::current().id()));
            })
            .expect("queued");
        let (env, on) = rx.recv_timeout(handed.wait).expect("answered");
        assert!(env.ok, "{env:?}");
        assert_ne!(on, caller, "answered by the worker, not the caller");
    }

    #[test]
    fn a_call_refused_before_it_is_queued_answers_at_once_and_never_hands_over() {
        let engine = engine();
        let (tx, rx) = channel::<Envelope>();
        let refused = engine
            .run_then(pause(&engine, 0), CallControl::default(), move |env| {
                let _ = tx.send(env);
            })
            .expect_err("no session");
        assert_eq!(refused.error.map(|e| e.code), Some(ErrorCode::NotStarted));
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(1)),
            Err(RecvTimeoutError::Disconnected),
            "the hand-over is dropped, not called"
        );
    }

    #[test]
    fn a_stop_refuses_a_queued_call_through_its_hand_over() {
        let engine = started(engine());
        // The worker is busy with a long pause; the next call waits in the queue.
        let (tx, rx) = channel();
        let first = tx.clone();
        engine
            .run_then(pause(&engine, 300), CallControl::default(), move |env| {
                let _ = first.send(env);
            })
            .expect("queued");
        engine
            .run_then(pause(&engine, 0), CallControl::default(), move |env| {
                let _ = tx.send(env);
            })
            .expect("queued");
        let stopped = engine.stop();
        assert!(stopped.ok, "{stopped:?}");
        let codes: Vec<_> = (0..2)
            .map(|_| {
                let env = rx.recv_timeout(Duration::from_secs(10)).expect("answered");
                env.error.map(|e| e.code)
            })
            .collect();
        assert!(
            codes.contains(&Some(ErrorCode::SafetyStopped)),
            "the queued call is refused: {codes:?}"
        );
    }

    #[test]
    fn the_answers_for_a_call_never_answered_match_the_blocking_ones() {
        let engine = started(engine());
        let handed = engine
            .run_then(pause(&engine, 0), CallControl::default(), |_| {})
            .expect("queued");
        let t = handed.timed_out();
        assert_eq!(t.error.map(|e| e.code), Some(ErrorCode::Timeout));
        let d = handed.dropped().error.expect("an error");
        assert_eq!(d.code, ErrorCode::DriverFailed);
        assert_eq!(
            d.data.as_ref().map(|v| v["internal"].clone()),
            Some(json!(true))
        );
        assert!(handed.wait >= Duration::from_secs(60), "{:?}", handed.wait);
    }
}
