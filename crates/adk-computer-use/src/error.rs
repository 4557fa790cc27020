//! [`ComputerUseError`]: why a runtime response was refused or a step failed.
//!
//! Every variant names what failed in fields a caller can match on (the object, the wire
//! field, the bound), rather than in prose, so a graph can route on "the lease expired"
//! differently from "the lease belongs to someone else" without parsing messages.

use std::fmt;

/// The object a check was made on. Carried by errors so a caller can tell a lease failure
/// from a receipt failure without inspecting the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ResponseObject {
    /// The `ActionEnvelope` returned by `preview_action`.
    Envelope,
    /// A `ControlLease` returned by `acquire_lease`.
    Lease,
    /// A `TargetReservation` returned by `reserve_target`.
    Reservation,
    /// An `ExecutionReceipt` returned by `execute_action`.
    Receipt,
    /// An `ApprovalGrant` or runtime-held approval given as resume input.
    Approval,
}

impl ResponseObject {
    /// The contract's name of the object (`ControlLease`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            ResponseObject::Envelope => "ActionEnvelope",
            ResponseObject::Lease => "ControlLease",
            ResponseObject::Reservation => "TargetReservation",
            ResponseObject::Receipt => "ExecutionReceipt",
            ResponseObject::Approval => "Approval",
        }
    }
}

impl fmt::Display for ResponseObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One axis of a lease's `boundaries`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BoundaryAxis {
    /// `boundaries.appIds`.
    App,
    /// `boundaries.windowIds`.
    Window,
    /// `boundaries.displayIds`.
    Display,
}

impl BoundaryAxis {
    /// The wire field of the axis (`boundaries.appIds`, ...).
    pub const fn field(self) -> &'static str {
        match self {
            BoundaryAxis::App => "boundaries.appIds",
            BoundaryAxis::Window => "boundaries.windowIds",
            BoundaryAxis::Display => "boundaries.displayIds",
        }
    }
}

impl fmt::Display for BoundaryAxis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.field())
    }
}

/// Why an approval does not authorize the action (identity mismatches of a grant are
/// [`ComputerUseError::IdentityMismatch`] with object [`ResponseObject::Approval`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ApprovalFailure {
    /// The policy asked for confirmation and no approval was given.
    Required,
    /// The policy denies the action: no approval can authorize it.
    PolicyDenied,
    /// The grant has no uses left.
    NoUsesLeft,
}

impl fmt::Display for ApprovalFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ApprovalFailure::Required => "the policy requires an approval and none was given",
            ApprovalFailure::PolicyDenied => "the policy denies the action",
            ApprovalFailure::NoUsesLeft => "the grant has no uses left",
        })
    }
}

fn show(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or("<absent>")
}

