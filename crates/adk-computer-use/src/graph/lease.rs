//! The `acquire_lease` node: the lease is the one writer gate, so it is bound to the
//! envelope (session, principal, agent, mode, state, budget, expiry, boundaries) before it
//! enters state.

use std::sync::Arc;

use super::cleanup::release_rejected_lease;
use super::preview::{active_preview, fresh_envelope};
use super::state::{GraphState, Held, Node};
use crate::error::{ComputerUseError, with_cleanup};
use crate::runtime::binding::validate_lease;
use crate::runtime::{Clock, ComputerUseRuntime};

/// Acquires the lease and binds it. A refused lease of this session and principal is
/// released at once; one of another session is not ours to release.
pub(super) async fn acquire_lease<R: ComputerUseRuntime>(
    runtime: &R,
    clock: &Arc<dyn Clock>,
    state: &mut GraphState,
) -> Result<(), ComputerUseError> {
    let (record, preview) = active_preview(state)?;
    let record = record.clone();
    let fresh = fresh_envelope(&preview, clock)?;
    let lease = runtime.acquire_lease(&record).await?;
    match validate_lease(&lease, &fresh) {
        Ok(bound) => {
            state.lease = Some(Held::new(bound.into_inner()));
            state.next = Node::Execute;
            Ok(())
        }
        Err(refused) => {
            let env = fresh.envelope();
            match release_rejected_lease(runtime, state, &lease, &env.session_id, &env.principal_id)
                .await
            {
                Some(cleanup) => with_cleanup(Err(refused), cleanup),
                None => Err(refused),
            }
        }
    }
}
