//! The `execute` node: everything is revalidated right before the one mutation.
//!
//! The preview is not mutation authority and time has passed since it (approval wait,
//! reservation, lease acquisition, perhaps a restart), so this node re-binds every input
//! from state at the current time — the preview channel, the envelope's freshness, the
//! lease, the reservation and its scope, the approval — and only then calls
//! `execute_action`, once. The receipt is bound to the envelope before it enters state.

use std::sync::Arc;

use super::preview::{active_preview, fresh_envelope};
use super::state::{GraphState, Node};
use crate::error::{ComputerUseError, ResponseObject};
use crate::runtime::binding::{
    authorize_execute, validate_approval, validate_lease, validate_receipt, validate_reservation,
};
use crate::runtime::{Clock, ComputerUseRuntime};

fn missing(object: ResponseObject, what: &str) -> ComputerUseError {
    ComputerUseError::Runtime {
        operation: "execute_action",
        code: Some("invalid_state".into()),
        message: format!("no {what} ({object}) to execute under"),
    }
}

/// Revalidates, executes once, binds the receipt.
pub(super) async fn execute<R: ComputerUseRuntime>(
    runtime: &R,
    clock: &Arc<dyn Clock>,
    state: &mut GraphState,
) -> Result<(), ComputerUseError> {
    let (record, preview) = active_preview(state)?;
    let fresh = fresh_envelope(&preview, clock)?;
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
    let receipt = runtime.execute_action(record, &authorization).await?;
    let bound = validate_receipt(&receipt, &fresh)?;
    state.receipt = Some(bound.into_inner());
    state.next = Node::Verify;
    Ok(())
}
