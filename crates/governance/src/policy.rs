//! The policy decision of a preview, derived from the engine's own rules and risk
//! without acting, and the capability of a plain tool.
//!
//! The decision is `cc_engine::gate::outcome`, the same function the gate uses, so the
//! preview predicts what the gate will do when the action is performed:
//!
//! | engine                                                     | decision  |
//! |------------------------------------------------------------|-----------|
//! | a `deny` rule matches                                      | `deny`    |
//! | `default_rule: deny` and no `allow`/`confirm` rule matches | `deny`    |
//! | risk ≥ `confirm_threshold`, or a `confirm` rule matches     | `confirm` |
//! | otherwise                                                  | `allow`   |
//!
//! The rules are the base configuration's (`Engine::base_config`): a governed session
//! never reconfigures the engine, so they are the rules the gate applies.

use cc_contract::{
    ActionClass, CanonValue, ExecutionCapability, ExecutionMode, InterferenceLevel, PolicyVerdict,
    VerificationSource, canonical_string, sha256_hex,
};
use cc_engine::Engine;
use cc_engine::gate::{Outcome, outcome};
use cc_engine::risk::{Context, action_risk};
use cc_engine::rules::{Policy, Verdict};
use cc_engine::tools::{ToolDef, find, tools};
use cc_protocol::Risk;
use serde_json::{Value, json};

use crate::error::{GovResult, invalid};
use crate::inspect::{BATCH, Item};

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

/// Whether the tool changes the desktop (anything but a benign observation). The
/// batch tool counts as mutating here (for its capability); a batch *action* is a
/// mutation when one of its items is ([`decide`]).
pub(crate) fn is_mutation(def: &ToolDef) -> bool {
    def.risk != Risk::Benign || def.name == BATCH
}

/// The action class of a concrete action: observations, window focus (navigation),
/// shell-level combos (high risk: a privilege change of the session), and every other
/// input as a reversible edit.
pub(crate) fn action_class(def: &ToolDef, risk: Risk) -> ActionClass {
    if !is_mutation(def) {
        ActionClass::Observe
    } else if risk == Risk::High {
        ActionClass::PrivilegeChange
    } else if def.name == "window.focus" {
        ActionClass::Navigate
    } else {
        ActionClass::EditReversible
    }
}

/// What the tool can do on this backend. The desktop drivers inject real input into
/// the focused session, so a mutation is foreground-only; observations run in every
/// mode.
pub(crate) fn capability(engine: &Engine, def: &ToolDef, app_id: &str) -> ExecutionCapability {
    let (modes, interference) = if is_mutation(def) {
        let interference = if def.name.starts_with("pointer.") {
            InterferenceLevel::MovesPhysicalPointer
        } else if def.name == "window.focus" {
            InterferenceLevel::MayRaiseWindow
        } else {
            InterferenceLevel::TakesForeground
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

/// Evaluates the engine's rules and risk for the items of one action (one item, or
/// every item of a batch). For a batch the most restrictive item decides, merged as
/// the engine's gate merges a batch: the first deny of any item, a confirm of any
/// item, the highest risk; in allowlist mode every item must be listed.
pub(crate) fn decide(engine: &Engine, tool: &str, items: &[Item]) -> Decided {
    let config = engine.base_config().config();
    let safety = &config.safety;
    let policy = Policy::for_safety(safety);
    let mut merged = Verdict::default();
    let mut denied_item = None;
    let mut all_listed = true;
    let mut risk = Risk::Benign;
    let mut class = ActionClass::Observe;
    let mut mutation = false;
    for (i, item) in items.iter().enumerate() {
        let v = policy.evaluate(item.def.name, &item.args, &item.landing);
        if merged.deny.is_none() && v.deny.is_some() {
            merged.deny = v.deny;
            denied_item = Some(i);
        }
        merged.console |= v.console;
        merged.confirm = merged.confirm.or(v.confirm);
        merged.allow = merged.allow.or(v.allow);
        all_listed &= v.allow.is_some() || v.confirm.is_some();
        let ctx = Context {
            focused_password: item.writes_secret,
            target_password: item.writes_secret,
        };
        let r = action_risk(item.def.name, &item.args, &ctx);
        risk = risk.max(r);
        class = class.max(if item.writes_secret {
            ActionClass::Authentication
        } else {
            action_class(item.def, r)
        });
        mutation |= is_mutation(item.def);
    }
    if !all_listed {
        merged.allow = None;
        merged.confirm = None;
    }
    let safety_json = engine
        .base_config()
        .value()
        .get("safety")
        .cloned()
        .unwrap_or(Value::Null);
    let policy_digest = sha256_hex(&canonical_string(&CanonValue::from(&json!({
        "rules": safety_json.get("rules"),
        "defaultRule": safety_json.get("default_rule"),
        "confirmThreshold": safety_json.get("confirm_threshold"),
    }))));
    let (verdict_out, mut reason) = match outcome(safety, &merged, risk, tool) {
        Outcome::Deny { reason, .. } => (PolicyVerdict::Deny, reason),
        Outcome::Confirm { reason } => (PolicyVerdict::Confirm, reason),
        Outcome::Allow { reason } => (PolicyVerdict::Allow, reason),
    };
    if let (PolicyVerdict::Deny, Some(i), true) = (verdict_out, denied_item, tool == BATCH) {
        reason = format!("item {i} ({}): {reason}", items[i].def.name);
    }
    Decided {
        verdict: verdict_out,
        reasons: vec![reason],
        policy_digest,
        class,
        mutation,
    }
}
