//! `preview_action`: the envelope (with its `argsDigest`), the capability, the policy
//! decision and the first blocker, computed without acting.

use cc_contract::{
    ActionEnvelope, ActionPreview, ActionResource, ArgsDigestInput, Blocker, ErrorCode,
    ExecutionMode, PolicyDecision, PolicyVerdict, WindowId, args_digest,
};
use cc_engine::rules::Landing;
use cc_engine::tools::ToolDef;
use cc_engine::tools::args::validate_args;
use rusqlite::Connection;
use serde_json::{Map, Value, json};

use crate::aliases::{Resolved, resolve};
use crate::args::{ActionArgs, DEFAULT_EXPIRES_MS, GetCapabilities, MAX_TTL_MS};
use crate::error::{GovResult, fail_with, invalid};
use crate::grants;
use crate::kernel::Governance;
use crate::policy::{capability, decide, tool_or_invalid};
use crate::sensitivity;
use crate::sessions::load_owned;
use crate::util::{new_id, ts, ts_after};

/// A preview plus what execution needs from it.
pub(crate) struct Prepared {
    pub preview: ActionPreview,
    pub def: &'static ToolDef,
    /// The arguments as the engine will receive them.
    pub arguments: Map<String, Value>,
    /// The tool as the client named it (a plain tool, or an upstream alias whose result
    /// is reshaped for it).
    pub resolved: Resolved,
}

impl Governance {
    /// `preview_action`.
    /// The preview is remembered for the operator (a `confirm` one waits for
    /// approval; see [`crate::approvals`]).
    pub fn preview_action(&self, a: &ActionArgs) -> GovResult<ActionPreview> {
        let mut conn = self.conn();
        let prepared = self.prepare(&conn, a)?;
        let pending = self.remember_preview(&mut conn, &prepared)?;
        drop(conn);
        if let Some(request) = pending {
            self.announce_request(&request);
        }
        Ok(prepared.preview)
    }

    /// Builds the preview. Same arguments → same `argsDigest` (no ids or times in it),
    /// which is what lets execute re-preview and compare.
    pub(crate) fn prepare(&self, conn: &Connection, a: &ActionArgs) -> GovResult<Prepared> {
        let session = load_owned(conn, &a.session_id, &self.principal)?;
        let resolved = resolve(&a.tool, &a.arguments)?;
        let def = resolved.def;
        let arguments = resolved.arguments.clone();
        let expires_in = a.expires_in_ms.unwrap_or(DEFAULT_EXPIRES_MS);
        if expires_in == 0 || expires_in > MAX_TTL_MS {
            return Err(invalid(format!(
                "expires_in_ms must be in 1..={MAX_TTL_MS}"
            )));
        }
        if let Some(p) = &a.postcondition {
            p.validate()
                .map_err(|e| invalid(format!("postcondition: {e}")))?;
        }
        let args_value = Value::Object(arguments.clone());
        if let Err(issues) = validate_args(def, &args_value, self.engine.base_config().value()) {
            return Err(fail_with(
                ErrorCode::InvalidArguments,
                format!("arguments do not fit {}", def.name),
                json!({"issues": issues.iter().map(|i| json!({"path": i.path, "message": i.message})).collect::<Vec<_>>()}),
            ));
        }
        let operation = a.operation.clone().unwrap_or_else(|| def.name.to_string());
        let at = self.now();
        // The desktop's own answer, asked only for text entry (a worker round trip).
        let live = sensitivity::writes_text(def.name)
            .then(|| self.engine.text_target_is_password(def.name, &args_value))
            .flatten();
        let sensitivity = sensitivity::assess(def.name, a.target.as_ref(), live, ts(at));
        let mut items = self.inspect(def, &args_value)?;
        for item in &mut items {
            // The target evidence is the action's own, not a batch item's.
            let own = (item.def.name == def.name)
                .then_some(sensitivity.as_ref())
                .flatten();
            item.writes_secret = sensitivity::writes_secret(item.def.name, own, &a.data_labels);
        }
        let decided = decide(&self.engine, def.name, &items);
        let class = decided.class;
        let mutation = decided.mutation;
        let mut envelope = ActionEnvelope {
            action_id: a.action_id.clone().unwrap_or_else(|| new_id("act")),
            session_id: session.session_id.clone(),
            execution_group_id: a
                .execution_group_id
                .clone()
                .or_else(|| session.execution_group_id.clone()),
            principal_id: self.principal.clone(),
            agent_id: a.agent_id.clone(),
            tool: def.name.to_string(),
            operation,
            action_class: class,
            requested_mode: a.mode,
            target: a.target.clone(),
            target_sensitivity: sensitivity,
            resource: resource(def, &args_value, a.target.as_ref()),
            provenance: a.provenance.clone(),
            data_labels: a.data_labels.clone(),
            postcondition: a.postcondition.clone(),
            reversible: matches!(
                class,
                cc_contract::ActionClass::Observe
                    | cc_contract::ActionClass::Navigate
                    | cc_contract::ActionClass::EditReversible
            ),
            external_side_effect: false,
            proposed_at: ts(at),
            expires_at: ts_after(at, expires_in),
            args_digest: String::new(),
        };
        envelope.args_digest = args_digest(&ArgsDigestInput::from_envelope(&envelope, &arguments));
        let grant_id = if decided.verdict == PolicyVerdict::Confirm {
            grants::find_usable(
                conn,
                &envelope,
                &decided.policy_digest,
                a.approval_grant_id.as_deref(),
                at,
            )?
            .map(|g| g.grant_id)
        } else {
            None
        };
        let app_id = a
            .target
            .as_ref()
            .map(|t| t.app_id.clone())
            .unwrap_or_else(|| "desktop".to_string());
        let blocker = if mutation && a.mode == ExecutionMode::Shadow {
            Some(Blocker::ShadowMutation)
        } else if mutation && a.mode == ExecutionMode::Background {
            Some(Blocker::ForegroundRequired)
        } else if decided.verdict == PolicyVerdict::Deny {
            Some(Blocker::PolicyDenied)
        } else if mutation && a.target.is_none() {
            Some(Blocker::TargetEvidenceRequired)
        } else if a.postcondition.as_ref().is_some_and(|p| !p.is_supported()) {
            Some(Blocker::PostconditionUnavailable)
        } else if decided.verdict == PolicyVerdict::Confirm && grant_id.is_none() {
            Some(Blocker::ApprovalRequired)
        } else {
            None
        };
        let preview = ActionPreview {
            capability: capability(&self.engine, def, &app_id),
            policy: PolicyDecision {
                decision: decided.verdict,
                policy_digest: decided.policy_digest,
                reasons: decided.reasons,
                grant_id,
            },
            executable: blocker.is_none(),
            blocker,
            envelope,
        };
        Ok(Prepared {
            preview,
            def,
            arguments,
            resolved,
        })
    }

