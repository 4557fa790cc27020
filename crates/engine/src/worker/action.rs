//! One action on the worker: context, gate, run, and its events.

use std::sync::atomic::Ordering;
use std::time::Instant;

use std::sync::Arc;

use cc_protocol::{Envelope, ErrorCode, ToolError};
use serde_json::{Value, json};

use super::Worker;
use crate::approval::Approval;
use crate::assess::{Assessment, Declared, Outcome, assess, redact_result};
use crate::config::ConfigStack;
use crate::gate::{self, Decision, Request};
use crate::tools::exec::Exec;
use crate::tools::{ElementTarget, ToolCall};

impl Worker {
    pub(super) fn action(
        &mut self,
        call: &ToolCall,
        approved: Option<&Approval>,
        epoch: u64,
        must_confirm: Option<&str>,
    ) -> Envelope {
        let started = Instant::now();
        let tool = call.name();
        self.refresh(&[]);
        // A stop released since the last tick takes its banner with it before anything
        // runs (a capture must not show a stop that is over).
        self.indicate(false);
        let config = self.core.lock().session.as_ref().map(|s| s.config.clone());
        let Some(config) = config else {
            return self.core.err(
                tool,
                started,
                ToolError::new(
                    ErrorCode::NotStarted,
                    "no session; call session.start first",
                ),
            );
        };
        let mut assessed = match self.judge(call, config) {
            Ok(a) => a,
            Err(e) => return self.rejected(call, started, e, approved),
        };
        if let Some(why) = must_confirm {
            assessed.require_person(why);
        }
        // A person may be asked about it: show them where it lands.
        if approved.is_none() && matches!(assessed.outcome, Outcome::Confirm { .. }) {
            self.place(&mut assessed);
        }
        if let Some(batch) = call.batch() {
            return self.batch(call, batch, &assessed, approved, epoch, started);
        }
        let req = Request {
            call,
            assessment: &assessed,
            approved,
            batch_item: false,
            epoch,
        };
        match self.decide(&req) {
            Decision::Reject(e) => self.rejected(call, started, e, approved),
            Decision::Confirm {
                request_id,
                risk,
                reason,
            } => self.core.ok(
                tool,
                started,
                json!({"status": "awaiting_confirmation", "request_id": request_id, "risk": risk, "reason": reason}),
            ),
            Decision::Run => {
                let unplaced = assessed
                    .items
                    .iter()
                    .flat_map(|i| i.unplaced.iter().cloned())
                    .collect();
                self.perform(
                    call,
                    &assessed,
                    (approved, unplaced),
                    started,
                    epoch,
                )
            }
        }
    }

    /// Judges an action (a batch with its items) as the desktop is now, under `config`
    /// (the session's, as it is now).
    pub(super) fn judge(
        &mut self,
        call: &ToolCall,
        config: Arc<ConfigStack>,
    ) -> Result<Assessment, ToolError> {
        let rules = config.clone();
        assess(call, config, Declared::default(), |c| {
            let needs_window = rules.policy().needs_window_for(c.def().name);
            self.facts(c, needs_window)
        })
    }

    /// The gate, under the engine's lock, after a synchronous look at the panic file.
    pub(super) fn decide(&self, req: &Request<'_>) -> Decision {
        self.core.sync_panic_file();
        let mut g = self.core.lock();
        gate::expire_due(&mut g, &self.core.bus, self.core.clock.as_ref());
        let stop = self.core.stop.load(Ordering::SeqCst);
        let d = gate::decide(&mut g, &self.core.bus, self.core.clock.as_ref(), stop, req);
        drop(g);
        tracing::debug!(
            tool = req.call.name(),
            arguments = %crate::bounded::bounded(&req.assessment.shown),
            risk = req.assessment.risk.as_str(),
            batch_item = req.batch_item,
            approved = ?req.approved,
            decision = ?d,
            "gate"
        );
        d
    }

    /// A refusal. When it refuses an action approved by `session.confirm` (a panic or
    /// a new rule came between the approval and the run), nobody waits for the
    /// response, so the outcome is reported as `action.finished` with the envelope. (An
    /// operator-granted action's caller gets the refusal itself.)
    pub(super) fn rejected(
        &self,
        call: &ToolCall,
        started: Instant,
        e: ToolError,
        approved: Option<&Approval>,
    ) -> Envelope {
        let env = self.core.err(call.name(), started, e);
        if approved.is_some_and(Approval::is_confirmation) {
            self.core
                .bus
                .emit("action.finished", finished(call, &env, approved));
        }
        env
    }

