//! [`ComputerUseRuntime`] over the Part A tools: each trait method is one tool call, and
//! every answer is bound back to its request here, at the call boundary, before it is
//! returned — the graph checks again, but a caller of the runtime alone is protected too.

use cc_contract::{
    ActionPreview, ControlLease, ExecutionReceipt, LeaseState, ReservationState, TargetReservation,
};
use serde_json::{Map, Value};

use super::GovernedRuntime;
use super::arguments;
use super::caller::{ToolCaller, ToolReply};
use super::envelope_diff::require_same_envelope;
use super::observe;
use super::proposal_check::require_envelope_answers;
use super::reply::{self, invalid_response, issued_id, member, payload};
use crate::bound::{
    BoundLease, BoundReceipt, BoundReservation, ExecutionAuthorization, FreshEnvelope,
};
use crate::error::{ComputerUseError, ResponseObject, with_cleanup};
use crate::runtime::binding::{
    rebind_receipt, validate_envelope_freshness, validate_lease, validate_reservation,
};
use crate::runtime::{
    ComputerUseRuntime, PreviewRecord, ProposedAction, RuntimeCapabilities, RuntimeResult,
    SemanticObservation, VisualObservation,
};

/// The governed tools a runtime must serve for the graph to drive it.
const REQUIRED: &[&str] = &[
    "start_session",
    "preview_action",
    "acquire_control_lease",
    "release_control_lease",
    "execute_action",
];

impl<C: ToolCaller> GovernedRuntime<C> {
    /// A record as this runtime handed it out: its hash holds, it is the preview this
    /// runtime kept for the action (when it kept one), and its envelope answers its
    /// proposal.
    fn checked(&self, record: &PreviewRecord) -> RuntimeResult<ActionPreview> {
        let preview = record.preview()?;
        self.kept.require_kept(record)?;
        require_envelope_answers(&record.proposal, &preview.envelope)?;
        Ok(preview)
    }

    /// [`Self::checked`], and fresh now.
    fn checked_fresh(&self, record: &PreviewRecord) -> RuntimeResult<FreshEnvelope> {
        let preview = self.checked(record)?;
        validate_envelope_freshness(&preview.envelope, self.options.clock.clone())
    }

    async fn call(&self, tool: &'static str, args: Map<String, Value>) -> RuntimeResult<ToolReply> {
        self.caller.call_tool(tool, args).await
    }

    /// Calls a session tool and checks the session it answers for.
    async fn session_call(&self, tool: &'static str, session_id: &str) -> RuntimeResult<()> {
        let reply = self.call(tool, arguments::session(session_id)).await?;
        let answered = reply::session_id(&reply.structured);
        if answered == Some(session_id) {
            Ok(())
        } else {
            Err(invalid_response(
                tool,
                format!("answered for session {answered:?}, not `{session_id}`"),
            ))
        }
    }

    async fn release_reservation_in(
        &self,
        session_id: &str,
        reservation_id: &str,
    ) -> RuntimeResult<()> {
        const OP: &str = "release_target_reservation";
        let reply = self
            .call(
                OP,
                arguments::release_reservation(session_id, reservation_id),
            )
            .await?;
        let released: TargetReservation = member(OP, &reply.structured, "reservation")?;
        if released.reservation_id != reservation_id {
            return Err(ComputerUseError::IdentityMismatch {
                object: ResponseObject::Reservation,
                field: "reservationId",
                expected: Some(reservation_id.to_string()),
                actual: Some(released.reservation_id),
            });
        }
        if released.state == ReservationState::Active {
            return Err(invalid_response(OP, "the reservation is still active"));
        }
        Ok(())
    }

