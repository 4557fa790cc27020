//! One action on the worker: context, gate, run, and its events.

use std::sync::atomic::Ordering;
use std::time::Instant;

use cc_protocol::{Envelope, ErrorCode, Risk, ToolError};
use serde_json::{Value, json};

use super::Worker;
use crate::approval::Approval;
use crate::gate::{self, Decision, Request};
use crate::risk::{self, Context};
use crate::tools::exec::{self, Exec};

impl Worker {
    pub(super) fn action(
        &mut self,
        tool: &str,
        args: &Value,
        approved: Option<&Approval>,
        epoch: u64,
    ) -> Envelope {
        let started = Instant::now();
        self.refresh(&[]);
        let policy = self.core.lock().session.as_ref().map(|s| s.policy.clone());
        let Some(policy) = policy else {
            return self.core.err(
                tool,
                started,
                ToolError::new(
                    ErrorCode::NotStarted,
                    "no session; call session.start first",
                ),
            );
        };
        if tool == "batch.execute" {
            return self.batch(args, approved, epoch, &policy, started);
        }
        let (ctx, landing) = self.context(tool, args, &policy);
        let risk = risk::action_risk(tool, args, &ctx);
        let verdict = policy.evaluate(tool, args, &landing);
        let shown = redact(tool, args, &ctx);
        let req = Request {
            tool,
            arguments: args,
            shown_arguments: &shown,
            risk,
            verdict: &verdict,
            approved,
            batch_item: false,
            epoch,
            observation: is_observation(tool, risk),
        };
        match self.decide(&req) {
            Decision::Reject(e) => self.rejected(tool, started, e, approved),
            Decision::Confirm {
                request_id,
                risk,
                reason,
            } => self.core.ok(
                tool,
                started,
                json!({"status": "awaiting_confirmation", "request_id": request_id, "risk": risk, "reason": reason}),
            ),
            Decision::Run => self.perform(tool, args, &shown, approved, started),
        }
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
            tool = req.tool,
            arguments = %req.shown_arguments,
            risk = req.risk.as_str(),
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
        tool: &str,
        started: Instant,
        e: ToolError,
        approved: Option<&Approval>,
    ) -> Envelope {
        let env = self.core.err(tool, started, e);
        if approved.is_some_and(Approval::is_confirmation) {
            self.core
                .bus
                .emit("action.finished", finished(tool, &env, approved));
        }
        env
    }

    /// Runs an action that passed the gate, with its events.
    pub(super) fn perform(
        &mut self,
        tool: &str,
        args: &Value,
        shown: &Value,
        approved: Option<&Approval>,
        started: Instant,
    ) -> Envelope {
        self.core
            .bus
            .emit("action.started", started_payload(tool, shown, approved));
        tracing::debug!(tool, arguments = %shown, "action started");
        let config = self.core.lock().session.as_ref().map(|s| s.config.clone());
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
                    frames: &mut self.frames,
                    snapshots: &mut self.snapshots,
                };
                exec::run(tool, args, &mut ex)
            }
        };
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
            .emit("action.finished", finished(tool, &env, approved));
        env
    }
}

/// A benign observation: may run while a confirmation is pending, if configured.
pub(super) fn is_observation(tool: &str, risk: Risk) -> bool {
    risk == Risk::Benign && tool != "wait.pause"
}

/// `action.started {tool, arguments, request_id? | grant_id?}`.
pub(super) fn started_payload(tool: &str, shown: &Value, approved: Option<&Approval>) -> Value {
    let mut payload = json!({"tool": tool, "arguments": shown});
    if let Some(a) = approved {
        let (key, id) = a.event_field();
        payload[key] = json!(id);
    }
    payload
}

/// `action.finished {tool, ok, duration_ms, error_code, request_id? | grant_id?,
/// envelope?}`: an action approved by `session.confirm` carries its whole envelope
/// (nobody else receives it).
pub(super) fn finished(tool: &str, env: &Envelope, approved: Option<&Approval>) -> Value {
    let mut fin = json!({
        "tool": tool,
        "ok": env.ok,
        "duration_ms": env.meta.duration_ms,
        "error_code": env.error_code(),
    });
    if let Some(a) = approved {
        let (key, id) = a.event_field();
        fin[key] = json!(id);
        if a.is_confirmation() {
            fin["envelope"] = summarize(env);
        }
    }
    fin
}

/// An approved action's envelope for `action.finished`, whole: nobody else receives
/// it, so an approved capture's image travels here (its secrets were already redacted
/// by the capture itself when `capture.redact_sensitive` is on).
fn summarize(env: &Envelope) -> Value {
    serde_json::to_value(env).unwrap_or(Value::Null)
}

/// What replaces secret text in events and logs.
pub const REDACTED: &str = "[redacted]";

/// Arguments as shown in events and logs. Text typed into a password field is
/// redacted whole; text typed elsewhere is shown up to its first tab or newline, which
/// may move the focus into a password field, and redacted after it.
pub fn redact(tool: &str, args: &Value, ctx: &Context) -> Value {
    let secret = (tool == "keyboard.type" && ctx.focused_password)
        || (tool == "a11y.input" && ctx.target_password);
    let mut shown = args.clone();
    if let Some(Value::String(t)) = shown.get_mut("text") {
        if secret {
            *t = REDACTED.into();
        } else if tool == "keyboard.type"
            && let Some(i) = t.find(['\t', '\n'])
        {
            let keep = t[..=i].to_string();
            *t = format!("{keep}{REDACTED}");
        }
    }
    shown
}

/// Redacts the whole text of a typing action (in a batch, after an item that may move
/// the focus, where the field it will type into is not known yet).
pub(super) fn redact_all_text(tool: &str, shown: &mut Value) {
    if matches!(tool, "keyboard.type" | "a11y.input")
        && let Some(t) = shown.get_mut("text")
    {
        *t = json!(REDACTED);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction() {
        let pw = Context {
            focused_password: true,
            ..Default::default()
        };
        let plain = Context::default();
        let a = json!({"text": "hunter2", "submit": false});
        assert_eq!(redact("keyboard.type", &a, &pw)["text"], REDACTED);
        assert_eq!(redact("keyboard.type", &a, &plain)["text"], "hunter2");
        let tabbed = json!({"text": "alice\thunter2"});
        assert_eq!(
            redact("keyboard.type", &tabbed, &plain)["text"],
            "alice\t[redacted]"
        );
        let input = json!({"snapshot_id": "s", "node_id": 3, "text": "hunter2"});
        let target = Context {
            target_password: true,
            ..Default::default()
        };
        assert_eq!(redact("a11y.input", &input, &target)["text"], REDACTED);
        assert_eq!(redact("a11y.input", &input, &plain)["text"], "hunter2");
        let mut shown = input.clone();
        redact_all_text("a11y.input", &mut shown);
        assert_eq!(shown["text"], REDACTED);
    }
}
