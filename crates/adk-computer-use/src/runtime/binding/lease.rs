//! Lease binding and bounds. The lease is the one writer gate, so it is refused unless it
//! is this session's and principal's, in this mode, active, with budget left, unexpired,
//! and bounded to include the target.

use cc_contract::{ActionEnvelope, ControlLease, LeaseBoundaries, LeaseState, WindowId};

use super::{parse, require_eq, require_optional, require_unexpired};
use crate::bound::{BindingKey, BoundLease, FreshEnvelope};
use crate::error::{BoundaryAxis, ComputerUseError, ResponseObject};

const OBJECT: ResponseObject = ResponseObject::Lease;

/// Binds `lease` to `envelope`, at the current time of the envelope's clock.
///
/// Refused unless: `sessionId` and `principalId` equal the envelope's; `agentId` is absent
/// or equal; `executionMode == requestedMode`; `state` is `active`;
/// `actionsUsed < actionBudget` (a budget of 1 with 1 used authorizes nothing, and a
/// budget of 0 nothing at all); `expiresAt` parses and lies in the future; and the target
/// lies inside every non-empty `boundaries` list (window ids compare after normalisation,
/// so `42` and `"42"` are one window). An empty list is no constraint on its axis.
pub fn validate_lease(
    lease: &ControlLease,
    envelope: &FreshEnvelope,
) -> Result<BoundLease, ComputerUseError> {
    let request = envelope.envelope();
    require_eq(OBJECT, "sessionId", &request.session_id, &lease.session_id)?;
    require_eq(
        OBJECT,
        "principalId",
        &request.principal_id,
        &lease.principal_id,
    )?;
    require_optional(
        OBJECT,
        "agentId",
        request.agent_id.as_deref(),
        lease.agent_id.as_deref(),
    )?;
    require_eq(
        OBJECT,
        "executionMode",
        request.requested_mode.as_str(),
        lease.execution_mode.as_str(),
    )?;
    if lease.state != LeaseState::Active {
        return Err(ComputerUseError::NotActive {
            object: OBJECT,
            state: lease.state.as_str(),
        });
    }
    if lease.actions_used >= lease.action_budget {
        return Err(ComputerUseError::BudgetExhausted {
            action_budget: lease.action_budget,
            actions_used: lease.actions_used,
        });
    }
    let expires_at = parse(OBJECT, "expiresAt", &lease.expires_at)?;
    require_unexpired(OBJECT, expires_at, envelope.now())?;
    require_inside(&lease.boundaries, request)?;
    Ok(BoundLease {
        lease: lease.clone(),
        expires_at,
        key: BindingKey::of(request),
    })
}

/// Rechecks a bound lease at the current time of the envelope's clock.
pub(super) fn recheck(
    lease: &BoundLease,
    envelope: &FreshEnvelope,
) -> Result<(), ComputerUseError> {
    require_unexpired(OBJECT, lease.expires_at, envelope.now())
}

/// The target's app, window and display: from the target evidence, else from the
/// resource the server derived. Shared with the runtimes, which ask for a lease bounded
/// to the same axes this check enforces.
pub(crate) fn target_axes(
    envelope: &ActionEnvelope,
) -> (Option<&str>, Option<&WindowId>, Option<&str>) {
    let target = envelope.target.as_ref();
    let resource = envelope.resource.as_ref();
    let app = target
        .map(|t| t.app_id.as_str())
        .or_else(|| resource.and_then(|r| r.target_app_id.as_deref()));
    let window = target
        .and_then(|t| t.window_id.as_ref())
        .or_else(|| resource.and_then(|r| r.target_window_id.as_ref()));
    let display = target.and_then(|t| t.display_id.as_deref());
    (app, window, display)
}

/// Whether the target lies inside `boundaries`. On a bounded axis, a target that does not
/// say where it lands is outside: the lease cannot be shown to admit it.
fn require_inside(
    boundaries: &LeaseBoundaries,
    envelope: &ActionEnvelope,
) -> Result<(), ComputerUseError> {
    let (app, window, display) = target_axes(envelope);
    check_axis(
        BoundaryAxis::App,
        app,
        &boundaries.app_ids,
        |allowed, app| allowed == app,
        |a| a.clone(),
    )?;
    check_axis(
        BoundaryAxis::Window,
        window,
        &boundaries.window_ids,
        |allowed, window| allowed.same_window(window),
        |w| w.normalized().into_owned(),
    )?;
    check_axis(
        BoundaryAxis::Display,
        display,
        &boundaries.display_ids,
        |allowed, display| allowed == display,
        |d| d.clone(),
    )
}

