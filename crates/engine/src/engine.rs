//! The engine facade: the methods of PROTOCOL §2, callable from any transport and any
//! thread. Every action goes to the worker, where the gate decides.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{RecvTimeoutError, channel, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cc_desktop::{Capabilities, Driver};
use cc_protocol::{Envelope, ErrorCode, SessionState, ToolError};
use serde_json::{Value, json};

use crate::approval::Approval;
use crate::assess::{self, Assessment, Declared};
use crate::call::CallControl;
use crate::clock::{Clock, SystemClock, rfc3339};
use crate::config::{ConfigError, ConfigStack};
use crate::core::Core;
use crate::events::{BusStats, EventBus, Subscription};
use crate::frames::{Shot, ShotSlot};
use crate::gate;
use crate::handed::Handed;
use crate::latch::PanicSource;
use crate::lookout::Lookout;
use crate::session::{AnswerTo, Queued, Reply, Session, Shared};
use crate::spec::invalid_args;
use crate::spec::{Field, Ty, ValidateMode, validate};
use crate::tools::{Needs, ToolCall, batch, find, tools};
use crate::worker::{Job, Jobs, Seat, Worker};

/// Every JSON-RPC method the engine answers (PROTOCOL §2), in one place: transports
/// decide who may call each one, and the manifest lists them.
pub const METHODS: &[&str] = &[
    "session.start",
    "session.stop",
    "session.configure",
    "session.confirm",
    "session.resume",
    "control.panic",
    "tools.call",
    "tools.call_batch",
    "tools.list",
    "system.status",
];

/// A handle on the engine; cheap to clone, shared by every transport.
#[derive(Clone)]
pub struct Engine {
    pub(crate) core: Arc<Core>,
    jobs: Jobs,
    base: Arc<ConfigStack>,
    lifecycle: Arc<Mutex<()>>,
    /// The latest capture's image, for an operator console.
    shots: ShotSlot,
}

/// `tools.call`'s `tool`: a name of at most 128 characters.
fn tool_name() -> Ty {
    Ty::Str {
        max_chars: Some(128),
        non_empty: true,
    }
}

/// `tools.call`'s params as the spec states them.
fn tools_call_fields() -> Vec<Field> {
    vec![
        Field::req("tool", tool_name(), ""),
        Field::def("arguments", Ty::Any, json!({}), ""),
    ]
}

/// `tools.call`'s params when the spec would take them as they are: exactly `tool` (a
/// valid name, checked by the spec) and non-null `arguments` (`Ty::Any`, no default to
/// fill). `None` for any other shape, which the spec then checks and words.
fn tools_call_in_place(params: &Value) -> Option<(&str, &Value)> {
    let map = params.as_object()?;
    if map.len() != 2 {
        return None;
    }
    let tool = map.get("tool")?;
    let arguments = map.get("arguments").filter(|a| !a.is_null())?;
    validate(&tool_name(), tool, ValidateMode::Fill(&Value::Null)).ok()?;
    Some((tool.as_str()?, arguments))
}

fn invalid_config(e: ConfigError) -> ToolError {
    ToolError::with_data(ErrorCode::InvalidConfig, e.to_string(), e.data())
}

impl Engine {
    /// Starts an engine over a driver, with `base` as the defaults-plus-file config.
    pub fn new(driver: Box<dyn Driver>, base: ConfigStack) -> Engine {
        Engine::with_clock(driver, base, Arc::new(SystemClock))
    }

    /// Same, with an injected clock.
    pub fn with_clock(driver: Box<dyn Driver>, base: ConfigStack, clock: Arc<dyn Clock>) -> Engine {
        let platform = driver.platform();
        let caps = driver.capabilities();
        let core = Arc::new(Core {
            shared: Mutex::new(Shared::default()),
            bus: Arc::new(EventBus::new(clock.clone())),
            clock,
            stop: AtomicBool::new(false),
            frame: AtomicU64::new(0),
            platform,
            caps,
            panic_file: base.config().safety.panic_file.clone(),
            visual_indicator: base.config().safety.visual_indicator,
        });
        crate::panic_file::spawn(Arc::downgrade(&core));
        let (tx, rx) = channel();
        let worker = Worker::new(core.clone(), driver, &base.config().safety.emergency_hotkey);
        let shots = worker.shot_slot();
        let seat = Seat::new(worker);
        let jobs = Jobs::new(tx, seat.clone());
        let spawned = std::thread::Builder::new()
            .name("cc-worker".into())
            .spawn(move || seat.serve(rx));
        if let Err(e) = spawned {
            tracing::error!("cannot start the worker thread: {e}");
        }
        Engine {
            core,
            jobs,
            base: Arc::new(base),
            lifecycle: Arc::new(Mutex::new(())),
            shots,
        }
    }