    /// Runs an action that passed the gate, with its events (as `assessed` shows it).
    /// `unplaced`: an element it names was not found when it was judged.
    pub(super) fn perform(
        &mut self,
        call: &ToolCall,
        assessed: &Assessment,
        (approved, unplaced): (Option<&Approval>, Vec<ElementTarget>),
        started: Instant,
        epoch: u64,
    ) -> Envelope {
        let def = call.def();
        let tool = def.name;
        self.core
            .bus
            .emit("action.started", started_payload(assessed, approved));
        tracing::debug!(tool, arguments = %crate::bounded::bounded(&assessed.shown), "action started");
        let config = self.core.lock().session.as_ref().map(|s| s.config.clone());
        if def.mutates() && config.is_some() && self.canvas.is_some() {
            self.indicate(true);
        }
        let result = match (config, self.canvas.as_ref()) {
            (None, _) => Err(ToolError::new(ErrorCode::NotStarted, "no session")),
            (Some(_), None) => Err(ToolError::new(
                ErrorCode::BackendUnavailable,
                "no screen layout could be read",
            )),
            (Some(config), Some(canvas)) => {
                let mut ex = Exec {
                    driver: self.driver.as_mut(),
                    canvas,
                    config: config.config(),
                    stop: &self.core.stop,
                    call: &self.call,
                    frames: &mut self.frames,
                    snapshots: &mut self.snapshots,
                    unplaced,
                };
                call.run(&mut ex)
            }
        };
        // The acting banner goes before anything is observed after the action.
        self.indicate(false);
        // What the caller asked to see after the action, answered with it.
        let result = result.map(|mut v| {
            if let (Some(seen), Some(m)) = (self.observe(call, epoch), v.as_object_mut()) {
                m.insert("observation".into(), seen);
            }
            v
        });
        self.publish_held();
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
        tracing::debug!(
            tool,
            ok = env.ok,
            error_code = ?env.error_code(),
            duration_ms = env.meta.duration_ms,
            "action finished"
        );
        self.core
            .bus
            .emit("action.finished", finished(call, &env, approved));
        env
    }
}

/// `action.started {tool, arguments, description, request_id? | grant_id?}`, the
/// arguments and the description in their bounded form.
pub(super) fn started_payload(assessed: &Assessment, approved: Option<&Approval>) -> Value {
    let mut payload = json!({
        "tool": assessed.tool.name,
        "arguments": crate::bounded::bounded(&assessed.shown),
        "description": crate::bounded::into_bounded(json!(assessed.description())),
    });
    if let Some(a) = approved {
        let (key, id) = a.event_field();
        payload[key] = json!(id);
    }
    payload
}

/// `action.finished {tool, ok, duration_ms, error_code, request_id? | grant_id?,
/// envelope?}`: an action approved by `session.confirm` carries its whole envelope
/// (nobody else receives it).
pub(super) fn finished(call: &ToolCall, env: &Envelope, approved: Option<&Approval>) -> Value {
    let def = call.def();
    let mut fin = json!({
        "tool": def.name,
        "ok": env.ok,
        "duration_ms": env.meta.duration_ms,
        "error_code": env.error_code(),
    });
    // What a revealing tool read, as the operator may see it: redacted, its length.
    if let Some(result) = &env.result
        && def.reveals()
    {
        fin["result"] = redact_result(def, result);
    }
    if let Some(a) = approved {
        let (key, id) = a.event_field();
        fin[key] = json!(id);
        if a.is_confirmation() {
            fin["envelope"] = summarize(call, env);
        }
    }
    fin
}

/// An approved action's envelope for `action.finished`, whole: nobody else receives
/// it, so an approved capture's image travels here (its secrets were already redacted
/// by the capture itself when `capture.redact_sensitive` is on). What a revealing tool
/// read is not: events go to every subscriber, so it is redacted here too, in a
/// batch's items as well (each item's envelope answers the batch's call at its index).
fn summarize(call: &ToolCall, env: &Envelope) -> Value {
    let mut v = serde_json::to_value(env).unwrap_or(Value::Null);
    let def = call.def();
    if let Some(r) = v.get_mut("result") {
        if def.reveals() {
            *r = redact_result(def, r);
        } else if def.is_batch()
            && let Some(items) = r.get_mut("items").and_then(Value::as_array_mut)
        {
            for (item, c) in items.iter_mut().zip(call.calls()) {
                if c.def().reveals()
                    && let Some(ir) = item.get_mut("result")
                {
                    *ir = redact_result(c.def(), ir);
                }
            }
        }
    }
    v
}
