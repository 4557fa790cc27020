//! Test support for the graph: a fault-injecting in-memory runtime, a planner and a
//! graph harness on a real SQLite checkpoint file.
//!
//! [`FaultRuntime`] behaves like an honest server of the contract by default (previews
//! bound to the proposal, leases and reservations bound to the envelope, receipts
//! replayed per action id, evidence in the receipt) and has one knob per fault the graph
//! must catch. Its effect counter and receipts can live in a file so that a runtime in a
//! killed process and one in its successor share them, as a real server's journal would.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use adk_computer_use::bound::{BoundReceipt, ExecutionAuthorization};
use adk_computer_use::checkpoint::SqliteCheckpointer;
use adk_computer_use::graph::{ComputerUseGraph, PlanError, PlanInput, PlannedAction};
use adk_computer_use::runtime::{
    Clock, ComputerUseRuntime, ManualClock, PreviewRecord, ProposedAction, RuntimeCapabilities,
    RuntimeResult, SemanticObservation, VisualObservation,
};
use adk_computer_use::{ComputerUseError, VerificationOutcome};
use cc_contract::{
    ActionClass, ActionEnvelope, ActionPostcondition, ActionPreview, ApprovalGrant,
    ArgsDigestInput, Blocker, ControlLease, DataLabel, ExecutionCapability, ExecutionMode,
    ExecutionReceipt, GrantScope, InterferenceLevel, LeaseBoundaries, LeaseKind, LeaseState,
    PolicyDecision, PolicyVerdict, ReceiptResult, ReceiptStatus, ReservationScope,
    ReservationState, TargetEvidence, TargetReservation, VerificationSource, WindowId, args_digest,
    format_timestamp, sha256_hex, value_digest,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use time::{Duration, OffsetDateTime};

pub const SESSION: &str = "session-1";
pub const PRINCIPAL: &str = "principal-1";
pub const AGENT: &str = "executor";
pub const GROUP: &str = "group-1";
pub const APP: &str = "com.example.Sandbox";
pub const WINDOW: u64 = 42;
pub const DISPLAY: &str = "main";
pub const POLICY_DIGEST_TEXT: &str = "policy v1";

/// 2026-07-13T10:00:00Z.
pub fn t0() -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_783_936_800).expect("in range")
}

pub fn policy_digest() -> String {
    sha256_hex(POLICY_DIGEST_TEXT)
}

/// The runtime operations, as named in the call log.
pub mod op {
    pub const START: &str = "start_session";
    pub const DISCOVER: &str = "discover_capabilities";
    pub const VISUAL: &str = "observe_visual";
    pub const SEMANTIC: &str = "observe_semantic";
    pub const PREVIEW: &str = "preview_action";
    pub const RESERVE: &str = "reserve_target";
    pub const RELEASE_TARGET: &str = "release_target";
    pub const ACQUIRE: &str = "acquire_lease";
    pub const RELEASE_LEASE: &str = "release_lease";
    pub const EXECUTE: &str = "execute_action";
    pub const VERIFY: &str = "verify";
    pub const REPLAY: &str = "replay_receipt";
}

/// Evidence the runtime puts in a committed receipt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// `satisfied: true` and, for a digest postcondition, the matching `observedDigest`.
    Honest,
    /// No `result.verification` at all.
    None,
    /// `satisfied: true` with another `observedDigest`.
    WrongDigest,
    /// `satisfied: false`.
    Unsatisfied,
}

type Mutate<T> = Box<dyn Fn(&mut T) + Send + Sync>;