    /// The image of the latest `screen.capture` (as the agent received it), if any:
    /// what an operator console shows as the live screen.
    pub fn latest_frame(&self) -> Option<Arc<Shot>> {
        self.shots.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The event bus (transports subscribe here).
    pub fn bus(&self) -> &Arc<EventBus> {
        &self.core.bus
    }

    /// Counters for `/health`.
    pub fn bus_stats(&self) -> BusStats {
        self.core.bus.stats()
    }

    /// Subscribes to events (see [`EventBus::subscribe`]).
    pub fn subscribe(
        &self,
        capacity: usize,
        replay_after: Option<u64>,
    ) -> (Vec<crate::events::SharedEvent>, Subscription) {
        self.core.bus.subscribe(capacity, replay_after)
    }

    /// The driver's `--platform` name (`virtual`, `x11`, `wlroots`, …).
    pub fn platform(&self) -> &'static str {
        self.core.platform
    }

    /// The backend's capabilities as reported on the wire.
    pub fn capabilities_json(&self) -> Value {
        caps_json(&self.core.caps)
    }

    /// The config the server started with (defaults + file).
    pub fn base_config(&self) -> &ConfigStack {
        &self.base
    }

    fn state(&self) -> SessionState {
        self.core.lock().state()
    }

    /// Dispatches a method by name; `None` when there is no such method (the transport
    /// answers `-32601`).
    pub fn call_method(&self, method: &str, params: &Value) -> Option<Envelope> {
        // The table is the gate: a method missing from it is unreachable, so every
        // reachable method is one the role matrix and the manifest know.
        if !METHODS.contains(&method) {
            return None;
        }
        Some(match method {
            "session.start" => self.start(params),
            "session.stop" => self.stop(),
            "session.configure" => self.configure(params),
            "session.confirm" => self.confirm(params),
            "session.resume" => self.resume(),
            "control.panic" => self.panic(params),
            "tools.call" => self.tools_call(params),
            "tools.call_batch" => self.call_tool(batch().name, params),
            "tools.list" => self.list_tools(),
            "system.status" => self.status(),
            _ => return None,
        })
    }

    fn check_params(
        &self,
        method: &str,
        started: Instant,
        params: &Value,
        fields: Vec<Field>,
    ) -> Result<Value, Box<Envelope>> {
        let p = if params.is_null() {
            json!({})
        } else {
            params.clone()
        };
        validate(&Ty::Object(fields), &p, ValidateMode::Fill(&Value::Null))
            .map_err(|i| Box::new(self.core.err(method, started, invalid_args(i))))
    }

    /// `session.start`.
    pub fn start(&self, params: &Value) -> Envelope {
        let m = "session.start";
        let started = Instant::now();
        let _life = self.lifecycle.lock().unwrap_or_else(|p| p.into_inner());
        if self.core.lock().session.is_some() {
            return self.core.err(
                m,
                started,
                ToolError::new(ErrorCode::AlreadyStarted, "a session is already running"),
            );
        }
        let patch = crate::config::patch_of(params, "config");
        if !patch.is_object() {
            return self.core.err(
                m,
                started,
                ToolError::new(ErrorCode::InvalidConfig, "the config must be an object"),
            );
        }
        let mut stack = (*self.base).clone();
        if let Err(e) = stack.apply(&patch) {
            return self.core.err(m, started, invalid_config(e));
        }
        if let Some(e) = fixed_at_start(&stack, &self.base, self.core.platform) {
            return self.core.err(m, started, e);
        }
        let config = Arc::new(stack);
        let (tx, rx) = channel();
        if self
            .jobs
            .send(Job::Start {
                config: config.clone(),
                reply: tx,
            })
            .is_err()
        {
            return self.core.err(
                m,
                started,
                ToolError::new(ErrorCode::BackendUnavailable, "the driver thread is gone"),
            );
        }
        let surface = match rx.recv() {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => return self.core.err(m, started, e),
            Err(_) => {
                return self.core.err(
                    m,
                    started,
                    ToolError::new(ErrorCode::BackendUnavailable, "the driver thread is gone"),
                );
            }
        };
        let now = self.core.clock.now();
        let mut result = json!({
            "state": "ready",
            "platform": self.core.platform,
            "surface": surface,
            "capabilities": self.capabilities_json(),
        });
        {
            let mut g = self.core.lock();
            g.epoch += 1;
            // The latches outlive sessions: a new session inherits a stop or standby.
            let state = g.initial_state();
            self.core
                .stop
                .store(state == SessionState::Stopped, Ordering::SeqCst);
            result["state"] = json!(state);
            g.session = Some(Session {
                config,
                state,
                stopping: false,
                started_at: rfc3339(self.core.clock.wall()),
                action_count: 0,
                last_activity: now,
                idle_reported: false,
                pending: None,
                vendor: Default::default(),
            });
            self.core.bus.emit("session.started", result.clone());
        }
        // While the panic file exists the session is stopped, from its first moment.
        self.core.sync_panic_file();
        self.core.ok(m, started, result)
    }

