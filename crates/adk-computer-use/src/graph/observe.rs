//! `discover ∥ observe_visual ∥ observe_semantic` and `join`.
//!
//! The three branches run concurrently; their results enter state as digests (the pixels
//! and the tree stay in this process's memory, for the planner only).

use super::state::{GraphState, Node};
use crate::error::ComputerUseError;
use crate::runtime::ComputerUseRuntime;

/// Starts the session when the thread has none, then runs the three branches together.
/// When several fail, the first in the fixed order (discover, visual, semantic) is the
/// error, so the result is the same on every run.
pub(super) async fn observe<R: ComputerUseRuntime>(
    runtime: &R,
    objective: Option<&str>,
    state: &mut GraphState,
) -> Result<(), ComputerUseError> {
    if state.session_id.is_none() {
        state.session_id = Some(runtime.start_session(objective).await?);
    }
    let (capabilities, visual, semantic) = tokio::join!(
        runtime.discover_capabilities(),
        runtime.observe_visual(),
        runtime.observe_semantic()
    );
    state.capabilities = Some(capabilities?);
    state.visual = Some(visual?);
    state.semantic = Some(semantic?);
    state.observed_here = true;
    state.next = Node::Join;
    Ok(())
}

/// Checks that every branch left its value and that the observations carry digests.
pub(super) fn join(state: &mut GraphState) -> Result<(), ComputerUseError> {
    let missing = |what: &str| ComputerUseError::Runtime {
        operation: "observe",
        code: Some("invalid_response".into()),
        message: format!("the {what} branch left no value"),
    };
    state
        .capabilities
        .as_ref()
        .ok_or_else(|| missing("discover"))?;
    let visual = state
        .visual
        .as_ref()
        .ok_or_else(|| missing("observe_visual"))?;
    let semantic = state
        .semantic
        .as_ref()
        .ok_or_else(|| missing("observe_semantic"))?;
    for (what, digest) in [("visual", &visual.digest), ("semantic", &semantic.digest)] {
        if !cc_contract::sha256::is_value_digest(digest) {
            return Err(ComputerUseError::Runtime {
                operation: "observe",
                code: Some("invalid_response".into()),
                message: format!("the {what} observation digest `{digest}` is not sha256:<64 hex>"),
            });
        }
    }
    state.next = Node::Plan;
    Ok(())
}
