//! The worker: the one thread that owns the driver. Actions run here serially, each
//! after the gate, in steps that the emergency stop pre-empts. Between jobs it ticks:
//! confirmation expiry, the idle watchdog, and desktop events (layout, hotkey).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use cc_desktop::{Driver, DriverEvent};
use cc_protocol::{Envelope, ErrorCode, Risk, SessionState, Surface, ToolError};
use serde_json::{Value, json};

use crate::config::ConfigStack;
use crate::coords::Canvas;
use crate::core::{Core, PanicSource};
use crate::frames::Frames;
use crate::gate::{self, Decision, Request};
use crate::risk::{self, Context};
use crate::rules::{Landing, Policy};
use crate::snapshot::Snapshots;
use crate::tools::exec::{self, Exec};

/// Work for the worker.
pub enum Job {
    /// A session starts: read the layout under this config.
    Start {
        config: Arc<ConfigStack>,
        reply: Sender<Result<Surface, ToolError>>,
    },
    /// One action (possibly a batch), already validated.
    Action {
        tool: String,
        args: Value,
        approved: Option<String>,
        epoch: u64,
        reply: Option<Sender<Envelope>>,
    },
    /// The session ends after everything before it.
    End { reply: Sender<()> },
}

/// The worker's own state; only its thread touches it.
pub struct Worker {
    core: Arc<Core>,
    /// The panic file existed at the last tick.
    panic_file_seen: bool,
    driver: Box<dyn Driver>,
    canvas: Option<Canvas>,
    frames: Frames,
    snapshots: Snapshots,
}

const TICK: Duration = Duration::from_millis(20);

impl Worker {
    /// A worker over a driver.
    pub fn new(core: Arc<Core>, driver: Box<dyn Driver>) -> Worker {
        Worker {
            core,
            panic_file_seen: false,
            driver,
            canvas: None,
            frames: Frames::default(),
            snapshots: Snapshots::default(),
        }
    }

    /// Runs until every sender is gone.
    pub fn run(mut self, rx: Receiver<Job>) {
        loop {
            match rx.recv_timeout(TICK) {
                Ok(job) => self.handle(job),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            self.tick();
        }
        let _ = self.driver.release_all();
    }

    fn handle(&mut self, job: Job) {
        match job {
            Job::Start { config, reply } => {
                self.snapshots.clear();
                let r = self.read_layout(config.config().capture.default_width);
                let _ = reply.send(r);
            }
            Job::Action {
                tool,
                args,
                approved,
                epoch,
                reply,
            } => {
                let env = self.action(&tool, &args, approved.as_deref(), epoch);
                if let Some(tx) = reply {
                    let _ = tx.send(env);
                }
            }
            Job::End { reply } => {
                let _ = self.driver.release_all();
                self.snapshots.clear();
                {
                    let mut g = self.core.lock();
                    g.session = None;
                    self.core.stop.store(false, Ordering::SeqCst);
                }
                self.core.bus.emit("session.stopped", json!({}));
                let _ = reply.send(());
            }
        }
    }

    fn read_layout(&mut self, width: u32) -> Result<Surface, ToolError> {
        let layout = self.driver.layout().map_err(exec::driver_error)?;
        let canvas = Canvas::new(&layout, width);
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
        let width_changed = self
            .canvas
            .as_ref()
            .is_none_or(|c| c.surface.display_width_px != width);
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

    fn tick(&mut self) {
        let events = self.driver.poll_events();
        for e in &events {
            if *e == DriverEvent::Hotkey {
                let stopped = self
                    .core
                    .lock()
                    .session
                    .as_ref()
                    .is_some_and(|s| s.state == SessionState::Stopped);
                if stopped {
                    self.core.panic_off(PanicSource::Hotkey);
                } else {
                    self.core.panic_on(PanicSource::Hotkey);
                }
            }
        }
        self.watch_panic_file();
        self.refresh(&events);
        let mut g = self.core.lock();
        gate::expire_due(&mut g, &self.core.bus, self.core.clock.as_ref());
        let now = self.core.clock.now();
        if let Some(s) = g.session.as_mut() {
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
                    s.state = SessionState::Standby;
                }
            }
        }
    }