    async fn release_lease_in(&self, session_id: &str, lease_id: &str) -> RuntimeResult<()> {
        const OP: &str = "release_control_lease";
        let reply = self
            .call(OP, arguments::release_lease(session_id, lease_id))
            .await?;
        let released: ControlLease = member(OP, &reply.structured, "lease")?;
        if released.lease_id != lease_id {
            return Err(ComputerUseError::IdentityMismatch {
                object: ResponseObject::Lease,
                field: "leaseId",
                expected: Some(lease_id.to_string()),
                actual: Some(released.lease_id),
            });
        }
        if released.state == LeaseState::Active {
            return Err(invalid_response(OP, "the lease is still active"));
        }
        Ok(())
    }
}

impl<C: ToolCaller> ComputerUseRuntime for GovernedRuntime<C> {
    async fn start_session(&self, objective: Option<&str>) -> RuntimeResult<String> {
        const OP: &str = "start_session";
        let mut args = Map::new();
        if let Some(objective) = objective {
            args.insert("objective".into(), objective.into());
        }
        let reply = self.call(OP, args).await?;
        match reply::session_id(&reply.structured) {
            Some(id) if !id.is_empty() => Ok(id.to_string()),
            _ => Err(invalid_response(OP, "the result names no session id")),
        }
    }

    async fn discover_capabilities(&self) -> RuntimeResult<RuntimeCapabilities> {
        let listing = self.caller.list_tools().await?;
        let governed = REQUIRED
            .iter()
            .all(|name| listing.tools.iter().any(|t| t == name));
        Ok(RuntimeCapabilities {
            tools: listing.tools,
            governed,
            detail: listing.server,
        })
    }

    async fn observe_visual(&self) -> RuntimeResult<VisualObservation> {
        let tool = self.options.screenshot_tool;
        let mut args = Map::new();
        args.insert("format".into(), "png".into());
        // Every observation carries its pixels (their digest is the observation), so
        // never the server's `unchanged` answer.
        args.insert("if_changed".into(), false.into());
        observe::visual(tool, self.call(tool, args).await?)
    }

    async fn observe_semantic(&self) -> RuntimeResult<SemanticObservation> {
        let tool = self.options.snapshot_tool;
        observe::semantic(tool, self.call(tool, Map::new()).await?)
    }

    async fn preview_action(&self, proposed: &ProposedAction) -> RuntimeResult<PreviewRecord> {
        const OP: &str = "preview_action";
        let reply = self.call(OP, arguments::action(OP, proposed)?).await?;
        // The server's own text, unless it wrapped the preview (then the preview alone).
        let inner = payload(&reply.structured);
        let raw = if std::ptr::eq(inner, &reply.structured) {
            reply.raw
        } else {
            serde_json::to_string(inner)
                .map_err(|e| invalid_response(OP, format!("the preview does not serialize: {e}")))?
        };
        let record = PreviewRecord::new(proposed.clone(), raw)?;
        let preview = record.preview()?;
        require_envelope_answers(proposed, &preview.envelope)?;
        validate_envelope_freshness(&preview.envelope, self.options.clock.clone())?;
        self.kept.keep(&record);
        Ok(record)
    }

    async fn reserve_target(
        &self,
        preview: &PreviewRecord,
    ) -> RuntimeResult<Option<TargetReservation>> {
        const OP: &str = "reserve_target";
        let fresh = self.checked_fresh(preview)?;
        let Some(args) = arguments::reserve(fresh.envelope(), &self.options)? else {
            return Ok(None);
        };
        let reply = self.call(OP, args).await?;
        let outcome = member::<TargetReservation>(OP, &reply.structured, "reservation")
            .and_then(|r| validate_reservation(&r, &fresh).map(BoundReservation::into_inner));
        match (
            outcome,
            issued_id(&reply.structured, "reservation", "reservationId"),
        ) {
            (Ok(reservation), _) => Ok(Some(reservation)),
            (Err(refused), Some(id)) => {
                // Refused (or undecodable), but the server holds it for our session.
                let session = &fresh.envelope().session_id;
                let cleanup = self.release_reservation_in(session, &id).await;
                with_cleanup(Err(refused), cleanup)
            }
            (Err(refused), None) => Err(refused),
        }
    }

