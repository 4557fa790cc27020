//! Property tests of response binding: for random well-bound requests and responses, the
//! untouched response is accepted, and changing any single bound field makes validation
//! fail with the error that names exactly that field (or the structured variant of the
//! bound it breaks).

use std::sync::Arc;

use adk_computer_use::bound::FreshEnvelope;
use adk_computer_use::runtime::binding::{
    validate_envelope_freshness, validate_lease, validate_receipt, validate_reservation,
};
use adk_computer_use::runtime::{Clock, ManualClock};
use adk_computer_use::{BoundaryAxis, ComputerUseError, ResponseObject};
use cc_contract::{
    ActionClass, ActionEnvelope, ControlLease, DataLabel, ExecutionMode, ExecutionReceipt,
    LeaseBoundaries, LeaseKind, LeaseState, ReceiptStatus, ReservationScope, ReservationState,
    TargetEvidence, TargetReservation, WindowId, format_timestamp, sha256_hex,
};
use proptest::prelude::*;
use proptest::sample::select;
use time::OffsetDateTime;

/// 2026-07-13T10:00:00Z.
const T0: i64 = 1_783_936_800;

fn ts(unix: i64) -> String {
    format_timestamp(OffsetDateTime::from_unix_timestamp(unix).expect("in range"))
}

fn clock(unix: i64) -> Arc<dyn Clock> {
    Arc::new(ManualClock::new(
        OffsetDateTime::from_unix_timestamp(unix).expect("in range"),
    ))
}

/// The identities one request and its responses share.
#[derive(Debug, Clone)]
struct Ids {
    session: String,
    principal: String,
    action: String,
    agent: Option<String>,
    group: Option<String>,
    app: String,
    window: u64,
    display: String,
    digest: String,
    mode: ExecutionMode,
    /// Seconds the envelope stays valid after T0.
    window_secs: i64,
    /// Actions allowed by the lease, and how many are used (always fewer).
    budget: u32,
    used: u32,
}

fn id(prefix: &'static str) -> impl Strategy<Value = String> {
    "[a-z0-9]{1,10}".prop_map(move |s| format!("{prefix}-{s}"))
}

fn ids() -> impl Strategy<Value = Ids> {
    (
        (
            id("session"),
            id("principal"),
            id("action"),
            proptest::option::of(id("agent")),
            proptest::option::of(id("group")),
        ),
        (
            id("com.example"),
            any::<u64>(),
            id("display"),
            any::<String>(),
            select(ExecutionMode::ALL),
        ),
        (1i64..600, 1u32..=10_000),
    )
        .prop_flat_map(
            |((session, principal, action, agent, group), rest, (window_secs, budget))| {
                let (app, window, display, seed, mode) = rest;
                (0..budget).prop_map(move |used| Ids {
                    session: session.clone(),
                    principal: principal.clone(),
                    action: action.clone(),
                    agent: agent.clone(),
                    group: group.clone(),
                    app: app.clone(),
                    window,
                    display: display.clone(),
                    digest: sha256_hex(&seed),
                    mode,
                    window_secs,
                    budget,
                    used,
                })
            },
        )
}

fn envelope(ids: &Ids) -> ActionEnvelope {
    ActionEnvelope {
        action_id: ids.action.clone(),
        session_id: ids.session.clone(),
        execution_group_id: ids.group.clone(),
        principal_id: ids.principal.clone(),
        agent_id: ids.agent.clone(),
        tool: "left_click".into(),
        operation: "left_click".into(),
        action_class: ActionClass::Navigate,
        requested_mode: ids.mode,
        target: Some(TargetEvidence {
            platform: "linux".into(),
            app_id: ids.app.clone(),
            pid: None,
            window_id: Some(WindowId::Number(ids.window)),
            window_title_digest: None,
            display_id: Some(ids.display.clone()),
            role: None,
            label_digest: None,
            bounds: None,
            observation_id: "observation-1".into(),
            screenshot_hash: None,
            ui_tree_revision: None,
            confidence: 1.0,
            captured_at: ts(T0),
        }),
        target_sensitivity: None,
        resource: None,
        provenance: None,
        data_labels: vec![DataLabel::Unknown],
        postcondition: None,
        reversible: true,
        external_side_effect: false,
        proposed_at: ts(T0),
        expires_at: ts(T0 + ids.window_secs),
        args_digest: ids.digest.clone(),
    }
}