    /// While `safety.panic_file` exists the session is stopped; its appearance and its
    /// removal are noticed here, every tick, not only on the next call. The file is only
    /// ever read, never deleted.
    fn watch_panic_file(&mut self) {
        let path = self
            .core
            .lock()
            .session
            .as_ref()
            .map(|s| s.config.config().safety.panic_file.clone());
        let path = match path {
            Some(p) => p,
            None => {
                self.panic_file_seen = false;
                return;
            }
        };
        if path.is_empty() {
            return;
        }
        let present = std::path::Path::new(&path).exists();
        if present && !self.panic_file_seen {
            self.core.panic_on(PanicSource::File);
        } else if !present && self.panic_file_seen {
            self.core.panic_off(PanicSource::File);
        }
        self.panic_file_seen = present;
    }

    /// What the gate needs to know from the desktop about one action.
    fn context(&mut self, tool: &str, args: &Value, policy: &Policy) -> (Context, Landing) {
        let mut ctx = Context::default();
        let mut landing = Landing::default();
        match tool {
            "keyboard.type" => {
                ctx.focused_password = self.driver.focused_is_password().unwrap_or(false)
            }
            "a11y.input" => {
                let snap = args
                    .get("snapshot_id")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let node = args
                    .get("node_id")
                    .and_then(Value::as_u64)
                    .unwrap_or(u64::MAX) as u32;
                ctx.target_password = self
                    .snapshots
                    .entry(snap, node)
                    .map(|e| e.password)
                    .unwrap_or(false);
            }
            _ => {}
        }
        if let Some(canvas) = &self.canvas {
            let pt = |v: &Value| -> Option<(i32, i32)> {
                Some(canvas.clamp(v.get("x")?.as_f64()?, v.get("y")?.as_f64()?))
            };
            match tool {
                "pointer.drag" => {
                    landing.points.extend(args.get("from").and_then(pt));
                    landing.points.extend(args.get("to").and_then(pt));
                }
                t if t.starts_with("pointer.") => match pt(args) {
                    Some(p) => landing.points.push(p),
                    None => {
                        if let Ok((px, py)) = self.driver.pointer_position() {
                            landing.points.push(canvas.from_physical(px, py));
                        }
                    }
                },
                _ => {}
            }
        }
        if policy.needs_window()
            && let (Ok(windows), Some(canvas)) = (self.driver.windows(), &self.canvas)
        {
            let w = if tool.starts_with("pointer.") {
                landing.points.last().and_then(|&(x, y)| {
                    let (px, py) = canvas.to_physical(x as f64, y as f64);
                    windows.iter().find(|w| w.rect.contains(px, py))
                })
            } else {
                windows.iter().find(|w| w.focused)
            };
            landing.window = w.map(|w| (w.app_id.clone(), w.title.clone()));
        }
        (ctx, landing)
    }

    fn action(&mut self, tool: &str, args: &Value, approved: Option<&str>, epoch: u64) -> Envelope {
        let started = Instant::now();
        self.refresh(&[]);
        let policy = self.core.lock().session.as_ref().map(|s| s.policy.clone());
        let policy = match policy {
            Some(p) => p,
            None => {
                return self.core.err(
                    tool,
                    started,
                    ToolError::new(
                        ErrorCode::NotStarted,
                        "no session; call session.start first",
                    ),
                );
            }
        };
        if tool == "batch.execute" {
            return self.batch(args, approved, epoch, &policy, started);
        }
        let (ctx, landing) = self.context(tool, args, &policy);
        let risk = risk::action_risk(tool, args, &ctx);
        let verdict = policy.evaluate(tool, args, &landing);
        let shown = redact(tool, args, &ctx);
        let observation = risk == Risk::Benign && tool != "wait.pause";
        let req = Request {
            tool,
            arguments: args,
            shown_arguments: &shown,
            risk,
            verdict: &verdict,
            approved,
            epoch,
            observation,
        };
        match self.decide(&req) {
            Decision::Reject(e) => self.core.err(tool, started, e),
            Decision::Confirm { request_id, risk, reason } => self.core.ok(
                tool,
                started,
                json!({"status": "awaiting_confirmation", "request_id": request_id, "risk": risk, "reason": reason}),
            ),
            Decision::Run => self.perform(tool, args, &shown, approved, started),
        }
    }