    /// `session.stop`: refuses everything queued, lets the action in flight finish,
    /// then ends the session. Idempotent.
    pub fn stop(&self) -> Envelope {
        let m = "session.stop";
        let started = Instant::now();
        let _life = self.lifecycle.lock().unwrap_or_else(|p| p.into_inner());
        let queued = {
            let mut g = self.core.lock();
            let Some(s) = g.session.as_mut() else {
                drop(g);
                return self.core.ok(m, started, json!({"state": "idle"}));
            };
            s.stopping = true;
            g.epoch += 1;
            gate::cancel_pending(&mut g, &self.core.bus, "session stopped");
            std::mem::take(&mut g.queued)
        };
        // Actions still waiting for the worker are refused at once (§10).
        for q in queued {
            if q.reply.claim() {
                q.reply.send(self.refuse_stopping(q.tool));
            }
        }
        let (tx, rx) = channel();
        let end = Job::End {
            reply: tx,
            answering: crate::events::answering(),
        };
        if self.jobs.send(end).is_ok() {
            let _ = rx.recv();
        }
        self.core.ok(m, started, json!({"state": "idle"}))
    }

    /// The answer to an action that was still queued in a transport when
    /// `session.stop` came (PROTOCOL §10): refused at once, never run.
    pub fn refuse_stopping(&self, tool: &str) -> Envelope {
        self.core.err(
            tool,
            Instant::now(),
            ToolError::new(
                ErrorCode::SafetyStopped,
                "session.stop came before this call ran; it was not run",
            ),
        )
    }

    /// `session.configure`.
    pub fn configure(&self, params: &Value) -> Envelope {
        let m = "session.configure";
        let started = Instant::now();
        let patch = crate::config::patch_of(params, "patch");
        let mut g = self.core.lock();
        let Some(s) = g.session.as_mut().filter(|s| !s.stopping) else {
            drop(g);
            return self.core.err(m, started, not_started());
        };
        let mut next = (*s.config).clone();
        let applied = match next.configure(&patch) {
            Ok(a) => a,
            Err(e) => {
                drop(g);
                return self.core.err(m, started, invalid_config(e));
            }
        };
        s.config = Arc::new(next);
        let state = s.reported_state();
        self.core
            .bus
            .emit("session.configured", json!({"patch": applied}));
        drop(g);
        Envelope::success(
            json!({"state": state, "applied": applied}),
            self.core.meta_with(m, started, state),
        )
    }

