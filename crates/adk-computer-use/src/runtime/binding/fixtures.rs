//! Well-bound sample objects for the unit tests: one envelope and the lease, reservation,
//! receipt and grant that answer it. Each test changes one thing.

use std::sync::Arc;

use cc_contract::{
    ActionClass, ActionEnvelope, ApprovalGrant, ControlLease, DataLabel, ExecutionMode,
    ExecutionReceipt, GrantScope, LeaseBoundaries, LeaseKind, LeaseState, PolicyDecision,
    PolicyVerdict, ReceiptStatus, ReservationScope, ReservationState, TargetEvidence,
    TargetReservation, WindowId, format_timestamp, sha256_hex,
};
use time::OffsetDateTime;

use crate::runtime::{Clock, ManualClock};

/// 2026-07-13T10:00:00Z, when the sample envelope was proposed.
pub(crate) const T0: i64 = 1_783_936_800;

pub(crate) fn at(unix: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(unix).expect("in range")
}

pub(crate) fn ts(unix: i64) -> String {
    format_timestamp(at(unix))
}

pub(crate) fn clock(unix: i64) -> Arc<dyn Clock> {
    Arc::new(ManualClock::new(at(unix)))
}

pub(crate) fn digest() -> String {
    sha256_hex("left_click on Save")
}

/// Proposed at T0, valid 30 s, targeting window 42 of `com.example.Sandbox` on `main`.
pub(crate) fn envelope() -> ActionEnvelope {
    ActionEnvelope {
        action_id: "action-0001".into(),
        session_id: "session-0001".into(),
        execution_group_id: Some("group-0001".into()),
        principal_id: "principal-0001".into(),
        agent_id: Some("executor".into()),
        tool: "left_click".into(),
        operation: "left_click".into(),
        action_class: ActionClass::Navigate,
        requested_mode: ExecutionMode::Foreground,
        target: Some(TargetEvidence {
            platform: "linux".into(),
            app_id: "com.example.Sandbox".into(),
            pid: Some(4242),
            window_id: Some(WindowId::Number(42)),
            window_title_digest: None,
            display_id: Some("main".into()),
            role: None,
            label_digest: None,
            bounds: None,
            observation_id: "observation-0001".into(),
            screenshot_hash: None,
            ui_tree_revision: None,
            confidence: 1.0,
            captured_at: ts(T0),
        }),
        target_sensitivity: None,
        resource: None,
        provenance: None,
        data_labels: vec![DataLabel::Private],
        postcondition: None,
        reversible: true,
        external_side_effect: false,
        proposed_at: ts(T0),
        expires_at: ts(T0 + 30),
        args_digest: digest(),
    }
}

/// Active, budget 1 with 0 used, expiring at T0+60, bounded to the envelope's target.
pub(crate) fn lease() -> ControlLease {
    ControlLease {
        lease_id: "lease-0001".into(),
        revision: 1,
        session_id: "session-0001".into(),
        principal_id: "principal-0001".into(),
        agent_id: Some("executor".into()),
        kind: LeaseKind::Exclusive,
        execution_mode: ExecutionMode::Foreground,
        state: LeaseState::Active,
        acquired_at: ts(T0 + 1),
        expires_at: ts(T0 + 60),
        action_budget: 1,
        actions_used: 0,
        boundaries: LeaseBoundaries {
            app_ids: vec!["com.example.Sandbox".into()],
            window_ids: vec![WindowId::String("42".into())],
            display_ids: vec!["main".into()],
        },
        revoked_reason: None,
    }
}

/// Active, intent = the action id, scoped to the envelope's window, expiring at T0+60.
pub(crate) fn reservation() -> TargetReservation {
    TargetReservation {
        reservation_id: "reservation-0001".into(),
        revision: 1,
        intent_id: "action-0001".into(),
        session_id: "session-0001".into(),
        principal_id: "principal-0001".into(),
        execution_group_id: Some("group-0001".into()),
        agent_id: Some("executor".into()),
        scope: ReservationScope {
            app_id: "com.example.Sandbox".into(),
            window_id: Some(WindowId::Number(42)),
        },
        state: ReservationState::Active,
        acquired_at: ts(T0 + 1),
        expires_at: ts(T0 + 60),
        terminal_reason: None,
    }
}

/// Committed, for the envelope's action and digest.
pub(crate) fn receipt() -> ExecutionReceipt {
    ExecutionReceipt {
        receipt_id: "receipt-0001".into(),
        session_id: "session-0001".into(),
        action_id: "action-0001".into(),
        action_digest: digest(),
        attempt: 1,
        status: ReceiptStatus::Committed,
        created_at: ts(T0 + 2),
        updated_at: ts(T0 + 2),
        result: None,
        error: None,
    }
}

pub(crate) fn policy(decision: PolicyVerdict) -> PolicyDecision {
    PolicyDecision {
        decision,
        policy_digest: sha256_hex("policy"),
        reasons: vec!["sample".into()],
        grant_id: None,
    }
}

/// An `exact_action` grant for the envelope under [`policy`], one use, expiring T0+120.
pub(crate) fn grant() -> ApprovalGrant {
    ApprovalGrant {
        grant_id: "grant-0001".into(),
        scope: GrantScope::ExactAction,
        principal_id: "principal-0001".into(),
        session_id: "session-0001".into(),
        action_digest: digest(),
        scope_digest: sha256_hex("scope"),
        policy_digest: sha256_hex("policy"),
        tool: "left_click".into(),
        operation: "left_click".into(),
        action_class: ActionClass::Navigate,
        mode: ExecutionMode::Foreground,
        issued_at: ts(T0 + 1),
        expires_at: ts(T0 + 120),
        remaining_uses: 1,
        consumed_by_action_ids: Vec::new(),
    }
}
