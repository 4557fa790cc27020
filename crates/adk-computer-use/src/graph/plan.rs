//! The `plan` node: the caller's [`Planner`] turns observations into an action; the graph
//! adds the session and a deterministic action id.

use std::future::Future;

use cc_contract::{
    ActionPostcondition, ActionProvenance, DataLabel, ExecutionMode, TargetEvidence, sha256_hex,
};
use serde_json::{Map, Value};

use super::state::Node;
use crate::runtime::{ProposedAction, RuntimeCapabilities, SemanticObservation, VisualObservation};

/// What the planner sees: the capabilities and both observations, with their full content
/// (image bytes, accessibility tree) held in memory for this run only.
#[derive(Debug)]
pub struct PlanInput<'a> {
    /// The thread being planned.
    pub thread_id: &'a str,
    /// The runtime session.
    pub session_id: &'a str,
    /// What the runtime serves.
    pub capabilities: &'a RuntimeCapabilities,
    /// The screenshot (`image` is set: the graph re-observes after a restart rather than
    /// plan from a digest).
    pub visual: &'a VisualObservation,
    /// The accessibility snapshot (`tree` is set, as for `visual`).
    pub semantic: &'a SemanticObservation,
}

/// An action as the planner proposes it, before the graph binds it to its session and
/// gives it its action id.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedAction {
    /// The plain tool (`pointer.click`, `a11y.activate`, ...).
    pub tool: String,
    /// The tool's operation, when it has several.
    pub operation: Option<String>,
    /// The plain tool's arguments.
    pub arguments: Map<String, Value>,
    /// Requested execution mode.
    pub mode: ExecutionMode,
    /// Evidence of the target observed when planning.
    pub target: Option<TargetEvidence>,
    /// What must hold after the effect; without one the best outcome is
    /// `CommittedUnverified`.
    pub postcondition: Option<ActionPostcondition>,
    /// Labels of the data the action touches.
    pub data_labels: Option<Vec<DataLabel>>,
    /// Where the instruction came from.
    pub provenance: Option<ActionProvenance>,
    /// The agent acting.
    pub agent_id: Option<String>,
    /// Groups actions of one plan.
    pub execution_group_id: Option<String>,
    /// Lifetime of the envelope in milliseconds (≤ 300 000).
    pub expires_in_ms: Option<u64>,
}

impl PlannedAction {
    /// A foreground action of `tool` with `arguments`, everything else unset.
    pub fn new(tool: impl Into<String>, arguments: Map<String, Value>) -> Self {
        Self {
            tool: tool.into(),
            operation: None,
            arguments,
            mode: ExecutionMode::Foreground,
            target: None,
            postcondition: None,
            data_labels: None,
            provenance: None,
            agent_id: None,
            execution_group_id: None,
            expires_in_ms: None,
        }
    }
}

/// Turns observations and capabilities into one action. Supplied by the caller (a model,
/// a script); the graph never decides what to do, only whether and how it may be done.
pub trait Planner: Send + Sync {
    /// Proposes the action, or says why it cannot.
    fn plan(
        &self,
        input: &PlanInput<'_>,
    ) -> impl Future<Output = Result<PlannedAction, String>> + Send;
}

/// Any synchronous closure is a planner.
impl<F> Planner for F
where
    F: Fn(&PlanInput<'_>) -> Result<PlannedAction, String> + Send + Sync,
{
    fn plan(
        &self,
        input: &PlanInput<'_>,
    ) -> impl Future<Output = Result<PlannedAction, String>> + Send {
        std::future::ready(self(input))
    }
}

/// The action id of the action `node` performs in `thread_id`: a digest, so the same
/// thread always proposes under the same id and a retried `execute` after a crash makes
/// the runtime replay the stored receipt instead of acting again.
pub fn action_id_for(thread_id: &str, node: Node) -> String {
    let digest = sha256_hex(&format!("adk-computer-use/action/v1\n{thread_id}\n{node}"));
    format!("act-{}", &digest[..32])
}

/// The proposal the graph previews: the planner's action under the thread's session and
/// deterministic action id, first attempt.
pub(super) fn proposal(
    thread_id: &str,
    session_id: &str,
    planned: PlannedAction,
) -> ProposedAction {
    ProposedAction {
        session_id: session_id.to_owned(),
        action_id: action_id_for(thread_id, Node::Execute),
        attempt: Some(1),
        execution_group_id: planned.execution_group_id,
        agent_id: planned.agent_id,
        tool: planned.tool,
        operation: planned.operation,
        arguments: planned.arguments,
        mode: planned.mode,
        target: planned.target,
        postcondition: planned.postcondition,
        data_labels: planned.data_labels,
        provenance: planned.provenance,
        expires_in_ms: planned.expires_in_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_id_is_deterministic_per_thread_and_node() {
        let a = action_id_for("thread-1", Node::Execute);
        assert_eq!(a, action_id_for("thread-1", Node::Execute));
        assert_ne!(a, action_id_for("thread-2", Node::Execute));
        assert_ne!(a, action_id_for("thread-1", Node::Verify));
        assert!(a.starts_with("act-") && a.len() == 36, "{a}");
    }
}
