//! One test per rule of the seed (GOVERNANCE.md Part B), each against the reference graph
//! driving a fault-injecting runtime, with real SQLite checkpoints.
//!
//! Every fault must be caught by the node that owns the rule, before the next side effect,
//! and everything the thread held must be released exactly once.

#![cfg(feature = "sqlite")]

use crate::support;

use adk_computer_use::graph::{
    ApprovalRequest, GraphError, Node, OutcomeKind, ResumeInput, Route, RunOutcome,
};
use adk_computer_use::{ApprovalFailure, BoundaryAxis, ComputerUseError, ResponseObject};
use cc_contract::{ExecutionMode, LeaseState, PolicyVerdict, WindowId, sha256_hex};
use support::{Evidence, Harness, click_plan, grant_for, op, t0};
use time::Duration;

fn step_error(result: Result<RunOutcome, GraphError>) -> (Node, ComputerUseError) {
    match result {
        Err(GraphError::Step { node, source, .. }) => (node, source),
        other => panic!("expected a node failure, got {other:?}"),
    }
}

fn completed(result: Result<RunOutcome, GraphError>) -> adk_computer_use::graph::Completion {
    match result {
        Ok(RunOutcome::Completed(done)) => *done,
        other => panic!("expected a completion, got {other:?}"),
    }
}

async fn interrupted(h: &Harness, thread: &str) -> ApprovalRequest {
    match h.graph.run(thread).await {
        Ok(RunOutcome::Interrupted(request)) => *request,
        other => panic!("expected the approval interrupt, got {other:?}"),
    }
}

fn confirm_harness() -> Harness {
    let h = Harness::click();
    h.rt().knobs().verdict = PolicyVerdict::Confirm;
    h
}

/// Nothing was reserved, leased or executed.
fn assert_no_side_effect(h: &Harness) {
    for operation in [op::RESERVE, op::ACQUIRE, op::EXECUTE] {
        assert_eq!(h.rt().count(operation), 0, "{operation} was called");
    }
    assert_eq!(h.rt().effects(), 0);
}

// ---- the happy paths ------------------------------------------------------------------

#[tokio::test]
async fn allowed_action_runs_every_node_in_order_and_is_verified() {
    let h = Harness::click();
    let done = completed(h.graph.run("t").await);
    assert!(done.verified && done.committed);
    assert_eq!(done.result.outcome, OutcomeKind::Verified);
    assert_eq!(done.result.verification_detail, None);
    assert_eq!(h.rt().effects(), 1);

    let calls = h.rt().calls();
    let order = [
        op::START,
        op::PREVIEW,
        op::RESERVE,
        op::ACQUIRE,
        op::EXECUTE,
        op::VERIFY,
        op::RELEASE_LEASE,
        op::RELEASE_TARGET,
    ];
    let positions: Vec<usize> = order
        .iter()
        .map(|o| calls.iter().position(|c| c == o).expect(o))
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{calls:?}");
    for branch in [op::DISCOVER, op::VISUAL, op::SEMANTIC] {
        let at = calls.iter().position(|c| c == branch).expect(branch);
        assert!(at > positions[0] && at < positions[1], "{calls:?}");
    }

    let nodes: Vec<String> = h
        .graph
        .checkpoints()
        .history("t")
        .expect("history")
        .into_iter()
        .map(|c| c.node)
        .collect();
    assert_eq!(
        nodes,
        [
            "observe",
            "join",
            "plan",
            "preview",
            "route",
            "reserve_target",
            "acquire_lease",
            "execute_sent",
            "execute",
            "verify",
            "release_lease",
            "release_target"
        ]
    );
    let state = h.graph.state("t").expect("state").expect("some");
    assert_eq!(state.route, Some(Route::Allowed));
    assert_eq!((state.verified, state.committed), (Some(true), Some(true)));
}

#[tokio::test]
async fn without_a_postcondition_the_best_outcome_is_committed_unverified() {
    let h = Harness::new(click_plan(None));
    let done = completed(h.graph.run("t").await);
    assert!(!done.verified && done.committed);
    assert_eq!(done.result.outcome, OutcomeKind::CommittedUnverified);
    assert!(
        done.result
            .verification_detail
            .as_deref()
            .is_some_and(|d| d.contains("no postcondition")),
        "{:?}",
        done.result
    );
}

