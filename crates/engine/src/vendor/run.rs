//! A translated vendor call, run: the session's fixed screenshot space, one
//! `batch.execute` through the gate (with a person's confirmation awaited when the
//! gate or the vendor asks for one), and the vendor-shaped answer.

use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use cc_protocol::{Envelope, ErrorCode, ToolError};
use serde_json::{Value, json};

use super::scaling::Display;
use super::{Context, Plan, PressChange, Refusal, Vocabulary};
use crate::Engine;
use crate::call::{CallControl, Progress};
use crate::config::ConfigStack;
use crate::tools::ToolCall;

/// What the plan's calls answered.
pub(crate) struct Ran {
    /// Each step's result, in order.
    pub results: Vec<Value>,
    /// The closing capture, when the plan asked for one.
    pub shot: Option<Shot>,
}

/// A capture as a vendor carries it.
pub(crate) struct Shot {
    pub mime: String,
    pub base64: String,
    pub data_url: String,
    pub width: u64,
    pub height: u64,
}

impl Shot {
    fn from_result(r: &Value) -> Option<Shot> {
        let url = r["data_url"].as_str()?;
        let (mime, data) = url.strip_prefix("data:")?.split_once(";base64,")?;
        Some(Shot {
            mime: mime.to_string(),
            base64: data.to_string(),
            data_url: url.to_string(),
            width: r["width"].as_u64()?,
            height: r["height"].as_u64()?,
        })
    }
}

fn refused(r: Refusal) -> ToolError {
    ToolError::with_data(
        ErrorCode::InvalidArguments,
        format!("invalid arguments: {}: {}", r.path, r.message),
        json!({"issues": [{"path": r.path, "message": r.message}]}),
    )
}

/// Longest a vendor call waits for a person, beyond the confirmation's own timeout.
const PERSON_SLACK: Duration = Duration::from_secs(60);

impl Engine {
    /// Runs one call of a vendor vocabulary (`tools.call` with `anthropic.computer`,
    /// `openai.computer` or `gemini.computer`, and their MCP tools). The answer's
    /// `result` is the vendor's own result shape; a failure is the usual envelope
    /// error, with the vendor-shaped answer in `data.vendor_result` where the vendor has
    /// one.
    pub fn call_vocabulary(&self, voc: &'static Vocabulary, arguments: &Value) -> Envelope {
        self.call_vocabulary_with(voc, arguments, CallControl::default())
    }

    /// [`Engine::call_vocabulary`] with the caller's own [`CallControl`]: its batch
    /// reports items done, a wait for a person reports the time waited of the
    /// confirmation's timeout, and `call.cancel()` stops the batch or withdraws the
    /// pending confirmation (denied, nothing ran).
    pub fn call_vocabulary_with(
        &self,
        voc: &'static Vocabulary,
        arguments: &Value,
        call: CallControl,
    ) -> Envelope {
        let started = Instant::now();
        match self.vocabulary_result(voc, arguments, &call) {
            Ok(result) => self.core.ok(voc.name, started, result),
            Err(mut e) => {
                if let Some(v) = (voc.failure)(arguments, &e) {
                    let mut data = e.data.take().unwrap_or_else(|| json!({}));
                    if let Value::Object(m) = &mut data {
                        m.insert("vendor_result".into(), v);
                    }
                    e.data = Some(data);
                }
                self.core.err(voc.name, started, e)
            }
        }
    }

