//! Envelope freshness: the preview is checked when it returns, so an expired preview
//! never reaches reservation or approval, and again at execute, because an approval wait,
//! a reservation or a lease acquisition can use up the rest of its window.

use std::sync::Arc;

use cc_contract::ActionEnvelope;
use cc_contract::sha256::is_sha256_hex;

use super::{parse, require_unexpired};
use crate::bound::FreshEnvelope;
use crate::error::{ComputerUseError, ResponseObject};
use crate::runtime::Clock;

const OBJECT: ResponseObject = ResponseObject::Envelope;

/// Checks that `envelope` is fresh by `clock` and binds it to that clock.
///
/// Refused when `proposedAt` or `expiresAt` does not parse, when the validity window is not
/// positive, when it has expired, or when its `argsDigest` is not a well-formed digest
/// (a malformed digest would let a malformed receipt digest "match").
pub fn validate_envelope_freshness(
    envelope: &ActionEnvelope,
    clock: Arc<dyn Clock>,
) -> Result<FreshEnvelope, ComputerUseError> {
    let proposed_at = parse(OBJECT, "proposedAt", &envelope.proposed_at)?;
    let expires_at = parse(OBJECT, "expiresAt", &envelope.expires_at)?;
    if expires_at <= proposed_at {
        return Err(ComputerUseError::EmptyValidityWindow {
            object: OBJECT,
            starts_at: envelope.proposed_at.clone(),
            expires_at: envelope.expires_at.clone(),
        });
    }
    if !is_sha256_hex(&envelope.args_digest) {
        return Err(ComputerUseError::MalformedDigest {
            object: OBJECT,
            field: "argsDigest",
            value: envelope.args_digest.clone(),
        });
    }
    require_unexpired(OBJECT, expires_at, clock.now())?;
    Ok(FreshEnvelope {
        envelope: envelope.clone(),
        expires_at,
        clock,
    })
}

/// Rechecks a fresh envelope at the current time of its clock.
pub(super) fn recheck(envelope: &FreshEnvelope) -> Result<(), ComputerUseError> {
    require_unexpired(OBJECT, envelope.expires_at, envelope.now())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::binding::fixtures::{T0, at, clock, envelope};

    #[test]
    fn fresh_envelope_is_accepted() {
        let fresh = validate_envelope_freshness(&envelope(), clock(T0 + 1)).expect("fresh");
        assert_eq!(fresh.envelope(), &envelope());
    }

    #[test]
    fn expired_preview_is_rejected() {
        // Valid from T0 to T0+30 s; checked exactly at expiry and after it.
        for now in [T0 + 30, T0 + 31] {
            let err = validate_envelope_freshness(&envelope(), clock(now)).expect_err("expired");
            assert!(
                matches!(
                    err,
                    ComputerUseError::Expired {
                        object: ResponseObject::Envelope,
                        ..
                    }
                ),
                "{err:?}"
            );
        }
    }

    #[test]
    fn unparseable_timestamps_are_rejected() {
        for field in ["proposedAt", "expiresAt"] {
            let mut env = envelope();
            match field {
                "proposedAt" => env.proposed_at = "yesterday".into(),
                _ => env.expires_at = "2026-07-13 10:00".into(),
            }
            let err = validate_envelope_freshness(&env, clock(T0 + 1)).expect_err(field);
            assert!(
                matches!(err, ComputerUseError::InvalidTimestamp { field: f, .. } if f == field),
                "{err:?}"
            );
        }
    }

    #[test]
    fn non_positive_window_is_rejected() {
        let mut env = envelope();
        env.expires_at = env.proposed_at.clone();
        let err = validate_envelope_freshness(&env, clock(T0 - 10)).expect_err("empty window");
        assert!(
            matches!(err, ComputerUseError::EmptyValidityWindow { .. }),
            "{err:?}"
        );
    }

    #[test]
    fn malformed_args_digest_is_rejected() {
        for bad in ["", "fixture", &"A".repeat(64)] {
            let mut env = envelope();
            env.args_digest = bad.to_owned();
            let err = validate_envelope_freshness(&env, clock(T0 + 1)).expect_err(bad);
            assert!(
                matches!(
                    err,
                    ComputerUseError::MalformedDigest {
                        field: "argsDigest",
                        ..
                    }
                ),
                "{err:?}"
            );
        }
    }

    #[test]
    fn recheck_sees_time_pass() {
        let manual = Arc::new(crate::runtime::ManualClock::new(at(T0 + 1)));
        let fresh = validate_envelope_freshness(&envelope(), manual.clone()).expect("fresh");
        assert_eq!(recheck(&fresh), Ok(()));
        manual.set(at(T0 + 30));
        assert!(matches!(
            recheck(&fresh),
            Err(ComputerUseError::Expired { .. })
        ));
    }
}