#[tokio::test]
async fn a_receipt_without_evidence_is_committed_unverified_not_verified() {
    let h = Harness::click();
    h.rt().knobs().evidence = Evidence::None;
    let done = completed(h.graph.run("t").await);
    assert_eq!(done.result.outcome, OutcomeKind::CommittedUnverified);
    assert!(!done.verified && done.committed);
    let state = h.graph.state("t").expect("state").expect("some");
    let json = serde_json::to_value(&state).expect("encodes");
    assert!(json["result"]["verificationDetail"].is_string(), "{json}");
}

#[tokio::test]
async fn contradicting_evidence_fails_verification_and_still_releases() {
    for evidence in [Evidence::WrongDigest, Evidence::Unsatisfied] {
        let h = Harness::click();
        h.rt().knobs().evidence = evidence;
        let done = completed(h.graph.run("t").await);
        assert_eq!(done.result.outcome, OutcomeKind::Failed, "{evidence:?}");
        assert!(!done.verified && done.committed);
        assert_eq!(h.rt().released().len(), 2, "{evidence:?}");
    }
}

#[tokio::test]
async fn denied_action_is_blocked_without_any_side_effect() {
    let h = Harness::click();
    h.rt().knobs().verdict = PolicyVerdict::Deny;
    match h.graph.run("t").await {
        Ok(RunOutcome::Blocked(blocked)) => {
            assert_eq!(blocked.decision, PolicyVerdict::Deny);
            assert_eq!(blocked.blocker, Some(cc_contract::Blocker::PolicyDenied));
        }
        other => panic!("{other:?}"),
    }
    assert_no_side_effect(&h);
    // Running again reports the same thing and does nothing.
    assert!(matches!(h.graph.run("t").await, Ok(RunOutcome::Blocked(_))));
    assert_no_side_effect(&h);
}

#[tokio::test]
async fn confirm_interrupts_then_an_exact_grant_resumes_to_verified() {
    let h = confirm_harness();
    let request = interrupted(&h, "t").await;
    assert_eq!(request.preview.policy.decision, PolicyVerdict::Confirm);
    assert_eq!(request.record.sha256, sha256_hex(&request.record.raw));
    assert_no_side_effect(&h);
    // Asking again neither acts nor writes another checkpoint.
    let steps = h.graph.checkpoints().history("t").expect("history").len();
    let again = interrupted(&h, "t").await;
    assert_eq!(again, request);
    assert_eq!(h.graph.checkpoints().history("t").expect("h").len(), steps);

    let grant = grant_for(&request.preview, t0() + Duration::minutes(5));
    let done = completed(h.graph.resume("t", ResumeInput::exact_grant(grant)).await);
    assert!(done.verified);
    assert_eq!(h.rt().effects(), 1);
}

#[tokio::test]
async fn a_runtime_held_approval_naming_both_digests_resumes() {
    let h = confirm_harness();
    let request = interrupted(&h, "t").await;
    let input = ResumeInput::runtime_held(
        request.preview.envelope.args_digest.clone(),
        request.preview.policy.policy_digest.clone(),
    );
    assert!(completed(h.graph.resume("t", input).await).verified);
}

#[tokio::test]
async fn resume_of_a_thread_not_waiting_or_unknown_is_refused() {
    let h = Harness::click();
    let input = || ResumeInput::runtime_held(sha256_hex("a"), sha256_hex("b"));
    assert!(matches!(
        h.graph.resume("nobody", input()).await,
        Err(GraphError::UnknownThread { .. })
    ));
    completed(h.graph.run("t").await);
    assert!(matches!(
        h.graph.resume("t", input()).await,
        Err(GraphError::NotAwaitingApproval {
            next: Node::End,
            ..
        })
    ));
    assert_eq!(h.rt().effects(), 1);
}

// ---- freshness ------------------------------------------------------------------------

#[tokio::test]
async fn an_expired_preview_never_reaches_reservation() {
    let h = Harness::click();
    h.rt()
        .knobs()
        .advance_after
        .insert(op::PREVIEW, Duration::seconds(60));
    let (node, err) = step_error(h.graph.run("t").await);
    assert_eq!(node, Node::Preview);
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
    assert_no_side_effect(&h);
}

#[tokio::test]
async fn expiry_is_rechecked_right_before_the_mutation() {
    // Fresh at preview, reservation and lease; the lease acquisition used up the window.
    let h = Harness::click();
    h.rt()
        .knobs()
        .advance_after
        .insert(op::ACQUIRE, Duration::seconds(60));
    let (node, err) = step_error(h.graph.run("t").await);
    assert_eq!(node, Node::Execute);
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
    assert_eq!(h.rt().count(op::EXECUTE), 0);
    assert_eq!(
        h.rt().released(),
        ["lease:lease-2", "reservation:reservation-1"]
    );
}