fn check_axis<A, T: ?Sized + ToString>(
    axis: BoundaryAxis,
    target: Option<&T>,
    allowed: &[A],
    admits: impl Fn(&A, &T) -> bool,
    show: impl Fn(&A) -> String,
) -> Result<(), ComputerUseError> {
    if allowed.is_empty() {
        return Ok(());
    }
    match target {
        Some(value) if allowed.iter().any(|a| admits(a, value)) => Ok(()),
        _ => Err(ComputerUseError::OutOfBounds {
            axis,
            target: target.map(ToString::to_string),
            allowed: allowed.iter().map(show).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::binding::fixtures::{T0, clock, envelope, lease, ts};
    use crate::runtime::binding::validate_envelope_freshness;
    use cc_contract::{ExecutionMode, LeaseBoundaries, WindowId};

    fn fresh() -> FreshEnvelope {
        validate_envelope_freshness(&envelope(), clock(T0 + 2)).expect("fresh")
    }

    fn field_of(result: Result<BoundLease, ComputerUseError>) -> &'static str {
        match result {
            Err(ComputerUseError::IdentityMismatch {
                object: ResponseObject::Lease,
                field,
                ..
            }) => field,
            other => panic!("expected a lease identity mismatch, got {other:?}"),
        }
    }

    #[test]
    fn well_bound_lease_is_accepted() {
        let bound = validate_lease(&lease(), &fresh()).expect("bound");
        assert_eq!(bound.lease(), &lease());
    }

    #[test]
    fn lease_of_another_session_is_rejected() {
        let mut other = lease();
        other.session_id = "session-0002".into();
        assert_eq!(field_of(validate_lease(&other, &fresh())), "sessionId");
    }

    #[test]
    fn lease_of_another_principal_is_rejected() {
        let mut other = lease();
        other.principal_id = "principal-0002".into();
        assert_eq!(field_of(validate_lease(&other, &fresh())), "principalId");
    }

    #[test]
    fn lease_of_another_agent_is_rejected() {
        let mut other = lease();
        other.agent_id = Some("planner".into());
        assert_eq!(field_of(validate_lease(&other, &fresh())), "agentId");
    }

    #[test]
    fn lease_in_another_mode_is_rejected() {
        let mut other = lease();
        other.execution_mode = ExecutionMode::Background;
        assert_eq!(field_of(validate_lease(&other, &fresh())), "executionMode");
    }

    #[test]
    fn absent_agent_is_accepted() {
        let mut under = lease();
        under.agent_id = None;
        assert!(validate_lease(&under, &fresh()).is_ok());
    }

    #[test]
    fn agent_on_lease_but_not_on_request_is_rejected() {
        let mut env = envelope();
        env.agent_id = None;
        let fresh = validate_envelope_freshness(&env, clock(T0 + 2)).expect("fresh");
        assert_eq!(field_of(validate_lease(&lease(), &fresh)), "agentId");
    }

    #[test]
    fn inactive_lease_is_rejected() {
        for state in [
            LeaseState::Released,
            LeaseState::Revoked,
            LeaseState::Expired,
        ] {
            let mut other = lease();
            other.state = state;
            let err = validate_lease(&other, &fresh()).expect_err("inactive");
            assert_eq!(
                err,
                ComputerUseError::NotActive {
                    object: ResponseObject::Lease,
                    state: state.as_str()
                }
            );
        }
    }

    #[test]
    fn exhausted_budget_with_non_zero_total_is_rejected() {
        // The first validator checked `actionBudget == 0` and let this through.
        let mut spent = lease();
        spent.action_budget = 1;
        spent.actions_used = 1;
        assert_eq!(
            validate_lease(&spent, &fresh()).expect_err("exhausted"),
            ComputerUseError::BudgetExhausted {
                action_budget: 1,
                actions_used: 1
            }
        );
        spent.action_budget = 5;
        spent.actions_used = 7;
        assert!(matches!(
            validate_lease(&spent, &fresh()),
            Err(ComputerUseError::BudgetExhausted { .. })
        ));
    }

    #[test]
    fn zero_budget_is_rejected() {
        let mut none = lease();
        none.action_budget = 0;
        assert!(matches!(
            validate_lease(&none, &fresh()),
            Err(ComputerUseError::BudgetExhausted {
                action_budget: 0,
                ..
            })
        ));
    }

    #[test]
    fn budget_left_is_accepted() {
        let mut some = lease();
        some.action_budget = 3;
        some.actions_used = 2;
        assert!(validate_lease(&some, &fresh()).is_ok());
    }

    #[test]
    fn expired_lease_is_rejected() {
        let mut old = lease();
        old.expires_at = ts(T0 + 2);
        assert!(matches!(
            validate_lease(&old, &fresh()),
            Err(ComputerUseError::Expired {
                object: ResponseObject::Lease,
                ..
            })
        ));
    }

    #[test]
    fn unparseable_expiry_is_rejected() {
        for bad in ["", "never", "2026-07-13T10:01:00"] {
            let mut odd = lease();
            odd.expires_at = bad.into();
            let err = validate_lease(&odd, &fresh()).expect_err(bad);
            assert!(
                matches!(
                    &err,
                    ComputerUseError::InvalidTimestamp { object: ResponseObject::Lease, field: "expiresAt", value, .. } if value == bad
                ),
                "{err:?}"
            );
        }
    }

    #[test]
    fn target_outside_app_bounds_is_rejected() {
        let mut other = lease();
        other.boundaries.app_ids = vec!["com.example.Other".into()];
        assert_eq!(
            validate_lease(&other, &fresh()).expect_err("out of bounds"),
            ComputerUseError::OutOfBounds {
                axis: BoundaryAxis::App,
                target: Some("com.example.Sandbox".into()),
                allowed: vec!["com.example.Other".into()],
            }
        );
    }

    #[test]
    fn target_outside_window_bounds_is_rejected() {
        let mut other = lease();
        other.boundaries.window_ids = vec![WindowId::Number(43)];
        assert!(matches!(
            validate_lease(&other, &fresh()),
            Err(ComputerUseError::OutOfBounds {
                axis: BoundaryAxis::Window,
                ..
            })
        ));
    }

    #[test]
    fn target_outside_display_bounds_is_rejected() {
        let mut other = lease();
        other.boundaries.display_ids = vec!["left".into()];
        assert!(matches!(
            validate_lease(&other, &fresh()),
            Err(ComputerUseError::OutOfBounds {
                axis: BoundaryAxis::Display,
                ..
            })
        ));
    }

    #[test]
    fn window_ids_compare_after_normalisation() {
        // The envelope says 42 (a number); the lease says "42" (a string).
        assert!(validate_lease(&lease(), &fresh()).is_ok());
    }

    #[test]
    fn target_without_a_value_on_a_bounded_axis_is_rejected() {
        let mut env = envelope();
        if let Some(target) = env.target.as_mut() {
            target.display_id = None;
        }
        let fresh = validate_envelope_freshness(&env, clock(T0 + 2)).expect("fresh");
        assert_eq!(
            validate_lease(&lease(), &fresh).expect_err("unknown display"),
            ComputerUseError::OutOfBounds {
                axis: BoundaryAxis::Display,
                target: None,
                allowed: vec!["main".into()],
            }
        );
    }

    #[test]
    fn unbounded_lease_is_accepted() {
        let mut open = lease();
        open.boundaries = LeaseBoundaries::default();
        assert!(validate_lease(&open, &fresh()).is_ok());
        // Unbounded admits even an action without a target.
        let mut env = envelope();
        env.target = None;
        let fresh = validate_envelope_freshness(&env, clock(T0 + 2)).expect("fresh");
        assert!(validate_lease(&open, &fresh).is_ok());
    }

    #[test]
    fn recheck_sees_expiry_after_binding() {
        let manual = std::sync::Arc::new(crate::runtime::ManualClock::new(
            crate::runtime::binding::fixtures::at(T0 + 2),
        ));
        let fresh = validate_envelope_freshness(&envelope(), manual.clone()).expect("fresh");
        let bound = validate_lease(&lease(), &fresh).expect("bound");
        manual.advance(time::Duration::seconds(58));
        assert!(matches!(
            recheck(&bound, &fresh),
            Err(ComputerUseError::Expired { .. })
        ));
    }
}
