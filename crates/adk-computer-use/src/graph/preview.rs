//! The `preview` node and the append-only preview channel.
//!
//! The preview is checked when it returns: it must answer this proposal (session, action,
//! mode, target, postcondition, and an `argsDigest` recomputed from the envelope and the
//! proposed arguments) and be fresh, so an expired or foreign preview never reaches
//! approval or reservation. It is then stored twice: as the active preview and as the one
//! entry of the channel. Every later node requires the channel to hold exactly that one
//! entry, byte for byte.

use std::sync::Arc;

use cc_contract::{ActionPreview, ArgsDigestInput, args_digest};

use super::state::{GraphState, Node};
use crate::bound::FreshEnvelope;
use crate::error::{ComputerUseError, ResponseObject};
use crate::runtime::binding::validate_envelope_freshness;
use crate::runtime::{Clock, ComputerUseRuntime, PreviewRecord, ProposedAction};

const OBJECT: ResponseObject = ResponseObject::Envelope;

/// Previews the proposal, binds the preview to it and checks its freshness.
pub(super) async fn preview<R: ComputerUseRuntime>(
    runtime: &R,
    clock: &Arc<dyn Clock>,
    state: &mut GraphState,
) -> Result<(), ComputerUseError> {
    let proposal = state.proposal.as_ref().ok_or(ComputerUseError::Runtime {
        operation: "preview_action",
        code: Some("invalid_state".into()),
        message: "no proposal to preview".into(),
    })?;
    let record = runtime.preview_action(proposal).await?;
    if record.proposal != *proposal {
        return Err(mismatch(
            "proposal",
            "the proposal sent",
            "another proposal",
        ));
    }
    let decoded = record.preview()?;
    bind_preview(proposal, &decoded)?;
    validate_envelope_freshness(&decoded.envelope, clock.clone())?;
    state.active_preview = Some(record.clone());
    state.previews.push(record);
    state.next = Node::Route;
    Ok(())
}

/// The preview answers `proposal`: same session, action and mode; the target and
/// postcondition as proposed; optional ids absent or equal; and an `argsDigest` that is
/// the digest of the envelope with the proposed arguments (the envelope does not carry
/// them, so a runtime that previewed other arguments is caught here).
fn bind_preview(
    proposal: &ProposedAction,
    preview: &ActionPreview,
) -> Result<(), ComputerUseError> {
    let env = &preview.envelope;
    eq("sessionId", &proposal.session_id, &env.session_id)?;
    eq(
        "actionId",
        proposal.action_id.as_deref().unwrap_or_default(),
        &env.action_id,
    )?;
    eq(
        "requestedMode",
        proposal.mode.as_str(),
        env.requested_mode.as_str(),
    )?;
    if let (Some(expected), Some(actual)) = (&proposal.agent_id, &env.agent_id) {
        eq("agentId", expected, actual)?;
    }
    if let (Some(expected), Some(actual)) = (&proposal.execution_group_id, &env.execution_group_id)
    {
        eq("executionGroupId", expected, actual)?;
    }
    if proposal.target != env.target {
        return Err(mismatch("target", "the proposed target", "another target"));
    }
    if proposal.postcondition != env.postcondition {
        return Err(mismatch(
            "postcondition",
            "the proposed postcondition",
            "another postcondition",
        ));
    }
    let recomputed = args_digest(&ArgsDigestInput::from_envelope(env, &proposal.arguments));
    eq("argsDigest", &recomputed, &env.args_digest)
}

fn eq(field: &'static str, expected: &str, actual: &str) -> Result<(), ComputerUseError> {
    if expected == actual {
        Ok(())
    } else {
        Err(mismatch(field, expected, actual))
    }
}

fn mismatch(field: &'static str, expected: &str, actual: &str) -> ComputerUseError {
    ComputerUseError::IdentityMismatch {
        object: OBJECT,
        field,
        expected: Some(expected.to_owned()),
        actual: Some(actual.to_owned()),
    }
}

/// The active preview, after checking the channel: exactly one entry, equal to the active
/// preview in raw bytes and hash, and the hash still that of the bytes. A resume that
/// tried to replace the preview left a second entry and fails here, before reservation or
/// mutation. Field `previews` names the channel in the error.
pub(super) fn active_preview(
    state: &GraphState,
) -> Result<(&PreviewRecord, ActionPreview), ComputerUseError> {
    let active = state
        .active_preview
        .as_ref()
        .ok_or(ComputerUseError::IdentityMismatch {
            object: OBJECT,
            field: "previews",
            expected: Some("an active preview".into()),
            actual: None,
        })?;
    match state.previews.as_slice() {
        [only] if only.raw == active.raw && only.sha256 == active.sha256 => {}
        entries => {
            return Err(ComputerUseError::IdentityMismatch {
                object: OBJECT,
                field: "previews",
                expected: Some(format!("1 entry, sha256 {}", active.sha256)),
                actual: Some(format!(
                    "{} entries: [{}]",
                    entries.len(),
                    entries
                        .iter()
                        .map(|e| e.sha256.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            });
        }
    }
    let decoded = active.preview()?;
    Ok((active, decoded))
}

/// The active preview's envelope, checked fresh now.
pub(super) fn fresh_envelope(
    preview: &ActionPreview,
    clock: &Arc<dyn Clock>,
) -> Result<FreshEnvelope, ComputerUseError> {
    validate_envelope_freshness(&preview.envelope, clock.clone())
}
