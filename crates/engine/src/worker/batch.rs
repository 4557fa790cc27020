//! `batch.execute` (PROTOCOL §5.3.5): the whole batch is gated once (any deny refuses
//! it, any item needing a human parks it under one confirmation), then every item is
//! re-gated just before it runs, so a panic, a stop, standby or a new deny rule stops
//! it mid-way.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use cc_protocol::{Envelope, ErrorCode, Risk, ToolError};
use serde_json::{Value, json};

use super::Worker;
use super::action::{finished, is_observation, redact, redact_all_text, started_payload};
use crate::approval::Approval;
use crate::gate::{Decision, Request};
use crate::risk;
use crate::rules::{Policy, Verdict};

const TOOL: &str = "batch.execute";

/// Tools after which the focus may be elsewhere (a password field, say).
fn may_move_focus(tool: &str) -> bool {
    matches!(
        tool,
        "pointer.click"
            | "pointer.drag"
            | "keyboard.press"
            | "keyboard.combo"
            | "keyboard.type"
            | "a11y.activate"
            | "a11y.input"
            | "window.focus"
    )
}

fn items_of(args: &Value) -> Vec<(String, Value)> {
    args.get("items")
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
        .unwrap_or_default()
}

impl Worker {
    pub(super) fn batch(
        &mut self,
        args: &Value,
        approved: Option<&Approval>,
        epoch: u64,
        policy: &Arc<Policy>,
        started: Instant,
    ) -> Envelope {
        let items = items_of(args);
        let continue_on_error = args
            .get("continue_on_error")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let gap = args.get("gap_ms").and_then(Value::as_u64).unwrap_or(0);
        let mut max_risk = Risk::Benign;
        let mut merged = Verdict::default();
        let mut denied_item = None;
        let mut shown_items = Vec::with_capacity(items.len());
        let mut all_observe = true;
        let mut all_allowed = true;
        let mut focus_may_move = false;
        for (i, (t, a)) in items.iter().enumerate() {
            let (ctx, landing) = self.context(t, a, policy);
            let r = risk::action_risk(t, a, &ctx);
            max_risk = max_risk.max(r);
            all_observe &= is_observation(t, r);
            let v = policy.evaluate(t, a, &landing);
            if merged.deny.is_none() && v.deny.is_some() {
                merged.deny = v.deny;
                denied_item = Some(i);
            }
            merged.confirm = merged.confirm.or(v.confirm);
            merged.allow = merged.allow.or(v.allow);
            all_allowed &= v.allow.is_some() || v.confirm.is_some();
            let mut shown = redact(t, a, &ctx);
            if focus_may_move {
                redact_all_text(t, &mut shown);
            }
            focus_may_move |= may_move_focus(t);
            shown_items.push(json!({"tool": t, "arguments": shown}));
        }
        if !all_allowed {
            // Allowlist mode holds per item: one unlisted item refuses the whole batch.
            merged.allow = None;
            merged.confirm = None;
        }
        let mut shown = args.clone();
        shown["items"] = Value::Array(shown_items);
        let req = Request {
            tool: TOOL,
            arguments: args,
            shown_arguments: &shown,
            risk: max_risk,
            verdict: &merged,
            approved,
            batch_item: false,
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
                return self.rejected(TOOL, started, e, approved);
            }
            Decision::Confirm {
                request_id,
                risk,
                reason,
            } => {
                return self.core.ok(
                    TOOL,
                    started,
                    json!({"status": "awaiting_confirmation", "request_id": request_id, "risk": risk, "reason": reason}),
                );
            }
            Decision::Run => {}
        }
        if approved.is_some() {
            // An approved batch reports itself as one action (with its request or
            // grant id); after `session.confirm` nobody receives its response, so
            // `action.finished` then carries the whole batch envelope.
            self.core
                .bus
                .emit("action.started", started_payload(TOOL, &shown, approved));
        }
        let (status, envelopes) = self.run_items(&items, approved, epoch, gap, continue_on_error);
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
        let env = self.core.ok(
            TOOL,
            started,
            json!({"status": status, "items": items_json}),
        );
        if approved.is_some() {
            self.core
                .bus
                .emit("action.finished", finished(TOOL, &env, approved));
        }
        env
    }

    /// Runs the items in order, each re-gated just before it runs.
    fn run_items(
        &mut self,
        items: &[(String, Value)],
        approved: Option<&Approval>,
        epoch: u64,
        gap: u64,
        continue_on_error: bool,
    ) -> (&'static str, Vec<Envelope>) {
        let mut envelopes: Vec<Envelope> = Vec::with_capacity(items.len());
        for (i, (t, a)) in items.iter().enumerate() {
            if i > 0 && gap > 0 {
                let stop = &self.core.stop;
                let deadline = Instant::now() + Duration::from_millis(gap);
                while Instant::now() < deadline && !stop.load(Ordering::SeqCst) {
                    std::thread::sleep((deadline - Instant::now()).min(Duration::from_millis(5)));
                }
            }
            let item_started = Instant::now();
            // The rules as they are now: a rule added since the batch was gated applies.
            let policy = self.core.lock().session.as_ref().map(|s| s.policy.clone());
            let env = match policy {
                None => self.core.err(
                    t,
                    item_started,
                    ToolError::new(ErrorCode::SafetyStopped, "the session ended"),
                ),
                Some(policy) => {
                    let (ctx, landing) = self.context(t, a, &policy);
                    let r = risk::action_risk(t, a, &ctx);
                    let v = policy.evaluate(t, a, &landing);
                    let item_shown = redact(t, a, &ctx);
                    let item_req = Request {
                        tool: t,
                        arguments: a,
                        shown_arguments: &item_shown,
                        risk: r,
                        verdict: &v,
                        approved,
                        batch_item: true,
                        epoch,
                        observation: is_observation(t, r),
                    };
                    match self.decide(&item_req) {
                        // Item events carry no request id: the approved action is the
                        // batch, reported as a whole.
                        Decision::Run => self.perform(t, a, &item_shown, None, item_started),
                        Decision::Reject(e) => self.core.err(t, item_started, e),
                        // Unreachable for batch items (the gate refuses instead).
                        Decision::Confirm { .. } => self.core.err(
                            t,
                            item_started,
                            ToolError::new(
                                ErrorCode::PolicyDenied,
                                "item needs a confirmation the batch did not get",
                            ),
                        ),
                    }
                }
            };
            let failed = !env.ok;
            let interrupted = matches!(env.error_code(), Some(ErrorCode::SafetyStopped));
            envelopes.push(env);
            if failed && (!continue_on_error || interrupted) {
                return ("aborted", envelopes);
            }
        }
        ("completed", envelopes)
    }
}