/// The faults. Every knob off is an honest runtime.
pub struct Knobs {
    pub verdict: PolicyVerdict,
    pub blocker: Option<Blocker>,
    /// Validity of the envelopes it previews.
    pub preview_ttl: Duration,
    /// Clock moves after the named operation returns (the time it "took").
    pub advance_after: BTreeMap<&'static str, Duration>,
    pub reservations: bool,
    pub lease: Option<Mutate<ControlLease>>,
    pub reservation: Option<Mutate<TargetReservation>>,
    pub receipt: Option<Mutate<ExecutionReceipt>>,
    pub preview: Option<Mutate<ActionPreview>>,
    /// Operations that fail with a runtime error.
    pub fail: Vec<&'static str>,
    pub evidence: Evidence,
    /// After the effect is recorded, print `executed` on stdout and hang (to be killed).
    pub hang_after_effect: bool,
    /// Replaces the screenshot's digest.
    pub visual_digest: Option<String>,
}

impl Default for Knobs {
    fn default() -> Self {
        Self {
            verdict: PolicyVerdict::Allow,
            blocker: None,
            preview_ttl: Duration::seconds(60),
            advance_after: BTreeMap::new(),
            reservations: true,
            lease: None,
            reservation: None,
            receipt: None,
            preview: None,
            fail: Vec::new(),
            evidence: Evidence::Honest,
            hang_after_effect: false,
            visual_digest: None,
        }
    }
}

/// What the runtime did: durable when a journal file is given.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Journal {
    /// Effects performed (mutations that reached the "desktop").
    pub effects: u32,
    /// Receipts by action id: a repeated execute replays its receipt.
    pub receipts: BTreeMap<String, ExecutionReceipt>,
}

pub struct FaultRuntime {
    pub clock: Arc<ManualClock>,
    pub knobs: Mutex<Knobs>,
    calls: Mutex<Vec<String>>,
    released: Mutex<Vec<String>>,
    journal: Mutex<Journal>,
    journal_file: Option<PathBuf>,
    counter: Mutex<u32>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn refused(operation: &'static str) -> ComputerUseError {
    ComputerUseError::Runtime {
        operation,
        code: Some("execution_failed".into()),
        message: format!("injected failure of {operation}"),
    }
}

impl FaultRuntime {
    pub fn new(clock: Arc<ManualClock>) -> Self {
        Self {
            clock,
            knobs: Mutex::new(Knobs::default()),
            calls: Mutex::new(Vec::new()),
            released: Mutex::new(Vec::new()),
            journal: Mutex::new(Journal::default()),
            journal_file: None,
            counter: Mutex::new(0),
        }
    }

    /// A runtime whose effects and receipts live in `path` (shared across processes).
    pub fn with_journal(clock: Arc<ManualClock>, path: &Path) -> Self {
        let journal = std::fs::read_to_string(path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        Self {
            journal: Mutex::new(journal),
            journal_file: Some(path.to_owned()),
            ..Self::new(clock)
        }
    }

    pub fn knobs(&self) -> MutexGuard<'_, Knobs> {
        lock(&self.knobs)
    }

    pub fn calls(&self) -> Vec<String> {
        lock(&self.calls).clone()
    }

    pub fn count(&self, operation: &str) -> usize {
        lock(&self.calls).iter().filter(|c| *c == operation).count()
    }

    pub fn effects(&self) -> u32 {
        lock(&self.journal).effects
    }

    /// Ids released, in order (`lease:<id>`, `reservation:<id>`).
    pub fn released(&self) -> Vec<String> {
        lock(&self.released).clone()
    }

    fn now(&self) -> OffsetDateTime {
        self.clock.now()
    }

    fn next_id(&self, prefix: &str) -> String {
        let mut n = lock(&self.counter);
        *n += 1;
        format!("{prefix}-{n}")
    }

    /// Logs the call; fails it when the knob says so.
    fn enter(&self, operation: &'static str) -> RuntimeResult<()> {
        lock(&self.calls).push(operation.to_owned());
        if self.knobs().fail.contains(&operation) {
            return Err(refused(operation));
        }
        Ok(())
    }

    /// Lets the time the operation "took" pass.
    fn leave(&self, operation: &'static str) {
        let by = self.knobs().advance_after.get(operation).copied();
        if let Some(by) = by {
            self.clock.advance(by);
        }
    }

