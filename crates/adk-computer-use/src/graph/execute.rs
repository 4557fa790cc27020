//! The `execute` node: everything is revalidated right before the one mutation.
//!
//! The preview is not mutation authority and time has passed since it (approval wait,
//! reservation, lease acquisition, perhaps a restart), so this node re-binds every input
//! from state at the current time — the preview channel, the envelope's freshness, the
//! lease, the reservation and its scope, the approval — and only then calls
//! `execute_action`, once. The receipt is bound to the envelope before it enters state.
//! That the call is about to be sent is checkpointed first, so a restart can tell an
//! execute that may have happened from one that never started.

use std::sync::Arc;

use super::preview::{active_preview, fresh_envelope};
use super::state::{GraphState, Node};
use crate::error::{ComputerUseError, ResponseObject};
use cc_contract::ActionEnvelope;

use crate::runtime::binding::{
    authorize_execute, rebind_receipt, validate_approval, validate_lease, validate_receipt,
    validate_reservation,
};
use crate::runtime::{Clock, ComputerUseRuntime, PreviewRecord};

fn missing(object: ResponseObject, what: &str) -> ComputerUseError {
    ComputerUseError::Runtime {
        operation: "execute_action",
        code: Some("invalid_state".into()),
        message: format!("no {what} ({object}) to execute under"),
    }
}

/// Revalidates, marks the call as sent (`mark_sent` checkpoints it), executes once,
/// binds the receipt.
///
/// After a restart the checkpoint may say the call was sent while the envelope has
/// expired since: the action may have happened, so the thread asks the runtime to
/// replay that call's receipt ([`ComputerUseRuntime::replay_receipt`]) instead of
/// failing on the expiry; nothing is authorized anew, and a runtime that never saw the
/// call refuses the expired envelope.
pub(super) async fn execute<R: ComputerUseRuntime>(
    runtime: &R,
    clock: &Arc<dyn Clock>,
    state: &mut GraphState,
    mark_sent: impl FnOnce(&mut GraphState) -> Result<(), ComputerUseError>,
) -> Result<(), ComputerUseError> {
    let (record, preview) = active_preview(state)?;
    let record = record.clone();
    let fresh = match fresh_envelope(&preview, clock) {
        Err(ComputerUseError::Expired { .. }) if state.execute_sent => {
            return replay(runtime, state, &record, &preview.envelope).await;
        }
        other => other?,
    };
    let lease = state
        .lease
        .as_ref()
        .filter(|h| !h.release_attempted)
        .ok_or_else(|| missing(ResponseObject::Lease, "held lease"))?;
    let lease = validate_lease(&lease.object, &fresh)?;
    let reservation = match &state.reservation {
        Some(held) if held.release_attempted => {
            return Err(missing(ResponseObject::Reservation, "held reservation"));
        }
        Some(held) => Some(validate_reservation(&held.object, &fresh)?),
        None => None,
    };
    let approval = state
        .approval
        .clone()
        .ok_or_else(|| missing(ResponseObject::Approval, "approval"))?;
    let approval = validate_approval(approval, &fresh, &preview.policy)?;
    let authorization = authorize_execute(&fresh, &lease, reservation.as_ref(), &approval)?;
    if !state.execute_sent {
        mark_sent(state)?;
    }
    let receipt = runtime.execute_action(&record, &authorization).await?;
    let bound = validate_receipt(&receipt, &fresh)?;
    state.receipt = Some(bound.into_inner());
    state.next = Node::Verify;
    Ok(())
}

/// The receipt of the call sent before a restart, for an envelope expired since.
async fn replay<R: ComputerUseRuntime>(
    runtime: &R,
    state: &mut GraphState,
    record: &PreviewRecord,
    envelope: &ActionEnvelope,
) -> Result<(), ComputerUseError> {
    let lease_id = state
        .lease
        .as_ref()
        .map(|h| h.object.lease_id.clone())
        .ok_or_else(|| missing(ResponseObject::Lease, "lease the call was sent under"))?;
    let receipt = runtime.replay_receipt(record, &lease_id).await?;
    let bound = rebind_receipt(&receipt, envelope)?;
    state.receipt = Some(bound.into_inner());
    state.next = Node::Verify;
    Ok(())
}