    /// `session.confirm`: answers at once; an approved action runs on the worker.
    pub fn confirm(&self, params: &Value) -> Envelope {
        let m = "session.confirm";
        let started = Instant::now();
        let p = match self.check_params(
            m,
            started,
            params,
            vec![
                Field::req(
                    "request_id",
                    Ty::Str {
                        max_chars: Some(64),
                        non_empty: true,
                    },
                    "",
                ),
                Field::req("approve", Ty::Bool, ""),
            ],
        ) {
            Ok(p) => p,
            Err(e) => return *e,
        };
        let id = p["request_id"].as_str().unwrap_or_default().to_string();
        let approve = p["approve"].as_bool().unwrap_or(false);
        let mut g = self.core.lock();
        gate::expire_due(&mut g, &self.core.bus, self.core.clock.as_ref());
        let epoch = g.epoch;
        let expired = g.expired.contains_key(&id);
        let Some(s) = g.session.as_mut() else {
            drop(g);
            return self.core.err(m, started, not_started());
        };
        match s.pending.take_if(|p| p.request_id == id) {
            Some(pending) => {
                s.last_activity = self.core.clock.now();
                s.idle_reported = false;
                self.core.bus.emit(
                    "safety.confirmation_resolved",
                    json!({"request_id": id, "approve": approve, "tool": pending.call.name()}),
                );
                if approve {
                    // Queued while still holding the lock, so nothing can slip between
                    // the resolution and the approved action.
                    let _ = self.jobs.send(Job::Action {
                        tool_call: Box::new(pending.call.clone()),
                        approved: Some(Approval::Confirmed(id.clone())),
                        epoch,
                        reply: None,
                        must_confirm: None,
                        call: CallControl::default(),
                    });
                }
                let state = s.reported_state();
                drop(g);
                let status = if approve { "approved" } else { "denied" };
                Envelope::success(
                    json!({"request_id": id, "status": status}),
                    self.core.meta_with(m, started, state),
                )
            }
            None => {
                drop(g);
                if expired {
                    self.core.err(
                        m,
                        started,
                        ToolError::new(
                            ErrorCode::ConfirmationExpired,
                            format!("{id} timed out and was denied"),
                        ),
                    )
                } else {
                    self.core.err(
                        m,
                        started,
                        ToolError::new(
                            ErrorCode::ConfirmationNotFound,
                            format!("no pending confirmation {id}"),
                        ),
                    )
                }
            }
        }
    }

    /// `session.resume`: leaves `stopped` or `standby`.
    pub fn resume(&self) -> Envelope {
        let m = "session.resume";
        let started = Instant::now();
        let from = {
            let g = self.core.lock();
            match g.session.as_ref() {
                Some(s) if !s.stopping => Some(s.state),
                // Without a session, resume still releases what is latched.
                _ => g
                    .latches
                    .stop
                    .map(|_| SessionState::Stopped)
                    .or(g.latches.standby.then_some(SessionState::Standby)),
            }
        };
        let Some(from) = from else {
            return self.core.err(m, started, not_started());
        };
        match from {
            // While the panic file exists the stop stays on (and nothing resumes).
            SessionState::Stopped => {
                self.core.panic_off(PanicSource::Protocol);
            }
            SessionState::Standby => {
                self.core.resume_standby();
            }
            _ => {}
        }
        let state = self.state();
        Envelope::success(
            json!({"state": state}),
            self.core.meta_with(m, started, state),
        )
    }

    /// `control.panic {on}`.
    pub fn panic(&self, params: &Value) -> Envelope {
        let m = "control.panic";
        let started = Instant::now();
        let p = match self.check_params(m, started, params, vec![Field::req("on", Ty::Bool, "")]) {
            Ok(p) => p,
            Err(e) => return *e,
        };
        let on = p["on"].as_bool().unwrap_or(true);
        // The stop is the server's: it engages and releases with or without a session.
        // Releasing stays refused while the panic file exists (the result then says so).
        if on {
            self.core.panic_on(PanicSource::Protocol);
        } else {
            self.core.panic_off(PanicSource::Protocol);
        }
        let state = self.state();
        Envelope::success(
            json!({"panic": self.core.stopped(), "state": state}),
            self.core.meta_with(m, started, state),
        )
    }

    fn tools_call(&self, params: &Value) -> Envelope {
        // Nearly every call is `{tool, arguments}` and valid: read in place, the
        // arguments are not copied twice to be checked against `Ty::Any`. Anything
        // else goes through the spec, which words every problem.
        if let Some((tool, arguments)) = tools_call_in_place(params) {
            return self.tools_call_checked(tool, arguments);
        }
        let started = Instant::now();
        let p = match self.check_params("tools.call", started, params, tools_call_fields()) {
            Ok(p) => p,
            Err(e) => return *e,
        };
        self.tools_call_checked(p["tool"].as_str().unwrap_or_default(), &p["arguments"])
    }