    async fn release_target(&self, reservation: &TargetReservation) -> RuntimeResult<()> {
        self.release_reservation_in(&reservation.session_id, &reservation.reservation_id)
            .await
    }

    async fn acquire_lease(&self, preview: &PreviewRecord) -> RuntimeResult<ControlLease> {
        const OP: &str = "acquire_control_lease";
        let fresh = self.checked_fresh(preview)?;
        let reply = self
            .call(OP, arguments::lease(fresh.envelope(), &self.options)?)
            .await?;
        let outcome = member::<ControlLease>(OP, &reply.structured, "lease")
            .and_then(|l| validate_lease(&l, &fresh).map(BoundLease::into_inner));
        match (outcome, issued_id(&reply.structured, "lease", "leaseId")) {
            (Ok(lease), _) => Ok(lease),
            (Err(refused), Some(id)) => {
                // Refused, never returned; released in the session it was asked for.
                let session = &fresh.envelope().session_id;
                let cleanup = self.release_lease_in(session, &id).await;
                with_cleanup(Err(refused), cleanup)
            }
            (Err(refused), None) => Err(refused),
        }
    }

    async fn release_lease(&self, lease: &ControlLease) -> RuntimeResult<()> {
        self.release_lease_in(&lease.session_id, &lease.lease_id)
            .await
    }

    async fn execute_action(
        &self,
        preview: &PreviewRecord,
        authorization: &ExecutionAuthorization<'_>,
    ) -> RuntimeResult<ExecutionReceipt> {
        const OP: &str = "execute_action";
        // Everything is checked before the one call: the record is the preview handed
        // out, the authorization is for exactly its envelope, the proposal sent is the
        // one that produced it.
        let previewed = self.checked(preview)?.envelope;
        require_same_envelope(OP, &previewed, authorization.envelope())?;
        let args = arguments::execute(
            &preview.proposal,
            &authorization.lease().lease_id,
            authorization.approval().grant_id(),
        )?;
        let reply = self.call(OP, args).await?;
        let receipt: ExecutionReceipt = member(OP, &reply.structured, "receipt")?;
        // Bound to the previewed envelope without a freshness check: the envelope was
        // fresh at authorization, and one that expires while the action runs does not
        // make its receipt describe other work.
        rebind_receipt(&receipt, &previewed).map(BoundReceipt::into_inner)
    }

    async fn replay_receipt(
        &self,
        preview: &PreviewRecord,
        lease_id: &str,
    ) -> RuntimeResult<ExecutionReceipt> {
        const OP: &str = "execute_action";
        // The record is the preview handed out; its freshness is what is no longer asked.
        let previewed = self.checked(preview)?.envelope;
        let args = arguments::execute(&preview.proposal, lease_id, None)?;
        let reply = self.call(OP, args).await?;
        if reply.structured.get("replay") != Some(&Value::Bool(true)) {
            return Err(invalid_response(
                OP,
                "asked to replay the receipt of an expired envelope, the runtime did not \
                 answer a replay",
            ));
        }
        let receipt: ExecutionReceipt = member(OP, &reply.structured, "receipt")?;
        rebind_receipt(&receipt, &previewed).map(BoundReceipt::into_inner)
    }

    async fn pause_session(&self, session_id: &str) -> RuntimeResult<()> {
        self.session_call("pause_session", session_id).await
    }

    async fn stop_session(&self, session_id: &str) -> RuntimeResult<()> {
        self.session_call("stop_session", session_id).await
    }

    async fn emergency_stop(&self, reason: &str) -> RuntimeResult<()> {
        let mut args = Map::new();
        args.insert("reason".into(), reason.into());
        let reply = self.call("emergency_stop", args).await?;
        // A runtime that says it did not stop must not be taken as stopped.
        if reply.structured.get("stopped") == Some(&Value::Bool(false)) {
            return Err(invalid_response(
                "emergency_stop",
                "the runtime reports that it did not stop",
            ));
        }
        Ok(())
    }
}
