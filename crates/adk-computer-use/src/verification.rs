//! Verification is not commitment.
//!
//! A committed receipt acknowledges that the action was accepted and performed, not that
//! its intended effect happened. An earlier `verify` returned `status == committed` and so
//! reported a committed but ineffective action as complete, from a node labelled "verify".
//! [`verify_receipt`] instead grades the evidence the receipt carries, and the absence of
//! evidence is never evidence of success: if a runtime verifies before it issues a receipt,
//! that is its contract, and this library does not assume it.

use std::fmt;

use cc_contract::{ActionPostcondition, ExecutionReceipt, ReceiptStatus};

/// What a receipt proves about an action's effect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerificationOutcome {
    /// The receipt carries evidence that the declared postcondition holds.
    Verified,
    /// The action was performed, but nothing shows its effect happened.
    CommittedUnverified {
        /// Why the commit is not verification.
        reason: UnverifiedReason,
    },
    /// The action was not performed, or the evidence contradicts the postcondition.
    Failed {
        /// What went wrong.
        reason: FailureReason,
    },
}

impl VerificationOutcome {
    /// Only [`VerificationOutcome::Verified`] counts as success.
    pub fn is_verified(&self) -> bool {
        matches!(self, VerificationOutcome::Verified)
    }

    /// Whether the runtime performed the action (the graph's `committed`), whatever the
    /// evidence of its effect.
    pub fn is_committed(&self) -> bool {
        match self {
            VerificationOutcome::Verified | VerificationOutcome::CommittedUnverified { .. } => true,
            VerificationOutcome::Failed { reason } => reason.committed(),
        }
    }

    /// The explanation the graph writes to `result.verificationDetail`; `None` for
    /// [`VerificationOutcome::Verified`], which needs none.
    pub fn detail(&self) -> Option<String> {
        match self {
            VerificationOutcome::Verified => None,
            VerificationOutcome::CommittedUnverified { reason } => Some(reason.to_string()),
            VerificationOutcome::Failed { reason } => Some(reason.to_string()),
        }
    }
}

/// Why a committed action is not verified.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnverifiedReason {
    /// The action declared no postcondition, so there is nothing to verify against.
    NoPostcondition,
    /// A postcondition was declared but the receipt carries no `result.verification`.
    NoEvidence,
    /// The postcondition declares a digest but the evidence has no `observedDigest`;
    /// `satisfied: true` alone does not show the value.
    NoObservedDigest,
}

impl fmt::Display for UnverifiedReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UnverifiedReason::NoPostcondition => {
                "committed, but the action declared no postcondition to verify"
            }
            UnverifiedReason::NoEvidence => {
                "committed, but the receipt carries no verification evidence"
            }
            UnverifiedReason::NoObservedDigest => {
                "committed, but the evidence has no observedDigest for the declared digest"
            }
        })
    }
}

/// Why verification failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FailureReason {
    /// The receipt is not `committed` (pending, rejected, interrupted, indeterminate).
    NotCommitted {
        /// The receipt's status.
        status: ReceiptStatus,
    },
    /// The runtime read the state back and found the postcondition unsatisfied.
    NotSatisfied,
    /// The observed digest differs from the declared one.
    DigestMismatch {
        /// The postcondition's digest.
        expected: String,
        /// The receipt's `observedDigest`.
        observed: String,
    },
}

impl FailureReason {
    fn committed(&self) -> bool {
        !matches!(self, FailureReason::NotCommitted { .. })
    }
}

impl fmt::Display for FailureReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FailureReason::NotCommitted { status } => {
                write!(f, "the receipt is `{status}`, not `committed`")
            }
            FailureReason::NotSatisfied => {
                f.write_str("the read-back found the postcondition unsatisfied")
            }
            FailureReason::DigestMismatch { expected, observed } => {
                write!(
                    f,
                    "observed digest {observed} differs from the declared {expected}"
                )
            }
        }
    }
}

