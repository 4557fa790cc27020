//! The mutation gate: every input of one `execute_action` call, revalidated together
//! immediately before the call.

use super::{approval, envelope, lease, require_same_envelope, reservation};
use crate::bound::{
    BoundApproval, BoundLease, BoundReservation, ExecutionAuthorization, FreshEnvelope,
};
use crate::error::{ComputerUseError, ResponseObject};

/// Authorizes one execution of `envelope`.
///
/// The preview is not mutation authority, and time passes between preview and execute
/// (an approval interrupt, a reservation, a lease acquisition), so this rechecks
/// everything at the current time of the envelope's clock: the envelope is still fresh;
/// the lease, the reservation and the approval were bound to this very envelope (same
/// action id and digest) and have not expired since. Its parameters are bound types only,
/// so an unvalidated lease cannot reach it: that is a compile error, not a runtime check.
///
/// ```compile_fail
/// # use adk_computer_use::bound::{BoundApproval, FreshEnvelope};
/// # use adk_computer_use::runtime::binding::authorize_execute;
/// # fn run(envelope: &FreshEnvelope, raw: &cc_contract::ControlLease, approval: &BoundApproval) {
/// // A decoded lease is not a bound one.
/// let _ = authorize_execute(envelope, raw, None, approval);
/// # }
/// ```
pub fn authorize_execute<'a>(
    envelope: &'a FreshEnvelope,
    lease: &'a BoundLease,
    reservation: Option<&'a BoundReservation>,
    approval: &'a BoundApproval,
) -> Result<ExecutionAuthorization<'a>, ComputerUseError> {
    envelope::recheck(envelope)?;
    require_same_envelope(ResponseObject::Lease, &lease.key, envelope)?;
    lease::recheck(lease, envelope)?;
    if let Some(reservation) = reservation {
        require_same_envelope(ResponseObject::Reservation, &reservation.key, envelope)?;
        reservation::recheck(reservation, envelope)?;
    }
    require_same_envelope(ResponseObject::Approval, &approval.key, envelope)?;
    approval::recheck(approval, envelope)?;
    Ok(ExecutionAuthorization {
        envelope: envelope.envelope(),
        lease: lease.lease(),
        reservation: reservation.map(BoundReservation::reservation),
        approval,
        authorized_at: envelope.now(),
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::bound::Approval;
    use crate::runtime::ManualClock;
    use crate::runtime::binding::fixtures::{
        T0, at, envelope, grant, lease, policy, reservation, ts,
    };
    use crate::runtime::binding::{
        validate_approval, validate_envelope_freshness, validate_lease, validate_reservation,
    };
    use cc_contract::{PolicyVerdict, sha256_hex};
    use time::Duration;

    struct Bound {
        clock: Arc<ManualClock>,
        envelope: FreshEnvelope,
        lease: BoundLease,
        reservation: BoundReservation,
        approval: BoundApproval,
    }

    fn bind() -> Bound {
        let clock = Arc::new(ManualClock::new(at(T0 + 2)));
        let envelope = validate_envelope_freshness(&envelope(), clock.clone()).expect("fresh");
        let lease = validate_lease(&lease(), &envelope).expect("lease");
        let reservation = validate_reservation(&reservation(), &envelope).expect("reservation");
        let approval = validate_approval(
            Approval::ExactGrant {
                grant: Box::new(grant()),
            },
            &envelope,
            &policy(PolicyVerdict::Confirm),
        )
        .expect("approval");
        Bound {
            clock,
            envelope,
            lease,
            reservation,
            approval,
        }
    }

    #[test]
    fn bound_inputs_authorize_one_execution() {
        let b = bind();
        let auth = authorize_execute(&b.envelope, &b.lease, Some(&b.reservation), &b.approval)
            .expect("authorized");
        assert_eq!(auth.envelope(), b.envelope.envelope());
        assert_eq!(auth.lease(), b.lease.lease());
        assert_eq!(auth.reservation(), Some(b.reservation.reservation()));
        assert_eq!(auth.approval().grant_id(), Some("grant-0001"));
        assert_eq!(auth.authorized_at(), at(T0 + 2));
    }

    #[test]
    fn envelope_that_expired_while_waiting_is_refused() {
        // Fresh at preview; the approval interrupt used up the rest of the window.
        let b = bind();
        b.clock.advance(Duration::seconds(28));
        assert!(matches!(
            authorize_execute(&b.envelope, &b.lease, None, &b.approval),
            Err(ComputerUseError::Expired {
                object: ResponseObject::Envelope,
                ..
            })
        ));
    }

    #[test]
    fn lease_bound_to_another_envelope_is_refused() {
        let b = bind();
        let mut other = envelope();
        other.action_id = "action-0002".into();
        other.args_digest = sha256_hex("other work");
        let other = validate_envelope_freshness(&other, b.clock.clone()).expect("fresh");
        let err = authorize_execute(&other, &b.lease, None, &b.approval).expect_err("foreign");
        assert!(
            matches!(
                err,
                ComputerUseError::IdentityMismatch {
                    object: ResponseObject::Lease,
                    field: "actionId",
                    ..
                }
            ),
            "{err:?}"
        );
    }

    #[test]
    fn expired_lease_reservation_or_grant_is_refused_at_execute() {
        let clock = Arc::new(ManualClock::new(at(T0 + 2)));
        let envelope = validate_envelope_freshness(&envelope(), clock.clone()).expect("fresh");
        let mut short = lease();
        short.expires_at = ts(T0 + 10);
        let lease = validate_lease(&short, &envelope).expect("lease");
        let approval = validate_approval(
            Approval::NotRequired,
            &envelope,
            &policy(PolicyVerdict::Allow),
        )
        .expect("allowed");
        clock.set(at(T0 + 10));
        assert!(matches!(
            authorize_execute(&envelope, &lease, None, &approval),
            Err(ComputerUseError::Expired {
                object: ResponseObject::Lease,
                ..
            })
        ));
    }
}