    fn persist(&self, journal: &Journal) {
        if let Some(path) = &self.journal_file {
            let text = serde_json::to_string(journal).expect("journal encodes");
            let tmp = path.with_extension("tmp");
            std::fs::write(&tmp, text).expect("write journal");
            std::fs::rename(&tmp, path).expect("commit journal");
        }
    }

    fn envelope_of(preview: &PreviewRecord) -> RuntimeResult<ActionEnvelope> {
        Ok(preview.preview()?.envelope)
    }
}

/// The target every test plans on.
pub fn target() -> TargetEvidence {
    TargetEvidence {
        platform: "linux".into(),
        app_id: APP.into(),
        pid: Some(4242),
        window_id: Some(WindowId::Number(WINDOW)),
        window_title_digest: None,
        display_id: Some(DISPLAY.into()),
        role: Some("check_box".into()),
        label_digest: None,
        bounds: None,
        observation_id: "observation-1".into(),
        screenshot_hash: None,
        ui_tree_revision: None,
        confidence: 1.0,
        captured_at: format_timestamp(t0()),
    }
}

/// The postcondition the default plan declares: the checkbox's value becomes `true`.
pub fn postcondition() -> ActionPostcondition {
    ActionPostcondition::UiElement {
        role: Some("check_box".into()),
        label: Some("Remember me".into()),
        exists: true,
        value_digest: Some(value_digest("true")),
    }
}

/// A click on the checkbox with a postcondition, as agent `executor` of group `group-1`.
pub fn click_plan(postcondition: Option<ActionPostcondition>) -> PlannedAction {
    let mut arguments = Map::new();
    arguments.insert("x".into(), json!(120));
    arguments.insert("y".into(), json!(80));
    PlannedAction {
        target: Some(target()),
        postcondition,
        agent_id: Some(AGENT.into()),
        execution_group_id: Some(GROUP.into()),
        data_labels: Some(vec![DataLabel::Private]),
        ..PlannedAction::new("pointer.click", arguments)
    }
}

/// A planner that checks it received the observations' content, then proposes `plan`.
pub fn planner(
    plan: PlannedAction,
) -> impl Fn(&PlanInput<'_>) -> Result<PlannedAction, PlanError> + Send + Sync {
    move |input| {
        if input.visual.image.is_none() || input.semantic.tree.is_none() {
            return Err("the observations' content is missing".into());
        }
        Ok(plan.clone())
    }
}

/// An exact-action grant for the preview, as the operator channel would issue it.
pub fn grant_for(preview: &ActionPreview, expires_at: OffsetDateTime) -> ApprovalGrant {
    let env = &preview.envelope;
    ApprovalGrant {
        grant_id: "grant-1".into(),
        scope: GrantScope::ExactAction,
        principal_id: env.principal_id.clone(),
        session_id: env.session_id.clone(),
        action_digest: env.args_digest.clone(),
        scope_digest: sha256_hex("scope"),
        policy_digest: preview.policy.policy_digest.clone(),
        tool: env.tool.clone(),
        operation: env.operation.clone(),
        action_class: env.action_class,
        mode: env.requested_mode,
        issued_at: format_timestamp(t0()),
        expires_at: format_timestamp(expires_at),
        remaining_uses: 1,
        consumed_by_action_ids: Vec::new(),
    }
}

impl ComputerUseRuntime for FaultRuntime {
    async fn start_session(&self, _objective: Option<&str>) -> RuntimeResult<String> {
        self.enter(op::START)?;
        Ok(SESSION.into())
    }

    async fn discover_capabilities(&self) -> RuntimeResult<RuntimeCapabilities> {
        self.enter(op::DISCOVER)?;
        Ok(RuntimeCapabilities {
            tools: vec!["pointer.click".into(), "keyboard.type".into()],
            governed: true,
            detail: Value::Null,
        })
    }