/// Grades `receipt` against the `postcondition` the envelope declared.
///
/// * not `committed` → [`VerificationOutcome::Failed`];
/// * no postcondition, or no `result.verification` → `CommittedUnverified`;
/// * `satisfied: false` → `Failed`;
/// * a postcondition with a digest (`valueDigest`, `contentDigest`) → `Verified` only when
///   `observedDigest` equals it (absent → `CommittedUnverified`, different → `Failed`);
/// * an existence-only postcondition → `Verified` on an explicit `satisfied: true`.
///
/// Pure: the receipt should already be bound to its envelope
/// ([`validate_receipt`](crate::runtime::binding::validate_receipt)).
pub fn verify_receipt(
    receipt: &ExecutionReceipt,
    postcondition: Option<&ActionPostcondition>,
) -> VerificationOutcome {
    use VerificationOutcome::{CommittedUnverified, Failed, Verified};

    if receipt.status != ReceiptStatus::Committed {
        return Failed {
            reason: FailureReason::NotCommitted {
                status: receipt.status,
            },
        };
    }
    let Some(postcondition) = postcondition else {
        return CommittedUnverified {
            reason: UnverifiedReason::NoPostcondition,
        };
    };
    let Some(evidence) = receipt
        .result
        .as_ref()
        .and_then(|result| result.verification.as_ref())
    else {
        return CommittedUnverified {
            reason: UnverifiedReason::NoEvidence,
        };
    };
    if !evidence.satisfied {
        return Failed {
            reason: FailureReason::NotSatisfied,
        };
    }
    match (postcondition.expected_digest(), &evidence.observed_digest) {
        (None, _) => Verified,
        (Some(_), None) => CommittedUnverified {
            reason: UnverifiedReason::NoObservedDigest,
        },
        (Some(expected), Some(observed)) if expected == observed => Verified,
        (Some(expected), Some(observed)) => Failed {
            reason: FailureReason::DigestMismatch {
                expected: expected.to_owned(),
                observed: observed.clone(),
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_contract::{ReceiptResult, Verification, value_digest};

    fn receipt(verification: Option<Verification>) -> ExecutionReceipt {
        ExecutionReceipt {
            receipt_id: "receipt-0001".into(),
            session_id: "session-0001".into(),
            action_id: "action-0001".into(),
            action_digest: cc_contract::sha256_hex("work"),
            attempt: 1,
            status: ReceiptStatus::Committed,
            created_at: "2026-07-13T10:00:01.000Z".into(),
            updated_at: "2026-07-13T10:00:01.050Z".into(),
            result: Some(ReceiptResult {
                tool_result: serde_json::Map::new(),
                verification,
            }),
            error: None,
        }
    }

    fn evidence(satisfied: bool, observed_digest: Option<String>) -> Option<Verification> {
        Some(Verification {
            satisfied,
            observed_digest,
            method: "accessibility".into(),
        })
    }

    fn exists_only() -> ActionPostcondition {
        ActionPostcondition::Window {
            window_id: 42,
            exists: false,
        }
    }

    fn with_digest() -> ActionPostcondition {
        ActionPostcondition::UiElement {
            role: Some("AXTextField".into()),
            label: None,
            exists: true,
            value_digest: Some(value_digest("hello")),
        }
    }

    #[test]
    fn committed_is_not_verified_without_a_postcondition() {
        let outcome = verify_receipt(&receipt(None), None);
        assert_eq!(
            outcome,
            VerificationOutcome::CommittedUnverified {
                reason: UnverifiedReason::NoPostcondition
            }
        );
        assert!(outcome.is_committed() && !outcome.is_verified());
        assert!(outcome.detail().is_some());
    }

    #[test]
    fn absent_evidence_is_not_success() {
        for r in [receipt(None), {
            let mut bare = receipt(None);
            bare.result = None;
            bare
        }] {
            assert_eq!(
                verify_receipt(&r, Some(&exists_only())),
                VerificationOutcome::CommittedUnverified {
                    reason: UnverifiedReason::NoEvidence
                }
            );
        }
    }

    #[test]
    fn existence_only_needs_explicit_satisfied_true() {
        let verified = verify_receipt(&receipt(evidence(true, None)), Some(&exists_only()));
        assert_eq!(verified, VerificationOutcome::Verified);
        assert_eq!(verified.detail(), None);
        assert_eq!(
            verify_receipt(&receipt(evidence(false, None)), Some(&exists_only())),
            VerificationOutcome::Failed {
                reason: FailureReason::NotSatisfied
            }
        );
    }

    #[test]
    fn digest_postcondition_needs_the_equal_observed_digest() {
        let post = with_digest();
        assert_eq!(
            verify_receipt(
                &receipt(evidence(true, Some(value_digest("hello")))),
                Some(&post)
            ),
            VerificationOutcome::Verified
        );
        assert_eq!(
            verify_receipt(&receipt(evidence(true, None)), Some(&post)),
            VerificationOutcome::CommittedUnverified {
                reason: UnverifiedReason::NoObservedDigest
            }
        );
        assert!(matches!(
            verify_receipt(
                &receipt(evidence(true, Some(value_digest("hullo")))),
                Some(&post)
            ),
            VerificationOutcome::Failed {
                reason: FailureReason::DigestMismatch { .. }
            }
        ));
    }

    #[test]
    fn receipt_not_committed_fails_whatever_the_evidence() {
        for status in [
            ReceiptStatus::Pending,
            ReceiptStatus::Rejected,
            ReceiptStatus::Interrupted,
            ReceiptStatus::Indeterminate,
        ] {
            let mut r = receipt(evidence(true, None));
            r.status = status;
            let outcome = verify_receipt(&r, Some(&exists_only()));
            assert_eq!(
                outcome,
                VerificationOutcome::Failed {
                    reason: FailureReason::NotCommitted { status }
                }
            );
            assert!(!outcome.is_committed());
        }
    }
}
