//! What a run of the graph returns: it stopped for approval, it was blocked, it completed,
//! or it failed with a structured error.

use cc_contract::{ActionPreview, ExecutionReceipt};

use super::plan::PlanError;
use super::state::{BlockedRecord, GraphResult, Node};
use crate::checkpoint::CheckpointError;
use crate::error::ComputerUseError;
use crate::runtime::PreviewRecord;

/// How one call of [`run`](super::ComputerUseGraph::run) or
/// [`resume`](super::ComputerUseGraph::resume) ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunOutcome {
    /// The approval interrupt: the thread is checkpointed and waits for
    /// [`resume`](super::ComputerUseGraph::resume) with a typed approval.
    Interrupted(Box<ApprovalRequest>),
    /// The policy denied the action or the preview carries a blocker: nothing was
    /// reserved, leased or executed.
    Blocked(BlockedRecord),
    /// The action was executed and graded.
    Completed(Box<Completion>),
}

/// The data of the approval interrupt: what a human is asked to approve.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    /// The thread to resume.
    pub thread_id: String,
    /// The preview exactly as the runtime returned it.
    pub record: PreviewRecord,
    /// The preview decoded (envelope, capability, policy).
    pub preview: ActionPreview,
}

/// The result of an executed action.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// The receipt, bound to the envelope.
    pub receipt: ExecutionReceipt,
    /// Only `Verified` is verified.
    pub verified: bool,
    /// The runtime performed the action (whatever the evidence of its effect).
    pub committed: bool,
    /// The grade and `verificationDetail`.
    pub result: GraphResult,
}

/// Why a run stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// A node failed. Whatever the thread held was released first; when a release failed
    /// too, `source` is [`ComputerUseError::Cleanup`] carrying both.
    #[error("thread `{thread_id}`: {node} failed: {source}")]
    Step {
        /// The thread.
        thread_id: String,
        /// The node that failed.
        node: Node,
        /// The failure.
        source: ComputerUseError,
    },
    /// The planner could not propose an action.
    #[error("thread `{thread_id}`: the planner failed: {source}")]
    Plan {
        /// The thread.
        thread_id: String,
        /// What the planner said.
        source: PlanError,
    },
    /// A checkpoint could not be read or written. When the thread held a reservation or a
    /// lease, it was released; `cleanup` is the release failure, if any.
    #[error("checkpoint failed: {source}{}", cleanup.as_ref().map(|c| format!("; cleanup also failed: {c}")).unwrap_or_default())]
    Checkpoint {
        /// The checkpoint failure.
        source: Box<CheckpointError>,
        /// The release failure that followed, if any.
        cleanup: Option<Box<ComputerUseError>>,
    },
    /// `resume` on a thread that is not waiting for approval.
    #[error("thread `{thread_id}` is not waiting for approval (next node: {next})")]
    NotAwaitingApproval {
        /// The thread.
        thread_id: String,
        /// Where the thread stands.
        next: Node,
    },
    /// `resume` on a thread that has never run.
    #[error("thread `{thread_id}` has no checkpoint")]
    UnknownThread {
        /// The thread.
        thread_id: String,
    },
    /// The thread ended in a failure earlier; it does not act again.
    #[error("thread `{thread_id}` ended with a failure at {node}: {message}")]
    Ended {
        /// The thread.
        thread_id: String,
        /// The node that failed.
        node: Node,
        /// The recorded failure.
        message: String,
    },
}

impl GraphError {
    /// The node failure, when this is one: lets callers route on the structured
    /// [`ComputerUseError`].
    pub fn step_error(&self) -> Option<(Node, &ComputerUseError)> {
        match self {
            GraphError::Step { node, source, .. } => Some((*node, source)),
            _ => None,
        }
    }
}

impl From<CheckpointError> for GraphError {
    fn from(source: CheckpointError) -> Self {
        GraphError::Checkpoint {
            source: Box::new(source),
            cleanup: None,
        }
    }
}