    fn decide(&self, req: &Request<'_>) -> Decision {
        let mut g = self.core.lock();
        gate::expire_due(&mut g, &self.core.bus, self.core.clock.as_ref());
        let stop = self.core.stop.load(Ordering::SeqCst);
        gate::decide(&mut g, &self.core.bus, self.core.clock.as_ref(), stop, req)
    }

    /// Runs an action that passed the gate, with its events.
    fn perform(
        &mut self,
        tool: &str,
        args: &Value,
        shown: &Value,
        approved: Option<&str>,
        started: Instant,
    ) -> Envelope {
        let mut payload = json!({"tool": tool, "arguments": shown});
        if let Some(id) = approved {
            payload["request_id"] = json!(id);
        }
        self.core.bus.emit("action.started", payload);
        let config = self.core.lock().session.as_ref().map(|s| s.config.clone());
        let config = match config {
            Some(c) => c,
            None => {
                return self.core.err(
                    tool,
                    started,
                    ToolError::new(ErrorCode::NotStarted, "no session"),
                );
            }
        };
        let result = match self.canvas.as_ref() {
            Some(canvas) => {
                let mut ex = Exec {
                    driver: self.driver.as_mut(),
                    canvas,
                    config: config.config(),
                    stop: &self.core.stop,
                    frames: &mut self.frames,
                    snapshots: &mut self.snapshots,
                };
                exec::run(tool, args, &mut ex)
            }
            None => Err(ToolError::new(
                ErrorCode::BackendUnavailable,
                "no screen layout could be read",
            )),
        };
        self.core
            .frame
            .store(self.frames.latest(), Ordering::Relaxed);
        {
            let now = self.core.clock.now();
            let mut g = self.core.lock();
            if let Some(s) = g.session.as_mut() {
                s.action_count += 1;
                s.last_activity = now;
                s.idle_reported = false;
            }
        }
        let env = match result {
            Ok(v) => self.core.ok(tool, started, v),
            Err(e) => self.core.err(tool, started, e),
        };
        let mut fin = json!({
            "tool": tool,
            "ok": env.ok,
            "duration_ms": env.meta.duration_ms,
            "error_code": env.error_code(),
        });
        if let Some(id) = approved {
            fin["request_id"] = json!(id);
            fin["envelope"] = summarize(&env);
        }
        self.core.bus.emit("action.finished", fin);
        env
    }

