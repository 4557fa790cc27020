//! Independent read-backs: the window list, the accessibility tree, the process table
//! and file contents. Used for target revalidation (step 5) and postcondition
//! verification (step 7) — never the action's own report of what it did.

use cc_protocol::ErrorCode as EngineCode;
use std::time::Duration;

use cc_contract::receipt::verification_method;
use cc_contract::{
    ActionPostcondition, Bounds, ErrorCode, TargetEvidence, Verification, parse_timestamp,
    sha256_hex, value_digest,
};
use serde_json::{Value, json};

use crate::error::{GovResult, fail, fail_with};
use crate::kernel::Governance;

/// How far a window may have moved since the evidence was captured.
const BOUNDS_TOLERANCE_PX: f64 = 4.0;
/// How old target evidence may be.
const MAX_EVIDENCE_AGE: time::Duration = time::Duration::seconds(30);
/// Read-back attempts: a real desktop updates asynchronously after input, so an
/// unsatisfied read is retried briefly before it counts.
const READ_ATTEMPTS: u32 = 5;
const READ_INTERVAL: Duration = Duration::from_millis(100);

impl Governance {
    /// Starts the engine session if none runs: governed actions go through
    /// `Engine::call_tool`, which needs one.
    pub(crate) fn ensure_engine_session(&self) {
        let status = self.engine.status();
        let idle = status
            .result
            .as_ref()
            .and_then(|r| r.get("state"))
            .and_then(Value::as_str)
            == Some("idle");
        if idle {
            let started = self.engine.start(&json!({}));
            if !started.ok {
                tracing::warn!(?started.error, "cannot start the engine session");
            }
        }
    }

    /// Runs a benign observation tool through the engine.
    fn observe(&self, tool: &str, args: Value) -> GovResult<Value> {
        self.ensure_engine_session();
        let env = self.engine.call_tool(tool, &args);
        let engine_code = env.error.as_ref().map(|e| e.code);
        match (env.ok, env.result) {
            (true, Some(result)) => Ok(result),
            // The server's stop or standby holds: nothing runs until a person releases it.
            _ if matches!(
                engine_code,
                Some(EngineCode::SafetyStopped | EngineCode::SafetyStandby)
            ) =>
            {
                Err(fail_with(
                    ErrorCode::Interrupted,
                    "the emergency stop or idle standby holds; an operator must release it",
                    json!({"engineError": engine_code}),
                ))
            }
            _ => Err(fail_with(
                ErrorCode::PostconditionUnavailable,
                format!("{tool} failed"),
                json!({"error": env.error.map(|e| json!({"code": e.code, "message": e.message}))}),
            )),
        }
    }

    /// `window.list` as JSON objects.
    pub(crate) fn window_list(&self) -> GovResult<Vec<Value>> {
        let list = self.observe("window.list", json!({}))?;
        Ok(list["windows"].as_array().cloned().unwrap_or_default())
    }

    /// Step 5: the target window still exists with the same app, pid and title digest,
    /// within ±4 px of the captured bounds, and the evidence is at most 30 s old.
    /// Evidence without a `windowId` still meets the live desktop: some window of the
    /// app must pass the same checks ([`Governance::revalidate_app`]).
    pub(crate) fn revalidate(&self, target: &TargetEvidence) -> GovResult<()> {
        let captured = parse_timestamp(&target.captured_at)
            .map_err(|e| fail(ErrorCode::StaleTarget, format!("capturedAt: {e}")))?;
        if self.now() - captured > MAX_EVIDENCE_AGE {
            return Err(fail(
                ErrorCode::StaleTarget,
                "the target evidence is older than 30 s",
            ));
        }
        let windows = self.window_list().map_err(|e| match e.error {
            ErrorCode::Interrupted => e,
            _ => fail(ErrorCode::StaleTarget, e.message),
        })?;
        let Some(window_id) = &target.window_id else {
            return revalidate_app(target, &windows);
        };
        let Some(w) = windows.iter().find(|w| {
            w["id"].as_u64().map(|id| id.to_string()).as_deref() == Some(&*window_id.normalized())
        }) else {
            return Err(stale("the target window no longer exists"));
        };
        if w["app_id"].as_str() != Some(target.app_id.as_str()) {
            return Err(stale("the target window belongs to another app"));
        }
        if let Some(pid) = target.pid
            && w["pid"].as_u64() != Some(u64::from(pid))
        {
            return Err(stale("the target window belongs to another process"));
        }
        if !title_matches(target, w) {
            return Err(stale("the target window's title changed"));
        }
        if let Some(b) = &target.bounds
            && !near(b, &w["rect"])
        {
            return Err(stale("the target window moved or resized"));
        }
        Ok(())
    }

    /// Step 7: reads the postcondition back, retrying briefly while unsatisfied.
    /// `Err` means the read itself failed (the outcome is then unknown).
    pub(crate) fn verify(
        &self,
        post: &ActionPostcondition,
        target: Option<&TargetEvidence>,
    ) -> GovResult<Verification> {
        let mut last = self.read_back(post, target)?;
        for _ in 1..READ_ATTEMPTS {
            if last.satisfied {
                break;
            }
            std::thread::sleep(READ_INTERVAL);
            last = self.read_back(post, target)?;
        }
        Ok(last)
    }

