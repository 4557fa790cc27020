//! The worker: what holds the driver. Its thread, or a caller that runs its own action
//! while it is idle (`seat.rs`, one thread at a time), runs actions serially, each
//! after the gate, in steps that the emergency stop pre-empts. Between jobs it ticks:
//! confirmation expiry, the idle watchdog, and desktop events (layout; the hotkey is
//! handled by [`HotkeyAware`] even while an action runs).

mod action;
mod batch;
mod facts;
mod observe;
mod seat;

pub use seat::{Jobs, Seat};

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Sender, SyncSender};
use std::time::Duration;

use cc_desktop::{Driver, DriverEvent, Indicator};
use cc_protocol::{Key, SessionState, Surface, ToolError};
use serde_json::json;

use crate::approval::Approval;
use crate::assess::Facts;
use crate::call::CallControl;
use crate::config::{CanvasWidth, ConfigStack};
use crate::coords::Canvas;
use crate::core::Core;
use crate::frames::Frames;
use crate::gate;
use crate::hotkey::HotkeyAware;
use crate::session::Reply;
use crate::snapshot::Snapshots;
use crate::tools::ToolCall;
use crate::tools::exec;

/// Work for the worker.
pub enum Job {
    /// A session starts: read the layout under this config.
    Start {
        config: Arc<ConfigStack>,
        reply: Sender<Result<Surface, ToolError>>,
    },
    /// One action (possibly a batch), already validated.
    Action {
        /// The call, validated and typed.
        tool_call: Box<ToolCall>,
        approved: Option<Approval>,
        epoch: u64,
        reply: Option<Reply>,
        /// Why a person must answer this action whatever the gate's rules and risk
        /// say (a vendor's safety check); a deny still wins.
        must_confirm: Option<String>,
        /// The caller's own stop and progress sink for this call.
        call: CallControl,
    },
    /// The session ends after everything before it. `answering`: its caller writes
    /// `session.stopped` out with its answer ([`crate::Answering`]).
    End { reply: Sender<()>, answering: bool },
    /// A read-only question for an assessment outside the gate ([`crate::Engine::assess`]):
    /// the desktop's facts of each call ([`Worker::facts`]). Nothing is gated or performed.
    Facts {
        calls: Vec<ToolCall>,
        needs_window: bool,
        /// The canvas width to read points on when no session holds a canvas.
        width: CanvasWidth,
        reply: SyncSender<Vec<Facts>>,
    },
}

impl Job {
    /// Whether its caller asked for its waits to look first ([`crate::Looking`]).
    fn looking(&self) -> bool {
        matches!(self, Job::Action { reply: Some(r), .. } if r.looking)
    }
}

/// The worker's own state; one thread at a time holds it (`seat.rs`).
pub struct Worker {
    core: Arc<Core>,
    driver: Box<dyn Driver>,
    canvas: Option<Canvas>,
    frames: Frames,
    snapshots: Snapshots,
    /// The emergency hotkey last handed to the driver.
    hotkey: Option<Vec<String>>,
    /// The server's own emergency hotkey (defaults and config file): held from the
    /// server's start, and again after each session, which may name another.
    base_hotkey: Vec<String>,
    /// What the person at the desk was last shown (`safety.visual_indicator`).
    indicator: Indicator,
    /// The running job's caller-held stop and progress sink (the default between jobs).
    call: CallControl,
}

const TICK: Duration = Duration::from_millis(20);

impl Worker {
    /// A worker over a driver (wrapped so the hotkey is noticed during actions). The
    /// server's `base_hotkey` is handed to the driver at once, so the chord a config
    /// file names stops the desktop before any session starts.
    pub fn new(core: Arc<Core>, driver: Box<dyn Driver>, base_hotkey: &[String]) -> Worker {
        let driver: Box<dyn Driver> = Box::new(HotkeyAware::new(driver, core.clone()));
        let mut worker = Worker {
            core,
            driver,
            canvas: None,
            frames: Frames::default(),
            snapshots: Snapshots::default(),
            hotkey: None,
            base_hotkey: base_hotkey.to_vec(),
            indicator: Indicator::Off,
            call: CallControl::default(),
        };
        worker.set_hotkey(base_hotkey);
        worker
    }

