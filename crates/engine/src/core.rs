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
}

/// Where a panic came from (`safety.panic_triggered {source}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PanicSource {
    Hotkey,
    Protocol,
    File,
}

impl PanicSource {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            PanicSource::Hotkey => "hotkey",
            PanicSource::Protocol => "protocol",
            PanicSource::File => "file",
        }
    }
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

    /// Engages the emergency stop: pre-empts the action in flight, cancels a pending
    /// confirmation, puts the session in `stopped`. Returns false without a session.
    pub fn panic_on(&self, source: PanicSource) -> bool {
        let mut g = self.lock();
        let Some(s) = g.session.as_mut() else {
            return false;
        };
        self.stop.store(true, Ordering::SeqCst);
        if s.state != SessionState::Stopped {
            s.state = SessionState::Stopped;
            cancel_pending(&mut g, &self.bus, "emergency stop");
            self.bus
                .emit("safety.panic_triggered", json!({"source": source.as_str()}));
        }
        true
    }

    /// Releases the emergency stop. `None` without a session; `Some(false)` when the
    /// stop stays on because `safety.panic_file` still exists (while it exists the
    /// session is stopped, whatever else asks for a release); `Some(true)` otherwise.
    pub fn panic_off(&self, source: PanicSource) -> Option<bool> {
        let mut g = self.lock();
        let now = self.clock.now();
        let s = g.session.as_mut()?;
        if source != PanicSource::File && panic_file_present(&s.config.config().safety.panic_file) {
            return Some(false);
        }
        if s.state == SessionState::Stopped {
            self.stop.store(false, Ordering::SeqCst);
            s.state = SessionState::Ready;
            s.last_activity = now;
            s.idle_reported = false;
            self.bus
                .emit("safety.panic_released", json!({"source": source.as_str()}));
        }
        Some(true)
    }

    /// Leaves idle standby (`session.resume` or the hotkey); true when it did.
    pub fn resume_standby(&self) -> bool {
        let mut g = self.lock();
        let now = self.clock.now();
        match g.session.as_mut() {
            Some(s) if s.state == SessionState::Standby && !s.stopping => {
                s.state = SessionState::Ready;
                s.last_activity = now;
                s.idle_reported = false;
                self.bus.emit("session.resumed", json!({"from": "standby"}));
                true
            }
            _ => false,
        }
    }

    /// The emergency hotkey was pressed: it releases a stop, leaves standby, and
    /// otherwise engages the stop (PROTOCOL §5.1, §5.4).
    pub fn hotkey(&self) {
        let state = self.lock().session.as_ref().map(|s| s.state);
        match state {
            Some(SessionState::Stopped) => {
                self.panic_off(PanicSource::Hotkey);
            }
            Some(SessionState::Standby) => {
                self.resume_standby();
            }
            Some(_) => {
                self.panic_on(PanicSource::Hotkey);
            }
            None => {}
        }
    }

    /// Follows the session's panic file: its appearance engages the stop, its removal
    /// releases it. Called by the watcher thread, at session start and before every
    /// gate decision (so no action slips through between two looks of the watcher).
    /// The transition is decided under the lock, so each one happens exactly once.
    pub fn sync_panic_file(&self) {
        let transition = {
            let mut g = self.lock();
            let Some(s) = g.session.as_mut().filter(|s| !s.stopping) else {
                return;
            };
            let present = panic_file_present(&s.config.config().safety.panic_file);
            let changed = present != s.panic_file_seen;
            s.panic_file_seen = present;
            changed.then_some(present)
        };
        match transition {
            Some(true) => {
                tracing::info!("panic file appeared: emergency stop");
                self.panic_on(PanicSource::File);
            }
            Some(false) => {
                tracing::info!("panic file removed: stop released");
                self.panic_off(PanicSource::File);
            }
            None => {}
        }
    }
}

/// True when a panic file is configured and exists. The file is only ever looked at:
/// the server never creates, reads or deletes it.
pub fn panic_file_present(path: &str) -> bool {
    !path.is_empty() && std::path::Path::new(path).exists()
}
