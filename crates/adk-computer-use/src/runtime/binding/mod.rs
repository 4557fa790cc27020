//! Response binding (GOVERNANCE.md Part B): every runtime response is bound back to the
//! request that produced it before it may enter graph state.
//!
//! The runtime is the authority, but its answers are checked locally: a well-formed
//! `ControlLease`, `TargetReservation` or `ExecutionReceipt` of another session decodes
//! without complaint, so decoding alone proves nothing about provenance. Each validator
//! compares a response with the [`FreshEnvelope`] it answers and returns a bound value
//! (see [`crate::bound`]); a mismatch is [`ComputerUseError::IdentityMismatch`] naming the
//! field, and the response is refused, never stored.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use adk_computer_use::runtime::SystemClock;
//! use adk_computer_use::runtime::binding::{validate_envelope_freshness, validate_lease};
//! # fn run(
//! #     envelope: cc_contract::ActionEnvelope,
//! #     lease: cc_contract::ControlLease,
//! # ) -> Result<(), adk_computer_use::ComputerUseError> {
//! let envelope = validate_envelope_freshness(&envelope, Arc::new(SystemClock))?;
//! // Refuses a lease that is well-formed but belongs to another session.
//! let lease = validate_lease(&lease, &envelope)?;
//! # let _ = lease;
//! # Ok(())
//! # }
//! ```
//!
//! Rules shared by every validator:
//! * ids and modes compare by exact equality;
//! * an optional field (`agentId`, `executionGroupId`) absent in the response is
//!   under-specification and accepted; present and different is a mismatch;
//! * a timestamp that does not parse rejects its object;
//! * the digest is the strongest binding: an empty or malformed digest is a mismatch,
//!   never "unavailable".

mod approval;
mod authorize;
mod envelope;
pub(crate) mod lease;
mod receipt;
mod reservation;

pub use approval::validate_approval;
pub use authorize::authorize_execute;
pub use envelope::validate_envelope_freshness;
pub use lease::validate_lease;
pub(crate) use receipt::rebind_receipt;
pub use receipt::validate_receipt;
pub use reservation::validate_reservation;

use cc_contract::{format_timestamp, parse_timestamp};
use time::OffsetDateTime;

use crate::bound::{BindingKey, FreshEnvelope};
use crate::error::{ComputerUseError, ResponseObject};

/// Exact equality of a required field.
fn require_eq(
    object: ResponseObject,
    field: &'static str,
    expected: &str,
    actual: &str,
) -> Result<(), ComputerUseError> {
    if expected == actual {
        Ok(())
    } else {
        Err(mismatch(object, field, Some(expected), Some(actual)))
    }
}

/// The optional-field rule: absent in the response is accepted; present must equal the
/// request's value (and a request without the value binds a present one to nothing).
fn require_optional(
    object: ResponseObject,
    field: &'static str,
    expected: Option<&str>,
    actual: Option<&str>,
) -> Result<(), ComputerUseError> {
    match actual {
        None => Ok(()),
        Some(actual) if expected == Some(actual) => Ok(()),
        Some(actual) => Err(mismatch(object, field, expected, Some(actual))),
    }
}

fn mismatch(
    object: ResponseObject,
    field: &'static str,
    expected: Option<&str>,
    actual: Option<&str>,
) -> ComputerUseError {
    ComputerUseError::IdentityMismatch {
        object,
        field,
        expected: expected.map(str::to_owned),
        actual: actual.map(str::to_owned),
    }
}

/// Parses a wire timestamp; an unparseable one rejects the object.
fn parse(
    object: ResponseObject,
    field: &'static str,
    value: &str,
) -> Result<OffsetDateTime, ComputerUseError> {
    parse_timestamp(value).map_err(|e| ComputerUseError::InvalidTimestamp {
        object,
        field,
        value: e.input,
        reason: e.reason,
    })
}

/// Refuses an object whose expiry is at or before `now`.
fn require_unexpired(
    object: ResponseObject,
    expires_at: OffsetDateTime,
    now: OffsetDateTime,
) -> Result<(), ComputerUseError> {
    if now < expires_at {
        Ok(())
    } else {
        Err(ComputerUseError::Expired {
            object,
            expires_at: format_timestamp(expires_at),
            checked_at: format_timestamp(now),
        })
    }
}

/// Refuses a bound value presented with an envelope other than the one it was bound to.
fn require_same_envelope(
    object: ResponseObject,
    key: &BindingKey,
    envelope: &FreshEnvelope,
) -> Result<(), ComputerUseError> {
    let current = &envelope.envelope;
    require_eq(object, "actionId", &current.action_id, &key.action_id)?;
    require_eq(object, "argsDigest", &current.args_digest, &key.args_digest)
}

#[cfg(test)]
pub(crate) mod fixtures;