    /// Where the latest capture's image is kept (read by `Engine::latest_frame`).
    pub fn shot_slot(&self) -> crate::frames::ShotSlot {
        self.frames.shot_slot()
    }

    /// Runs one job, surviving a panic inside it (a driver bug): the job's reply is
    /// dropped unanswered, so its caller reports an internal error, and nothing stays
    /// held.
    fn handle_caught(&mut self, job: Job) {
        let handled = catch_unwind(AssertUnwindSafe(|| self.handle(job)));
        if handled.is_err() {
            tracing::error!("a job failed with a panic; releasing every key and button");
            self.release();
        }
    }

    fn handle(&mut self, job: Job) {
        match job {
            Job::Start { config, reply } => {
                self.snapshots.clear();
                self.frames.forget_seen();
                self.set_hotkey(&config.config().safety.emergency_hotkey);
                let r = self.read_layout(config.config().capture.default_width);
                let _ = reply.send(r);
            }
            Job::Action {
                tool_call,
                approved,
                epoch,
                reply,
                must_confirm,
                call,
            } => {
                // Its events go out with its caller's answer, if the caller said so.
                let _answering = reply
                    .as_ref()
                    .filter(|r| r.answering)
                    .map(|_| crate::Answering::begin());
                if let Some(r) = &reply {
                    let claimed = r.claim();
                    self.core.lock().queued.retain(|q| !q.reply.same(r));
                    if !claimed {
                        return; // refused while queued (session.stop)
                    }
                }
                // Cancelled while queued: it never starts.
                let env = if call.cancelled() {
                    self.core.err(
                        tool_call.name(),
                        std::time::Instant::now(),
                        crate::call::cancelled(),
                    )
                } else {
                    self.call = call;
                    let env = self.action(
                        &tool_call,
                        approved.as_ref(),
                        epoch,
                        must_confirm.as_deref(),
                    );
                    self.call = CallControl::default();
                    env
                };
                if let Some(r) = reply {
                    r.send(env);
                }
            }
            Job::Facts {
                calls,
                needs_window,
                width,
                reply,
            } => {
                let _ = reply.try_send(self.facts_any_time(&calls, needs_window, width));
            }
            Job::End { reply, answering } => {
                let _answering = answering.then(crate::Answering::begin);
                self.release();
                self.snapshots.clear();
                self.frames.forget_seen();
                {
                    let mut g = self.core.lock();
                    g.session = None;
                    // The stop flag follows the server's latch, which outlives the session.
                    let latched = g.latches.stop.is_some();
                    self.core.stop.store(latched, Ordering::SeqCst);
                }
                // The server's own hotkey again, whatever the session named.
                let base = std::mem::take(&mut self.base_hotkey);
                self.set_hotkey(&base);
                self.base_hotkey = base;
                self.core.bus.emit("session.stopped", json!({}));
                let _ = reply.send(());
            }
        }
    }

    /// Hands `safety.emergency_hotkey` to the driver (a passive grab on X11) when it
    /// differs from the one it has. A backend without a global hotkey says so once.
    fn set_hotkey(&mut self, names: &[String]) {
        if self.hotkey.as_deref() == Some(names) {
            return;
        }
        let keys: Vec<Key> = names.iter().filter_map(|k| Key::parse(k).ok()).collect();
        match self.driver.set_hotkey(&keys) {
            Ok(()) => tracing::info!("emergency hotkey: {}", names.join("+")),
            Err(e) => tracing::debug!("no global emergency hotkey: {e}"),
        }
        self.hotkey = Some(names.to_vec());
    }

    /// Releases every key and button, and publishes what is still held.
    fn release(&mut self) {
        if let Err(e) = self.driver.release_all() {
            tracing::warn!("release_all failed: {e}");
        }
        self.publish_held();
    }