    async fn observe_visual(&self) -> RuntimeResult<VisualObservation> {
        self.enter(op::VISUAL)?;
        let image = b"\x89PNG fake pixels of the screen".to_vec();
        let digest = self.knobs().visual_digest.clone();
        Ok(VisualObservation {
            digest: digest.unwrap_or_else(|| {
                format!("sha256:{}", sha256_hex(&String::from_utf8_lossy(&image)))
            }),
            width: 1280,
            height: 800,
            frame_id: Some("frame-1".into()),
            image: Some(image),
        })
    }

    async fn observe_semantic(&self) -> RuntimeResult<SemanticObservation> {
        self.enter(op::SEMANTIC)?;
        let tree =
            json!({"role": "window", "children": [{"role": "check_box", "name": "Remember me"}]});
        Ok(SemanticObservation {
            digest: value_digest(&tree.to_string()),
            node_count: 2,
            tree: Some(tree),
        })
    }

    async fn preview_action(&self, proposed: &ProposedAction) -> RuntimeResult<PreviewRecord> {
        self.enter(op::PREVIEW)?;
        let now = self.now();
        let knobs = self.knobs();
        let mut envelope = ActionEnvelope {
            action_id: proposed.action_id.clone().unwrap_or_default(),
            session_id: proposed.session_id.clone(),
            execution_group_id: proposed.execution_group_id.clone(),
            principal_id: PRINCIPAL.into(),
            agent_id: proposed.agent_id.clone(),
            tool: proposed.tool.clone(),
            operation: proposed
                .operation
                .clone()
                .unwrap_or_else(|| proposed.tool.clone()),
            action_class: ActionClass::Navigate,
            requested_mode: proposed.mode,
            target: proposed.target.clone(),
            target_sensitivity: None,
            resource: None,
            provenance: proposed.provenance.clone(),
            data_labels: if proposed.data_labels.is_empty() {
                vec![DataLabel::Unknown]
            } else {
                proposed.data_labels.clone()
            },
            postcondition: proposed.postcondition.clone(),
            reversible: true,
            external_side_effect: false,
            proposed_at: format_timestamp(now),
            expires_at: format_timestamp(now + knobs.preview_ttl),
            args_digest: String::new(),
        };
        envelope.args_digest = args_digest(&ArgsDigestInput::from_envelope(
            &envelope,
            &proposed.arguments,
        ));
        let blocker = knobs.blocker.or(match knobs.verdict {
            PolicyVerdict::Allow => None,
            PolicyVerdict::Confirm => Some(Blocker::ApprovalRequired),
            PolicyVerdict::Deny => Some(Blocker::PolicyDenied),
        });
        let mut preview = ActionPreview {
            envelope,
            capability: ExecutionCapability {
                app_id: APP.into(),
                operation: proposed.tool.clone(),
                backend: "physical_input".into(),
                supported_modes: vec![ExecutionMode::Foreground],
                interference: InterferenceLevel::MayRaiseWindow,
                confidence: 1.0,
                verified_at: None,
                verification_source: VerificationSource::Unknown,
                certification: None,
            },
            policy: PolicyDecision {
                decision: knobs.verdict,
                policy_digest: policy_digest(),
                reasons: vec!["fault runtime".into()],
                grant_id: None,
            },
            executable: blocker.is_none(),
            blocker,
        };
        if let Some(mutate) = &knobs.preview {
            mutate(&mut preview);
        }
        drop(knobs);
        let raw = serde_json::to_string(&preview).expect("preview encodes");
        let record = PreviewRecord::new(proposed.clone(), raw)?;
        self.leave(op::PREVIEW);
        Ok(record)
    }

