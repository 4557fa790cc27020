//! `batch.execute` (PROTOCOL §5.3.5): the whole batch is gated once (any deny refuses
//! it, any item needing a human parks it under one confirmation), then every item is
//! re-gated just before it runs, so a panic, a stop, standby or a new deny rule stops
//! it mid-way.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use cc_protocol::{Envelope, ErrorCode, ToolError};
use serde_json::{Value, json};

use super::Worker;
use super::action::{finished, started_payload};
use crate::approval::Approval;
use crate::assess::Assessment;
use crate::call::{CallControl, Progress};
use crate::gate::{Decision, Request};
use crate::tools::ToolCall;
use crate::tools::call::Batch;

impl Worker {
    pub(super) fn batch(
        &mut self,
        call: &ToolCall,
        batch: &Batch,
        assessed: &Assessment,
        approved: Option<&Approval>,
        epoch: u64,
        started: Instant,
    ) -> Envelope {
        let tool = assessed.tool.name;
        let req = Request {
            call,
            assessment: assessed,
            approved,
            batch_item: false,
            epoch,
        };
        match self.decide(&req) {
            Decision::Reject(mut e) => {
                if let (ErrorCode::PolicyDenied, Some(i), Some(Value::Object(d))) =
                    (e.code, assessed.denied_item, e.data.as_mut())
                {
                    d.insert("item".into(), json!(i));
                    e.message = format!("item {i}: {}; nothing ran", e.message);
                }
                return self.rejected(call, started, e, approved);
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
        if approved.is_some() {
            // An approved batch reports itself as one action (with its request or
            // grant id); after `session.confirm` nobody receives its response, so
            // `action.finished` then carries the whole batch envelope.
            self.core
                .bus
                .emit("action.started", started_payload(assessed, approved));
        }
        let (status, envelopes) = self.run_items(
            &batch.items,
            approved,
            epoch,
            batch.gap_ms,
            batch.continue_on_error,
        );
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
            tool,
            started,
            json!({"status": status, "items": items_json}),
        );
        if approved.is_some() {
            self.core
                .bus
                .emit("action.finished", finished(call, &env, approved));
        }
        env
    }

    /// Runs the items in order, each re-gated just before it runs.
    fn run_items(
        &mut self,
        items: &[ToolCall],
        approved: Option<&Approval>,
        epoch: u64,
        gap: u64,
        continue_on_error: bool,
    ) -> (&'static str, Vec<Envelope>) {
        // The caller hears of items done; each item runs under the same stop, silently.
        let outer = self.call.clone();
        self.call = outer.silent();
        let out = self.run_items_of(items, approved, epoch, gap, continue_on_error, &outer);
        self.call = outer;
        out
    }

    fn run_items_of(
        &mut self,
        items: &[ToolCall],
        approved: Option<&Approval>,
        epoch: u64,
        gap: u64,
        continue_on_error: bool,
        outer: &CallControl,
    ) -> (&'static str, Vec<Envelope>) {
        let total = items.len() as u64;
        let mut envelopes: Vec<Envelope> = Vec::with_capacity(items.len());
        for (i, a) in items.iter().enumerate() {
            let t = a.def();
            if i > 0 && gap > 0 {
                let stop = &self.core.stop;
                let deadline = Instant::now() + Duration::from_millis(gap);
                while Instant::now() < deadline
                    && !stop.load(Ordering::SeqCst)
                    && !outer.cancelled()
                {
                    std::thread::sleep((deadline - Instant::now()).min(Duration::from_millis(5)));
                }
            }
            let item_started = Instant::now();
            // The rules as they are now: a rule added since the batch was gated applies.
            let config = self.core.lock().session.as_ref().map(|s| s.config.clone());
            let env = match config {
                None => self.core.err(
                    t.name,
                    item_started,
                    ToolError::new(ErrorCode::SafetyStopped, "the session ended"),
                ),
                Some(config) => match self.judge(a, config) {
                    Err(e) => self.core.err(t.name, item_started, e),
                    Ok(item) => {
                        let item_req = Request {
                            call: a,
                            assessment: &item,
                            approved,
                            batch_item: true,
                            epoch,
                        };
                        match self.decide(&item_req) {
                            // Item events carry no request id: the approved action is the
                            // batch, reported as a whole.
                            Decision::Run => {
                                let unplaced = item
                                    .items
                                    .iter()
                                    .flat_map(|i| i.unplaced.iter().cloned())
                                    .collect();
                                self.perform(a, &item, (None, unplaced), item_started, epoch)
                            }
                            Decision::Reject(e) => self.core.err(t.name, item_started, e),
                            // Unreachable for batch items (the gate refuses instead).
                            Decision::Confirm { .. } => self.core.err(
                                t.name,
                                item_started,
                                ToolError::new(
                                    ErrorCode::PolicyDenied,
                                    "item needs a confirmation the batch did not get",
                                ),
                            ),
                        }
                    }
                },
            };
            let failed = !env.ok;
            let interrupted = matches!(env.error_code(), Some(ErrorCode::SafetyStopped));
            envelopes.push(env);
            outer.report(Progress::Items {
                done: envelopes.len() as u64,
                total,
            });
            if failed && (!continue_on_error || interrupted) {
                return ("aborted", envelopes);
            }
        }
        ("completed", envelopes)
    }
}
