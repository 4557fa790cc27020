//! The `route` node: `allowed | approval | blocked`, from the preview's policy verdict and
//! blocker.

use cc_contract::{ActionPreview, Blocker, PolicyVerdict};

use super::preview::active_preview;
use super::state::{BlockedRecord, GraphState, Node, Route};
use crate::bound::Approval;
use crate::error::ComputerUseError;

/// Decides the branch for `preview`.
///
/// `deny`, or any blocker other than `approval_required`, is blocked; a preview that says
/// it is not executable without naming a blocker is blocked too (it cannot be trusted to
/// run). `confirm` goes to the approval interrupt, `allow` straight on.
pub fn route_of(preview: &ActionPreview) -> Route {
    match (preview.policy.decision, preview.blocker) {
        (PolicyVerdict::Deny, _) => Route::Blocked,
        (_, Some(blocker)) if blocker != Blocker::ApprovalRequired => Route::Blocked,
        (PolicyVerdict::Confirm, _) => Route::Approval,
        (PolicyVerdict::Allow, Some(_)) => Route::Approval,
        (PolicyVerdict::Allow, None) if preview.executable => Route::Allowed,
        (PolicyVerdict::Allow, None) => Route::Blocked,
    }
}

/// Records the branch and where it leads.
pub(super) fn route(state: &mut GraphState) -> Result<(), ComputerUseError> {
    let (_, preview) = active_preview(state)?;
    let route = route_of(&preview);
    match route {
        Route::Allowed => {
            state.approval = Some(Approval::NotRequired);
            state.next = Node::ReserveTarget;
        }
        Route::Approval => state.next = Node::Approval,
        Route::Blocked => {
            state.blocked = Some(BlockedRecord {
                decision: preview.policy.decision,
                blocker: preview.blocker,
                reasons: preview.policy.reasons.clone(),
            });
            state.next = Node::End;
        }
    }
    state.route = Some(route);
    Ok(())
}
