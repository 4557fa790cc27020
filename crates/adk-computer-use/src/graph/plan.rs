//! The `plan` node: the caller's [`Planner`] turns observations into an action; the graph
//! adds the session and a deterministic action id.

use std::future::Future;

use cc_contract::{
    ActionPostcondition, ActionProvenance, Bounds, DataLabel, ExecutionMode, TargetEvidence,
    WindowId, format_timestamp, sha256_hex,
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

impl PlanInput<'_> {
    /// Target evidence for an element of `window` (an entry of the runtime's
    /// `window.list`: `app_id`, `pid`, `id`, `rect`), bound to this plan's observations
    /// (`observationId` is the snapshot's digest, `screenshotHash` the capture's), so the
    /// server can revalidate the window before acting. Every planner that aims at a
    /// window needs this; the error says which member the entry lacks.
    pub fn window_target(
        &self,
        platform: &str,
        window: &Value,
        role: Option<&str>,
        captured_at: time::OffsetDateTime,
    ) -> Result<TargetEvidence, PlanError> {
        let app_id = window["app_id"]
            .as_str()
            .ok_or("the window has no app_id")?;
        let rect = &window["rect"];
        let dim = |k: &str| {
            rect[k]
                .as_f64()
                .ok_or(format!("the window has no rect.{k}"))
        };
        Ok(TargetEvidence {
            platform: platform.into(),
            app_id: app_id.into(),
            pid: window["pid"].as_u64().and_then(|p| u32::try_from(p).ok()),
            window_id: window["id"].as_u64().map(WindowId::Number),
            window_title_digest: None,
            display_id: None,
            role: role.map(Into::into),
            label_digest: None,
            bounds: Some(Bounds {
                x: dim("x")?,
                y: dim("y")?,
                width: dim("width")?,
                height: dim("height")?,
            }),
            observation_id: self.semantic.digest.clone(),
            screenshot_hash: Some(self.visual.digest.clone()),
            ui_tree_revision: None,
            confidence: 1.0,
            captured_at: format_timestamp(captured_at),
        })
    }
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
    /// Lifetime of the envelope in milliseconds, at most
    /// [`MAX_TTL_MS`](cc_contract::limits::MAX_TTL_MS).
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

/// Why a planner could not propose an action: a message for people, and the underlying
/// error when there is one (a model call that failed, a parse error). `?` converts a
/// `String` or `&str` into it, so a planner can write `.ok_or("no Submit button")?`.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct PlanError {
    message: String,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl PlanError {
    /// A planning failure described by `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            source: None,
        }
    }

    /// A planning failure caused by `source` (kept as the error's source).
    pub fn with_source(
        message: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// What the planner said.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl From<String> for PlanError {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

impl From<&str> for PlanError {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

/// Turns observations and capabilities into one action. Supplied by the caller (a model,
/// a script); the graph never decides what to do, only whether and how it may be done.
pub trait Planner: Send + Sync {
    /// Proposes the action, or says why it cannot.
    fn plan(
        &self,
        input: &PlanInput<'_>,
    ) -> impl Future<Output = Result<PlannedAction, PlanError>> + Send;
}

/// Any synchronous closure is a planner.
impl<F> Planner for F
where
    F: Fn(&PlanInput<'_>) -> Result<PlannedAction, PlanError> + Send + Sync,
{
    fn plan(
        &self,
        input: &PlanInput<'_>,
    ) -> impl Future<Output = Result<PlannedAction, PlanError>> + Send {
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
        action_id: Some(action_id_for(thread_id, Node::Execute)),
        attempt: Some(1),
        execution_group_id: planned.execution_group_id,
        agent_id: planned.agent_id,
        tool: planned.tool,
        operation: planned.operation,
        arguments: planned.arguments,
        mode: planned.mode,
        target: planned.target,
        postcondition: planned.postcondition,
        data_labels: planned.data_labels.unwrap_or_default(),
        provenance: planned.provenance,
        expires_in_ms: planned.expires_in_ms,
        approval_grant_id: None,
        lease_id: None,
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

    fn observed() -> (RuntimeCapabilities, VisualObservation, SemanticObservation) {
        let visual = VisualObservation {
            digest: "sha256:aa".into(),
            width: 10,
            height: 10,
            frame_id: None,
            image: None,
        };
        let semantic = SemanticObservation {
            digest: "sha256:bb".into(),
            node_count: 1,
            tree: None,
        };
        (RuntimeCapabilities::default(), visual, semantic)
    }

    #[test]
    fn window_target_binds_the_window_and_the_observations() {
        let (caps, visual, semantic) = observed();
        let input = PlanInput {
            thread_id: "t",
            session_id: "s",
            capabilities: &caps,
            visual: &visual,
            semantic: &semantic,
        };
        let window = serde_json::json!({"app_id": "cc-form", "pid": 42, "id": 7,
            "rect": {"x": 1, "y": 2, "width": 300, "height": 200}});
        let at = time::macros::datetime!(2026-11-30 00:00:00 UTC);
        let t = input
            .window_target("virtual", &window, Some("button"), at)
            .expect("evidence");
        assert_eq!(t.app_id, "cc-form");
        assert_eq!(t.pid, Some(42));
        assert_eq!(t.window_id, Some(WindowId::Number(7)));
        assert_eq!(t.role.as_deref(), Some("button"));
        assert_eq!(t.bounds.map(|b| (b.x, b.width)), Some((1.0, 300.0)));
        assert_eq!(t.observation_id, "sha256:bb");
        assert_eq!(t.screenshot_hash.as_deref(), Some("sha256:aa"));
        assert_eq!(t.captured_at, "2026-11-30T00:00:00.000Z");
        let no_rect = serde_json::json!({"app_id": "cc-form", "id": 7});
        let err = input
            .window_target("virtual", &no_rect, None, at)
            .expect_err("no rect");
        assert!(err.message().contains("rect.x"), "{err}");
    }
}