    fn tools_call_checked(&self, tool: &str, arguments: &Value) -> Envelope {
        // A vendor's vocabulary is translated into our tools, then gated like them.
        if let Some(voc) = crate::vendor::find_vocabulary(tool) {
            // It may wait for a person, outside any action: a caller that runs its own
            // actions hands over what it leaves waiting first.
            if let Some(caller) = crate::inline::caller() {
                caller.hand_over();
            }
            return self.call_vocabulary(voc, arguments);
        }
        self.call_tool(tool, arguments)
    }

    /// `tools.call` for a caller holding a tool's name and JSON arguments (in-process
    /// code and tests): [`Engine::prepare`], then [`Engine::run`].
    pub fn call_tool(&self, tool: &str, arguments: &Value) -> Envelope {
        // A known tool called before `session.start` is `not_started` whatever its
        // arguments, as the plugin protocol's clients expect.
        if find(tool).is_some() && self.core.lock().session.is_none() {
            return self.core.err(tool, Instant::now(), not_started());
        }
        match self.prepare(tool, arguments) {
            Ok(call) => self.run(call),
            Err(e) => self.core.err(tool, Instant::now(), e),
        }
    }

    /// Makes the typed call a caller's tool name and JSON arguments stand for: the one
    /// step where a transport's input becomes a [`ToolCall`], taken at its edge. The
    /// tool is found by its name, and its arguments are validated against its spec
    /// (the session's config as the first source of defaults; the base config before a
    /// session starts) and typed, a batch's items and an action's `observe` with them.
    /// Nothing after this looks the tool up or reads the JSON again. Refused as
    /// `unknown_tool` or `invalid_arguments` (every problem found, at its path).
    pub fn prepare(&self, tool: &str, arguments: &Value) -> Result<ToolCall, ToolError> {
        let def = find(tool).ok_or_else(|| {
            ToolError::new(
                ErrorCode::UnknownTool,
                format!("no tool {tool:?}; tools.list lists them"),
            )
        })?;
        ToolCall::new(def, arguments, self.live_config().value())
    }

    /// Runs a prepared call through the gate on the worker and answers its envelope.
    pub fn run(&self, call: ToolCall) -> Envelope {
        self.submit(call, (None, None), CallControl::default())
    }

    /// Records how a pending confirmation was announced outside the operator channel
    /// (`via`, e.g. `mcp_elicitation`) and what came back, as the event
    /// `safety.confirmation_notice {request_id, via, outcome, answer}` for the trail.
    /// It changes nothing: the request stays pending until a person answers on the
    /// operator channel or it expires.
    pub fn confirmation_notice(&self, request_id: &str, via: &str, notice: crate::Notice) {
        let (outcome, answer) = match notice {
            crate::Notice::Acknowledged => ("acknowledged", "accept"),
            crate::Notice::DeclinedOrUnavailable(why) => ("declined_or_unavailable", why),
        };
        self.core.bus.emit(
            "safety.confirmation_notice",
            json!({"request_id": request_id, "via": via, "outcome": outcome, "answer": answer}),
        );
    }

    /// [`Engine::run`] with the caller's own [`CallControl`]: `control.cancel()` stops
    /// this call (and only it) as the emergency stop would, and the long tools report
    /// their [`crate::Progress`] to its sink. Gated exactly as [`Engine::run`].
    pub fn run_with(&self, call: ToolCall, control: CallControl) -> Envelope {
        self.submit(call, (None, None), control)
    }

    /// Runs a prepared call like [`Engine::run_with`] without blocking the caller:
    /// `answer` gets its envelope on the thread that answers (the worker, or a
    /// `session.stop` that refuses it while still queued), so an async transport parks
    /// no thread on it (`handed.rs`). `Err` is the envelope of a call refused before it
    /// was queued; `answer` is then never called. When `answer` is dropped uncalled,
    /// the worker lost the call: answer [`Handed::dropped`]; after [`Handed::wait`],
    /// [`Handed::timed_out`].
    pub fn run_then(
        &self,
        call: ToolCall,
        control: CallControl,
        answer: impl FnOnce(Envelope) + Send + 'static,
    ) -> Result<Handed, Box<Envelope>> {
        let to = AnswerTo::Hand(Arc::new(Mutex::new(Some(Box::new(answer)))));
        self.enqueue(call, (None, None), control, to)
    }

