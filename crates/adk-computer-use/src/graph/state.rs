//! The graph's state: everything a node needs to continue after a restart, and nothing
//! that would make a checkpoint large or leak the screen (observations are digests).

use cc_contract::{
    ActionPreview, Blocker, ControlLease, ExecutionReceipt, PolicyVerdict, TargetReservation,
};
use serde::{Deserialize, Serialize};

use crate::bound::Approval;
use crate::runtime::{
    PreviewRecord, ProposedAction, RuntimeCapabilities, SemanticObservation, VisualObservation,
};

/// The nodes of the reference graph, in their fixed order (GOVERNANCE.md Part B).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Node {
    /// `discover ∥ observe_visual ∥ observe_semantic`, run concurrently.
    Observe,
    /// Checks that the three branches all produced their value.
    Join,
    /// The caller's planner turns observations into a proposed action.
    Plan,
    /// The runtime previews the proposal; freshness is checked when it returns.
    Preview,
    /// `allowed | approval | blocked`, from the preview's policy and blocker.
    Route,
    /// The approval interrupt; continues on a typed resume.
    Approval,
    /// Reserves the target (advisory).
    ReserveTarget,
    /// Acquires the control lease.
    AcquireLease,
    /// Revalidates every input, then the one mutation.
    Execute,
    /// Grades the receipt's evidence; writes `verified`, `committed` and the result.
    Verify,
    /// Terminal: releases whatever is still held.
    End,
}

impl Node {
    /// The node's name in checkpoints and errors.
    pub const fn as_str(self) -> &'static str {
        match self {
            Node::Observe => "observe",
            Node::Join => "join",
            Node::Plan => "plan",
            Node::Preview => "preview",
            Node::Route => "route",
            Node::Approval => "approval",
            Node::ReserveTarget => "reserve_target",
            Node::AcquireLease => "acquire_lease",
            Node::Execute => "execute",
            Node::Verify => "verify",
            Node::End => "end",
        }
    }
}

impl std::fmt::Display for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The branch `route` took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    /// Policy `allow`, executable: straight to the reservation.
    Allowed,
    /// Policy `confirm`: the approval interrupt.
    Approval,
    /// Denied or blocked: end without effect.
    Blocked,
}

/// Something the graph holds on the runtime and must give back, with whether it has been.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Held<T> {
    /// The object as the runtime returned it (it passed its binding check).
    pub object: T,
    /// True once a release was attempted, whatever its result: a resume never releases
    /// twice.
    pub release_attempted: bool,
}

impl<T> Held<T> {
    pub(crate) fn new(object: T) -> Self {
        Self {
            object,
            release_attempted: false,
        }
    }
}

/// What kind of object a release gave back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Released {
    /// A target reservation.
    Reservation,
    /// A control lease.
    Lease,
}

/// One release attempt, appended to the state's log so a test (and an auditor) can see
/// that every terminal path released exactly once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReleaseRecord {
    /// Lease or reservation.
    pub object: Released,
    /// Its id.
    pub id: String,
    /// Whether it was held (bound) or a rejected response released on the spot.
    pub rejected: bool,
    /// The failure, if the release failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Why the graph ended without acting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockedRecord {
    /// The policy verdict.
    pub decision: PolicyVerdict,
    /// The preview's blocker, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocker: Option<Blocker>,
    /// The policy's reasons.
    pub reasons: Vec<String>,
}

/// How `verify` graded the receipt (the serializable form of
/// [`VerificationOutcome`](crate::VerificationOutcome)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OutcomeKind {
    /// Evidence shows the postcondition holds.
    Verified,
    /// Performed, but nothing shows the effect happened.
    CommittedUnverified,
    /// Not performed, or the evidence contradicts the postcondition.
    Failed,
}

/// What `verify` writes as `result`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphResult {
    /// The grade.
    pub outcome: OutcomeKind,
    /// Why the outcome is below `Verified`; `None` when verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification_detail: Option<String>,
}

/// A failure that ended the thread, kept so a later run reports it instead of acting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailureRecord {
    /// The node that failed.
    pub node: Node,
    /// The error, as displayed.
    pub message: String,
}

/// The checkpointed state of one thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphState {
    /// The thread this state belongs to.
    pub thread_id: String,
    /// The step number the next checkpoint gets.
    pub step: u64,
    /// The node to run next.
    pub next: Node,
    /// The runtime session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// `discover`'s result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<RuntimeCapabilities>,
    /// `observe_visual`'s result: a digest (the pixels never reach a checkpoint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visual: Option<VisualObservation>,
    /// `observe_semantic`'s result: a digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semantic: Option<SemanticObservation>,
    /// True when the observations' full content is in this process's memory; false after
    /// a restart, when only digests remain and the planner would plan blind.
    #[serde(skip)]
    pub observed_here: bool,
    /// The planner's proposal, with the graph's session and action ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<ProposedAction>,
    /// The preview the graph acts on, as the `preview` node received it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_preview: Option<PreviewRecord>,
    /// The append-only preview channel: the `preview` node appends once; resume input may
    /// append but never replace. Approval and execute require exactly one entry, equal to
    /// `active_preview`.
    #[serde(default)]
    pub previews: Vec<PreviewRecord>,
    /// The branch `route` took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<Route>,
    /// True once the approval interrupt has been raised and saved.
    #[serde(default)]
    pub awaiting_approval: bool,
    /// The approval: `NotRequired` on the allowed route, the resume input otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    /// The bound reservation, if the runtime gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservation: Option<Held<TargetReservation>>,
    /// The bound lease.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<Held<ControlLease>>,
    /// True once `execute` was authorized and checkpointed, right before its one call:
    /// after a restart, an envelope that has expired since no longer stops the thread
    /// from asking for that call's receipt (a replay, never a second effect).
    #[serde(default)]
    pub execute_sent: bool,
    /// The bound receipt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<ExecutionReceipt>,
    /// Written by `verify`: only `Verified` is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
    /// Written by `verify`: the runtime performed the action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub committed: Option<bool>,
    /// Written by `verify`: the grade and `verificationDetail`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<GraphResult>,
    /// Why the graph ended without acting, on the blocked route.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked: Option<BlockedRecord>,
    /// Every release attempt, in order.
    #[serde(default)]
    pub releases: Vec<ReleaseRecord>,
    /// The failure that ended the thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureRecord>,
}

impl GraphState {
    /// The state of a thread that has not run yet.
    pub fn new(thread_id: &str) -> Self {
        Self {
            thread_id: thread_id.to_owned(),
            step: 0,
            next: Node::Observe,
            session_id: None,
            capabilities: None,
            visual: None,
            semantic: None,
            observed_here: false,
            proposal: None,
            active_preview: None,
            previews: Vec::new(),
            route: None,
            awaiting_approval: false,
            approval: None,
            reservation: None,
            lease: None,
            execute_sent: false,
            receipt: None,
            verified: None,
            committed: None,
            result: None,
            blocked: None,
            releases: Vec::new(),
            failure: None,
        }
    }

    /// The decoded active preview, if the `preview` node has run (its hash rechecked).
    pub fn decoded_preview(&self) -> Option<Result<ActionPreview, crate::ComputerUseError>> {
        self.active_preview.as_ref().map(PreviewRecord::preview)
    }
}
