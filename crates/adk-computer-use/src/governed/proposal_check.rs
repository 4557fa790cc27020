//! A preview answers one proposal. This binds the envelope back to the proposal that
//! produced it — when the preview returns, and again before execute, because execute
//! sends the *proposal* (the envelope does not carry the tool's arguments) and the server
//! re-previews from it: a proposal altered after the preview would execute other work
//! under an approval given for this envelope.

use cc_contract::args::ArgumentForm;
use cc_contract::{ActionEnvelope, ArgsDigestInput, CanonValue, args_digest, canonical_string};
use serde::Serialize;

use crate::error::{ComputerUseError, ResponseObject};
use crate::runtime::{ProposedAction, RuntimeResult};

/// Refuses `envelope` unless every field the proposal decides equals the proposal's, and
/// the envelope's `argsDigest` is the digest of the proposal's arguments.
///
/// Ids and modes compare exactly; `tool` compares in its MCP-safe form (`pointer.click`
/// is `pointer_click`); `operation` and `executionGroupId` only when the proposal names
/// them (the server fills them in otherwise); evidence objects on their canonical JSON.
pub fn require_envelope_answers(
    proposal: &ProposedAction,
    envelope: &ActionEnvelope,
) -> RuntimeResult<()> {
    same("sessionId", &envelope.session_id, &proposal.session_id)?;
    same(
        "actionId",
        &envelope.action_id,
        proposal.action_id.as_deref().unwrap_or_default(),
    )?;
    same(
        "tool",
        &envelope.tool.replace('.', "_"),
        &proposal.tool.replace('.', "_"),
    )?;
    if let Some(operation) = &proposal.operation {
        same("operation", &envelope.operation, operation)?;
    }
    same(
        "requestedMode",
        envelope.requested_mode.as_str(),
        proposal.mode.as_str(),
    )?;
    same_json("agentId", &envelope.agent_id, &proposal.agent_id)?;
    if let Some(group) = &proposal.execution_group_id {
        same_json(
            "executionGroupId",
            &envelope.execution_group_id.as_ref(),
            &Some(group),
        )?;
    }
    // The server answers the target in its canonical form (`capturedAt` in milliseconds
    // and `Z`), the same normalisation the contract's argument form applies.
    let target = proposal.target.clone().map(ArgumentForm::normalized);
    same_json("target", &envelope.target, &target)?;
    same_json(
        "postcondition",
        &envelope.postcondition,
        &proposal.postcondition,
    )?;
    same_json("provenance", &envelope.provenance, &proposal.provenance)?;
    same_json("dataLabels", &envelope.data_labels, &proposal.data_labels)?;
    let digest = args_digest(&ArgsDigestInput::from_envelope(
        envelope,
        &proposal.arguments,
    ));
    same("argsDigest", &envelope.args_digest, &digest)
}

fn same(field: &'static str, envelope: &str, proposal: &str) -> RuntimeResult<()> {
    if envelope == proposal {
        Ok(())
    } else {
        Err(mismatch(
            field,
            Some(envelope.to_string()),
            Some(proposal.to_string()),
        ))
    }
}

fn same_json<T: Serialize>(field: &'static str, envelope: &T, proposal: &T) -> RuntimeResult<()> {
    let (e, p) = (canon(envelope), canon(proposal));
    if e == p {
        Ok(())
    } else {
        Err(mismatch(field, e, p))
    }
}

/// Canonical JSON of a value; `None` for an absent one (or one that does not serialize,
/// which then cannot equal a present value).
fn canon<T: Serialize>(value: &T) -> Option<String> {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Null) | Err(_) => None,
        Ok(v) => Some(canonical_string(&CanonValue::from(&v))),
    }
}

fn mismatch(
    field: &'static str,
    expected: Option<String>,
    actual: Option<String>,
) -> ComputerUseError {
    ComputerUseError::IdentityMismatch {
        object: ResponseObject::Envelope,
        field,
        expected,
        actual,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn proposal() -> ProposedAction {
        serde_json::from_value(json!({
            "session_id": "ses-1", "action_id": "act-1", "tool": "pointer_click",
            "arguments": {"x": 3, "y": 4}, "mode": "foreground"
        }))
        .expect("a proposal")
    }

    fn envelope_for(p: &ProposedAction) -> ActionEnvelope {
        let mut e: ActionEnvelope = serde_json::from_value(json!({
            "actionId": "act-1", "sessionId": "ses-1", "principalId": "local-user",
            "tool": "pointer.click", "operation": "pointer.click", "actionClass": "edit_reversible",
            "requestedMode": "foreground", "dataLabels": [], "reversible": true,
            "externalSideEffect": false, "proposedAt": "2026-11-29T10:00:00.000Z",
            "expiresAt": "2026-11-29T10:01:00.000Z", "argsDigest": ""
        }))
        .expect("an envelope");
        e.args_digest = args_digest(&ArgsDigestInput::from_envelope(&e, &p.arguments));
        e
    }

    #[test]
    fn the_envelope_of_the_proposal_passes() {
        let p = proposal();
        assert_eq!(require_envelope_answers(&p, &envelope_for(&p)), Ok(()));
    }

    #[test]
    fn altered_arguments_break_the_digest() {
        let p = proposal();
        let envelope = envelope_for(&p);
        let mut altered = p.clone();
        altered.arguments.insert("x".into(), json!(300));
        let err = require_envelope_answers(&altered, &envelope).expect_err("other work");
        assert_eq!(err.mismatched_field(), Some("argsDigest"));
    }

    #[test]
    fn each_decided_field_is_named() {
        let p = proposal();
        let envelope = envelope_for(&p);
        type Alter = Box<dyn Fn(&mut ProposedAction)>;
        let cases: Vec<(&str, Alter)> = vec![
            ("sessionId", Box::new(|p| p.session_id = "ses-2".into())),
            ("actionId", Box::new(|p| p.action_id = Some("act-2".into()))),
            ("tool", Box::new(|p| p.tool = "keyboard_type".into())),
            (
                "operation",
                Box::new(|p| p.operation = Some("other".into())),
            ),
            (
                "requestedMode",
                Box::new(|p| p.mode = cc_contract::ExecutionMode::Shadow),
            ),
            ("agentId", Box::new(|p| p.agent_id = Some("agent-b".into()))),
            (
                "executionGroupId",
                Box::new(|p| p.execution_group_id = Some("g".into())),
            ),
            (
                "dataLabels",
                Box::new(|p| p.data_labels = vec![cc_contract::DataLabel::Private]),
            ),
        ];
        for (field, alter) in cases {
            let mut altered = p.clone();
            alter(&mut altered);
            let err = require_envelope_answers(&altered, &envelope).expect_err(field);
            assert_eq!(err.mismatched_field(), Some(field), "{err:?}");
        }
    }
}