    /// Runs a call that a human already approved on the operator channel: the governed
    /// kernel runs it after it consumed the operator's `exact_action` grant
    /// `grant_id`, so the gate does not park the action for a second confirmation.
    /// Everything else still applies: deny rules, allowlist mode, the emergency stop
    /// (it pre-empts the action in flight), idle standby, a stopping session, and
    /// `busy` while a confirmation for another action is pending.
    ///
    /// No transport maps a method onto this: only in-process code holding a consumed
    /// grant calls it (`call_method` and `tools.call` never carry an approval).
    pub fn run_approved(&self, call: ToolCall, grant_id: &str) -> Envelope {
        self.submit(
            call,
            (Some(Approval::Granted(grant_id.to_string())), None),
            CallControl::default(),
        )
    }

    /// Runs a prepared call through the gate on the worker, answering its envelope.
    /// `must_confirm` makes a person answer it whatever the rules and risk say (a
    /// vendor's safety check, `vendor/`); nothing else sets it.
    pub(crate) fn submit(
        &self,
        tool_call: ToolCall,
        approved: (Option<Approval>, Option<String>),
        call: CallControl,
    ) -> Envelope {
        let (tx, rx) = sync_channel(1);
        let handed = match self.enqueue(tool_call, approved, call, AnswerTo::Thread(tx)) {
            Ok(handed) => handed,
            Err(refused) => return *refused,
        };
        thread_local! {
            // Per caller thread: a short job last time, likely a short one now.
            static LOOKOUT: Lookout = Lookout::default();
        }
        let answer = if crate::lookout::looking() {
            LOOKOUT.with(|l| l.recv_timeout(&rx, handed.wait))
        } else {
            rx.recv_timeout(handed.wait)
        };
        match answer {
            Ok(env) => env,
            Err(RecvTimeoutError::Disconnected) => handed.dropped(),
            Err(RecvTimeoutError::Timeout) => handed.timed_out(),
        }
    }

    /// Queues a prepared call for the worker, whose answer goes `to` its caller; the
    /// envelope of a call refused before it is queued (no session, a stopping one, the
    /// worker gone) comes back at once instead.
    pub(crate) fn enqueue(
        &self,
        tool_call: ToolCall,
        (approved, must_confirm): (Option<Approval>, Option<String>),
        call: CallControl,
        to: AnswerTo,
    ) -> Result<Handed, Box<Envelope>> {
        let started = Instant::now();
        let tool = tool_call.name();
        let (config, epoch) = {
            let g = self.core.lock();
            match g.session.as_ref() {
                Some(s) if !s.stopping => (s.config.clone(), g.epoch),
                Some(_) => {
                    drop(g);
                    return Err(Box::new(self.core.err(
                        tool,
                        started,
                        ToolError::new(ErrorCode::SafetyStopped, "the session is stopping"),
                    )));
                }
                None => {
                    drop(g);
                    return Err(Box::new(self.core.err(tool, started, not_started())));
                }
            }
        };
        // Only a caller blocked on its answer may run the action itself.
        let waits = matches!(to, AnswerTo::Thread(_));
        let reply = Reply::new(to);
        {
            let mut g = self.core.lock();
            if g.epoch != epoch {
                drop(g);
                return Err(Box::new(self.refuse_stopping(tool)));
            }
            g.queued.push(Queued {
                tool,
                reply: reply.clone(),
            });
        }
        let job = Job::Action {
            tool_call: Box::new(tool_call),
            approved,
            epoch,
            reply: Some(reply),
            must_confirm,
            call,
        };
        let wait =
            Duration::from_millis(config.config().runtime.max_wait_ms) + Duration::from_secs(60);
        let handed = Handed::new(self.core.clone(), tool, started, wait);
        // A caller that runs its own action when the worker is idle (`inline.rs`); one
        // that waits for the worker instead hands over what it leaves waiting.
        let job = match crate::inline::caller().filter(|_| waits) {
            Some(caller) => match self.jobs.run_inline(job, caller.clone(), handed.clone()) {
                None => return Ok(handed),
                Some(job) => {
                    caller.hand_over();
                    job
                }
            },
            None => job,
        };
        if self.jobs.send(job).is_err() {
            return Err(Box::new(self.core.err(
                tool,
                started,
                ToolError::new(ErrorCode::BackendUnavailable, "the driver thread is gone"),
            )));
        }
        Ok(handed)
    }

