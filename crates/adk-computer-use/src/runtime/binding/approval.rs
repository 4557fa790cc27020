//! Approval binding. A resume input is data from outside the graph; it authorizes nothing
//! until it is shown to approve exactly this action under exactly this policy.

use cc_contract::sha256::is_sha256_hex;
use cc_contract::{PolicyDecision, PolicyVerdict};

use super::{mismatch, parse, require_eq, require_unexpired};
use crate::bound::{Approval, BindingKey, BoundApproval, FreshEnvelope};
use crate::error::{ApprovalFailure, ComputerUseError, ResponseObject};

const OBJECT: ResponseObject = ResponseObject::Approval;

/// Binds `approval` to `envelope` and the `policy` decision of its preview.
///
/// A `deny` verdict is refused whatever the approval; `confirm` needs a grant or a
/// runtime-held approval; `allow` needs nothing, but an approval that is given is still
/// checked. An [`Approval::ExactGrant`] must match the envelope's session, principal,
/// `argsDigest` (well formed), tool, operation, class and mode, the policy's digest, be
/// unexpired and have a use left; an [`Approval::RuntimeHeld`] must name the envelope's
/// digest and the policy's digest.
pub fn validate_approval(
    approval: Approval,
    envelope: &FreshEnvelope,
    policy: &PolicyDecision,
) -> Result<BoundApproval, ComputerUseError> {
    let request = envelope.envelope();
    if policy.decision == PolicyVerdict::Deny {
        return Err(ComputerUseError::Approval {
            failure: ApprovalFailure::PolicyDenied,
        });
    }
    if policy.policy_digest.is_empty() {
        return Err(ComputerUseError::MalformedDigest {
            object: OBJECT,
            field: "policyDigest",
            value: String::new(),
        });
    }
    let expires_at = match &approval {
        Approval::NotRequired => {
            if policy.decision == PolicyVerdict::Confirm {
                return Err(ComputerUseError::Approval {
                    failure: ApprovalFailure::Required,
                });
            }
            None
        }
        Approval::RuntimeHeld {
            action_digest,
            policy_digest,
        } => {
            require_digest(&request.args_digest, action_digest)?;
            require_eq(OBJECT, "policyDigest", &policy.policy_digest, policy_digest)?;
            None
        }
        Approval::ExactGrant { grant } => {
            require_eq(OBJECT, "sessionId", &request.session_id, &grant.session_id)?;
            require_eq(
                OBJECT,
                "principalId",
                &request.principal_id,
                &grant.principal_id,
            )?;
            require_digest(&request.args_digest, &grant.action_digest)?;
            require_eq(
                OBJECT,
                "policyDigest",
                &policy.policy_digest,
                &grant.policy_digest,
            )?;
            require_eq(OBJECT, "tool", &request.tool, &grant.tool)?;
            require_eq(OBJECT, "operation", &request.operation, &grant.operation)?;
            require_eq(
                OBJECT,
                "actionClass",
                request.action_class.as_str(),
                grant.action_class.as_str(),
            )?;
            require_eq(
                OBJECT,
                "mode",
                request.requested_mode.as_str(),
                grant.mode.as_str(),
            )?;
            let expires_at = parse(OBJECT, "expiresAt", &grant.expires_at)?;
            require_unexpired(OBJECT, expires_at, envelope.now())?;
            if grant.remaining_uses == 0 {
                return Err(ComputerUseError::Approval {
                    failure: ApprovalFailure::NoUsesLeft,
                });
            }
            Some(expires_at)
        }
    };
    Ok(BoundApproval {
        approval,
        policy: policy.clone(),
        expires_at,
        key: BindingKey::of(request),
    })
}

/// The approved digest must be well formed and equal the envelope's.
fn require_digest(expected: &str, actual: &str) -> Result<(), ComputerUseError> {
    if is_sha256_hex(actual) {
        require_eq(OBJECT, "actionDigest", expected, actual)
    } else {
        Err(mismatch(
            OBJECT,
            "actionDigest",
            Some(expected),
            Some(actual),
        ))
    }
}

