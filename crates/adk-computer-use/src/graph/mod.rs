//! The reference graph (GOVERNANCE.md Part B): a deterministic state machine over any
//! [`ComputerUseRuntime`], checkpointed after every node.
//!
//! ```text
//! discover ∥ observe_visual ∥ observe_semantic → join → plan → preview
//!   → route ─ allowed ──────────────────────┐
//!           ─ approval → (interrupt/resume) ─┴→ reserve_target → acquire_lease
//!           ─ blocked → end                       → execute → verify → end
//! ```
//!
//! The graph performs no effect itself: it orders observation, approval, mutation and
//! verification, and checks what the runtime returns before it enters state. Every node's
//! resulting state is written to the [`CheckpointStore`] before the next node runs;
//! [`ComputerUseGraph::run`] continues a thread from its last checkpoint, so a process
//! killed while waiting for approval is resumed by another and acts exactly once (the
//! action id is derived from the thread, so a retried `execute` replays the runtime's
//! receipt). Whatever the thread holds — reservation, lease — is released on every
//! terminal path, once.

mod approval;
mod cleanup;
mod execute;
mod lease;
mod observe;
mod outcome;
mod plan;
mod preview;
mod reserve;
mod routing;
mod state;
mod verify;

pub use approval::ResumeInput;
pub use outcome::{ApprovalRequest, Completion, GraphError, RunOutcome};
pub use plan::{PlanError, PlanInput, PlannedAction, Planner, action_id_for};
pub use routing::route_of;
pub use state::{
    BlockedRecord, FailureRecord, GraphResult, GraphState, Held, Node, OutcomeKind, ReleaseRecord,
    Released, Route,
};

use std::sync::Arc;

use crate::checkpoint::{CheckpointError, CheckpointStore};
use crate::error::ComputerUseError;
use crate::runtime::{Clock, ComputerUseRuntime};

/// The graph: a runtime, the caller's planner, the checkpoint store and the clock every
/// expiry check reads.
pub struct ComputerUseGraph<R, P> {
    runtime: R,
    planner: P,
    checkpoints: Box<dyn CheckpointStore>,
    clock: Arc<dyn Clock>,
    objective: Option<String>,
    session_id: Option<String>,
}

/// Why a node stopped the thread (internal: turned into a [`GraphError`]).
enum Failure {
    Step(ComputerUseError),
    Plan(PlanError),
    Checkpoint(CheckpointError),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Step(e) => write!(f, "{e}"),
            Failure::Plan(m) => write!(f, "the planner failed: {m}"),
            Failure::Checkpoint(e) => write!(f, "{e}"),
        }
    }
}

impl From<ComputerUseError> for Failure {
    fn from(e: ComputerUseError) -> Self {
        Failure::Step(e)
    }
}