    /// Judges a prepared call as the gate would judge it now ([`crate::assess`]):
    /// risk, rule verdict and outcome, landing, secret text and the operator's
    /// description, per item for a batch, under the session's live config (the base
    /// config before a session starts). `declared` adds what the caller knows of the
    /// target (it can only raise the assessment). Nothing is gated, parked or performed,
    /// and the latest snapshot is not replaced. The desktop's facts come from the worker,
    /// after the jobs queued before, and only when the judgement depends on them (text
    /// entry, rules on points or windows; otherwise the landing stays empty); when it
    /// does not answer within 2 s (a long action runs), the action is judged without
    /// them (no landing, password state unknown).
    pub fn assess(
        &self,
        tool_call: &ToolCall,
        declared: Declared,
    ) -> Result<Assessment, ToolError> {
        let config = self.live_config();
        let calls = tool_call.calls().to_vec();
        let policy = config.policy();
        // The desktop is asked only what the judgement depends on: a field's password
        // state for text entry, points and windows for rules that match on them.
        let ask = policy.needs_window()
            || policy.needs_points()
            || calls.iter().any(|c| c.def().writes_text());
        let (tx, rx) = sync_channel(1);
        let job = Job::Facts {
            calls,
            needs_window: policy.needs_window(),
            width: config.config().capture.default_width,
            reply: tx,
        };
        let sent = ask && self.jobs.send(job).is_ok();
        let mut facts = if sent {
            rx.recv_timeout(Duration::from_secs(2)).unwrap_or_default()
        } else {
            Vec::new()
        }
        .into_iter();
        assess::assess(tool_call, config, declared, |_| {
            facts.next().unwrap_or_default()
        })
    }

    /// The session's config as it is now, or the base config outside a session.
    fn live_config(&self) -> Arc<ConfigStack> {
        self.core
            .lock()
            .session
            .as_ref()
            .map(|s| s.config.clone())
            .unwrap_or_else(|| self.base.clone())
    }

    /// `tools.list`: works without a session.
    pub fn list_tools(&self) -> Envelope {
        let started = Instant::now();
        let caps = self.core.caps;
        let list: Vec<Value> = tools()
            .iter()
            .map(|t| {
                let mut v = tool_json(t);
                let available = match t.needs {
                    Needs::Nothing => true,
                    Needs::Capture => caps.capture,
                    Needs::Input => caps.input,
                    Needs::Accessibility => caps.accessibility,
                    Needs::Windows => caps.windows,
                    Needs::Clipboard => caps.clipboard,
                    Needs::Launch => caps.launch,
                };
                v["available"] = json!(available);
                if !available {
                    v["reason"] = json!(t.needs.missing());
                }
                v
            })
            .collect();
        let vocabularies: Vec<Value> = crate::vendor::vocabularies()
            .iter()
            .map(|v| {
                let mut j = crate::vendor::vocabulary_json(v);
                j["available"] = json!(caps.capture && caps.input);
                j
            })
            .collect();
        let state = self.state();
        Envelope::success(
            json!({"tools": list, "vocabularies": vocabularies, "state": state}),
            self.core.meta_with("tools.list", started, state),
        )
    }

    /// `system.status`: works without a session.
    pub fn status(&self) -> Envelope {
        let started = Instant::now();
        let mut g = self.core.lock();
        gate::expire_due(&mut g, &self.core.bus, self.core.clock.as_ref());
        let now = self.core.clock.now();
        let state = g.state();
        let s = g.session.as_ref();
        let pending = s.and_then(|s| s.pending.as_ref()).map(|p| {
            json!({
                "request_id": p.request_id,
                "tool": p.call.name(),
                "arguments": p.shown_arguments,
                "description": p.description,
                "risk": p.risk,
                "reason": p.reason,
                "landing": p.landing,
                "expires_at": p.expires_at,
                "expires_in_s": p.deadline.saturating_duration_since(now).as_secs_f64(),
            })
        });
        let result = json!({
            "state": state,
            "platform": self.core.platform,
            "capabilities": self.capabilities_json(),
            "surface": g.surface,
            "started_at": s.map(|s| s.started_at.clone()),
            "action_count": s.map(|s| s.action_count).unwrap_or(0),
            "frame": self.core.frame.load(Ordering::Relaxed),
            "pending_confirmation": pending,
            "held": held_json(&g.held),
        });
        drop(g);
        Envelope::success(result, self.core.meta_with("system.status", started, state))
    }
}