fn fresh(ids: &Ids) -> FreshEnvelope {
    // Checked one second before the envelope expires: the tightest fresh moment.
    validate_envelope_freshness(&envelope(ids), clock(T0 + ids.window_secs - 1)).expect("fresh")
}

fn lease(ids: &Ids) -> ControlLease {
    ControlLease {
        lease_id: "lease-1".into(),
        revision: 1,
        session_id: ids.session.clone(),
        principal_id: ids.principal.clone(),
        agent_id: ids.agent.clone(),
        kind: LeaseKind::Cooperative,
        execution_mode: ids.mode,
        state: LeaseState::Active,
        acquired_at: ts(T0),
        expires_at: ts(T0 + ids.window_secs + 60),
        action_budget: ids.budget,
        actions_used: ids.used,
        boundaries: LeaseBoundaries {
            app_ids: vec!["com.example-elsewhere".into(), ids.app.clone()],
            // The string form of the numeric window id: normalisation makes them equal.
            window_ids: vec![WindowId::String(ids.window.to_string())],
            display_ids: vec![ids.display.clone()],
        },
        revoked_reason: None,
    }
}

fn reservation(ids: &Ids) -> TargetReservation {
    TargetReservation {
        reservation_id: "reservation-1".into(),
        revision: 1,
        intent_id: ids.action.clone(),
        session_id: ids.session.clone(),
        principal_id: ids.principal.clone(),
        execution_group_id: ids.group.clone(),
        agent_id: ids.agent.clone(),
        scope: ReservationScope {
            app_id: ids.app.clone(),
            window_id: Some(WindowId::String(ids.window.to_string())),
        },
        state: ReservationState::Active,
        acquired_at: ts(T0),
        expires_at: ts(T0 + ids.window_secs + 60),
        terminal_reason: None,
    }
}

fn receipt(ids: &Ids) -> ExecutionReceipt {
    ExecutionReceipt {
        receipt_id: "receipt-1".into(),
        session_id: ids.session.clone(),
        action_id: ids.action.clone(),
        action_digest: ids.digest.clone(),
        attempt: 1,
        status: ReceiptStatus::Committed,
        created_at: ts(T0),
        updated_at: ts(T0),
        result: None,
        error: None,
    }
}

/// A value guaranteed to differ from `value`.
fn other(value: &str, salt: u8) -> String {
    format!("{value}~{salt}")
}

fn other_mode(mode: ExecutionMode, pick: usize) -> ExecutionMode {
    let others: Vec<_> = ExecutionMode::ALL
        .iter()
        .copied()
        .filter(|m| *m != mode)
        .collect();
    others[pick % others.len()]
}