    fn vocabulary_result(
        &self,
        voc: &'static Vocabulary,
        args: &Value,
        call: &CallControl,
    ) -> Result<Value, ToolError> {
        let declared = (voc.declared)(args).map_err(refused)?;
        let (display, fixed, pressed, config) = {
            let g = self.core.lock();
            let Some(s) = g.session.as_ref() else {
                return Err(ToolError::new(
                    ErrorCode::NotStarted,
                    "no session; call session.start first",
                ));
            };
            let Some(surface) = g.surface.as_ref() else {
                return Err(ToolError::new(
                    ErrorCode::BackendUnavailable,
                    "no screen layout could be read",
                ));
            };
            let canvas = (surface.display_width_px, surface.display_height_px);
            let fixed = s.vendor.displays.get(voc.name).copied();
            let display = match (fixed, declared) {
                (Some(d), _) => {
                    d.still_fits(canvas)
                        .map_err(|m| ToolError::new(ErrorCode::StaleFrame, m))?;
                    if let Some((w, h)) = declared
                        && (w, h) != (d.width, d.height)
                    {
                        return Err(refused(Refusal::at(
                            "display",
                            format!(
                                "this session's display is fixed at {}x{}; {w}x{h} would move \
                                 every point (start a new session to change it)",
                                d.width, d.height
                            ),
                        )));
                    }
                    d
                }
                (None, Some((w, h))) => Display::declared(w, h, canvas)
                    .map_err(|m| refused(Refusal::at("display", m)))?,
                (None, None) => (voc.default_display)(canvas),
            };
            (
                display,
                fixed.is_some(),
                s.vendor.pressed.get(voc.name).copied(),
                s.config.clone(),
            )
        };
        let mut cx = Context { display, pressed };
        let plan = (voc.translate)(args, &mut cx).map_err(refused)?;
        if !fixed {
            // The first valid call fixes the space for the session; a call that raced it
            // with another size was read in a space that is not the session's.
            let mut g = self.core.lock();
            if let Some(s) = g.session.as_mut() {
                let kept = *s.vendor.displays.entry(voc.name).or_insert(display);
                if kept != display {
                    return Err(refused(Refusal::at(
                        "display",
                        format!(
                            "this session's display was just fixed at {}x{} by another call",
                            kept.width, kept.height
                        ),
                    )));
                }
            }
        }
        let ran = self.run_plan(&plan, &config, call)?;
        // The model reads points off this image: it must be the session's display,
        // never an image the capture budgets shrank further.
        if let Some(shot) = &ran.shot
            && plan.capture == Some(super::full_capture(&display))
            && (shot.width, shot.height) != (u64::from(display.width), u64::from(display.height))
        {
            return Err(ToolError::new(
                ErrorCode::DriverFailed,
                format!(
                    "the screenshot came back {}x{}, not this session's {}x{} display                      (capture.max_area or capture.max_bytes is too small for it); its points                      would land elsewhere, so it is not returned",
                    shot.width, shot.height, display.width, display.height
                ),
            ));
        }
        let press = match (plan.press, plan.press_from_step) {
            (Some(change), _) => Some(change),
            (None, Some(i)) => ran.results.get(i).and_then(|r| {
                let p = &r["position"];
                Some(PressChange::Set(super::Press {
                    at: (p["x"].as_i64()?, p["y"].as_i64()?),
                    moved_to: None,
                }))
            }),
            (None, None) => None,
        };
        if let Some(change) = press {
            let mut g = self.core.lock();
            if let Some(s) = g.session.as_mut() {
                match change {
                    PressChange::Set(p) => {
                        s.vendor.pressed.insert(voc.name, p);
                    }
                    PressChange::Clear => {
                        s.vendor.pressed.remove(voc.name);
                    }
                }
            }
        }
        Ok((voc.answer)(args, &plan, &ran, &display))
    }

