//! [`ComputerUseRuntime`]: the authority the graph drives (GOVERNANCE.md Part B,
//! "Runtime trait").
//!
//! Every method returns the runtime's answer *unbound*: the graph passes it through
//! [`binding`](super::binding) before it enters state. The one mutation,
//! [`ComputerUseRuntime::execute_action`], takes an [`ExecutionAuthorization`], which only
//! [`authorize_execute`](super::binding::authorize_execute) builds from bound values, so an
//! unchecked lease or approval cannot reach it.

use std::future::Future;

use cc_contract::{ActionPostcondition, ControlLease, ExecutionReceipt, TargetReservation};

use crate::bound::{BoundReceipt, ExecutionAuthorization};
use crate::error::ComputerUseError;
use crate::verification::VerificationOutcome;

use super::types::{
    PreviewRecord, ProposedAction, RuntimeCapabilities, SemanticObservation, VisualObservation,
};

/// The result of every runtime call.
pub type RuntimeResult<T> = Result<T, ComputerUseError>;

/// A server of the governed-action contract, seen from the library.
///
/// Async because the runtime is another process (MCP over stdio or HTTP) or a worker
/// thread; futures are `Send` so a graph can run on a multi-threaded executor.
pub trait ComputerUseRuntime: Send + Sync {
    /// Starts (or names) the runtime session the actions belong to.
    fn start_session(
        &self,
        objective: Option<&str>,
    ) -> impl Future<Output = RuntimeResult<String>> + Send;

    /// What the runtime serves.
    fn discover_capabilities(
        &self,
    ) -> impl Future<Output = RuntimeResult<RuntimeCapabilities>> + Send;

    /// A screenshot of the current screen.
    fn observe_visual(&self) -> impl Future<Output = RuntimeResult<VisualObservation>> + Send;

    /// An accessibility snapshot of the current screen.
    fn observe_semantic(&self) -> impl Future<Output = RuntimeResult<SemanticObservation>> + Send;

    /// Asks the runtime to bind the proposal into an envelope and decide its policy.
    /// The record keeps the preview's raw JSON so nothing re-serialised can stand in for it.
    fn preview_action(
        &self,
        proposed: &ProposedAction,
    ) -> impl Future<Output = RuntimeResult<PreviewRecord>> + Send;

    /// Reserves the envelope's target. Runtimes without reservations return `None`.
    fn reserve_target(
        &self,
        preview: &PreviewRecord,
    ) -> impl Future<Output = RuntimeResult<Option<TargetReservation>>> + Send {
        let _ = preview;
        async { Ok(None) }
    }

    /// Releases a reservation this graph holds.
    fn release_target(
        &self,
        reservation: &TargetReservation,
    ) -> impl Future<Output = RuntimeResult<()>> + Send;

    /// Acquires a control lease for the envelope's session, mode and target.
    fn acquire_lease(
        &self,
        preview: &PreviewRecord,
    ) -> impl Future<Output = RuntimeResult<ControlLease>> + Send;

    /// Releases a lease this graph holds.
    fn release_lease(&self, lease: &ControlLease)
    -> impl Future<Output = RuntimeResult<()>> + Send;

    /// The one mutation: executes exactly the previewed action under a bound authorization.
    /// Implementations refuse an authorization whose envelope differs in any field from the
    /// record's preview.
    fn execute_action(
        &self,
        preview: &PreviewRecord,
        authorization: &ExecutionAuthorization<'_>,
    ) -> impl Future<Output = RuntimeResult<ExecutionReceipt>> + Send;

    /// The receipt of an `execute_action` this client already sent for `preview` (the
    /// checkpoint says so) and whose envelope has expired since, asked for after a
    /// restart: the same call again, under the same action id and `lease_id`, which a
    /// server of the contract answers with the stored receipt and no effect (a replay
    /// does not depend on freshness), and refuses (`stale_target`) when the first call
    /// never reached it. An answer that is not a replay is refused. The default is a
    /// runtime that cannot replay: it refuses, and the graph keeps the expiry as its
    /// failure.
    fn replay_receipt(
        &self,
        preview: &PreviewRecord,
        lease_id: &str,
    ) -> impl Future<Output = RuntimeResult<ExecutionReceipt>> + Send {
        let refused = ComputerUseError::Runtime {
            operation: "execute_action",
            code: Some("replay_unavailable".into()),
            message: format!(
                "this runtime cannot replay the receipt of action {} (lease {lease_id})",
                preview.proposal.action_id.as_deref().unwrap_or_default()
            ),
        };
        async move { Err(refused) }
    }

    /// Judges a receipt (bound to its envelope: only those reach here) against the declared postcondition. The default applies the
    /// evidence rules of [`verify_receipt`](crate::verification::verify_receipt) to what
    /// the receipt carries; a runtime may read back more.
    fn verify(
        &self,
        receipt: &BoundReceipt,
        postcondition: Option<&ActionPostcondition>,
    ) -> impl Future<Output = VerificationOutcome> + Send {
        let outcome = crate::verification::verify_receipt(receipt.receipt(), postcondition);
        async move { outcome }
    }

    /// Pauses the runtime session: no action runs until it resumes.
    fn pause_session(&self, session_id: &str) -> impl Future<Output = RuntimeResult<()>> + Send;

    /// Stops the runtime session for good.
    fn stop_session(&self, session_id: &str) -> impl Future<Output = RuntimeResult<()>> + Send;

    /// Stops everything now: revokes leases and interrupts running actions.
    fn emergency_stop(&self, reason: &str) -> impl Future<Output = RuntimeResult<()>> + Send;
}