#[tokio::test]
async fn an_approval_wait_that_outlives_the_preview_fails_before_reservation() {
    let h = confirm_harness();
    let request = interrupted(&h, "t").await;
    h.clock.advance(Duration::seconds(61));
    let grant = grant_for(&request.preview, t0() + Duration::minutes(5));
    let (node, err) = step_error(h.graph.resume("t", ResumeInput::exact_grant(grant)).await);
    assert_eq!(node, Node::Approval);
    assert!(matches!(
        err,
        ComputerUseError::Expired {
            object: ResponseObject::Envelope,
            ..
        }
    ));
    assert_no_side_effect(&h);
}

// ---- lease binding and bounds ---------------------------------------------------------

#[tokio::test]
async fn a_lease_of_another_session_principal_agent_or_mode_is_refused() {
    type Change = fn(&mut cc_contract::ControlLease);
    let cases: [(&str, Change, bool); 4] = [
        ("sessionId", |l| l.session_id = "session-2".into(), false),
        (
            "principalId",
            |l| l.principal_id = "principal-2".into(),
            false,
        ),
        ("agentId", |l| l.agent_id = Some("intruder".into()), true),
        (
            "executionMode",
            |l| l.execution_mode = ExecutionMode::Background,
            true,
        ),
    ];
    for (field, change, ours) in cases {
        let h = Harness::click();
        h.rt().knobs().lease = Some(Box::new(change));
        let (node, err) = step_error(h.graph.run("t").await);
        assert_eq!(node, Node::AcquireLease, "{field}");
        assert!(
            matches!(err, ComputerUseError::IdentityMismatch { object: ResponseObject::Lease, field: f, .. } if f == field),
            "{field}: {err:?}"
        );
        assert_eq!(h.rt().count(op::EXECUTE), 0, "{field}");
        // The reservation is released; the refused lease only when it is ours.
        let mut expected = vec!["reservation:reservation-1".to_owned()];
        if ours {
            expected.insert(0, "lease:lease-2".into());
        }
        let mut released = h.rt().released();
        released.sort_by_key(|r| !r.starts_with("lease"));
        assert_eq!(released, expected, "{field}");
        let state = h.graph.state("t").expect("state").expect("some");
        assert!(
            state.lease.is_none(),
            "{field}: a refused lease entered state"
        );
    }
}

#[tokio::test]
async fn an_exhausted_budget_with_a_non_zero_total_is_refused() {
    let h = Harness::click();
    h.rt().knobs().lease = Some(Box::new(|l| {
        l.action_budget = 1;
        l.actions_used = 1;
    }));
    let (node, err) = step_error(h.graph.run("t").await);
    assert_eq!(node, Node::AcquireLease);
    assert_eq!(
        err,
        ComputerUseError::BudgetExhausted {
            action_budget: 1,
            actions_used: 1
        }
    );
    assert_eq!(h.rt().effects(), 0);
}

#[tokio::test]
async fn a_lease_that_is_not_active_is_refused() {
    let h = Harness::click();
    h.rt().knobs().lease = Some(Box::new(|l| l.state = LeaseState::Revoked));
    let (_, err) = step_error(h.graph.run("t").await);
    assert!(matches!(
        err,
        ComputerUseError::NotActive {
            object: ResponseObject::Lease,
            ..
        }
    ));
}

