//! Releases on every terminal path (GOVERNANCE.md Part B, "Reservation cleanup").
//!
//! Once a reservation or lease is accepted, every terminal path gives it back: failures of
//! lease acquisition, authorization, validation, execution, receipt and verification, and
//! successful verification. A response rejected by its binding check is released on the
//! spot when it is plausibly ours (see [`release_rejected_lease`]). Every attempt is
//! recorded in state before the next checkpoint, so a resume never releases twice.

use cc_contract::{ControlLease, TargetReservation};

use super::state::{GraphState, ReleaseRecord, Released};
use crate::error::ComputerUseError;
use crate::runtime::ComputerUseRuntime;

fn record(
    state: &mut GraphState,
    object: Released,
    id: &str,
    rejected: bool,
    result: &Result<(), ComputerUseError>,
) {
    state.releases.push(ReleaseRecord {
        object,
        id: id.to_owned(),
        rejected,
        error: result.as_ref().err().map(ToString::to_string),
    });
}

/// Releases the held lease, if any and not yet attempted. `None` when there was nothing
/// to release.
pub(super) async fn release_lease<R: ComputerUseRuntime>(
    runtime: &R,
    state: &mut GraphState,
) -> Option<Result<(), ComputerUseError>> {
    let held = state.lease.as_mut().filter(|h| !h.release_attempted)?;
    held.release_attempted = true;
    let lease = held.object.clone();
    let result = runtime.release_lease(&lease).await;
    record(state, Released::Lease, &lease.lease_id, false, &result);
    Some(result)
}

/// Releases the held reservation, if any and not yet attempted.
pub(super) async fn release_reservation<R: ComputerUseRuntime>(
    runtime: &R,
    state: &mut GraphState,
) -> Option<Result<(), ComputerUseError>> {
    let held = state
        .reservation
        .as_mut()
        .filter(|h| !h.release_attempted)?;
    held.release_attempted = true;
    let reservation = held.object.clone();
    let result = runtime.release_target(&reservation).await;
    record(
        state,
        Released::Reservation,
        &reservation.reservation_id,
        false,
        &result,
    );
    Some(result)
}

/// Releases a reservation the runtime returned but the binding check refused. The
/// reservation is not stored; only the release is recorded.
pub(super) async fn release_rejected_reservation<R: ComputerUseRuntime>(
    runtime: &R,
    state: &mut GraphState,
    reservation: &TargetReservation,
) -> Result<(), ComputerUseError> {
    let result = runtime.release_target(reservation).await;
    record(
        state,
        Released::Reservation,
        &reservation.reservation_id,
        true,
        &result,
    );
    result
}

/// Releases a lease the binding check refused, when it names this session and principal
/// (a lease in bad shape — exhausted, out of bounds, wrong mode — that we nonetheless
/// hold). A lease of another session or principal is not ours to release: `None`.
pub(super) async fn release_rejected_lease<R: ComputerUseRuntime>(
    runtime: &R,
    state: &mut GraphState,
    lease: &ControlLease,
    session_id: &str,
    principal_id: &str,
) -> Option<Result<(), ComputerUseError>> {
    if lease.session_id != session_id || lease.principal_id != principal_id {
        return None;
    }
    let result = runtime.release_lease(lease).await;
    record(state, Released::Lease, &lease.lease_id, true, &result);
    Some(result)
}

/// One cleanup result from the lease's and the reservation's: the failure if one failed,
/// both (lease first) if both did.
pub(super) fn combine(
    lease: Option<Result<(), ComputerUseError>>,
    reservation: Option<Result<(), ComputerUseError>>,
) -> Result<(), ComputerUseError> {
    match (lease.unwrap_or(Ok(())), reservation.unwrap_or(Ok(()))) {
        (Ok(()), other) | (other, Ok(())) => other,
        (Err(lease), Err(reservation)) => Err(ComputerUseError::Cleanup {
            primary: Box::new(lease),
            cleanup: Box::new(reservation),
        }),
    }
}