    fn batch(
        &mut self,
        args: &Value,
        approved: Option<&str>,
        epoch: u64,
        policy: &Arc<Policy>,
        started: Instant,
    ) -> Envelope {
        let tool = "batch.execute";
        let items: Vec<(String, Value)> = args
            .get("items")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|it| {
                        (
                            it.get("tool")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_string(),
                            it.get("arguments").cloned().unwrap_or(json!({})),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let continue_on_error = args
            .get("continue_on_error")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let gap = args.get("gap_ms").and_then(Value::as_u64).unwrap_or(0);
        // Gate the whole batch first: any deny refuses it before anything runs; any item
        // that needs a human parks the whole batch under one confirmation.
        let mut max_risk = Risk::Benign;
        let mut merged = crate::rules::Verdict::default();
        let mut denied_item = None;
        let mut shown_items = Vec::with_capacity(items.len());
        let mut all_observe = true;
        let mut all_allowed = true;
        for (i, (t, a)) in items.iter().enumerate() {
            let (ctx, landing) = self.context(t, a, policy);
            let r = risk::action_risk(t, a, &ctx);
            max_risk = max_risk.max(r);
            all_observe &= r == Risk::Benign && t != "wait.pause";
            let v = policy.evaluate(t, a, &landing);
            if merged.deny.is_none() && v.deny.is_some() {
                merged.deny = v.deny;
                denied_item = Some(i);
            }
            merged.confirm = merged.confirm.or(v.confirm);
            merged.allow = merged.allow.or(v.allow);
            all_allowed &= v.allow.is_some() || v.confirm.is_some();
            shown_items.push(json!({"tool": t, "arguments": redact(t, a, &ctx)}));
        }
        if !all_allowed {
            // Allowlist mode holds per item: one unlisted item refuses the whole batch.
            merged.allow = None;
            merged.confirm = None;
        }
        let mut shown = args.clone();
        shown["items"] = Value::Array(shown_items);
        let req = Request {
            tool,
            arguments: args,
            shown_arguments: &shown,
            risk: max_risk,
            verdict: &merged,
            approved,
            epoch,
            observation: all_observe,
        };
        match self.decide(&req) {
            Decision::Reject(mut e) => {
                if let (ErrorCode::PolicyDenied, Some(i), Some(Value::Object(d))) =
                    (e.code, denied_item, e.data.as_mut())
                {
                    d.insert("item".into(), json!(i));
                    e.message = format!("item {i}: {}; nothing ran", e.message);
                }
                return self.core.err(tool, started, e);
            }
            Decision::Confirm {
                request_id,
                risk,
                reason,
            } => {
                return self.core.ok(
                    tool,
                    started,
                    json!({"status": "awaiting_confirmation", "request_id": request_id, "risk": risk, "reason": reason}),
                );
            }
            Decision::Run => {}
        }
        let mut envelopes: Vec<Envelope> = Vec::with_capacity(items.len());
        let mut status = "completed";
        for (i, (t, a)) in items.iter().enumerate() {
            let item_started = Instant::now();
            if i > 0 && gap > 0 {
                let stop = &self.core.stop;
                let deadline = Instant::now() + Duration::from_millis(gap);
                while Instant::now() < deadline && !stop.load(Ordering::SeqCst) {
                    std::thread::sleep((deadline - Instant::now()).min(Duration::from_millis(5)));
                }
            }
            // Re-gate every item: a panic, a stop, standby or a new deny rule stops the
            // batch here. The batch gate already covered confirmation for every item.
            let policy_now = self.core.lock().session.as_ref().map(|s| s.policy.clone());
            let policy_now = policy_now.unwrap_or_else(|| policy.clone());
            let (ctx, landing) = self.context(t, a, &policy_now);
            let r = risk::action_risk(t, a, &ctx);
            let v = policy_now.evaluate(t, a, &landing);
            let item_shown = redact(t, a, &ctx);
            let item_req = Request {
                tool: t,
                arguments: a,
                shown_arguments: &item_shown,
                risk: r,
                verdict: &v,
                approved: Some(approved.unwrap_or("batch")),
                epoch,
                observation: false,
            };
            let env = match self.decide(&item_req) {
                Decision::Run => self.perform(t, a, &item_shown, approved, item_started),
                Decision::Reject(e) => self.core.err(t, item_started, e),
                Decision::Confirm { .. } => self.core.err(
                    t,
                    item_started,
                    ToolError::new(
                        ErrorCode::PolicyDenied,
                        "item needs a confirmation the batch did not get",
                    ),
                ),
            };
            let failed = !env.ok;
            let interrupted = matches!(env.error_code(), Some(ErrorCode::SafetyStopped));
            envelopes.push(env);
            if failed && (!continue_on_error || interrupted) {
                status = "aborted";
                break;
            }
        }
        let duration_ms = started.elapsed().as_millis() as u64;
        let summary: Vec<Value> = envelopes
            .iter()
            .map(|e| json!({"tool": e.meta.tool, "ok": e.ok, "error_code": e.error_code()}))
            .collect();
        self.core.bus.emit(
            "batch.finished",
            json!({"status": status, "items": summary, "duration_ms": duration_ms}),
        );
        let items_json: Vec<Value> = envelopes
            .iter()
            .map(|e| serde_json::to_value(e).unwrap_or(Value::Null))
            .collect();
        self.core.ok(
            tool,
            started,
            json!({"status": status, "items": items_json}),
        )
    }
}

/// An approved action's envelope for `action.finished`, without image payloads (a
/// capture's `data_url` would flood every subscriber; its size stays in `bytes`).
fn summarize(env: &Envelope) -> Value {
    let mut v = serde_json::to_value(env).unwrap_or(Value::Null);
    strip_data_urls(&mut v);
    v
}

fn strip_data_urls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(s)) = m.get_mut("data_url")
                && s.len() > 64
            {
                *s = "[omitted]".into();
            }
            m.values_mut().for_each(strip_data_urls);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_data_urls),
        _ => {}
    }
}

/// Arguments as shown in events: text typed into a password field is redacted.
pub fn redact(tool: &str, args: &Value, ctx: &Context) -> Value {
    let secret = (tool == "keyboard.type" && ctx.focused_password)
        || (tool == "a11y.input" && ctx.target_password);
    let mut shown = args.clone();
    if secret && let Some(t) = shown.get_mut("text") {
        *t = json!("[redacted]");
    }
    shown
}