    /// The plan as one `batch.execute` through the gate; a confirmation is awaited
    /// (the person answers on the operator channel, never the model).
    fn run_plan(
        &self,
        plan: &Plan,
        config: &ConfigStack,
        call: &CallControl,
    ) -> Result<Ran, ToolError> {
        // Subscribed before the call, so the answer to a confirmation cannot slip by.
        let (_, sub) = self.core.bus.subscribe(1024, Some(u64::MAX));
        // The plan's typed calls become one batch under the session's config (the
        // capture takes its format from it): the vocabulary's edge makes the call.
        let capture = plan.capture.map(|c| c.call(config.config()));
        let items = plan.steps.iter().cloned().chain(capture).collect();
        let gap_ms = config.config().runtime.batch_gap_ms;
        let batch = ToolCall::batch_of(items, gap_ms, config.value()).map_err(ToolError::from)?;
        let env = self.submit(batch, (None, plan.confirm.clone()), call.clone());
        let mut env = serde_json::to_value(&env).unwrap_or(Value::Null);
        if env["ok"] != json!(true) {
            return Err(envelope_error(&env));
        }
        if env["result"]["status"] == "awaiting_confirmation" {
            let id = env["result"]["request_id"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let c = config.config();
            let timeout = Duration::from_secs_f64(c.safety.confirm_timeout_s);
            let wait = timeout + Duration::from_millis(c.runtime.max_wait_ms) + PERSON_SLACK;
            env = match await_person(&sub.rx, &id, (wait, timeout), call) {
                Err(e) if call.cancelled() => {
                    // Withdrawn by its caller: denied, if it is still pending.
                    self.confirm(&json!({"request_id": id, "approve": false}));
                    return Err(e);
                }
                other => other?,
            };
            if env["ok"] != json!(true) {
                return Err(envelope_error(&env));
            }
        }
        let items = env["result"]["items"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if let Some(failed) = items.iter().find(|e| e["ok"] != json!(true)) {
            return Err(envelope_error(failed));
        }
        if items.len() != plan.steps.len() + usize::from(plan.capture.is_some()) {
            return Err(ToolError::new(
                ErrorCode::DriverFailed,
                "the batch answered a different number of items than it was given",
            ));
        }
        let mut results: Vec<Value> = items.iter().map(|e| e["result"].clone()).collect();
        let shot = if plan.capture.is_some() {
            results.pop().as_ref().and_then(Shot::from_result)
        } else {
            None
        };
        Ok(Ran { results, shot })
    }
}

/// The envelope error of an envelope as JSON.
fn envelope_error(env: &Value) -> ToolError {
    serde_json::from_value::<ToolError>(env["error"].clone())
        .unwrap_or_else(|_| ToolError::new(ErrorCode::DriverFailed, "the engine answered no error"))
}

/// Waits for the person's answer to confirmation `id`, then for the approved batch's
/// envelope (`action.finished` carries it).
/// Meanwhile the caller hears, every second, how long it has waited of the
/// confirmation's `timeout`, and a cancel ends the wait (the caller withdraws).
fn await_person(
    rx: &std::sync::mpsc::Receiver<crate::events::SharedEvent>,
    id: &str,
    (wait, timeout): (Duration, Duration),
    call: &CallControl,
) -> Result<Value, ToolError> {
    let started = Instant::now();
    let deadline = started + wait;
    let mut approved = false;
    loop {
        if call.cancelled() && !approved {
            return Err(crate::call::cancelled());
        }
        if !approved {
            call.report(Progress::Confirming {
                request_id: id.to_string(),
                waited_ms: started.elapsed().min(timeout).as_millis() as u64,
                timeout_ms: timeout.as_millis() as u64,
            });
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let ev = match rx.recv_timeout(left.min(Duration::from_secs(1))) {
            Ok(ev) => ev,
            Err(RecvTimeoutError::Timeout) if !left.is_zero() => continue,
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                return Err(ToolError::with_data(
                    ErrorCode::Timeout,
                    format!("no answer to confirmation {id} in time; the action may still run"),
                    json!({"request_id": id}),
                ));
            }
        };
        let p = &ev.payload;
        let ours = p["request_id"] == json!(id);
        match ev.kind.as_str() {
            "safety.confirmation_resolved" if ours && p["approve"] != json!(true) => {
                return Err(ToolError::with_data(
                    ErrorCode::PolicyDenied,
                    format!(
                        "a person did not approve it ({}); nothing ran",
                        p["reason"].as_str().unwrap_or("denied")
                    ),
                    json!({"rule": "confirmation", "request_id": id}),
                ));
            }
            "safety.confirmation_resolved" if ours => approved = true,
            "safety.confirmation_expired" if ours => {
                return Err(ToolError::with_data(
                    ErrorCode::ConfirmationExpired,
                    format!("nobody answered confirmation {id} in time; nothing ran"),
                    json!({"request_id": id}),
                ));
            }
            "action.finished" if ours => {
                return Ok(p["envelope"].clone());
            }
            _ => {}
        }
    }
}
