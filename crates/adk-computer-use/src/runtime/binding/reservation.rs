//! Reservation binding. A reservation is advisory — it never authorizes a mutation — but
//! one returned for another intent, session or target would let two agents plan on one
//! target while each believes it holds it, so it is bound like any other response.

use cc_contract::{ReservationState, TargetReservation};

use super::{parse, require_eq, require_optional, require_unexpired};
use crate::bound::{BindingKey, BoundReservation, FreshEnvelope};
use crate::error::{ComputerUseError, ResponseObject};

const OBJECT: ResponseObject = ResponseObject::Reservation;

/// Binds `reservation` to `envelope`, at the current time of the envelope's clock.
///
/// Refused unless: `sessionId` and `principalId` equal the envelope's; `intentId` equals
/// its `actionId`; `executionGroupId` and `agentId` are absent or equal; `scope.appId`
/// equals the target's app; `scope.windowId` is absent (an app-wide reservation) or the
/// target's window after normalisation; `state` is `active`; and `expiresAt` parses and
/// lies in the future.
pub fn validate_reservation(
    reservation: &TargetReservation,
    envelope: &FreshEnvelope,
) -> Result<BoundReservation, ComputerUseError> {
    let request = envelope.envelope();
    require_eq(
        OBJECT,
        "sessionId",
        &request.session_id,
        &reservation.session_id,
    )?;
    require_eq(
        OBJECT,
        "principalId",
        &request.principal_id,
        &reservation.principal_id,
    )?;
    require_eq(
        OBJECT,
        "intentId",
        &request.action_id,
        &reservation.intent_id,
    )?;
    require_optional(
        OBJECT,
        "executionGroupId",
        request.execution_group_id.as_deref(),
        reservation.execution_group_id.as_deref(),
    )?;
    require_optional(
        OBJECT,
        "agentId",
        request.agent_id.as_deref(),
        reservation.agent_id.as_deref(),
    )?;

    let target = request.target.as_ref();
    let resource = request.resource.as_ref();
    let app = target
        .map(|t| t.app_id.as_str())
        .or_else(|| resource.and_then(|r| r.target_app_id.as_deref()));
    match app {
        Some(app) => require_eq(OBJECT, "scope.appId", app, &reservation.scope.app_id)?,
        None => {
            return Err(super::mismatch(
                OBJECT,
                "scope.appId",
                None,
                Some(&reservation.scope.app_id),
            ));
        }
    }
    let window = target
        .and_then(|t| t.window_id.as_ref())
        .or_else(|| resource.and_then(|r| r.target_window_id.as_ref()));
    if let Some(reserved) = &reservation.scope.window_id
        && !window.is_some_and(|w| w.same_window(reserved))
    {
        return Err(super::mismatch(
            OBJECT,
            "scope.windowId",
            window.map(|w| w.normalized()).as_deref(),
            Some(&reserved.normalized()),
        ));
    }

    if reservation.state != ReservationState::Active {
        return Err(ComputerUseError::NotActive {
            object: OBJECT,
            state: reservation.state.as_str(),
        });
    }
    let expires_at = parse(OBJECT, "expiresAt", &reservation.expires_at)?;
    require_unexpired(OBJECT, expires_at, envelope.now())?;
    Ok(BoundReservation {
        reservation: reservation.clone(),
        expires_at,
        key: BindingKey::of(request),
    })
}

/// Rechecks a bound reservation at the current time of the envelope's clock.
pub(super) fn recheck(
    reservation: &BoundReservation,
    envelope: &FreshEnvelope,
) -> Result<(), ComputerUseError> {
    require_unexpired(OBJECT, reservation.expires_at, envelope.now())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::binding::fixtures::{T0, clock, envelope, reservation, ts};
    use crate::runtime::binding::validate_envelope_freshness;
    use cc_contract::WindowId;

    fn fresh() -> FreshEnvelope {
        validate_envelope_freshness(&envelope(), clock(T0 + 2)).expect("fresh")
    }

    fn field_of(result: Result<BoundReservation, ComputerUseError>) -> &'static str {
        match result {
            Err(ComputerUseError::IdentityMismatch {
                object: ResponseObject::Reservation,
                field,
                ..
            }) => field,
            other => panic!("expected a reservation identity mismatch, got {other:?}"),
        }
    }

    #[test]
    fn well_bound_reservation_is_accepted() {
        let bound = validate_reservation(&reservation(), &fresh()).expect("bound");
        assert_eq!(bound.reservation(), &reservation());
    }

    #[test]
    fn reservation_of_another_intent_is_rejected() {
        let mut other = reservation();
        other.intent_id = "intent-edit-report".into();
        assert_eq!(field_of(validate_reservation(&other, &fresh())), "intentId");
    }

    #[test]
    fn reservation_of_another_session_or_principal_is_rejected() {
        let mut other = reservation();
        other.session_id = "session-0002".into();
        assert_eq!(
            field_of(validate_reservation(&other, &fresh())),
            "sessionId"
        );
        let mut other = reservation();
        other.principal_id = "principal-local".into();
        assert_eq!(
            field_of(validate_reservation(&other, &fresh())),
            "principalId"
        );
    }

    #[test]
    fn reservation_of_another_app_scope_is_rejected() {
        let mut other = reservation();
        other.scope.app_id = "com.example.Report".into();
        assert_eq!(
            field_of(validate_reservation(&other, &fresh())),
            "scope.appId"
        );
    }

    #[test]
    fn reservation_of_another_window_scope_is_rejected() {
        let mut other = reservation();
        other.scope.window_id = Some(WindowId::Number(43));
        assert_eq!(
            field_of(validate_reservation(&other, &fresh())),
            "scope.windowId"
        );
    }

    #[test]
    fn window_scope_compares_after_normalisation() {
        let mut same = reservation();
        same.scope.window_id = Some(WindowId::String("42".into()));
        assert!(validate_reservation(&same, &fresh()).is_ok());
    }

    #[test]
    fn absent_optional_fields_are_accepted() {
        let mut under = reservation();
        under.agent_id = None;
        under.execution_group_id = None;
        under.scope.window_id = None;
        assert!(validate_reservation(&under, &fresh()).is_ok());
    }

    #[test]
    fn present_and_different_optional_fields_are_rejected() {
        let mut other = reservation();
        other.execution_group_id = Some("group-0002".into());
        assert_eq!(
            field_of(validate_reservation(&other, &fresh())),
            "executionGroupId"
        );
        let mut other = reservation();
        other.agent_id = Some("planner-a".into());
        assert_eq!(field_of(validate_reservation(&other, &fresh())), "agentId");
    }

    #[test]
    fn inactive_or_expired_reservation_is_rejected() {
        let mut done = reservation();
        done.state = ReservationState::Cancelled;
        assert!(matches!(
            validate_reservation(&done, &fresh()),
            Err(ComputerUseError::NotActive {
                state: "cancelled",
                ..
            })
        ));
        let mut old = reservation();
        old.expires_at = ts(T0 + 1);
        assert!(matches!(
            validate_reservation(&old, &fresh()),
            Err(ComputerUseError::Expired {
                object: ResponseObject::Reservation,
                ..
            })
        ));
        let mut odd = reservation();
        odd.expires_at = "later".into();
        assert!(matches!(
            validate_reservation(&odd, &fresh()),
            Err(ComputerUseError::InvalidTimestamp {
                field: "expiresAt",
                ..
            })
        ));
    }
}