    fn read_back(
        &self,
        post: &ActionPostcondition,
        target: Option<&TargetEvidence>,
    ) -> GovResult<Verification> {
        match post {
            ActionPostcondition::Window { window_id, exists } => {
                let present = self
                    .window_list()?
                    .iter()
                    .any(|w| w["id"].as_u64() == Some(*window_id));
                Ok(Verification {
                    satisfied: present == *exists,
                    observed_digest: None,
                    method: verification_method::WINDOW_LIST.into(),
                })
            }
            ActionPostcondition::UiElement {
                role,
                label,
                exists,
                value_digest: expected,
            } => {
                let window = target
                    .and_then(|t| t.window_id.as_ref())
                    .and_then(|w| w.normalized().parse::<u64>().ok());
                let mut args = json!({"level": "full", "include_rects": false});
                if let Some(w) = window {
                    args["window"] = json!(w);
                }
                let snapshot = self.observe("a11y.snapshot", args)?;
                let node = find_node(&snapshot["tree"], role.as_deref(), label.as_deref());
                let observed = node.map(|n| value_digest(n["value"].as_str().unwrap_or_default()));
                let satisfied = existence_holds(
                    node.is_some(),
                    *exists,
                    expected.as_ref(),
                    observed.as_ref(),
                );
                Ok(Verification {
                    satisfied,
                    observed_digest: observed,
                    method: verification_method::ACCESSIBILITY.into(),
                })
            }
            ActionPostcondition::Process { pid, .. } => {
                let running = std::path::Path::new(&format!("/proc/{pid}")).exists();
                Ok(Verification {
                    satisfied: !running,
                    observed_digest: None,
                    method: verification_method::PROCESS_TABLE.into(),
                })
            }
            ActionPostcondition::Filesystem {
                path,
                exists,
                content_digest,
            } => {
                let content = std::fs::read(path).ok();
                // Digests are of the UTF-8 text (wire rules); a non-UTF-8 file has none.
                let observed = content
                    .as_ref()
                    .and_then(|c| std::str::from_utf8(c).ok())
                    .map(value_digest);
                let satisfied = existence_holds(
                    content.is_some(),
                    *exists,
                    content_digest.as_ref(),
                    observed.as_ref(),
                );
                Ok(Verification {
                    satisfied,
                    observed_digest: observed,
                    method: verification_method::FILE_CONTENT.into(),
                })
            }
            ActionPostcondition::Registry { .. } => Err(fail(
                ErrorCode::PostconditionUnavailable,
                "registry postconditions are Windows-only",
            )),
        }
    }
}

/// The rule every read-back shares: an object that must exist is there and, when a
/// digest was declared, reads back with exactly that digest; one that must not exist is
/// absent.
fn existence_holds(
    found: bool,
    must_exist: bool,
    expected: Option<&String>,
    observed: Option<&String>,
) -> bool {
    match (found, must_exist) {
        (true, true) => expected.is_none_or(|d| observed == Some(d)),
        (false, false) => true,
        _ => false,
    }
}

/// Step 5 for evidence that names no window: the app still has a window; with a pid,
/// that process is still running and one of the app's windows is its own (a window
/// that reports no pid is not ruled out); with a title digest, one of those windows
/// has that title; with bounds, one of those is within ±4 px of them. Each refusal
/// says which of these no longer holds.
fn revalidate_app(target: &TargetEvidence, windows: &[Value]) -> GovResult<()> {
    let mut candidates: Vec<&Value> = windows
        .iter()
        .filter(|w| w["app_id"].as_str() == Some(target.app_id.as_str()))
        .collect();
    if candidates.is_empty() {
        return Err(stale("the target app has no window any more"));
    }
    if let Some(pid) = target.pid {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            return Err(stale("the target process is no longer running"));
        }
        candidates.retain(|w| w["pid"].as_u64().is_none_or(|p| p == u64::from(pid)));
        if candidates.is_empty() {
            return Err(stale("no window of the target app belongs to its process"));
        }
    }
    candidates.retain(|w| title_matches(target, w));
    if candidates.is_empty() {
        return Err(stale("no window of the target app has the observed title"));
    }
    if let Some(b) = &target.bounds
        && !candidates.iter().any(|w| near(b, &w["rect"]))
    {
        return Err(stale(
            "no window of the target app is where it was observed",
        ));
    }
    Ok(())
}

/// Whether `window`'s title has the evidence's title digest (true without one). Both
/// digest spellings of the wire rules are accepted: bare hex and `sha256:`.
fn title_matches(target: &TargetEvidence, window: &Value) -> bool {
    let Some(expected) = &target.window_title_digest else {
        return true;
    };
    let title = window["title"].as_str().unwrap_or_default();
    *expected == sha256_hex(title) || *expected == value_digest(title)
}

fn stale(message: &str) -> cc_contract::ContractError {
    fail(ErrorCode::StaleTarget, message)
}

/// Whether the window rect is within the tolerance of the captured bounds.
fn near(b: &Bounds, rect: &Value) -> bool {
    let get = |k: &str| rect.get(k).and_then(Value::as_f64);
    match (get("x"), get("y"), get("width"), get("height")) {
        (Some(x), Some(y), Some(w), Some(h)) => {
            (x - b.x).abs() <= BOUNDS_TOLERANCE_PX
                && (y - b.y).abs() <= BOUNDS_TOLERANCE_PX
                && (w - b.width).abs() <= BOUNDS_TOLERANCE_PX
                && (h - b.height).abs() <= BOUNDS_TOLERANCE_PX
        }
        _ => false,
    }
}

/// The first node (pre-order) whose role and name match the ones given.
fn find_node<'a>(node: &'a Value, role: Option<&str>, label: Option<&str>) -> Option<&'a Value> {
    let role_ok = role.is_none_or(|r| node["role"].as_str() == Some(r));
    let label_ok = label.is_none_or(|l| node["name"].as_str() == Some(l));
    if node.is_object() && role_ok && label_ok {
        return Some(node);
    }
    node["children"]
        .as_array()?
        .iter()
        .find_map(|c| find_node(c, role, label))
}