    /// Publishes what the driver holds (`system.status.held`).
    fn publish_held(&mut self) {
        let held = self.driver.held_inputs();
        self.core.lock().held = held;
    }

    fn read_layout(&mut self, width: CanvasWidth) -> Result<Surface, ToolError> {
        let layout = self.driver.layout().map_err(exec::driver_error)?;
        let canvas = Canvas::configured(&layout, width);
        let surface = canvas.surface.clone();
        if self.canvas.as_ref().is_some_and(|c| c.surface != surface) {
            self.frames.layout_changed();
        }
        self.canvas = Some(canvas);
        self.core.lock().surface = Some(surface.clone());
        Ok(surface)
    }

    /// Re-reads the surface when the desktop says the layout changed or the canvas
    /// width was reconfigured; emits `session.configured {surface}`.
    fn refresh(&mut self, events: &[DriverEvent]) {
        let width = {
            let g = self.core.lock();
            match g.session.as_ref() {
                Some(s) => s.config.config().capture.default_width,
                None => return,
            }
        };
        let changed = events.contains(&DriverEvent::LayoutChanged);
        let width_changed = self.canvas.as_ref().is_none_or(|c| c.asked != width);
        if !changed && !width_changed {
            return;
        }
        let before = self.canvas.as_ref().map(|c| c.surface.clone());
        if let Ok(surface) = self.read_layout(width)
            && before.as_ref() != Some(&surface)
        {
            self.core
                .bus
                .emit("session.configured", json!({"surface": surface}));
        }
    }

    /// Shows the person at the desk what is happening (`safety.visual_indicator`): the
    /// stop while it is on, else that an agent acts while `acting`, else nothing. A
    /// backend that draws no indicator says so once, in the log.
    fn indicate(&mut self, acting: bool) {
        let enabled = {
            let g = self.core.lock();
            g.session.as_ref().map_or(self.core.visual_indicator, |s| {
                s.config.config().safety.visual_indicator
            })
        };
        let want = if !enabled {
            Indicator::Off
        } else if self.core.stop.load(Ordering::SeqCst) {
            Indicator::Stopped
        } else if acting {
            Indicator::Acting
        } else {
            Indicator::Off
        };
        if want == self.indicator {
            return;
        }
        if let Err(e) = self.driver.set_indicator(want) {
            tracing::debug!("no visual indicator: {e}");
        }
        self.indicator = want;
    }

    fn tick(&mut self) {
        // Hotkey presses are handled inside the wrapped driver's poll.
        let events = self.driver.poll_events();
        self.refresh(&events);
        self.indicate(false);
        // Nothing may stay held while the stop is on, whatever pressed it.
        if self.core.stop.load(Ordering::SeqCst) {
            let held = self.driver.held_inputs();
            if !held.keys.is_empty() || !held.buttons.is_empty() {
                self.release();
            }
        }
        self.idle_watchdog();
    }

    /// Confirmation expiry and the idle watchdog (PROTOCOL §5.3.4, §5.5).
    fn idle_watchdog(&self) {
        let mut g = self.core.lock();
        gate::expire_due(&mut g, &self.core.bus, self.core.clock.as_ref());
        let now = self.core.clock.now();
        let Some(s) = g.session.as_mut() else {
            return;
        };
        let safety = &s.config.config().safety;
        let idle_s = safety.idle_timeout_s;
        let standby = safety.idle_action == "standby";
        if idle_s > 0.0
            && s.state == SessionState::Ready
            && !s.stopping
            && s.pending.is_none()
            && !s.idle_reported
            && now.saturating_duration_since(s.last_activity) >= Duration::from_secs_f64(idle_s)
        {
            s.idle_reported = true;
            self.core
                .bus
                .emit("session.idle", json!({"after_s": idle_s}));
            if standby {
                Core::enter_standby(&mut g);
            }
        }
    }
}
