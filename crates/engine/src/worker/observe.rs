//! An action's `observe` (`tools/observe.rs`): after the action, wait for the screen to
//! settle, then take each observation asked for as its own tool would run, through the
//! same judgement and gate as a batch item (a rule that denies or wants a person for
//! that observation refuses it; the stop refuses it), so what the action answers is
//! exactly what a separate call would have answered, redaction included.

use std::sync::Arc;
use std::time::Duration;

use cc_protocol::{ErrorCode, Rect, ToolError};
use serde_json::{Value, json};

use super::Worker;
use crate::config::ConfigStack;
use crate::gate::{Decision, Request};
use crate::tools::ToolCall;
use crate::tools::call::Observation;
use crate::tools::exec::Exec;
use crate::tools::exec::watch::{self, Cond};

fn error_json(e: &ToolError) -> Value {
    json!({"error": {"code": e.code, "message": e.message, "data": e.data}})
}

impl Worker {
    /// Takes what the call's `observe` asks for; `None` when it asks for nothing.
    pub(super) fn observe(&mut self, call: &ToolCall, epoch: u64) -> Option<Value> {
        let obs = call.observation()?;
        let config = self
            .core
            .lock()
            .session
            .as_ref()
            .map(|s| s.config.clone())?;
        let mut out = serde_json::Map::new();
        out.insert("settled".into(), self.settle(obs, &config));
        for (member, asked) in [("capture", &obs.capture), ("snapshot", &obs.snapshot)] {
            if let Some(sub) = asked {
                let answer = match self.observation(sub, &config, epoch) {
                    Ok(v) => v,
                    Err(e) => error_json(&e),
                };
                out.insert(member.into(), answer);
            }
        }
        Some(Value::Object(out))
    }

    /// Waits until the screen (the captured region, when the capture names one) has
    /// been still for `settle_ms`, bounded by `settle_timeout_ms`; says whether it was
    /// and how long it took.
    fn settle(&mut self, obs: &Observation, config: &Arc<ConfigStack>) -> Value {
        if obs.settle_ms == 0 {
            return json!({"stable": true, "waited_ms": 0});
        }
        let Some(canvas) = self.canvas.as_ref() else {
            return json!({"stable": false, "waited_ms": 0});
        };
        // The region the capture shows, else the whole canvas: an animation elsewhere
        // does not hold up a capture of a part.
        let s = &canvas.surface;
        let region = obs
            .capture
            .as_ref()
            .and_then(ToolCall::capture_region)
            .unwrap_or(Rect {
                x: 0,
                y: 0,
                width: s.display_width_px as i32,
                height: s.display_height_px as i32,
            });
        let cond = Cond::Stable(region, Duration::from_millis(obs.settle_ms));
        let mut ex = Exec {
            driver: self.driver.as_mut(),
            canvas,
            config: config.config(),
            stop: &self.core.stop,
            call: &self.call,
            frames: &mut self.frames,
            snapshots: &mut self.snapshots,
            unplaced: Vec::new(),
        };
        match watch::until(&mut ex, &cond, Duration::from_millis(obs.settle_timeout_ms)) {
            Ok(w) => json!({"stable": w.met, "waited_ms": w.waited_ms, "driven_by": w.driven_by}),
            Err(e) => error_json(&e),
        }
    }

    /// One observation, typed with its action: judged and gated as its own tool, then
    /// run.
    fn observation(
        &mut self,
        call: &ToolCall,
        config: &Arc<ConfigStack>,
        epoch: u64,
    ) -> Result<Value, ToolError> {
        let tool = call.name();
        let assessed = self.judge(call, config.clone())?;
        let req = Request {
            call,
            assessment: &assessed,
            approved: None,
            batch_item: true,
            epoch,
        };
        match self.decide(&req) {
            Decision::Run => {}
            Decision::Reject(e) => return Err(e),
            Decision::Confirm { .. } => {
                return Err(ToolError::new(
                    ErrorCode::PolicyDenied,
                    format!("{tool} needs a confirmation; call it on its own"),
                ));
            }
        }
        let canvas = self.canvas.as_ref().ok_or_else(|| {
            ToolError::new(
                ErrorCode::BackendUnavailable,
                "no screen layout could be read",
            )
        })?;
        let mut ex = Exec {
            driver: self.driver.as_mut(),
            canvas,
            config: config.config(),
            stop: &self.core.stop,
            call: &self.call,
            frames: &mut self.frames,
            snapshots: &mut self.snapshots,
            unplaced: Vec::new(),
        };
        call.run(&mut ex)
    }
}
