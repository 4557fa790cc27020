//! The `approval` interrupt and its typed resume.
//!
//! On the approval route the graph saves a checkpoint and returns the preview as data. A
//! human approves on the operator channel and the caller resumes the thread with an
//! [`Approval`]: `ExactGrant` (checked locally: session, principal, digests, expiry, uses
//! left) or `RuntimeHeld` (the digests the runtime's grant was issued for). Anything else
//! fails here, before any reservation.

use std::sync::Arc;

use cc_contract::ApprovalGrant;

use super::preview::{active_preview, fresh_envelope};
use super::state::{GraphState, Node};
use crate::bound::Approval;
use crate::error::{ApprovalFailure, ComputerUseError};
use crate::runtime::binding::validate_approval;
use crate::runtime::{Clock, PreviewRecord};

/// What `resume` accepts: the approval, and state updates for the preview channel.
///
/// The channel is append-only: `previews` are appended, never substituted. They exist so
/// that a caller who tries to hand the graph a different preview on resume is refused
/// (the channel then holds two entries and the approval fails) instead of being silently
/// ignored.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumeInput {
    /// The approval given on the operator channel.
    pub approval: Approval,
    /// Entries to append to the preview channel (normally none).
    pub previews: Vec<PreviewRecord>,
}

impl ResumeInput {
    /// Resume with a grant issued on the operator channel.
    pub fn exact_grant(grant: ApprovalGrant) -> Self {
        Self {
            approval: Approval::ExactGrant {
                grant: Box::new(grant),
            },
            previews: Vec::new(),
        }
    }

    /// Resume relying on the grant the runtime holds for this action, naming the digests
    /// it was issued for.
    pub fn runtime_held(
        action_digest: impl Into<String>,
        policy_digest: impl Into<String>,
    ) -> Self {
        Self {
            approval: Approval::RuntimeHeld {
                action_digest: action_digest.into(),
                policy_digest: policy_digest.into(),
            },
            previews: Vec::new(),
        }
    }

    /// Adds an entry for the preview channel (which makes the resume fail: see the type).
    pub fn with_preview(mut self, record: PreviewRecord) -> Self {
        self.previews.push(record);
        self
    }
}

/// Records the resume input in state: appends to the channel, stores the approval.
pub(super) fn apply(state: &mut GraphState, input: ResumeInput) {
    state.previews.extend(input.previews);
    state.approval = Some(input.approval);
}

/// Checks the approval the thread resumed with. Needs exactly one preview in the channel,
/// a still-fresh envelope (the wait may have used up its window) and an approval of this
/// very action under this policy; `NotRequired` is refused on this route.
pub(super) fn approval(
    state: &mut GraphState,
    clock: &Arc<dyn Clock>,
) -> Result<(), ComputerUseError> {
    let (_, preview) = active_preview(state)?;
    let fresh = fresh_envelope(&preview, clock)?;
    let given = state.approval.clone().ok_or(ComputerUseError::Approval {
        failure: ApprovalFailure::Required,
    })?;
    if given == Approval::NotRequired {
        return Err(ComputerUseError::Approval {
            failure: ApprovalFailure::Required,
        });
    }
    validate_approval(given, &fresh, &preview.policy)?;
    state.awaiting_approval = false;
    state.next = Node::ReserveTarget;
    Ok(())
}
