//! State shared by the engine's callers and its worker thread.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use cc_desktop::Capabilities;
use cc_protocol::{Envelope, Meta, SessionState, ToolError};
use serde_json::{Value, json};

use crate::clock::Clock;
use crate::events::EventBus;
use crate::gate::cancel_pending;
use crate::latch::PanicSource;
use crate::session::Shared;

/// The engine's shared core.
pub struct Core {
    pub shared: Mutex<Shared>,
    pub bus: Arc<EventBus>,
    pub clock: Arc<dyn Clock>,
    /// The emergency stop, read between every two injection steps.
    pub stop: AtomicBool,
    /// The latest frame number (for `meta.frame`).
    pub frame: AtomicU64,
    pub platform: &'static str,
    pub caps: Capabilities,
    /// The server's configured `safety.panic_file`, watched while no session runs.
    pub panic_file: String,
    /// The server's configured `safety.visual_indicator`, followed while no session
    /// runs (the stop outlives sessions, and so does its banner).
    pub visual_indicator: bool,
}

impl Core {
    /// Locks the shared state (a poisoned lock is still used: the state stays coherent
    /// because every mutation is a single assignment under the lock).
    pub fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The envelope's `meta`.
    pub fn meta(&self, tool: &str, started: Instant) -> Meta {
        let state = self.lock().state();
        self.meta_with(tool, started, state)
    }

    /// `meta` when the caller already knows the state.
    pub fn meta_with(&self, tool: &str, started: Instant, state: SessionState) -> Meta {
        Meta {
            tool: tool.to_string(),
            duration_ms: started.elapsed().as_millis() as u64,
            state,
            frame: self.frame.load(Ordering::Relaxed),
        }
    }

    /// A success envelope.
    pub fn ok(&self, tool: &str, started: Instant, result: Value) -> Envelope {
        Envelope::success(result, self.meta(tool, started))
    }

    /// A failure envelope.
    pub fn err(&self, tool: &str, started: Instant, error: ToolError) -> Envelope {
        Envelope::failure(error, self.meta(tool, started))
    }

    /// Engages the emergency stop, a latch of the server: pre-empts the action in
    /// flight, cancels a pending confirmation and puts a running session in `stopped`.
    /// With no session it still latches, and the next session starts stopped.
    pub fn panic_on(&self, source: PanicSource) {
        self.latch_stop(source, None);
    }

    fn latch_stop(&self, source: PanicSource, file: Option<String>) {
        let mut g = self.lock();
        self.stop.store(true, Ordering::SeqCst);
        if g.latches.stop.is_some() {
            return;
        }
        g.latches.stop = Some(source);
        g.latches.stop_file = file;
        // The stop supersedes standby: the person who releases it may release both.
        g.latches.standby = false;
        if let Some(s) = g.session.as_mut() {
            s.state = SessionState::Stopped;
            cancel_pending(&mut g, &self.bus, "emergency stop");
        }
        self.bus
            .emit("safety.panic_triggered", json!({"source": source.as_str()}));
    }

    /// Releases the emergency stop; the caller is a person (the transports see to
    /// that). False when the stop stays on because the watched panic file still exists:
    /// while it exists the stop holds, whoever asks. A running session returns to
    /// `ready` and says so with `session.resumed {from:"stopped"}`.
    pub fn panic_off(&self, source: PanicSource) -> bool {
        let mut g = self.lock();
        let file_holds = panic_file_present(&self.watched_panic_file(&g))
            || g.latches
                .stop_file
                .as_deref()
                .is_some_and(panic_file_present);
        if source != PanicSource::File && file_holds {
            return false;
        }
        g.latches.stop_file = None;
        if g.latches.stop.take().is_none() {
            return true;
        }
        self.stop.store(false, Ordering::SeqCst);
        let now = self.clock.now();
        self.bus
            .emit("safety.panic_released", json!({"source": source.as_str()}));
        if let Some(s) = g.session.as_mut().filter(|s| !s.stopping) {
            s.state = SessionState::Ready;
            s.last_activity = now;
            s.idle_reported = false;
            self.bus.emit("session.resumed", json!({"from": "stopped"}));
        }
        true
    }

    /// True while the emergency stop is latched.
    pub fn stopped(&self) -> bool {
        self.lock().latches.stop.is_some()
    }

    /// Enters idle standby (the idle watchdog, under the lock it already holds).
    pub fn enter_standby(g: &mut Shared) {
        g.latches.standby = true;
        if let Some(s) = g.session.as_mut() {
            s.state = SessionState::Standby;
        }
    }

    /// Leaves idle standby (`session.resume` or the hotkey); true when it did. A stop
    /// latched meanwhile still holds: the session stays `stopped`.
    pub fn resume_standby(&self) -> bool {
        let mut g = self.lock();
        if !g.latches.standby {
            return false;
        }
        g.latches.standby = false;
        let now = self.clock.now();
        if let Some(s) = g.session.as_mut().filter(|s| !s.stopping)
            && s.state == SessionState::Standby
        {
            s.state = SessionState::Ready;
            s.last_activity = now;
            s.idle_reported = false;
        }
        self.bus.emit("session.resumed", json!({"from": "standby"}));
        true
    }

    /// The emergency hotkey was pressed: it engages the stop, from standby too, and
    /// never releases anything (PROTOCOL §5.4). A chord on the desk is input the agent
    /// can synthesize (XTest from a terminal it opened), so a release by chord would be
    /// a release the agent can make; releasing is the operator channel's alone.
    pub fn hotkey(&self) {
        self.panic_on(PanicSource::Hotkey);
    }

    /// The panic file watched now: the running session's `safety.panic_file`, else the
    /// server's configured one.
    fn watched_panic_file(&self, g: &Shared) -> String {
        match g.session.as_ref() {
            Some(s) => s.config.config().safety.panic_file.clone(),
            None => self.panic_file.clone(),
        }
    }

    /// Follows the panic files: the watched one appearing engages the stop; the one
    /// that raised the stop disappearing releases it (a stop raised by the operator or
    /// the hotkey is theirs to release). Called by the watcher thread, at session start
    /// and before every gate decision (so no action slips through between two looks of
    /// the watcher). Each transition is decided under the lock, so it happens once.
    pub fn sync_panic_file(&self) {
        let (appeared, removed) = {
            let mut g = self.lock();
            if g.session.as_ref().is_some_and(|s| s.stopping) {
                return;
            }
            let watched = self.watched_panic_file(&g);
            let present = panic_file_present(&watched);
            let appeared = (present && !g.latches.panic_file_seen).then_some(watched);
            g.latches.panic_file_seen = present;
            let removed = g.latches.stop == Some(PanicSource::File)
                && !g
                    .latches
                    .stop_file
                    .as_deref()
                    .is_some_and(panic_file_present);
            (appeared, removed)
        };
        if let Some(file) = appeared {
            tracing::info!("panic file appeared: emergency stop");
            self.latch_stop(PanicSource::File, Some(file));
        } else if removed {
            tracing::info!("panic file removed: stop released");
            self.panic_off(PanicSource::File);
        }
    }
}

/// True when a panic file is configured and exists. The file is only ever looked at:
/// the server never creates, reads or deletes it.
pub fn panic_file_present(path: &str) -> bool {
    !path.is_empty() && std::path::Path::new(path).exists()
}