impl<R: ComputerUseRuntime, P: Planner> ComputerUseGraph<R, P> {
    /// A graph over `runtime`, planning with `planner`, checkpointing in `checkpoints`
    /// (a [`crate::checkpoint::SqliteCheckpointer`] to survive restarts).
    pub fn new(
        runtime: R,
        planner: P,
        checkpoints: impl CheckpointStore + 'static,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            runtime,
            planner,
            checkpoints: Box::new(checkpoints),
            clock,
            objective: None,
            session_id: None,
        }
    }

    /// The objective passed to `start_session` when a thread starts its own session.
    pub fn with_objective(mut self, objective: impl Into<String>) -> Self {
        self.objective = Some(objective.into());
        self
    }

    /// Runs new threads in an existing runtime session instead of starting one.
    pub fn with_session(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }

    /// The runtime the graph drives.
    pub fn runtime(&self) -> &R {
        &self.runtime
    }

    /// The checkpoint store.
    pub fn checkpoints(&self) -> &dyn CheckpointStore {
        self.checkpoints.as_ref()
    }

    /// The last checkpointed state of `thread_id`, if it has run.
    pub fn state(&self, thread_id: &str) -> Result<Option<GraphState>, GraphError> {
        Ok(self.load(thread_id)?)
    }

    /// Runs `thread_id` from its last checkpoint (from the start if it has none) until it
    /// is interrupted for approval, blocked, completed, or fails. On a thread that already
    /// ended, returns the same outcome again without acting.
    pub async fn run(&self, thread_id: &str) -> Result<RunOutcome, GraphError> {
        let mut state = match self.load(thread_id)? {
            Some(state) => state,
            None => {
                let mut state = GraphState::new(thread_id);
                state.session_id = self.session_id.clone();
                state
            }
        };
        self.drive(&mut state).await
    }

    /// Continues a thread waiting at the approval interrupt with a typed approval. The
    /// input is checkpointed first, then checked by the `approval` node: a wrong approval
    /// or a replaced preview fails there, before any reservation.
    pub async fn resume(
        &self,
        thread_id: &str,
        input: ResumeInput,
    ) -> Result<RunOutcome, GraphError> {
        let mut state = self
            .load(thread_id)?
            .ok_or_else(|| GraphError::UnknownThread {
                thread_id: thread_id.to_owned(),
            })?;
        if state.next != Node::Approval || !state.awaiting_approval || state.approval.is_some() {
            return Err(GraphError::NotAwaitingApproval {
                thread_id: thread_id.to_owned(),
                next: state.next,
            });
        }
        approval::apply(&mut state, input);
        self.save(&mut state, "resume")?;
        self.drive(&mut state).await
    }

    fn load(&self, thread_id: &str) -> Result<Option<GraphState>, CheckpointError> {
        let Some(checkpoint) = self.checkpoints.latest(thread_id)? else {
            return Ok(None);
        };
        let state: GraphState =
            serde_json::from_str(&checkpoint.state).map_err(|e| CheckpointError::State {
                thread_id: thread_id.to_owned(),
                message: e.to_string(),
            })?;
        if state.thread_id != thread_id || state.step != checkpoint.step + 1 {
            return Err(CheckpointError::State {
                thread_id: thread_id.to_owned(),
                message: format!(
                    "checkpoint {} holds step {} of thread `{}`",
                    checkpoint.step, state.step, state.thread_id
                ),
            });
        }
        Ok(Some(state))
    }

    /// Writes `state` as the thread's next step. The stored state already names the step
    /// after it, so a loaded state continues the numbering.
    fn save(&self, state: &mut GraphState, node: &str) -> Result<(), CheckpointError> {
        let step = state.step;
        state.step = step + 1;
        let written = serde_json::to_string(state)
            .map_err(|e| CheckpointError::State {
                thread_id: state.thread_id.clone(),
                message: e.to_string(),
            })
            .and_then(|json| self.checkpoints.save(&state.thread_id, step, node, &json));
        if written.is_err() {
            state.step = step;
        }
        written
    }

    async fn drive(&self, state: &mut GraphState) -> Result<RunOutcome, GraphError> {
        loop {
            let node = state.next;
            let result: Result<(), Failure> = match node {
                Node::End => return self.end(state).await,
                Node::Approval if state.approval.is_none() => return self.interrupt(state).await,
                Node::Observe => observe::observe(&self.runtime, self.objective.as_deref(), state)
                    .await
                    .map_err(Failure::from),
                Node::Join => observe::join(state).map_err(Failure::from),
                Node::Plan => self.plan(state).await,
                Node::Preview => preview::preview(&self.runtime, &self.clock, state)
                    .await
                    .map_err(Failure::from),
                Node::Route => routing::route(state).map_err(Failure::from),
                Node::Approval => approval::approval(state, &self.clock).map_err(Failure::from),
                Node::ReserveTarget => reserve::reserve_target(&self.runtime, &self.clock, state)
                    .await
                    .map_err(Failure::from),
                Node::AcquireLease => lease::acquire_lease(&self.runtime, &self.clock, state)
                    .await
                    .map_err(Failure::from),
                Node::Execute => self.execute(state).await,
                Node::Verify => verify::verify(&self.runtime, state)
                    .await
                    .map_err(Failure::from),
            };
            let result =
                result.and_then(|()| self.save(state, node.as_str()).map_err(Failure::Checkpoint));
            if let Err(failure) = result {
                return Err(self.fail(state, node, failure).await);
            }
        }
    }

    /// The `execute` node, checkpointing `execute_sent` right before its one call.
    async fn execute(&self, state: &mut GraphState) -> Result<(), Failure> {
        let mut unsaved = None;
        let result = execute::execute(&self.runtime, &self.clock, state, |state| {
            state.execute_sent = true;
            self.save(state, "execute_sent").map_err(|e| {
                state.execute_sent = false;
                let message = e.to_string();
                unsaved = Some(e);
                ComputerUseError::Runtime {
                    operation: "execute_action",
                    code: Some("checkpoint".into()),
                    message,
                }
            })
        })
        .await;
        match (result, unsaved) {
            (Err(_), Some(e)) => Err(Failure::Checkpoint(e)),
            (result, _) => result.map_err(Failure::from),
        }
    }

    async fn plan(&self, state: &mut GraphState) -> Result<(), Failure> {
        if !state.observed_here {
            // Restarted after the observations: only their digests survived, and a plan
            // must see what it is based on. Observe again.
            state.next = Node::Observe;
            return Ok(());
        }
        let missing = || ComputerUseError::Runtime {
            operation: "plan",
            code: Some("invalid_state".into()),
            message: "the observations are incomplete".into(),
        };
        let (Some(session_id), Some(capabilities), Some(visual), Some(semantic)) = (
            state.session_id.as_deref(),
            state.capabilities.as_ref(),
            state.visual.as_ref(),
            state.semantic.as_ref(),
        ) else {
            return Err(missing().into());
        };
        let input = PlanInput {
            thread_id: &state.thread_id,
            session_id,
            capabilities,
            visual,
            semantic,
        };
        let planned = self.planner.plan(&input).await.map_err(Failure::Plan)?;
        let session_id = session_id.to_owned();
        state.proposal = Some(plan::proposal(&state.thread_id, &session_id, planned));
        state.next = Node::Preview;
        Ok(())
    }

    /// The approval interrupt: saved once, then reported on every run until resumed.
    async fn interrupt(&self, state: &mut GraphState) -> Result<RunOutcome, GraphError> {
        let request = match preview::active_preview(state) {
            Ok((record, preview)) => ApprovalRequest {
                thread_id: state.thread_id.clone(),
                record: record.clone(),
                preview,
            },
            Err(e) => return Err(self.fail(state, Node::Approval, e.into()).await),
        };
        if !state.awaiting_approval {
            state.awaiting_approval = true;
            if let Err(e) = self.save(state, Node::Approval.as_str()) {
                return Err(self
                    .fail(state, Node::Approval, Failure::Checkpoint(e))
                    .await);
            }
        }
        Ok(RunOutcome::Interrupted(Box::new(request)))
    }

    /// Releases the lease then the reservation, each at most once, checkpointing after
    /// each attempt so a resume never releases twice.
    async fn settle(&self, state: &mut GraphState) -> Result<(), ComputerUseError> {
        let lease = cleanup::release_lease(&self.runtime, state).await;
        if lease.is_some() {
            // A failed save here cannot undo the release; the thread's next save (or the
            // error returned) still carries the primary outcome.
            let _ = self.save(state, "release_lease");
        }
        let reservation = cleanup::release_reservation(&self.runtime, state).await;
        if reservation.is_some() {
            let _ = self.save(state, "release_target");
        }
        cleanup::combine(lease, reservation)
    }

    /// Ends the thread on a failure: records it, releases what is held, and returns the
    /// primary failure (with the cleanup failure, if any, as `Cleanup { primary, cleanup }`).
    async fn fail(&self, state: &mut GraphState, node: Node, failure: Failure) -> GraphError {
        state.next = Node::End;
        state.failure = Some(FailureRecord {
            node,
            message: failure.to_string(),
        });
        let _ = self.save(state, "failed");
        let cleanup = self.settle(state).await.err();
        if let Some(cleanup) = &cleanup {
            state.failure = Some(FailureRecord {
                node,
                message: format!("{failure}; cleanup also failed: {cleanup}"),
            });
            let _ = self.save(state, "cleanup_failed");
        }
        let thread_id = state.thread_id.clone();
        match failure {
            Failure::Step(primary) => GraphError::Step {
                thread_id,
                node,
                source: match cleanup {
                    None => primary,
                    Some(cleanup) => ComputerUseError::Cleanup {
                        primary: Box::new(primary),
                        cleanup: Box::new(cleanup),
                    },
                },
            },
            Failure::Plan(source) => GraphError::Plan { thread_id, source },
            Failure::Checkpoint(source) => GraphError::Checkpoint {
                source: Box::new(source),
                cleanup: cleanup.map(Box::new),
            },
        }
    }

    /// The terminal node: releases what is still held (after a successful verification
    /// too: a cleanup failure then is an error, not hidden), then reports the outcome.
    async fn end(&self, state: &mut GraphState) -> Result<RunOutcome, GraphError> {
        if let Err(cleanup) = self.settle(state).await {
            state.failure = Some(FailureRecord {
                node: Node::End,
                message: format!("cleanup failed: {cleanup}"),
            });
            self.save(state, "cleanup_failed")?;
            return Err(GraphError::Step {
                thread_id: state.thread_id.clone(),
                node: Node::End,
                source: cleanup,
            });
        }
        if let Some(failure) = &state.failure {
            return Err(GraphError::Ended {
                thread_id: state.thread_id.clone(),
                node: failure.node,
                message: failure.message.clone(),
            });
        }
        if let Some(blocked) = &state.blocked {
            return Ok(RunOutcome::Blocked(blocked.clone()));
        }
        match (
            &state.receipt,
            state.verified,
            state.committed,
            &state.result,
        ) {
            (Some(receipt), Some(verified), Some(committed), Some(result)) => {
                Ok(RunOutcome::Completed(Box::new(Completion {
                    receipt: receipt.clone(),
                    verified,
                    committed,
                    result: result.clone(),
                })))
            }
            _ => Err(GraphError::Ended {
                thread_id: state.thread_id.clone(),
                node: Node::End,
                message: "the thread ended without a verified receipt or a recorded reason".into(),
            }),
        }
    }
}