    /// Where the action lands, for window-scoped rules: the canvas points it touches
    /// and the windows under them (or the focused window for keyboard tools). The
    /// window list is read only when a rule actually matches on windows.
    pub(crate) fn landing(&self, def: &ToolDef, args: &Value) -> Landing {
        let mut points = Vec::new();
        let mut push = |v: &Value| {
            if let (Some(x), Some(y)) = (
                v.get("x").and_then(Value::as_i64),
                v.get("y").and_then(Value::as_i64),
            ) {
                points.push((
                    x.clamp(i32::MIN.into(), i32::MAX.into()) as i32,
                    y.clamp(i32::MIN.into(), i32::MAX.into()) as i32,
                ));
            }
        };
        push(args);
        for key in ["from", "to"] {
            if let Some(v) = args.get(key) {
                push(v);
            }
        }
        let needs_windows = self
            .engine
            .base_config()
            .config()
            .safety
            .rules
            .iter()
            .any(|r| r.matches.window.is_some());
        let windows = if needs_windows {
            self.windows_for(def, args, &points)
        } else {
            Vec::new()
        };
        Landing { points, windows }
    }

    fn windows_for(
        &self,
        def: &ToolDef,
        args: &Value,
        points: &[(i32, i32)],
    ) -> Vec<(String, String)> {
        let Ok(list) = self.window_list() else {
            return Vec::new();
        };
        let named = |w: &Value| {
            (
                w["app_id"].as_str().unwrap_or_default().to_string(),
                w["title"].as_str().unwrap_or_default().to_string(),
            )
        };
        let explicit = args
            .get("id")
            .or_else(|| args.get("window"))
            .and_then(Value::as_u64);
        if let Some(id) = explicit {
            return list
                .iter()
                .filter(|w| w["id"].as_u64() == Some(id))
                .map(named)
                .collect();
        }
        if !points.is_empty() {
            return points
                .iter()
                .filter_map(|&(x, y)| list.iter().find(|w| contains(&w["rect"], x, y)))
                .map(named)
                .collect();
        }
        if def.name.starts_with("keyboard.") || def.name.starts_with("a11y.") {
            return list
                .iter()
                .filter(|w| w["focused"] == true)
                .map(named)
                .collect();
        }
        Vec::new()
    }
}

/// What the action touches, for the envelope and its digest (upstream derives it the
/// same way): the target's app and window, or the window `window.focus` names. The
/// plain tools act on no file, process, registry key or URL, so the other members
/// never apply here. `None` when nothing is known.
fn resource(
    def: &ToolDef,
    args: &Value,
    target: Option<&cc_contract::TargetEvidence>,
) -> Option<ActionResource> {
    let named_window = (def.name == "window.focus")
        .then(|| args.get("id").and_then(Value::as_u64))
        .flatten()
        .map(WindowId::from);
    let r = ActionResource {
        target_app_id: target.map(|t| t.app_id.clone()),
        target_window_id: target.and_then(|t| t.window_id.clone()).or(named_window),
        ..ActionResource::default()
    };
    (!r.is_empty()).then_some(r)
}

/// Whether a `{x,y,width,height}` rect contains a point.
fn contains(rect: &Value, x: i32, y: i32) -> bool {
    let get = |k: &str| rect.get(k).and_then(Value::as_i64).unwrap_or(0);
    let (rx, ry, w, h) = (get("x"), get("y"), get("width"), get("height"));
    let (x, y) = (i64::from(x), i64::from(y));
    x >= rx && y >= ry && x < rx + w && y < ry + h
}

impl Governance {
    /// `get_execution_capabilities{tool, app_id?}`: what the plain tool can do here.
    pub fn get_execution_capabilities(&self, arguments: &Value) -> GovResult<Value> {
        let a: GetCapabilities = crate::args::parse(arguments)?;
        let def = resolve(&a.tool, &Map::new())
            .map(|r| r.def)
            .or_else(|_| tool_or_invalid(&a.tool))?;
        let app_id = a.app_id.as_deref().unwrap_or("desktop");
        serde_json::to_value(capability(&self.engine, def, app_id)).map_err(crate::error::storage)
    }
}
