//! The `verify` node. Verification is not commitment: a committed receipt says the action
//! was performed, not that its effect happened, so the node writes three things —
//! `verified` (only `Verified`), `committed`, and `result.verificationDetail` explaining
//! anything below `Verified`.

use super::preview::active_preview;
use super::state::{GraphResult, GraphState, Node, OutcomeKind};
use crate::error::ComputerUseError;
use crate::runtime::ComputerUseRuntime;
use crate::runtime::binding::rebind_receipt;
use crate::verification::VerificationOutcome;

/// Grades the receipt against the envelope's postcondition.
pub(super) async fn verify<R: ComputerUseRuntime>(
    runtime: &R,
    state: &mut GraphState,
) -> Result<(), ComputerUseError> {
    let (_, preview) = active_preview(state)?;
    let receipt = state.receipt.as_ref().ok_or(ComputerUseError::Runtime {
        operation: "verify",
        code: Some("invalid_state".into()),
        message: "no receipt to verify".into(),
    })?;
    let bound = rebind_receipt(receipt, &preview.envelope)?;
    let outcome = runtime
        .verify(&bound, preview.envelope.postcondition.as_ref())
        .await;
    state.verified = Some(outcome.is_verified());
    state.committed = Some(outcome.is_committed());
    state.result = Some(GraphResult {
        outcome: match outcome {
            VerificationOutcome::Verified => OutcomeKind::Verified,
            VerificationOutcome::CommittedUnverified { .. } => OutcomeKind::CommittedUnverified,
            VerificationOutcome::Failed { .. } => OutcomeKind::Failed,
        },
        verification_detail: outcome.detail(),
    });
    state.next = Node::End;
    Ok(())
}