#[tokio::test]
async fn an_unparseable_lease_expiry_is_refused_not_ignored() {
    let h = Harness::click();
    h.rt().knobs().lease = Some(Box::new(|l| l.expires_at = "tomorrow".into()));
    let (node, err) = step_error(h.graph.run("t").await);
    assert_eq!(node, Node::AcquireLease);
    assert!(
        matches!(
            err,
            ComputerUseError::InvalidTimestamp {
                object: ResponseObject::Lease,
                field: "expiresAt",
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(h.rt().effects(), 0);
}

#[tokio::test]
async fn an_out_of_bounds_target_is_refused_on_every_axis() {
    type Change = fn(&mut cc_contract::ControlLease);
    let cases: [(BoundaryAxis, Change); 3] = [
        (BoundaryAxis::App, |l| {
            l.boundaries.app_ids = vec!["org.other.App".into()]
        }),
        (BoundaryAxis::Window, |l| {
            l.boundaries.window_ids = vec![WindowId::Number(7)]
        }),
        (BoundaryAxis::Display, |l| {
            l.boundaries.display_ids = vec!["side".into()]
        }),
    ];
    for (axis, change) in cases {
        let h = Harness::click();
        h.rt().knobs().lease = Some(Box::new(change));
        let (node, err) = step_error(h.graph.run("t").await);
        assert_eq!(node, Node::AcquireLease);
        assert!(
            matches!(err, ComputerUseError::OutOfBounds { axis: a, .. } if a == axis),
            "{axis:?}: {err:?}"
        );
        assert_eq!(h.rt().effects(), 0);
    }
}

#[tokio::test]
async fn an_unbounded_lease_authorizes_any_target() {
    let h = Harness::click();
    h.rt().knobs().lease = Some(Box::new(|l| {
        l.boundaries = cc_contract::LeaseBoundaries {
            app_ids: vec![],
            window_ids: vec![],
            display_ids: vec![],
        };
    }));
    assert!(completed(h.graph.run("t").await).verified);
}

// ---- reservation and receipt binding --------------------------------------------------

#[tokio::test]
async fn a_reservation_of_another_intent_or_scope_is_refused_and_released() {
    type Change = fn(&mut cc_contract::TargetReservation);
    let cases: [(&str, Change); 3] = [
        ("intentId", |r| r.intent_id = "act-other".into()),
        ("scope.appId", |r| r.scope.app_id = "org.other.App".into()),
        ("scope.windowId", |r| {
            r.scope.window_id = Some(WindowId::Number(7))
        }),
    ];
    for (field, change) in cases {
        let h = Harness::click();
        h.rt().knobs().reservation = Some(Box::new(change));
        let (node, err) = step_error(h.graph.run("t").await);
        assert_eq!(node, Node::ReserveTarget, "{field}");
        assert_eq!(err.mismatched_field(), Some(field), "{err:?}");
        assert_eq!(h.rt().released(), ["reservation:reservation-1"], "{field}");
        assert_eq!(h.rt().count(op::ACQUIRE), 0);
        let state = h.graph.state("t").expect("state").expect("some");
        assert!(state.reservation.is_none());
        assert!(state.releases.iter().all(|r| r.rejected));
    }
}

#[tokio::test]
async fn a_receipt_of_another_action_or_digest_is_refused() {
    type Change = fn(&mut cc_contract::ExecutionReceipt);
    let cases: [(&str, Change); 3] = [
        ("actionId", |r| r.action_id = "act-other".into()),
        ("actionDigest", |r| {
            r.action_digest = sha256_hex("other work")
        }),
        ("actionDigest", |r| r.action_digest = String::new()),
    ];
    for (field, change) in cases {
        let h = Harness::click();
        h.rt().knobs().receipt = Some(Box::new(change));
        let (node, err) = step_error(h.graph.run("t").await);
        assert_eq!(node, Node::Execute);
        assert!(
            matches!(&err, ComputerUseError::IdentityMismatch { object: ResponseObject::Receipt, field: f, .. } if *f == field),
            "{err:?}"
        );
        let state = h.graph.state("t").expect("state").expect("some");
        assert!(state.receipt.is_none(), "a refused receipt entered state");
        assert_eq!(h.rt().released().len(), 2);
    }
}

#[tokio::test]
async fn absent_optional_fields_in_responses_are_accepted() {
    let h = Harness::click();
    {
        let mut knobs = h.rt().knobs();
        knobs.lease = Some(Box::new(|l| l.agent_id = None));
        knobs.reservation = Some(Box::new(|r| {
            r.agent_id = None;
            r.execution_group_id = None;
            r.scope.window_id = None;
        }));
    }
    assert!(completed(h.graph.run("t").await).verified);
}

#[tokio::test]
async fn a_preview_for_other_arguments_or_another_session_is_refused() {
    type Change = fn(&mut cc_contract::ActionPreview);
    let cases: [(&str, Change); 8] = [
        ("argsDigest", |p| p.envelope.args_digest = sha256_hex("x")),
        ("sessionId", |p| p.envelope.session_id = "session-2".into()),
        ("actionId", |p| p.envelope.action_id = "act-2".into()),
        ("target", |p| p.envelope.target = None),
        ("postcondition", |p| p.envelope.postcondition = None),
        ("requestedMode", |p| {
            p.envelope.requested_mode = ExecutionMode::Background
        }),
        ("agentId", |p| p.envelope.agent_id = Some("intruder".into())),
        ("executionGroupId", |p| {
            p.envelope.execution_group_id = Some("group-2".into())
        }),
    ];
    for (field, change) in cases {
        let h = Harness::click();
        h.rt().knobs().preview = Some(Box::new(change));
        let (node, err) = step_error(h.graph.run("t").await);
        assert_eq!(node, Node::Preview);
        assert_eq!(err.mismatched_field(), Some(field), "{err:?}");
        assert_no_side_effect(&h);
    }
}

// ---- resume input ---------------------------------------------------------------------

#[tokio::test]
async fn a_changed_digest_or_policy_on_resume_fails_before_reservation() {
    let h0 = confirm_harness();
    let request = interrupted(&h0, "t").await;
    let env = &request.preview.envelope;
    let policy = &request.preview.policy;
    let inputs = [
        (
            "actionDigest",
            ResumeInput::runtime_held(sha256_hex("other"), policy.policy_digest.clone()),
        ),
        (
            "policyDigest",
            ResumeInput::runtime_held(env.args_digest.clone(), sha256_hex("policy v2")),
        ),
        ("actionDigest", {
            let mut g = grant_for(&request.preview, t0() + Duration::minutes(5));
            g.action_digest = sha256_hex("other");
            ResumeInput::exact_grant(g)
        }),
        ("policyDigest", {
            let mut g = grant_for(&request.preview, t0() + Duration::minutes(5));
            g.policy_digest = sha256_hex("policy v2");
            ResumeInput::exact_grant(g)
        }),
        ("sessionId", {
            let mut g = grant_for(&request.preview, t0() + Duration::minutes(5));
            g.session_id = "session-2".into();
            ResumeInput::exact_grant(g)
        }),
    ];
    for (field, input) in inputs {
        let h = confirm_harness();
        interrupted(&h, "t").await;
        let (node, err) = step_error(h.graph.resume("t", input).await);
        assert_eq!(node, Node::Approval);
        assert_eq!(err.mismatched_field(), Some(field), "{err:?}");
        assert_no_side_effect(&h);
    }
}

#[tokio::test]
async fn an_expired_or_used_up_grant_or_no_approval_fails_before_reservation() {
    let h0 = confirm_harness();
    let request = interrupted(&h0, "t").await;
    let expired = grant_for(&request.preview, t0() - Duration::seconds(1));
    let mut used = grant_for(&request.preview, t0() + Duration::minutes(5));
    used.remaining_uses = 0;
    let not_required = ResumeInput {
        approval: adk_computer_use::bound::Approval::NotRequired,
        previews: vec![],
    };
    let cases = [
        ResumeInput::exact_grant(expired),
        ResumeInput::exact_grant(used),
        not_required,
    ];
    for input in cases {
        let h = confirm_harness();
        interrupted(&h, "t").await;
        let (node, err) = step_error(h.graph.resume("t", input).await);
        assert_eq!(node, Node::Approval);
        assert!(
            matches!(
                err,
                ComputerUseError::Expired {
                    object: ResponseObject::Approval,
                    ..
                } | ComputerUseError::Approval {
                    failure: ApprovalFailure::NoUsesLeft | ApprovalFailure::Required
                }
            ),
            "{err:?}"
        );
        assert_no_side_effect(&h);
    }
}

#[tokio::test]
async fn a_resume_that_tries_to_replace_the_preview_fails_before_reservation() {
    let h = confirm_harness();
    let request = interrupted(&h, "t").await;
    // Another preview for the same action: same ids, other bytes.
    let mut other = request.preview.clone();
    other.policy.decision = PolicyVerdict::Allow;
    let forged = adk_computer_use::runtime::PreviewRecord::new(
        request.record.proposal.clone(),
        serde_json::to_string(&other).expect("encodes"),
    )
    .expect("record");
    let grant = grant_for(&request.preview, t0() + Duration::minutes(5));
    let (node, err) = step_error(
        h.graph
            .resume("t", ResumeInput::exact_grant(grant).with_preview(forged))
            .await,
    );
    assert_eq!(node, Node::Approval);
    assert!(
        matches!(&err, ComputerUseError::IdentityMismatch { object: ResponseObject::Envelope, field: "previews", actual: Some(a), .. } if a.starts_with("2 entries")),
        "{err:?}"
    );
    assert_no_side_effect(&h);
    let state = h.graph.state("t").expect("state").expect("some");
    assert_eq!(state.previews.len(), 2, "the channel is append-only");
    assert_eq!(state.active_preview.as_ref(), Some(&request.record));
}

#[tokio::test]
async fn even_re_sending_the_same_preview_on_resume_makes_a_second_entry_and_fails() {
    let h = confirm_harness();
    let request = interrupted(&h, "t").await;
    let grant = grant_for(&request.preview, t0() + Duration::minutes(5));
    let input = ResumeInput::exact_grant(grant).with_preview(request.record.clone());
    let (node, err) = step_error(h.graph.resume("t", input).await);
    assert_eq!(
        (node, err.mismatched_field()),
        (Node::Approval, Some("previews"))
    );
    assert_no_side_effect(&h);
}

// ---- cleanup on every terminal path ---------------------------------------------------

#[tokio::test]
async fn a_lease_acquisition_failure_releases_the_reservation_and_stays_primary() {
    let h = Harness::click();
    h.rt().knobs().fail.push(op::ACQUIRE);
    let (node, err) = step_error(h.graph.run("t").await);
    assert_eq!(node, Node::AcquireLease);
    assert!(matches!(
        err,
        ComputerUseError::Runtime {
            operation: "acquire_lease",
            ..
        }
    ));
    assert_eq!(h.rt().released(), ["reservation:reservation-1"]);
}

#[tokio::test]
async fn an_execution_failure_releases_lease_and_reservation() {
    let h = Harness::click();
    h.rt().knobs().fail.push(op::EXECUTE);
    let (node, err) = step_error(h.graph.run("t").await);
    assert_eq!(node, Node::Execute);
    assert!(matches!(
        err,
        ComputerUseError::Runtime {
            operation: "execute_action",
            ..
        }
    ));
    assert_eq!(
        h.rt().released(),
        ["lease:lease-2", "reservation:reservation-1"]
    );
}

#[tokio::test]
async fn when_cleanup_fails_too_both_failures_are_kept_primary_first() {
    let h = Harness::click();
    h.rt()
        .knobs()
        .fail
        .extend([op::EXECUTE, op::RELEASE_TARGET]);
    let (_, err) = step_error(h.graph.run("t").await);
    match err {
        ComputerUseError::Cleanup { primary, cleanup } => {
            assert!(matches!(
                *primary,
                ComputerUseError::Runtime {
                    operation: "execute_action",
                    ..
                }
            ));
            assert!(matches!(
                *cleanup,
                ComputerUseError::Runtime {
                    operation: "release_target",
                    ..
                }
            ));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn when_both_releases_fail_the_cleanup_error_carries_both() {
    let h = Harness::click();
    h.rt()
        .knobs()
        .fail
        .extend([op::EXECUTE, op::RELEASE_LEASE, op::RELEASE_TARGET]);
    let (_, err) = step_error(h.graph.run("t").await);
    let ComputerUseError::Cleanup { cleanup, .. } = err else {
        panic!("{err:?}")
    };
    let ComputerUseError::Cleanup {
        primary: lease,
        cleanup: reservation,
    } = *cleanup
    else {
        panic!("{cleanup:?}")
    };
    assert!(matches!(
        *lease,
        ComputerUseError::Runtime {
            operation: "release_lease",
            ..
        }
    ));
    assert!(matches!(
        *reservation,
        ComputerUseError::Runtime {
            operation: "release_target",
            ..
        }
    ));
}

#[tokio::test]
async fn a_refused_reservation_whose_release_fails_reports_both() {
    let h = Harness::click();
    {
        let mut knobs = h.rt().knobs();
        knobs.reservation = Some(Box::new(|r| r.intent_id = "act-other".into()));
        knobs.fail.push(op::RELEASE_TARGET);
    }
    let (node, err) = step_error(h.graph.run("t").await);
    assert_eq!(node, Node::ReserveTarget);
    let ComputerUseError::Cleanup { primary, cleanup } = err else {
        panic!("{err:?}")
    };
    assert_eq!(primary.mismatched_field(), Some("intentId"));
    assert!(matches!(
        *cleanup,
        ComputerUseError::Runtime {
            operation: "release_target",
            ..
        }
    ));
}

#[tokio::test]
async fn a_cleanup_failure_after_a_verified_action_is_an_error_not_hidden() {
    let h = Harness::click();
    h.rt().knobs().fail.push(op::RELEASE_LEASE);
    let (node, err) = step_error(h.graph.run("t").await);
    assert_eq!(node, Node::End);
    assert!(matches!(
        err,
        ComputerUseError::Runtime {
            operation: "release_lease",
            ..
        }
    ));
    let state = h.graph.state("t").expect("state").expect("some");
    assert_eq!(state.verified, Some(true));
    // The reservation was still released, and a later run releases nothing again.
    assert_eq!(h.rt().released(), ["reservation:reservation-1"]);
    assert!(matches!(
        h.graph.run("t").await,
        Err(GraphError::Ended { .. })
    ));
    assert_eq!(h.rt().count(op::RELEASE_LEASE), 1);
    assert_eq!(h.rt().count(op::RELEASE_TARGET), 1);
}

#[tokio::test]
async fn a_finished_thread_never_releases_or_acts_twice() {
    let h = Harness::click();
    completed(h.graph.run("t").await);
    let again = completed(h.graph.run("t").await);
    assert!(again.verified);
    assert_eq!(h.rt().effects(), 1);
    assert_eq!(h.rt().count(op::EXECUTE), 1);
    assert_eq!(h.rt().released().len(), 2);
}

#[tokio::test]
async fn a_checkpoint_failure_after_reservation_releases_it() {
    // The reservation is accepted, then its state cannot be written: a real SQLite
    // failure, injected with a trigger from a second connection.
    let h = Harness::click();
    let path = h.db_path();
    h.rt().knobs().advance_after.clear();
    let conn = rusqlite::Connection::open(&path).expect("second connection");
    // Fail once the reservation has been taken: the trigger refuses the
    // `reserve_target` checkpoint itself.
    conn.execute_batch(
        "CREATE TRIGGER refuse_reserve BEFORE INSERT ON graph_checkpoints
         WHEN NEW.node = 'reserve_target'
         BEGIN SELECT RAISE(ABORT, 'injected: disk full'); END;",
    )
    .expect("trigger");
    match h.graph.run("t").await {
        Err(GraphError::Checkpoint { cleanup: None, .. }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(h.rt().released(), ["reservation:reservation-1"]);
    assert_eq!(h.rt().count(op::ACQUIRE), 0);
}

#[tokio::test]
async fn the_planner_failing_ends_the_thread_without_side_effects() {
    let dir = tempfile::tempdir().expect("tempdir");
    let clock = std::sync::Arc::new(adk_computer_use::runtime::ManualClock::new(t0()));
    let graph = adk_computer_use::graph::ComputerUseGraph::new(
        support::FaultRuntime::new(clock.clone()),
        |_: &adk_computer_use::graph::PlanInput<'_>| {
            Err::<adk_computer_use::graph::PlannedAction, _>(
                adk_computer_use::graph::PlanError::new("no idea"),
            )
        },
        adk_computer_use::checkpoint::SqliteCheckpointer::open(dir.path().join("c.db"))
            .expect("open"),
        clock,
    );
    assert!(
        matches!(graph.run("t").await, Err(GraphError::Plan { source, .. }) if source.message() == "no idea")
    );
    assert!(matches!(
        graph.run("t").await,
        Err(GraphError::Ended {
            node: Node::Plan,
            ..
        })
    ));
    assert_eq!(graph.runtime().count(op::PREVIEW), 0);
}

#[tokio::test]
async fn an_observation_failure_fails_at_observe() {
    let h = Harness::click();
    h.rt().knobs().fail.push(op::SEMANTIC);
    let (node, err) = step_error(h.graph.run("t").await);
    assert_eq!(node, Node::Observe);
    assert!(matches!(
        err,
        ComputerUseError::Runtime {
            operation: "observe_semantic",
            ..
        }
    ));
    assert_eq!(h.rt().count(op::PREVIEW), 0);
}

// ---- checkpoints ----------------------------------------------------------------------

#[tokio::test]
async fn observations_are_checkpointed_as_digests_not_pixels() {
    let h = Harness::click();
    completed(h.graph.run("t").await);
    for checkpoint in h.graph.checkpoints().history("t").expect("history") {
        let state: serde_json::Value = serde_json::from_str(&checkpoint.state).expect("json");
        if let Some(visual) = state.get("visual") {
            assert!(
                visual["digest"]
                    .as_str()
                    .is_some_and(|d| d.starts_with("sha256:"))
            );
            assert!(
                visual.get("image").is_none(),
                "pixels in {}",
                checkpoint.node
            );
        }
        if let Some(semantic) = state.get("semantic") {
            assert!(
                semantic.get("tree").is_none(),
                "tree in {}",
                checkpoint.node
            );
        }
        assert!(!checkpoint.state.contains("fake pixels"));
        assert!(!checkpoint.state.contains("Remember me\"}"));
    }
}

#[tokio::test]
async fn the_action_id_is_the_same_for_the_same_thread_in_another_process() {
    let a = Harness::click();
    let b = Harness::click();
    let da = completed(a.graph.run("thread-x").await);
    let db = completed(b.graph.run("thread-x").await);
    assert_eq!(da.receipt.action_id, db.receipt.action_id);
    assert_eq!(
        da.receipt.action_id,
        adk_computer_use::graph::action_id_for("thread-x", Node::Execute)
    );
    let dc = completed(Harness::click().graph.run("thread-y").await);
    assert_ne!(da.receipt.action_id, dc.receipt.action_id);
}

#[tokio::test]
async fn a_corrupt_checkpoint_is_reported_instead_of_resumed() {
    let h = confirm_harness();
    interrupted(&h, "t").await;
    let conn = rusqlite::Connection::open(h.db_path()).expect("second connection");
    conn.execute(
        "UPDATE graph_checkpoints SET state = replace(state, 'confirm', 'allow')",
        [],
    )
    .expect("tamper");
    assert!(matches!(
        h.graph.run("t").await,
        Err(GraphError::Checkpoint { .. })
    ));
    assert_no_side_effect(&h);
}

#[tokio::test]
async fn a_malformed_observation_digest_fails_at_join() {
    let h = Harness::click();
    h.rt().knobs().visual_digest = Some("md5:abc".into());
    let (node, err) = step_error(h.graph.run("t").await);
    assert_eq!(node, Node::Join);
    assert!(
        matches!(&err, ComputerUseError::Runtime { operation: "observe", code: Some(c), .. } if c == "invalid_response"),
        "{err:?}"
    );
    assert_eq!(h.rt().count(op::PREVIEW), 0);
}

#[tokio::test]
async fn a_checkpoint_failure_whose_cleanup_fails_too_reports_both() {
    let h = Harness::click();
    h.rt().knobs().fail.push(op::RELEASE_TARGET);
    let conn = rusqlite::Connection::open(h.db_path()).expect("second connection");
    conn.execute_batch(
        "CREATE TRIGGER refuse_reserve BEFORE INSERT ON graph_checkpoints
         WHEN NEW.node = 'reserve_target'
         BEGIN SELECT RAISE(ABORT, 'injected: disk full'); END;",
    )
    .expect("trigger");
    match h.graph.run("t").await {
        Err(GraphError::Checkpoint {
            cleanup: Some(cleanup),
            ..
        }) => assert!(matches!(
            *cleanup,
            ComputerUseError::Runtime {
                operation: "release_target",
                ..
            }
        )),
        other => panic!("{other:?}"),
    }
    assert_eq!(h.rt().count(op::ACQUIRE), 0);
}

#[tokio::test]
async fn a_checkpoint_of_another_thread_or_undecodable_state_is_refused() {
    for state in [
        serde_json::to_string(&adk_computer_use::graph::GraphState::new("other")).expect("json"),
        "{\"not\": \"a state\"}".to_owned(),
    ] {
        let h = Harness::click();
        h.graph
            .checkpoints()
            .save("t", 0, "observe", &state)
            .expect("save");
        match h.graph.run("t").await {
            Err(GraphError::Checkpoint { source, .. }) => assert!(
                matches!(
                    *source,
                    adk_computer_use::checkpoint::CheckpointError::State { .. }
                ),
                "{source:?}"
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(h.rt().calls(), Vec::<String>::new());
    }
}

#[tokio::test]
async fn a_graph_given_a_session_uses_it_instead_of_starting_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let clock = std::sync::Arc::new(adk_computer_use::runtime::ManualClock::new(t0()));
    let graph = adk_computer_use::graph::ComputerUseGraph::new(
        support::FaultRuntime::new(clock.clone()),
        support::planner(click_plan(Some(support::postcondition()))),
        adk_computer_use::checkpoint::SqliteCheckpointer::open(dir.path().join("c.db"))
            .expect("open"),
        clock,
    )
    .with_objective("unused: the session exists")
    .with_session(support::SESSION);
    assert!(completed(graph.run("t").await).verified);
    assert_eq!(graph.runtime().count(op::START), 0);
}
