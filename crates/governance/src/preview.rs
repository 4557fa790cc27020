//! `preview_action`: the envelope (with its `argsDigest`), the capability, the policy
//! decision and the first blocker, computed without acting.

use cc_contract::ContractError;
use cc_contract::{
    ActionEnvelope, ActionPreview, ActionResource, ArgsDigestInput, Blocker, ErrorCode,
    ExecutionMode, PolicyDecision, PolicyVerdict, WindowId, args_digest,
};
use cc_engine::assess::Assessment;
use cc_engine::tools::{Target, ToolCall, ToolDef};
use cc_protocol::ToolError;
use rusqlite::Connection;
use serde_json::{Map, Value, json};

use crate::aliases::{Resolved, resolve};
use crate::args::{ActionArgs, DEFAULT_TTL_MS, GetCapabilities, MAX_TTL_MS};
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
    /// The engine's typed call for them, made once here: judged now, run by execute.
    pub call: ToolCall,
    /// The engine gate's judgement of the call (what the operator is shown of it).
    pub assessed: Assessment,
    /// The tool as the client named it (a plain tool, or an upstream alias whose result
    /// is reshaped for it).
    pub resolved: Resolved,
}

impl Governance {
    /// `preview_action`.
    /// The preview is remembered in the journal: previewing the same action again with
    /// the same arguments while it is valid answers the same envelope, and execute
    /// refuses it once expired (`previews.rs`); a `confirm` one also waits for
    /// the operator's approval ([`crate::approvals`]).
    pub fn preview_action(&self, a: &ActionArgs) -> GovResult<ActionPreview> {
        let mut conn = self.conn();
        let mut prepared = self.prepare(&conn, a)?;
        let pending = self.remember_preview(&mut conn, &mut prepared)?;
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
        let expires_in = a.expires_in_ms.unwrap_or(DEFAULT_TTL_MS);
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
        let operation = a.operation.clone().unwrap_or_else(|| def.name.to_string());
        let at = self.now();
        // The caller's evidence and labels can only raise what the engine assesses.
        let evidence = sensitivity::assess(def, a.target.as_ref(), None, ts(at));
        let declared = sensitivity::declared(evidence.as_ref(), &a.data_labels);
        // The engine's call, then the gate's own judgement of it, over the session's
        // live config and the desktop.
        let call = self
            .engine
            .prepare(def.name, &args_value)
            .map_err(|e| arguments_refused(def, e))?;
        let assessed = self
            .engine
            .assess(&call, declared)
            .map_err(|e| arguments_refused(def, e))?;
        // The desktop's answer for the action's own field (not a batch's items).
        let own = assessed.items.first().filter(|_| !def.is_batch());
        let live = own.and_then(|i| i.secret_target);
        let sensitivity = sensitivity::assess(def, a.target.as_ref(), live, ts(at));
        let decided = decide(&assessed);
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
            resource: resource(own.and_then(|i| i.call.target()), a.target.as_ref()),
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
            call,
            assessed,
            resolved,
        })
    }
}

/// The engine's refusal of the arguments (they do not validate against the tool's
/// spec under the session's config), as the contract's `invalid_arguments` with the
/// issues.
fn arguments_refused(def: &ToolDef, e: ToolError) -> ContractError {
    let issues = e
        .data
        .as_ref()
        .and_then(|d| d.get("issues"))
        .cloned()
        .unwrap_or_else(|| json!([{"path": "$", "message": e.message}]));
    fail_with(
        ErrorCode::InvalidArguments,
        format!("arguments do not fit {}", def.name),
        json!({ "issues": issues }),
    )
}

/// What the action touches, for the envelope and its digest (upstream derives it the
/// same way): the target's app and window, or the window the action names (where it
/// lands: `window.focus`). The plain tools act on no file, process, registry key or
/// URL, so the other members never apply here. `None` when nothing is known.
fn resource(
    lands: Option<Target>,
    target: Option<&cc_contract::TargetEvidence>,
) -> Option<ActionResource> {
    let named_window = match lands {
        Some(
            Target::Window(id)
            | Target::InWindow(id, _)
            | Target::Aimed {
                window: Some(id), ..
            },
        ) => Some(WindowId::from(id)),
        _ => None,
    };
    let r = ActionResource {
        target_app_id: target.map(|t| t.app_id.clone()),
        target_window_id: target.and_then(|t| t.window_id.clone()).or(named_window),
        ..ActionResource::default()
    };
    (!r.is_empty()).then_some(r)
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

#[cfg(test)]
mod tests {
    use super::*;
    use cc_engine::tools::find;
    use serde_json::json;

    /// A drag whose plain end is relative to a window names that window, whether or not
    /// its other end is an element; aimed at elements alone it names none.
    #[test]
    fn a_drag_relative_to_a_window_names_it_even_aimed_at_an_element() {
        let drag = find("pointer.drag").unwrap();
        let lands = |args: Value| {
            let call = cc_engine::tools::ToolCall::new(drag, &args, &json!({})).unwrap();
            resource(call.target(), None)
        };
        let r = lands(json!({"from_element": {"ref": "e1"}, "to": {"x": 5, "y": 5}, "window": 7}));
        assert_eq!(
            r.expect("a resource").target_window_id,
            Some(WindowId::from(7))
        );
        let r = lands(json!({"from_element": {"ref": "e1"}, "to_element": {"ref": "e2"}}));
        assert!(r.is_none());
        let r = lands(json!({"from": {"x": 1, "y": 1}, "to": {"x": 5, "y": 5}, "window": 7}));
        assert_eq!(
            r.expect("a resource").target_window_id,
            Some(WindowId::from(7))
        );
    }
}
