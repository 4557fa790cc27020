//! The envelope an execution is authorized for must be the envelope the runtime previewed,
//! in every field — not merely the same action id. Compared on the contract's canonical
//! JSON, so formatting cannot hide or fake a difference.

use cc_contract::{ActionEnvelope, CanonValue, canonical_string};
use serde_json::{Map, Value};

use crate::error::{ComputerUseError, ResponseObject};
use crate::runtime::RuntimeResult;

/// The envelope's wire fields in contract order: the order in which a difference is named.
const FIELDS: &[&str] = &[
    "actionId",
    "sessionId",
    "executionGroupId",
    "principalId",
    "agentId",
    "tool",
    "operation",
    "actionClass",
    "requestedMode",
    "target",
    "targetSensitivity",
    "resource",
    "provenance",
    "dataLabels",
    "postcondition",
    "reversible",
    "externalSideEffect",
    "proposedAt",
    "expiresAt",
    "argsDigest",
];

/// Refuses `actual` unless its canonical JSON equals that of `previewed`; the error names
/// the first differing field, with both values in canonical form.
pub fn require_same_envelope(
    operation: &'static str,
    previewed: &ActionEnvelope,
    actual: &ActionEnvelope,
) -> RuntimeResult<()> {
    let expected = object(operation, previewed)?;
    let got = object(operation, actual)?;
    let whole = |m: &Map<String, Value>| canonical_string(&CanonValue::from(m));
    if whole(&expected) == whole(&got) {
        return Ok(());
    }
    let member = |m: &Map<String, Value>, key: &str| {
        m.get(key).map(|v| canonical_string(&CanonValue::from(v)))
    };
    for field in FIELDS {
        let (e, a) = (member(&expected, field), member(&got, field));
        if e != a {
            return Err(ComputerUseError::IdentityMismatch {
                object: ResponseObject::Envelope,
                field,
                expected: e,
                actual: a,
            });
        }
    }
    // A member outside the contract's list (not possible with the typed envelope, kept
    // total anyway): name the envelope itself.
    Err(ComputerUseError::IdentityMismatch {
        object: ResponseObject::Envelope,
        field: "envelope",
        expected: Some(whole(&expected)),
        actual: Some(whole(&got)),
    })
}

fn object(operation: &'static str, envelope: &ActionEnvelope) -> RuntimeResult<Map<String, Value>> {
    match serde_json::to_value(envelope) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err(super::reply::invalid_response(
            operation,
            format!("the envelope serializes to a non-object: {other}"),
        )),
        Err(e) => Err(super::reply::invalid_response(
            operation,
            format!("the envelope does not serialize: {e}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn envelope() -> ActionEnvelope {
        serde_json::from_value(json!({
            "actionId": "act-1", "sessionId": "ses-1", "principalId": "local-user",
            "tool": "pointer.click", "operation": "pointer.click", "actionClass": "edit_reversible",
            "requestedMode": "foreground", "dataLabels": [], "reversible": true,
            "externalSideEffect": false, "proposedAt": "2026-11-29T10:00:00.000Z",
            "expiresAt": "2026-11-29T10:01:00.000Z",
            "argsDigest": "0000000000000000000000000000000000000000000000000000000000000000"
        }))
        .expect("an envelope")
    }

    #[test]
    fn identical_envelopes_pass() {
        assert_eq!(
            require_same_envelope("execute_action", &envelope(), &envelope()),
            Ok(())
        );
    }

    #[test]
    fn any_changed_field_is_named_even_with_the_same_action_id() {
        let mut later = envelope();
        later.expires_at = "2026-11-29T10:05:00.000Z".into();
        assert_eq!(
            require_same_envelope("execute_action", &envelope(), &later),
            Err(ComputerUseError::IdentityMismatch {
                object: ResponseObject::Envelope,
                field: "expiresAt",
                expected: Some("\"2026-11-29T10:01:00.000Z\"".into()),
                actual: Some("\"2026-11-29T10:05:00.000Z\"".into()),
            })
        );
    }

    #[test]
    fn first_differing_field_in_contract_order_is_named() {
        let mut other = envelope();
        other.args_digest = "1".repeat(64);
        other.agent_id = Some("agent-b".into());
        let err =
            require_same_envelope("execute_action", &envelope(), &other).expect_err("differs");
        assert_eq!(err.mismatched_field(), Some("agentId"));
    }
}