    async fn reserve_target(
        &self,
        preview: &PreviewRecord,
    ) -> RuntimeResult<Option<TargetReservation>> {
        self.enter(op::RESERVE)?;
        if !self.knobs().reservations {
            return Ok(None);
        }
        let env = Self::envelope_of(preview)?;
        let target = env.target.clone().unwrap_or_else(target);
        let now = self.now();
        let mut reservation = TargetReservation {
            reservation_id: self.next_id("reservation"),
            revision: 1,
            intent_id: env.action_id.clone(),
            session_id: env.session_id.clone(),
            principal_id: env.principal_id.clone(),
            execution_group_id: env.execution_group_id.clone(),
            agent_id: env.agent_id.clone(),
            scope: ReservationScope {
                app_id: target.app_id.clone(),
                window_id: target.window_id.clone(),
            },
            state: ReservationState::Active,
            acquired_at: format_timestamp(now),
            expires_at: format_timestamp(now + Duration::seconds(120)),
            terminal_reason: None,
        };
        if let Some(mutate) = &self.knobs().reservation {
            mutate(&mut reservation);
        }
        self.leave(op::RESERVE);
        Ok(Some(reservation))
    }

    async fn release_target(&self, reservation: &TargetReservation) -> RuntimeResult<()> {
        self.enter(op::RELEASE_TARGET)?;
        lock(&self.released).push(format!("reservation:{}", reservation.reservation_id));
        Ok(())
    }

    async fn acquire_lease(&self, preview: &PreviewRecord) -> RuntimeResult<ControlLease> {
        self.enter(op::ACQUIRE)?;
        let env = Self::envelope_of(preview)?;
        let now = self.now();
        let mut lease = ControlLease {
            lease_id: self.next_id("lease"),
            revision: 1,
            session_id: env.session_id.clone(),
            principal_id: env.principal_id.clone(),
            agent_id: env.agent_id.clone(),
            kind: LeaseKind::Exclusive,
            execution_mode: env.requested_mode,
            state: LeaseState::Active,
            acquired_at: format_timestamp(now),
            expires_at: format_timestamp(now + Duration::seconds(120)),
            action_budget: 1,
            actions_used: 0,
            boundaries: LeaseBoundaries {
                app_ids: vec![APP.into()],
                window_ids: vec![WindowId::String(WINDOW.to_string())],
                display_ids: vec![DISPLAY.into()],
            },
            revoked_reason: None,
        };
        if let Some(mutate) = &self.knobs().lease {
            mutate(&mut lease);
        }
        self.leave(op::ACQUIRE);
        Ok(lease)
    }

    async fn release_lease(&self, lease: &ControlLease) -> RuntimeResult<()> {
        self.enter(op::RELEASE_LEASE)?;
        lock(&self.released).push(format!("lease:{}", lease.lease_id));
        Ok(())
    }

    async fn execute_action(
        &self,
        preview: &PreviewRecord,
        authorization: &ExecutionAuthorization<'_>,
    ) -> RuntimeResult<ExecutionReceipt> {
        self.enter(op::EXECUTE)?;
        let env = Self::envelope_of(preview)?;
        if *authorization.envelope() != env {
            return Err(ComputerUseError::Runtime {
                operation: op::EXECUTE,
                code: Some("invalid_arguments".into()),
                message: "the authorization is for another envelope".into(),
            });
        }
        let mut journal = lock(&self.journal);
        let receipt = match journal.receipts.get(&env.action_id) {
            // Same action id and digest: replay, no effect.
            Some(stored) if stored.action_digest == env.args_digest => stored.clone(),
            Some(_) => {
                return Err(ComputerUseError::Runtime {
                    operation: op::EXECUTE,
                    code: Some("action_id_conflict".into()),
                    message: "another digest under this action id".into(),
                });
            }
            None => {
                journal.effects += 1;
                let now = format_timestamp(self.now());
                let verification = self.evidence(env.postcondition.as_ref());
                let receipt = ExecutionReceipt {
                    receipt_id: format!("receipt-{}", journal.effects),
                    session_id: env.session_id.clone(),
                    action_id: env.action_id.clone(),
                    action_digest: env.args_digest.clone(),
                    attempt: 1,
                    status: ReceiptStatus::Committed,
                    created_at: now.clone(),
                    updated_at: now,
                    result: Some(ReceiptResult {
                        tool_result: Map::new(),
                        verification,
                    }),
                    error: None,
                };
                journal
                    .receipts
                    .insert(env.action_id.clone(), receipt.clone());
                self.persist(&journal);
                receipt
            }
        };
        drop(journal);
        if self.knobs().hang_after_effect {
            use std::io::Write;
            println!("executed");
            std::io::stdout().flush().expect("flush");
            loop {
                std::thread::park();
            }
        }
        let mut receipt = receipt;
        if let Some(mutate) = &self.knobs().receipt {
            mutate(&mut receipt);
        }
        self.leave(op::EXECUTE);
        Ok(receipt)
    }

