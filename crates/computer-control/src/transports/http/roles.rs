//! The two roles of PROTOCOL §8 and the methods only an operator may call.
//!
//! The agent (the model's harness) may drive the desktop and may stop itself; only the
//! operator may undo a stop, approve its own risky actions or change the configuration
//! it runs under beyond the agent's own settings (`cc_engine::config::AGENT_SETTABLE`).
//! The check is on the *effect* of a call, not only its name: `control.panic` engaging
//! the stop is fine for an agent, releasing it is not.

use cc_engine::config;

pub use crate::transports::identity::Role;
use serde_json::Value;

/// A refused message: which method, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub method: String,
    pub id: Value,
    pub why: String,
}

/// The first message of a request (one message or a batch) that `role` may not send.
pub fn refusal(role: Role, request: &Value) -> Option<Refusal> {
    if role == Role::Operator {
        return None;
    }
    match request {
        Value::Array(items) => items.iter().find_map(agent_refusal),
        one => agent_refusal(one),
    }
}

fn agent_refusal(msg: &Value) -> Option<Refusal> {
    let method = msg.get("method")?.as_str()?;
    let params = msg.get("params").unwrap_or(&Value::Null);
    let why = match method {
        "session.confirm" => "approving or denying a confirmation needs the operator token".into(),
        "session.resume" => {
            "resuming a stopped or standby session needs the operator token".into()
        }
        "control.panic" if !engages(params) => {
            "an agent may engage the emergency stop ({\"on\": true}) but only the operator may release it".into()
        }
        "session.configure" | "session.start" => {
            let key = if method == "session.start" { "config" } else { "patch" };
            let path = config::first_operator_only(&config::patch_of(params, key))?;
            format!(
                "`{path}` is the operator's to set; an agent may set only {}",
                config::AGENT_SETTABLE.join(", ")
            )
        }
        _ => return None,
    };
    Some(Refusal {
        method: method.to_string(),
        id: msg.get("id").cloned().unwrap_or(Value::Null),
        why,
    })
}

/// `on` is true as the engine reads booleans (`true`, `"true"`, `"1"`): anything else
/// would release the stop or be rejected, so the agent is refused either way.
fn engages(params: &Value) -> bool {
    match params.get("on") {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s == "true" || s == "1",
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    }

    #[test]
    fn agent_refusals() {
        let refused = [
            req(
                "session.confirm",
                json!({"request_id": "cfm-1", "approve": true}),
            ),
            req("session.resume", json!({})),
            req("control.panic", json!({"on": false})),
            req("control.panic", json!({"on": "0"})),
            req("control.panic", json!({})),
            req("session.configure", json!({"safety": {"rules": []}})),
            req("session.configure", json!({"patch": {"safety": {}}})),
            req("session.start", json!({"config": {"safety": {}}})),
            req("session.start", json!({"safety": {}})),
            // Not only safety: an agent cannot turn redaction off or lift limits.
            req(
                "session.configure",
                json!({"capture": {"redact_sensitive": false}}),
            ),
            req("session.start", json!({"capture": {"max_bytes": 1}})),
            req("session.configure", json!({"platform": {}})),
        ];
        for r in refused {
            assert!(refusal(Role::Agent, &r).is_some(), "{r}");
            assert!(refusal(Role::Operator, &r).is_none(), "{r}");
        }
        let allowed = [
            req("control.panic", json!({"on": true})),
            req("control.panic", json!({"on": "1"})),
            req(
                "session.configure",
                json!({"capture": {"default_format": "jpeg"}}),
            ),
            req("session.start", json!({})),
            req(
                "tools.call",
                json!({"tool": "wait.pause", "arguments": {"ms": 0}}),
            ),
            json!({"not": "a request"}),
        ];
        for r in allowed {
            assert!(refusal(Role::Agent, &r).is_none(), "{r}");
        }
        let batch = json!([
            req("system.status", json!({})),
            req("session.resume", Value::Null)
        ]);
        assert_eq!(
            refusal(Role::Agent, &batch).map(|r| r.method),
            Some("session.resume".to_string())
        );
    }
}