/// The expected rejection of one mutation.
#[derive(Debug, PartialEq)]
enum Expect {
    Mismatch(&'static str),
    NotActive,
    Budget,
    Expired,
    Timestamp,
    Bounds(BoundaryAxis),
}

fn classify(object: ResponseObject, err: &ComputerUseError) -> Option<Expect> {
    Some(match err {
        ComputerUseError::IdentityMismatch {
            object: o, field, ..
        } if *o == object => Expect::Mismatch(field),
        ComputerUseError::NotActive { object: o, .. } if *o == object => Expect::NotActive,
        ComputerUseError::BudgetExhausted { .. } => Expect::Budget,
        ComputerUseError::Expired { object: o, .. } if *o == object => Expect::Expired,
        ComputerUseError::InvalidTimestamp {
            object: o,
            field: "expiresAt",
            ..
        } if *o == object => Expect::Timestamp,
        ComputerUseError::OutOfBounds { axis, .. } => Expect::Bounds(*axis),
        _ => return None,
    })
}

const LEASE_MUTATIONS: usize = 12;

/// Changes one bound field of `lease`; returns the rejection it must cause.
fn mutate_lease(lease: &mut ControlLease, ids: &Ids, which: usize, salt: u8) -> Expect {
    match which {
        0 => {
            lease.session_id = other(&lease.session_id, salt);
            Expect::Mismatch("sessionId")
        }
        1 => {
            lease.principal_id = other(&lease.principal_id, salt);
            Expect::Mismatch("principalId")
        }
        2 => {
            lease.agent_id = Some(other(ids.agent.as_deref().unwrap_or("agent"), salt));
            Expect::Mismatch("agentId")
        }
        3 => {
            lease.execution_mode = other_mode(ids.mode, usize::from(salt));
            Expect::Mismatch("executionMode")
        }
        4 => {
            let states = [
                LeaseState::Released,
                LeaseState::Revoked,
                LeaseState::Expired,
            ];
            lease.state = states[usize::from(salt) % states.len()];
            Expect::NotActive
        }
        5 => {
            lease.actions_used = lease.action_budget + u32::from(salt % 2);
            Expect::Budget
        }
        6 => {
            lease.action_budget = 0;
            lease.actions_used = 0;
            Expect::Budget
        }
        7 => {
            // At or before the moment of the check (T0 + window - 1).
            lease.expires_at = ts(T0 + ids.window_secs - 1 - i64::from(salt));
            Expect::Expired
        }
        8 => {
            lease.expires_at = other("not a time", salt);
            Expect::Timestamp
        }
        9 => {
            lease.boundaries.app_ids = vec![other(&ids.app, salt)];
            Expect::Bounds(BoundaryAxis::App)
        }
        10 => {
            lease.boundaries.window_ids =
                vec![WindowId::String(other(&ids.window.to_string(), salt))];
            Expect::Bounds(BoundaryAxis::Window)
        }
        _ => {
            lease.boundaries.display_ids = vec![other(&ids.display, salt)];
            Expect::Bounds(BoundaryAxis::Display)
        }
    }
}

const RESERVATION_MUTATIONS: usize = 10;

fn mutate_reservation(r: &mut TargetReservation, ids: &Ids, which: usize, salt: u8) -> Expect {
    match which {
        0 => {
            r.session_id = other(&r.session_id, salt);
            Expect::Mismatch("sessionId")
        }
        1 => {
            r.principal_id = other(&r.principal_id, salt);
            Expect::Mismatch("principalId")
        }
        2 => {
            r.intent_id = other(&r.intent_id, salt);
            Expect::Mismatch("intentId")
        }
        3 => {
            r.execution_group_id = Some(other(ids.group.as_deref().unwrap_or("group"), salt));
            Expect::Mismatch("executionGroupId")
        }
        4 => {
            r.agent_id = Some(other(ids.agent.as_deref().unwrap_or("agent"), salt));
            Expect::Mismatch("agentId")
        }
        5 => {
            r.scope.app_id = other(&r.scope.app_id, salt);
            Expect::Mismatch("scope.appId")
        }
        6 => {
            r.scope.window_id = Some(WindowId::String(other(&ids.window.to_string(), salt)));
            Expect::Mismatch("scope.windowId")
        }
        7 => {
            let states = [
                ReservationState::Released,
                ReservationState::Expired,
                ReservationState::Cancelled,
            ];
            r.state = states[usize::from(salt) % states.len()];
            Expect::NotActive
        }
        8 => {
            r.expires_at = ts(T0 + ids.window_secs - 1 - i64::from(salt));
            Expect::Expired
        }
        _ => {
            r.expires_at = other("soon", salt);
            Expect::Timestamp
        }
    }
}

const RECEIPT_MUTATIONS: usize = 6;

fn mutate_receipt(r: &mut ExecutionReceipt, which: usize, salt: u8) -> Expect {
    match which {
        0 => {
            r.session_id = other(&r.session_id, salt);
            Expect::Mismatch("sessionId")
        }
        1 => {
            r.action_id = other(&r.action_id, salt);
            Expect::Mismatch("actionId")
        }
        2 => {
            r.action_digest = sha256_hex(&other(&r.action_digest, salt));
            Expect::Mismatch("actionDigest")
        }
        3 => {
            r.action_digest = String::new();
            Expect::Mismatch("actionDigest")
        }
        4 => {
            // Uppercase hex is not the wire form; a digest of decimal digits only has no
            // uppercase form, so it is truncated instead.
            let upper = r.action_digest.to_uppercase();
            if upper == r.action_digest {
                r.action_digest.truncate(63 - usize::from(salt % 8));
            } else {
                r.action_digest = upper;
            }
            Expect::Mismatch("actionDigest")
        }
        _ => {
            r.action_digest = format!("sha256:{}", r.action_digest);
            Expect::Mismatch("actionDigest")
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn well_bound_responses_are_accepted(ids in ids()) {
        let envelope = fresh(&ids);
        prop_assert!(validate_lease(&lease(&ids), &envelope).is_ok());
        prop_assert!(validate_reservation(&reservation(&ids), &envelope).is_ok());
        prop_assert!(validate_receipt(&receipt(&ids), &envelope).is_ok());
    }

    #[test]
    fn absent_optional_fields_are_accepted(ids in ids()) {
        let envelope = fresh(&ids);
        let mut l = lease(&ids);
        l.agent_id = None;
        prop_assert!(validate_lease(&l, &envelope).is_ok());
        let mut r = reservation(&ids);
        r.agent_id = None;
        r.execution_group_id = None;
        r.scope.window_id = None;
        prop_assert!(validate_reservation(&r, &envelope).is_ok());
    }

    #[test]
    fn unbounded_lease_admits_any_target(ids in ids()) {
        let mut l = lease(&ids);
        l.boundaries = LeaseBoundaries::default();
        prop_assert!(validate_lease(&l, &fresh(&ids)).is_ok());
    }

    #[test]
    fn changing_one_lease_field_is_rejected_naming_it(ids in ids(), salt in any::<u8>()) {
        // Every mutation on every generated case, so no field goes untested.
        for which in 0..LEASE_MUTATIONS {
            let mut l = lease(&ids);
            let expected = mutate_lease(&mut l, &ids, which, salt);
            let err = validate_lease(&l, &fresh(&ids)).expect_err("mutated lease accepted");
            prop_assert_eq!(classify(ResponseObject::Lease, &err), Some(expected), "{:?}", err);
        }
    }

    #[test]
    fn changing_one_reservation_field_is_rejected_naming_it(ids in ids(), salt in any::<u8>()) {
        // Every mutation on every generated case, so no field goes untested.
        for which in 0..RESERVATION_MUTATIONS {
            let mut r = reservation(&ids);
            let expected = mutate_reservation(&mut r, &ids, which, salt);
            let err = validate_reservation(&r, &fresh(&ids)).expect_err("mutated reservation accepted");
            prop_assert_eq!(classify(ResponseObject::Reservation, &err), Some(expected), "{:?}", err);
        }
    }

    #[test]
    fn changing_one_receipt_field_is_rejected_naming_it(ids in ids(), salt in any::<u8>()) {
        // Every mutation on every generated case, so no field goes untested.
        for which in 0..RECEIPT_MUTATIONS {
            let mut r = receipt(&ids);
            let expected = mutate_receipt(&mut r, which, salt);
            let err = validate_receipt(&r, &fresh(&ids)).expect_err("mutated receipt accepted");
            prop_assert_eq!(classify(ResponseObject::Receipt, &err), Some(expected), "{:?}", err);
        }
    }

    #[test]
    fn envelope_is_fresh_exactly_before_its_expiry(ids in ids(), offset in -600i64..600) {
        let now = T0 + ids.window_secs + offset;
        let result = validate_envelope_freshness(&envelope(&ids), clock(now));
        if offset < 0 {
            prop_assert!(result.is_ok());
        } else {
            let is_expired = matches!(
                result,
                Err(ComputerUseError::Expired { object: ResponseObject::Envelope, .. })
            );
            prop_assert!(is_expired);
        }
    }
}
