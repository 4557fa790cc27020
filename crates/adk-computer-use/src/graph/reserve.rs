//! The `reserve_target` node. A reservation is advisory (it never authorizes a mutation),
//! but one of another intent or scope is refused — and, since the runtime did hand it to
//! us, released on the spot.

use std::sync::Arc;

use super::cleanup::release_rejected_reservation;
use super::preview::{active_preview, fresh_envelope};
use super::state::{GraphState, Held, Node};
use crate::error::{ComputerUseError, with_cleanup};
use crate::runtime::binding::validate_reservation;
use crate::runtime::{Clock, ComputerUseRuntime};

/// Reserves the target when the runtime supports reservations, and binds the answer.
pub(super) async fn reserve_target<R: ComputerUseRuntime>(
    runtime: &R,
    clock: &Arc<dyn Clock>,
    state: &mut GraphState,
) -> Result<(), ComputerUseError> {
    let (record, preview) = active_preview(state)?;
    let record = record.clone();
    let fresh = fresh_envelope(&preview, clock)?;
    let Some(reservation) = runtime.reserve_target(&record).await? else {
        state.next = Node::AcquireLease;
        return Ok(());
    };
    match validate_reservation(&reservation, &fresh) {
        Ok(bound) => {
            state.reservation = Some(Held::new(bound.into_inner()));
            state.next = Node::AcquireLease;
            Ok(())
        }
        Err(refused) => {
            let cleanup = release_rejected_reservation(runtime, state, &reservation).await;
            with_cleanup(Err(refused), cleanup)
        }
    }
}
