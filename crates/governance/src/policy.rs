//! The policy decision of a preview and the capability of a plain tool.
//!
//! The decision is the engine's own assessment ([`cc_engine::Engine::assess`]): the
//! same judgement the gate makes when the action is performed (risk, rules, landing,
//! the batch merged over its items), over the session's live configuration, so a
//! preview predicts the gate:
//!
//! | engine                                                     | decision  |
//! |------------------------------------------------------------|-----------|
//! | a `deny` rule matches                                      | `deny`    |
//! | `default_rule: deny` and no `allow`/`confirm` rule matches | `deny`    |
//! | risk ≥ `confirm_threshold`, or a `confirm` rule matches     | `confirm` |
//! | otherwise                                                  | `allow`   |

use cc_contract::{
    ActionClass, CanonValue, ExecutionCapability, ExecutionMode, InterferenceLevel, PolicyVerdict,
    VerificationSource, canonical_string, sha256_hex,
};
use cc_engine::assess::Assessment;
use cc_engine::tools::{Lands, ToolDef, find, tools};
use cc_engine::{Engine, Outcome};
use cc_protocol::Risk;
use serde_json::{Value, json};

use crate::error::{GovResult, invalid};

/// The MCP-safe name of a plain tool (`pointer.click` → `pointer_click`).
pub fn mcp_tool_name(tool: &str) -> String {
    tool.replace('.', "_")
}

/// Resolves `pointer.click` or `pointer_click` to the engine's tool.
pub fn resolve_tool(name: &str) -> Option<&'static ToolDef> {
    find(name).or_else(|| tools().iter().find(|t| mcp_tool_name(t.name) == name))
}

/// Resolves a tool or answers `invalid_arguments`.
pub(crate) fn tool_or_invalid(name: &str) -> GovResult<&'static ToolDef> {
    resolve_tool(name).ok_or_else(|| invalid(format!("no plain tool {name:?}")))
}

/// The action class of a concrete action: observations, focusing a named window
/// (navigation), shell-level combos (high risk: a privilege change of the session), and
/// every other input as a reversible edit.
pub(crate) fn action_class(def: &ToolDef, risk: Risk) -> ActionClass {
    if !def.mutates() {
        ActionClass::Observe
    } else if risk == Risk::High {
        ActionClass::PrivilegeChange
    } else if def.lands == Lands::Window {
        ActionClass::Navigate
    } else {
        ActionClass::EditReversible
    }
}

/// What the tool can do on this backend. The desktop drivers inject real input into
/// the focused session, so a mutation is foreground-only; observations run in every
/// mode.
pub(crate) fn capability(engine: &Engine, def: &ToolDef, app_id: &str) -> ExecutionCapability {
    let (modes, interference) = if def.mutates() {
        let interference = match def.lands {
            Lands::Pointer => InterferenceLevel::MovesPhysicalPointer,
            Lands::Window => InterferenceLevel::MayRaiseWindow,
            Lands::Focused | Lands::Element | Lands::Items => InterferenceLevel::TakesForeground,
        };
        (vec![ExecutionMode::Foreground], interference)
    } else {
        (
            vec![
                ExecutionMode::Shadow,
                ExecutionMode::Background,
                ExecutionMode::Foreground,
            ],
            InterferenceLevel::None,
        )
    };
    ExecutionCapability {
        app_id: app_id.to_string(),
        operation: def.name.to_string(),
        backend: engine.platform().to_string(),
        supported_modes: modes,
        interference,
        confidence: 1.0,
        verified_at: None,
        verification_source: VerificationSource::PlatformRule,
        certification: None,
    }
}

/// The decision, its reasons and the policy digest (SHA-256 of the canonical JSON of
/// the safety configuration that produced it, so a grant issued under one policy does
/// not carry over to another), with the class and mutation of what was judged.
pub(crate) struct Decided {
    pub verdict: PolicyVerdict,
    pub reasons: Vec<String>,
    pub policy_digest: String,
    /// The most severe class of the items.
    pub class: ActionClass,
    /// Whether any item changes the desktop.
    pub mutation: bool,
}

/// The contract's decision from the engine's assessment of the action (one call, or
/// a batch judged over every item as the gate judges it). The class is the most severe
/// of the items' (writing a secret is authentication); a batch is a mutation when one
/// of its items is.
pub(crate) fn decide(assessed: &Assessment) -> Decided {
    let mut class = ActionClass::Observe;
    let mut mutation = false;
    for item in &assessed.items {
        class = class.max(if item.writes_secret {
            ActionClass::Authentication
        } else {
            action_class(item.tool, item.risk)
        });
        mutation |= item.tool.mutates();
    }
    let safety_json = assessed
        .config
        .value()
        .get("safety")
        .cloned()
        .unwrap_or(Value::Null);
    let policy_digest = sha256_hex(&canonical_string(&CanonValue::from(&json!({
        "rules": safety_json.get("rules"),
        "defaultRule": safety_json.get("default_rule"),
        "confirmThreshold": safety_json.get("confirm_threshold"),
    }))));
    let (verdict_out, mut reason) = match assessed.outcome.clone() {
        Outcome::Deny { reason, .. } => (PolicyVerdict::Deny, reason),
        Outcome::Confirm { reason } => (PolicyVerdict::Confirm, reason),
        Outcome::Allow { reason } => (PolicyVerdict::Allow, reason),
    };
    if let (PolicyVerdict::Deny, Some(i), true) =
        (verdict_out, assessed.denied_item, assessed.tool.is_batch())
    {
        reason = format!("item {i} ({}): {reason}", assessed.items[i].tool.name);
    }
    Decided {
        verdict: verdict_out,
        reasons: vec![reason],
        policy_digest,
        class,
        mutation,
    }
}