/// Why a runtime response was refused or a governed step failed.
///
/// The response that caused a binding error is never stored: the error is all that
/// remains of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ComputerUseError {
    /// A response names another session, principal, action, agent, mode, scope or digest
    /// than the request that produced it. `None` means the value is absent on that side.
    #[error(
        "{object}.{field} does not match the request: expected `{}`, got `{}`",
        show(expected),
        show(actual)
    )]
    IdentityMismatch {
        /// The object that carried the field.
        object: ResponseObject,
        /// The wire name of the field (`sessionId`, `scope.appId`, ...).
        field: &'static str,
        /// The value the request binds it to.
        expected: Option<String>,
        /// The value the response carried.
        actual: Option<String>,
    },

    /// A timestamp that does not parse: a validity that cannot be established is no
    /// validity, so the object is rejected instead of the field being ignored.
    #[error("{object}.{field} `{value}` is not an RFC 3339 timestamp: {reason}")]
    InvalidTimestamp {
        /// The object that carried the timestamp.
        object: ResponseObject,
        /// The wire name of the field.
        field: &'static str,
        /// The text received.
        value: String,
        /// Why it failed to parse.
        reason: String,
    },

    /// An object whose validity window is empty or negative (`expiresAt` not after
    /// `proposedAt`): it was never valid.
    #[error("{object} validity window is not positive: from {starts_at} to {expires_at}")]
    EmptyValidityWindow {
        /// The object.
        object: ResponseObject,
        /// Start of the window, as received.
        starts_at: String,
        /// End of the window, as received.
        expires_at: String,
    },

    /// An object past its `expiresAt` at the time of the check.
    #[error("{object} expired at {expires_at} (checked at {checked_at})")]
    Expired {
        /// The object.
        object: ResponseObject,
        /// Its expiry, as received.
        expires_at: String,
        /// When the check was made, in wire form.
        checked_at: String,
    },

    /// A lease with no action left: `actionsUsed` has reached `actionBudget`.
    #[error("lease budget exhausted: {actions_used} of {action_budget} actions used")]
    BudgetExhausted {
        /// The lease's total budget.
        action_budget: u32,
        /// Actions already used.
        actions_used: u32,
    },

    /// An object not in its `active` state (released, revoked, expired, cancelled).
    #[error("{object} is `{state}`, not `active`")]
    NotActive {
        /// The object.
        object: ResponseObject,
        /// The state received, in wire form.
        state: &'static str,
    },

    /// The target is outside a lease's boundaries on one axis. `target` is `None` when the
    /// envelope does not say where the action lands on that axis, which a bounded lease
    /// cannot admit.
    #[error("target {} is outside the lease's {axis} {allowed:?}", show(target))]
    OutOfBounds {
        /// The axis that excludes the target.
        axis: BoundaryAxis,
        /// The target's value on that axis.
        target: Option<String>,
        /// What the lease allows on that axis (normalised).
        allowed: Vec<String>,
    },

    /// A digest that binds nothing because it is not a well-formed lowercase 64-hex
    /// SHA-256 (an envelope's own `argsDigest`; a response's digest that fails this is an
    /// [`ComputerUseError::IdentityMismatch`] instead).
    #[error("{object}.{field} `{value}` is not a lowercase 64-hex SHA-256")]
    MalformedDigest {
        /// The object.
        object: ResponseObject,
        /// The wire name of the field.
        field: &'static str,
        /// The text received.
        value: String,
    },

    /// The approval does not authorize the action.
    #[error("approval refused: {failure}")]
    Approval {
        /// Why.
        failure: ApprovalFailure,
    },

    /// The runtime refused a call or could not be reached. `code` is the contract's error
    /// code (`lease_expired`, `approval_required`, ...) when the runtime gave one, so a
    /// graph can route on it; `None` for transport failures.
    #[error("runtime {operation} failed{}: {message}", code.as_deref().map(|c| format!(" ({c})")).unwrap_or_default())]
    Runtime {
        /// The runtime operation (`preview_action`, `execute_action`, ...).
        operation: &'static str,
        /// The contract error code, if any.
        code: Option<String>,
        /// What the runtime said.
        message: String,
    },

    /// A step failed and releasing what it held failed too. Both are kept, the primary
    /// first, so neither hides the other and the result is the same on every run.
    #[error("{primary}; cleanup also failed: {cleanup}")]
    Cleanup {
        /// The failure that ended the step.
        primary: Box<ComputerUseError>,
        /// The failure of the release that followed.
        cleanup: Box<ComputerUseError>,
    },
}

impl ComputerUseError {
    /// The wire field an identity mismatch names, if this is one (a convenience for
    /// callers and tests that route on the field).
    pub fn mismatched_field(&self) -> Option<&'static str> {
        match self {
            ComputerUseError::IdentityMismatch { field, .. } => Some(field),
            _ => None,
        }
    }
}

/// Combines the result of a step with the result of the cleanup that followed it.
///
/// The primary failure stays primary when cleanup succeeds; when both fail the error is
/// [`ComputerUseError::Cleanup`] carrying both; and a cleanup failure after an otherwise
/// successful step is returned rather than hidden.
pub fn with_cleanup<T>(
    primary: Result<T, ComputerUseError>,
    cleanup: Result<(), ComputerUseError>,
) -> Result<T, ComputerUseError> {
    match (primary, cleanup) {
        (Ok(value), Ok(())) => Ok(value),
        (Err(primary), Ok(())) => Err(primary),
        (Ok(_), Err(cleanup)) => Err(cleanup),
        (Err(primary), Err(cleanup)) => Err(ComputerUseError::Cleanup {
            primary: Box::new(primary),
            cleanup: Box::new(cleanup),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(state: &'static str) -> ComputerUseError {
        ComputerUseError::NotActive {
            object: ResponseObject::Reservation,
            state,
        }
    }

    #[test]
    fn primary_failure_stays_primary_when_cleanup_succeeds() {
        let result: Result<(), _> = with_cleanup(Err(failure("released")), Ok(()));
        assert_eq!(result, Err(failure("released")));
    }

    #[test]
    fn both_failures_are_kept_in_order() {
        let result: Result<(), _> = with_cleanup(Err(failure("released")), Err(failure("expired")));
        assert_eq!(
            result,
            Err(ComputerUseError::Cleanup {
                primary: Box::new(failure("released")),
                cleanup: Box::new(failure("expired")),
            })
        );
    }

    #[test]
    fn cleanup_failure_after_success_is_not_hidden() {
        assert_eq!(
            with_cleanup(Ok(7), Err(failure("expired"))),
            Err(failure("expired"))
        );
        assert_eq!(with_cleanup(Ok(7), Ok(())), Ok(7));
    }

    #[test]
    fn mismatch_message_names_object_and_field() {
        let err = ComputerUseError::IdentityMismatch {
            object: ResponseObject::Lease,
            field: "sessionId",
            expected: Some("s1".into()),
            actual: None,
        };
        assert_eq!(err.mismatched_field(), Some("sessionId"));
        assert_eq!(
            err.to_string(),
            "ControlLease.sessionId does not match the request: expected `s1`, got `<absent>`"
        );
    }
}