/// Keys chosen when the server starts (driver, HTTP tokens, governed identity and
/// journal, capture path): a session may restate them but not change them.
/// `platform.name` may also be `auto` or the running platform's own name.
fn fixed_at_start(stack: &ConfigStack, base: &ConfigStack, running: &str) -> Option<ToolError> {
    let (c, b) = (stack.config(), base.config());
    let mut issues = Vec::new();
    if !(c.platform.name == "auto"
        || c.platform.name == running
        || c.platform.name == b.platform.name)
    {
        issues.push("platform.name");
    }
    if c.platform.virtual_displays != b.platform.virtual_displays {
        issues.push("platform.virtual_displays");
    }
    if c.http != b.http {
        issues.push("http");
    }
    if c.governance != b.governance {
        issues.push("governance");
    }
    if c.capture.backend != b.capture.backend {
        issues.push("capture.backend");
    }
    if issues.is_empty() {
        return None;
    }
    let data: Vec<Value> = issues
        .iter()
        .map(|p| json!({"path": p, "message": "fixed when the server starts (config file or --platform)"}))
        .collect();
    Some(ToolError::with_data(
        ErrorCode::InvalidConfig,
        format!(
            "{} fixed when the server starts (config file or --platform)",
            issues.join(", ")
        ),
        json!({"issues": data}),
    ))
}

fn not_started() -> ToolError {
    ToolError::new(
        ErrorCode::NotStarted,
        "no session; call session.start first",
    )
}

/// What the driver holds down: `{keys:[…], buttons:[…]}` (empty after every action
/// and after a panic).
fn held_json(h: &cc_desktop::HeldInputs) -> Value {
    let buttons: Vec<&str> = h
        .buttons
        .iter()
        .map(|b| match b {
            cc_desktop::Button::Left => "left",
            cc_desktop::Button::Middle => "middle",
            cc_desktop::Button::Right => "right",
        })
        .collect();
    json!({"keys": h.keys, "buttons": buttons})
}

fn caps_json(c: &Capabilities) -> Value {
    json!({
        "capture": c.capture,
        "input": c.input,
        "accessibility": c.accessibility,
        "windows": c.windows,
        "hotkey": c.hotkey,
        "clipboard": c.clipboard,
        "launch": c.launch,
    })
}

/// A tool as `tools.list` and the manifest describe it.
pub fn tool_json(t: &crate::tools::ToolDef) -> Value {
    json!({
        "name": t.name,
        "summary": t.summary,
        "risk": t.risk,
        "parameters": t.schema(),
        "examples": t.examples,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the spec makes of `tools.call`'s params: the tool and its arguments.
    fn by_spec(params: &Value) -> Option<(String, Value)> {
        let p = validate(
            &Ty::Object(tools_call_fields()),
            params,
            ValidateMode::Fill(&Value::Null),
        )
        .ok()?;
        Some((p["tool"].as_str()?.to_string(), p["arguments"].clone()))
    }

    #[test]
    fn params_read_in_place_are_what_the_spec_makes_of_them() {
        let long = "x".repeat(128);
        let longer = "é".repeat(129);
        let cases = [
            json!({"tool": "wait.pause", "arguments": {"ms": 0}}),
            json!({"tool": "wait.pause", "arguments": []}),
            json!({"tool": "wait.pause", "arguments": 3}),
            json!({"tool": "wait.pause", "arguments": null}),
            json!({"tool": "wait.pause"}),
            json!({"tool": long, "arguments": {}}),
            json!({"tool": "é".repeat(128), "arguments": {}}),
            json!({"tool": longer, "arguments": {}}),
            json!({"tool": "", "arguments": {}}),
            json!({"tool": 7, "arguments": {}}),
            json!({"tool": "wait.pause", "arguments": {}, "extra": 1}),
            json!({"tool": "wait.pause", "other": {}}),
            json!({"arguments": {}}),
            json!(["wait.pause"]),
            Value::Null,
        ];
        let mut in_place = 0;
        for params in &cases {
            // Any other shape is left to the spec, which may fill a default in or refuse.
            if let Some((tool, arguments)) = tools_call_in_place(params) {
                in_place += 1;
                assert_eq!(
                    by_spec(params),
                    Some((tool.to_string(), arguments.clone())),
                    "{params}"
                );
            }
        }
        assert_eq!(in_place, 5, "the common shapes are read in place");
    }
}
