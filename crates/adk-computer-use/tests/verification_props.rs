//! Property tests of the evidence rules: whatever a receipt says, `Verified` needs
//! evidence that matches the declared postcondition, and nothing else counts.

use adk_computer_use::{VerificationOutcome, verify_receipt};
use cc_contract::{
    ActionPostcondition, ExecutionReceipt, ReceiptResult, ReceiptStatus, Verification, sha256_hex,
    value_digest,
};
use proptest::prelude::*;
use proptest::sample::select;

fn receipt(status: ReceiptStatus, verification: Option<Verification>) -> ExecutionReceipt {
    ExecutionReceipt {
        receipt_id: "receipt-1".into(),
        session_id: "session-1".into(),
        action_id: "action-1".into(),
        action_digest: sha256_hex("work"),
        attempt: 1,
        status,
        created_at: "2026-07-13T10:00:01.000Z".into(),
        updated_at: "2026-07-13T10:00:01.000Z".into(),
        result: Some(ReceiptResult {
            tool_result: serde_json::Map::new(),
            verification,
        }),
        error: None,
    }
}

fn verification() -> impl Strategy<Value = Option<Verification>> {
    proptest::option::of((any::<bool>(), proptest::option::of(".{0,8}")).prop_map(
        |(satisfied, observed)| Verification {
            satisfied,
            observed_digest: observed.map(|v| value_digest(&v)),
            method: "accessibility".into(),
        },
    ))
}

fn postcondition() -> impl Strategy<Value = ActionPostcondition> {
    prop_oneof![
        ".{0,8}".prop_map(|v| ActionPostcondition::UiElement {
            role: Some("AXTextField".into()),
            label: None,
            exists: true,
            value_digest: Some(value_digest(&v)),
        }),
        ".{0,8}".prop_map(|v| ActionPostcondition::Filesystem {
            path: "/tmp/report.txt".into(),
            exists: true,
            content_digest: Some(value_digest(&v)),
        }),
        any::<bool>().prop_map(|exists| ActionPostcondition::Window {
            window_id: 42,
            exists
        }),
    ]
}

proptest! {
    #[test]
    fn verified_only_with_matching_evidence(
        status in select(ReceiptStatus::ALL),
        evidence in verification(),
        post in proptest::option::of(postcondition()),
    ) {
        let outcome = verify_receipt(&receipt(status, evidence.clone()), post.as_ref());
        let matching = status == ReceiptStatus::Committed
            && post.as_ref().is_some_and(|p| {
                evidence.as_ref().is_some_and(|e| {
                    e.satisfied
                        && match p.expected_digest() {
                            None => true,
                            Some(expected) => e.observed_digest.as_deref() == Some(expected),
                        }
                })
            });
        prop_assert_eq!(outcome.is_verified(), matching, "{:?}", outcome);
        prop_assert_eq!(outcome.detail().is_none(), matching);
    }

    #[test]
    fn absence_of_evidence_is_never_success(
        status in select(ReceiptStatus::ALL),
        post in proptest::option::of(postcondition()),
    ) {
        let outcome = verify_receipt(&receipt(status, None), post.as_ref());
        prop_assert!(!matches!(outcome, VerificationOutcome::Verified));
    }
}