    /// As a server of the contract answers an execute repeated for an expired envelope:
    /// the stored receipt (no effect), or `stale_target` when it never saw the call.
    async fn replay_receipt(
        &self,
        preview: &PreviewRecord,
        _lease_id: &str,
    ) -> RuntimeResult<ExecutionReceipt> {
        self.enter(op::REPLAY)?;
        let env = Self::envelope_of(preview)?;
        let journal = lock(&self.journal);
        match journal.receipts.get(&env.action_id) {
            Some(stored) if stored.action_digest == env.args_digest => Ok(stored.clone()),
            _ => Err(ComputerUseError::Runtime {
                operation: op::EXECUTE,
                code: Some("stale_target".into()),
                message: "the envelope expired and no receipt is stored".into(),
            }),
        }
    }

    async fn verify(
        &self,
        receipt: &BoundReceipt,
        postcondition: Option<&ActionPostcondition>,
    ) -> VerificationOutcome {
        lock(&self.calls).push(op::VERIFY.to_owned());
        adk_computer_use::verify_receipt(receipt.receipt(), postcondition)
    }

    async fn pause_session(&self, _session_id: &str) -> RuntimeResult<()> {
        Ok(())
    }

    async fn stop_session(&self, _session_id: &str) -> RuntimeResult<()> {
        Ok(())
    }

    async fn emergency_stop(&self, _reason: &str) -> RuntimeResult<()> {
        Ok(())
    }
}

impl FaultRuntime {
    fn evidence(
        &self,
        postcondition: Option<&ActionPostcondition>,
    ) -> Option<cc_contract::Verification> {
        let postcondition = postcondition?;
        let expected = postcondition.expected_digest().map(str::to_owned);
        let (satisfied, observed_digest) = match self.knobs().evidence {
            Evidence::None => return None,
            Evidence::Honest => (true, expected),
            Evidence::WrongDigest => (true, Some(value_digest("false"))),
            Evidence::Unsatisfied => (false, None),
        };
        Some(cc_contract::Verification {
            satisfied,
            observed_digest,
            method: "accessibility".into(),
        })
    }
}

/// A graph over a [`FaultRuntime`], checkpointing in a real SQLite file.
pub struct Harness {
    pub dir: tempfile::TempDir,
    pub clock: Arc<ManualClock>,
    pub graph: ComputerUseGraph<FaultRuntime, Box<dyn PlanFn>>,
}

/// A boxed planner closure.
pub trait PlanFn: Fn(&PlanInput<'_>) -> Result<PlannedAction, PlanError> + Send + Sync {}
impl<F: Fn(&PlanInput<'_>) -> Result<PlannedAction, PlanError> + Send + Sync> PlanFn for F {}

impl Harness {
    pub fn new(plan: PlannedAction) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let clock = Arc::new(ManualClock::new(t0()));
        let runtime = FaultRuntime::new(clock.clone());
        let checkpoints =
            SqliteCheckpointer::open(dir.path().join("checkpoints.db")).expect("open checkpoints");
        let planner: Box<dyn PlanFn> = Box::new(planner(plan));
        let graph = ComputerUseGraph::new(runtime, planner, checkpoints, clock.clone());
        Self { dir, clock, graph }
    }

    /// The default: a click with a postcondition.
    pub fn click() -> Self {
        Self::new(click_plan(Some(postcondition())))
    }

    pub fn rt(&self) -> &FaultRuntime {
        self.graph.runtime()
    }

    pub fn db_path(&self) -> PathBuf {
        self.dir.path().join("checkpoints.db")
    }
}