/// Rechecks a bound approval at the current time of the envelope's clock.
pub(super) fn recheck(
    approval: &BoundApproval,
    envelope: &FreshEnvelope,
) -> Result<(), ComputerUseError> {
    match approval.expires_at {
        Some(expires_at) => require_unexpired(OBJECT, expires_at, envelope.now()),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::binding::fixtures::{T0, clock, digest, envelope, grant, policy, ts};
    use crate::runtime::binding::validate_envelope_freshness;
    use cc_contract::{ExecutionMode, sha256_hex};

    fn fresh() -> FreshEnvelope {
        validate_envelope_freshness(&envelope(), clock(T0 + 2)).expect("fresh")
    }

    fn confirm() -> PolicyDecision {
        policy(PolicyVerdict::Confirm)
    }

    #[test]
    fn allow_needs_no_approval() {
        let bound = validate_approval(
            Approval::NotRequired,
            &fresh(),
            &policy(PolicyVerdict::Allow),
        )
        .expect("allowed");
        assert_eq!(bound.grant_id(), None);
    }

    #[test]
    fn confirm_without_approval_is_refused() {
        assert_eq!(
            validate_approval(Approval::NotRequired, &fresh(), &confirm()).expect_err("required"),
            ComputerUseError::Approval {
                failure: ApprovalFailure::Required
            }
        );
    }

    #[test]
    fn deny_is_refused_even_with_a_grant() {
        let err = validate_approval(
            Approval::ExactGrant {
                grant: Box::new(grant()),
            },
            &fresh(),
            &policy(PolicyVerdict::Deny),
        )
        .expect_err("denied");
        assert_eq!(
            err,
            ComputerUseError::Approval {
                failure: ApprovalFailure::PolicyDenied
            }
        );
    }

    #[test]
    fn matching_grant_is_accepted() {
        let bound = validate_approval(
            Approval::ExactGrant {
                grant: Box::new(grant()),
            },
            &fresh(),
            &confirm(),
        )
        .expect("granted");
        assert_eq!(bound.grant_id(), Some("grant-0001"));
    }

    #[test]
    fn grant_bound_elsewhere_is_refused_naming_the_field() {
        type Change = fn(&mut cc_contract::ApprovalGrant);
        let cases: [(&str, Change); 6] = [
            ("sessionId", |g| g.session_id = "session-0002".into()),
            ("principalId", |g| g.principal_id = "principal-0002".into()),
            ("actionDigest", |g| g.action_digest = sha256_hex("other")),
            ("actionDigest", |g| g.action_digest = String::new()),
            ("policyDigest", |g| {
                g.policy_digest = sha256_hex("old policy")
            }),
            ("mode", |g| g.mode = ExecutionMode::Background),
        ];
        for (field, change) in cases {
            let mut other = grant();
            change(&mut other);
            let err = validate_approval(
                Approval::ExactGrant {
                    grant: Box::new(other),
                },
                &fresh(),
                &confirm(),
            )
            .expect_err(field);
            assert_eq!(err.mismatched_field(), Some(field), "{err:?}");
        }
    }

    #[test]
    fn expired_or_used_up_grant_is_refused() {
        let mut old = grant();
        old.expires_at = ts(T0 + 1);
        assert!(matches!(
            validate_approval(
                Approval::ExactGrant {
                    grant: Box::new(old)
                },
                &fresh(),
                &confirm()
            ),
            Err(ComputerUseError::Expired {
                object: ResponseObject::Approval,
                ..
            })
        ));
        let mut used = grant();
        used.remaining_uses = 0;
        assert_eq!(
            validate_approval(
                Approval::ExactGrant {
                    grant: Box::new(used)
                },
                &fresh(),
                &confirm()
            )
            .expect_err("used up"),
            ComputerUseError::Approval {
                failure: ApprovalFailure::NoUsesLeft
            }
        );
    }

    #[test]
    fn runtime_held_approval_must_name_both_digests() {
        let held = |action_digest: String, policy_digest: String| Approval::RuntimeHeld {
            action_digest,
            policy_digest,
        };
        let policy_digest = confirm().policy_digest;
        assert!(
            validate_approval(held(digest(), policy_digest.clone()), &fresh(), &confirm()).is_ok()
        );
        let err = validate_approval(held(sha256_hex("x"), policy_digest), &fresh(), &confirm())
            .expect_err("other digest");
        assert_eq!(err.mismatched_field(), Some("actionDigest"));
        let err = validate_approval(held(digest(), "p".into()), &fresh(), &confirm())
            .expect_err("other policy");
        assert_eq!(err.mismatched_field(), Some("policyDigest"));
    }
}
