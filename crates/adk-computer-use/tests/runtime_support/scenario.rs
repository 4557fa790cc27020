//! The runtime scenarios, written once against `GovernedRuntime<Recording<C>>` so the MCP
//! runtime (over the real binary) and the local runtime (over the in-process kernel) are
//! held to the same behaviour.

use std::sync::Arc;

use adk_computer_use::bound::Approval;
use adk_computer_use::governed::{GovernedRuntime, ToolCaller};
use adk_computer_use::runtime::binding::{
    authorize_execute, validate_approval, validate_envelope_freshness, validate_lease,
    validate_receipt, validate_reservation,
};
use adk_computer_use::runtime::{ComputerUseRuntime, PreviewRecord, SystemClock};
use adk_computer_use::{ComputerUseError, ResponseObject, VerificationOutcome};
use cc_contract::{PolicyVerdict, ReceiptStatus};
use serde_json::json;

use super::{Form, Recording, click_submit, observe_form};

type Runtime<C> = GovernedRuntime<Recording<C>>;

/// A started session, the form, and a preview of the Submit click.
pub struct Previewed {
    pub session_id: String,
    pub form: Form,
    pub record: PreviewRecord,
}

pub async fn preview_click<C: ToolCaller>(rt: &Runtime<C>, action_id: &str) -> Previewed {
    let session_id = rt
        .start_session(Some("submit the form"))
        .await
        .expect("session");
    let form = observe_form(rt.caller()).await;
    let proposal = click_submit(&form, &session_id, action_id);
    let record = rt.preview_action(&proposal).await.expect("preview");
    Previewed {
        session_id,
        form,
        record,
    }
}

fn code(err: &ComputerUseError) -> Option<&str> {
    match err {
        ComputerUseError::Runtime { code, .. } => code.as_deref(),
        _ => None,
    }
}

/// discover → observe → preview → reserve → lease → execute → receipt committed and
/// verified, then releases and stop. Returns the session id.
pub async fn governed_click_commits_a_verified_receipt<C: ToolCaller>(rt: &Runtime<C>) -> String {
    let caps = rt.discover_capabilities().await.expect("capabilities");
    assert!(caps.governed, "{:?}", caps.tools);
    assert!(
        caps.tools.iter().any(|t| t == "screen_capture"),
        "{:?}",
        caps.tools
    );

    let visual = rt.observe_visual().await.expect("screenshot");
    assert!(visual.digest.starts_with("sha256:") && visual.digest.len() == 71);
    assert!(visual.width > 0 && visual.height > 0);
    let semantic = rt.observe_semantic().await.expect("snapshot");
    assert!(semantic.digest.starts_with("sha256:"));
    assert!(semantic.node_count > 0);

    let p = preview_click(rt, "act-submit-1").await;
    let preview = p.record.preview().expect("the kept preview decodes");
    assert!(preview.executable, "{:?}", preview.blocker);
    assert_eq!(preview.policy.decision, PolicyVerdict::Allow);
    assert_eq!(preview.envelope.action_id, "act-submit-1");

    let fresh =
        validate_envelope_freshness(&preview.envelope, Arc::new(SystemClock)).expect("fresh");
    let reservation = rt
        .reserve_target(&p.record)
        .await
        .expect("reserve")
        .expect("a reservation for the form");
    let reservation = validate_reservation(&reservation, &fresh).expect("bound reservation");
    let lease = rt.acquire_lease(&p.record).await.expect("lease");
    assert_eq!(lease.boundaries.app_ids, vec!["cc-form".to_string()]);
    assert_eq!(lease.action_budget, 1);
    let lease = validate_lease(&lease, &fresh).expect("bound lease");
    let approval =
        validate_approval(Approval::NotRequired, &fresh, &preview.policy).expect("allowed");
    let auth = authorize_execute(&fresh, &lease, Some(&reservation), &approval).expect("auth");

    let receipt = rt.execute_action(&p.record, &auth).await.expect("receipt");
    assert_eq!(receipt.status, ReceiptStatus::Committed, "{receipt:?}");
    assert_eq!(receipt.action_digest, preview.envelope.args_digest);
    let bound = validate_receipt(&receipt, &fresh).expect("bound receipt");
    let outcome = rt
        .verify(&bound, preview.envelope.postcondition.as_ref())
        .await;
    assert_eq!(outcome, VerificationOutcome::Verified);

    // Exactly the previewed proposal went out, with the lease.
    let calls = rt.caller().calls();
    assert_eq!(calls.last().map(String::as_str), Some("execute_action"));

    rt.release_target(reservation.reservation())
        .await
        .expect("release the reservation");
    rt.release_lease(lease.lease())
        .await
        .expect("release the lease");
    rt.stop_session(&p.session_id).await.expect("stop");
    p.session_id
}

/// After its envelope expired, an execute already sent is asked again for its receipt
/// (what the graph does after a restart): the server replays the stored receipt; for an
/// action never executed it refuses the expired envelope and acts on nothing.
pub async fn an_expired_envelope_replays_only_an_execute_already_sent<C: ToolCaller>(
    rt: &Runtime<C>,
) {
    let session_id = rt.start_session(Some("replay")).await.expect("session");
    let form = observe_form(rt.caller()).await;
    let short = |action_id: &str| {
        let mut p = click_submit(&form, &session_id, action_id);
        p.expires_in_ms = Some(1_500);
        p
    };
    let sent = rt
        .preview_action(&short("act-sent"))
        .await
        .expect("preview");
    let never = rt
        .preview_action(&short("act-never"))
        .await
        .expect("preview");
    let preview = sent.preview().expect("the kept preview decodes");
    let fresh =
        validate_envelope_freshness(&preview.envelope, Arc::new(SystemClock)).expect("fresh");
    let lease = rt.acquire_lease(&sent).await.expect("lease");
    let lease = validate_lease(&lease, &fresh).expect("bound lease");
    let approval =
        validate_approval(Approval::NotRequired, &fresh, &preview.policy).expect("allowed");
    let auth = authorize_execute(&fresh, &lease, None, &approval).expect("auth");
    let receipt = rt.execute_action(&sent, &auth).await.expect("receipt");
    assert_eq!(receipt.status, ReceiptStatus::Committed, "{receipt:?}");

    // Both envelopes expire (the wait is for the expiry, nothing is timed).
    tokio::time::sleep(std::time::Duration::from_millis(1_600)).await;
    assert!(matches!(
        validate_envelope_freshness(&preview.envelope, Arc::new(SystemClock)),
        Err(ComputerUseError::Expired { .. })
    ));
    let lease_id = &lease.lease().lease_id;
    let replayed = rt.replay_receipt(&sent, lease_id).await.expect("a replay");
    assert_eq!(replayed, receipt);
    let refused = rt
        .replay_receipt(&never, lease_id)
        .await
        .expect_err("never executed");
    assert_eq!(code(&refused), Some("stale_target"), "{refused}");
}

/// An authorization for an envelope that differs from the preview in one field (same
/// action id) is refused before any call, naming the field.
pub async fn altered_envelope_is_refused_before_any_call<C: ToolCaller>(rt: &Runtime<C>) {
    let p = preview_click(rt, "act-altered").await;
    let preview = p.record.preview().expect("preview");
    let lease = rt.acquire_lease(&p.record).await.expect("lease");

    let mut altered = preview.envelope.clone();
    altered.expires_at =
        cc_contract::format_timestamp(time::OffsetDateTime::now_utc() + time::Duration::minutes(4));
    let fresh = validate_envelope_freshness(&altered, Arc::new(SystemClock)).expect("fresh");
    let lease = validate_lease(&lease, &fresh).expect("bound to the altered envelope");
    let approval =
        validate_approval(Approval::NotRequired, &fresh, &preview.policy).expect("allowed");
    let auth = authorize_execute(&fresh, &lease, None, &approval).expect("locally consistent");

    let before = rt.caller().calls().len();
    let err = rt
        .execute_action(&p.record, &auth)
        .await
        .expect_err("altered");
    assert!(
        matches!(
            &err,
            ComputerUseError::IdentityMismatch {
                object: ResponseObject::Envelope,
                field: "expiresAt",
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(rt.caller().calls().len(), before, "a call went out");
    rt.release_lease(lease.lease())
        .await
        .expect("release the lease");
}

/// A record whose proposal was changed after the preview (other coordinates) would make
/// the server re-preview other work: refused before any call, on the digest.
pub async fn altered_proposal_is_refused_before_any_call<C: ToolCaller>(rt: &Runtime<C>) {
    let p = preview_click(rt, "act-proposal").await;
    let preview = p.record.preview().expect("preview");
    let fresh =
        validate_envelope_freshness(&preview.envelope, Arc::new(SystemClock)).expect("fresh");
    let lease = rt.acquire_lease(&p.record).await.expect("lease");
    let lease = validate_lease(&lease, &fresh).expect("bound");
    let approval =
        validate_approval(Approval::NotRequired, &fresh, &preview.policy).expect("allowed");
    let auth = authorize_execute(&fresh, &lease, None, &approval).expect("auth");

    let mut record = p.record.clone();
    record
        .proposal
        .arguments
        .insert("x".into(), json!(p.form.submit.0 + 200));
    let before = rt.caller().calls().len();
    let err = rt
        .execute_action(&record, &auth)
        .await
        .expect_err("other work");
    assert_eq!(err.mismatched_field(), Some("argsDigest"), "{err:?}");
    assert_eq!(rt.caller().calls().len(), before, "a call went out");
    rt.release_lease(lease.lease())
        .await
        .expect("release the lease");
}

/// A preview whose raw text was rewritten (and re-hashed) is not the one this runtime
/// handed out: refused before any call.
pub async fn rewritten_preview_record_is_refused<C: ToolCaller>(rt: &Runtime<C>) {
    let p = preview_click(rt, "act-rewritten").await;
    let raw = p
        .record
        .raw
        .replace("\"reversible\":true", "\"reversible\":false");
    assert_ne!(
        raw, p.record.raw,
        "the preview has a reversible flag to flip"
    );
    let forged = PreviewRecord::new(p.record.proposal.clone(), raw).expect("decodes");
    let before = rt.caller().calls().len();
    let err = rt.acquire_lease(&forged).await.expect_err("forged");
    assert_eq!(err.mismatched_field(), Some("previewSha256"), "{err:?}");
    assert_eq!(rt.caller().calls().len(), before);
}

/// Contract errors keep their code.
pub async fn runtime_errors_keep_their_code<C: ToolCaller>(rt: &Runtime<C>) {
    let err = rt
        .pause_session("ses-none")
        .await
        .expect_err("no such session");
    assert_eq!(code(&err), Some("session_not_found"), "{err:?}");
    assert!(matches!(
        err,
        ComputerUseError::Runtime {
            operation: "pause_session",
            ..
        }
    ));

    let session_id = rt.start_session(None).await.expect("session");
    let form = observe_form(rt.caller()).await;
    let mut proposal = click_submit(&form, &session_id, "act-bad");
    proposal.arguments.insert("x".into(), json!("left"));
    let err = rt
        .preview_action(&proposal)
        .await
        .expect_err("bad arguments");
    assert_eq!(code(&err), Some("invalid_arguments"), "{err:?}");
}

/// A lease answered for another session is refused at the boundary (never returned) and
/// the lease the server did grant is released.
pub async fn foreign_lease_is_refused_and_released<C: ToolCaller>(rt: &Runtime<C>) {
    let p = preview_click(rt, "act-foreign-lease").await;
    let err = rt.acquire_lease(&p.record).await.expect_err("foreign");
    assert!(
        matches!(
            &err,
            ComputerUseError::IdentityMismatch { object: ResponseObject::Lease, field: "sessionId", actual: Some(a), .. }
                if a == "ses-other"
        ),
        "{err:?}"
    );
    let calls = rt.caller().calls();
    assert_eq!(
        &calls[calls.len() - 2..],
        ["acquire_control_lease", "release_control_lease"]
    );
}

/// The lease rewrite for [`foreign_lease_is_refused_and_released`].
pub fn foreign_lease(v: &mut serde_json::Value) {
    v["lease"]["sessionId"] = json!("ses-other");
}

/// A reservation answered for another intent is refused and released.
pub async fn foreign_reservation_is_refused_and_released<C: ToolCaller>(rt: &Runtime<C>) {
    let p = preview_click(rt, "act-foreign-reservation").await;
    let err = rt.reserve_target(&p.record).await.expect_err("foreign");
    assert_eq!(err.mismatched_field(), Some("intentId"), "{err:?}");
    let calls = rt.caller().calls();
    assert_eq!(
        &calls[calls.len() - 2..],
        ["reserve_target", "release_target_reservation"]
    );
}

/// The reservation rewrite for [`foreign_reservation_is_refused_and_released`].
pub fn foreign_reservation(v: &mut serde_json::Value) {
    v["reservation"]["intentId"] = json!("act-someone-else");
}

/// A receipt with another digest describes other work: refused.
pub async fn receipt_of_other_work_is_refused<C: ToolCaller>(rt: &Runtime<C>) {
    let p = preview_click(rt, "act-foreign-receipt").await;
    let preview = p.record.preview().expect("preview");
    let fresh =
        validate_envelope_freshness(&preview.envelope, Arc::new(SystemClock)).expect("fresh");
    let lease = rt.acquire_lease(&p.record).await.expect("lease");
    let lease = validate_lease(&lease, &fresh).expect("bound");
    let approval =
        validate_approval(Approval::NotRequired, &fresh, &preview.policy).expect("allowed");
    let auth = authorize_execute(&fresh, &lease, None, &approval).expect("auth");
    let err = rt
        .execute_action(&p.record, &auth)
        .await
        .expect_err("other work");
    assert!(
        matches!(
            &err,
            ComputerUseError::IdentityMismatch {
                object: ResponseObject::Receipt,
                field: "actionDigest",
                ..
            }
        ),
        "{err:?}"
    );
}

/// The receipt rewrite for [`receipt_of_other_work_is_refused`].
pub fn other_digest(v: &mut serde_json::Value) {
    v["receipt"]["actionDigest"] = json!("f".repeat(64));
}

/// A preview whose envelope answers another action is refused when it returns.
pub async fn preview_of_another_action_is_refused<C: ToolCaller>(rt: &Runtime<C>) {
    let session_id = rt.start_session(None).await.expect("session");
    let form = observe_form(rt.caller()).await;
    let err = rt
        .preview_action(&click_submit(&form, &session_id, "act-mine"))
        .await
        .expect_err("another action");
    assert_eq!(err.mismatched_field(), Some("actionId"), "{err:?}");
}

/// The preview rewrite for [`preview_of_another_action_is_refused`].
pub fn other_action(v: &mut serde_json::Value) {
    v["envelope"]["actionId"] = json!("act-theirs");
}

/// Pause refuses new reservations; stop is accepted; an emergency stop revokes the lease an
/// action was about to use, and the execute fails with the runtime's code.
pub async fn session_controls_and_emergency_stop<C: ToolCaller>(rt: &Runtime<C>) {
    let paused = rt.start_session(None).await.expect("session");
    rt.pause_session(&paused).await.expect("pause");
    let form = observe_form(rt.caller()).await;
    // A preview decides nothing; claiming the target does, and a paused session may not.
    let record = rt
        .preview_action(&click_submit(&form, &paused, "act-paused"))
        .await
        .expect("preview");
    let err = rt.reserve_target(&record).await.expect_err("paused");
    assert_eq!(code(&err), Some("session_not_running"), "{err:?}");
    rt.stop_session(&paused).await.expect("stop");

    let p = preview_click(rt, "act-stopped").await;
    let preview = p.record.preview().expect("preview");
    let fresh =
        validate_envelope_freshness(&preview.envelope, Arc::new(SystemClock)).expect("fresh");
    let lease = rt.acquire_lease(&p.record).await.expect("lease");
    let lease = validate_lease(&lease, &fresh).expect("bound");
    let approval =
        validate_approval(Approval::NotRequired, &fresh, &preview.policy).expect("allowed");
    let auth = authorize_execute(&fresh, &lease, None, &approval).expect("auth");
    rt.emergency_stop("test: stop everything")
        .await
        .expect("emergency stop");
    let err = rt
        .execute_action(&p.record, &auth)
        .await
        .expect_err("stopped");
    assert_eq!(code(&err), Some("lease_revoked"), "{err:?}");
}

/// Answers that misreport what was done are refused with a structured error.
pub async fn misreported_release_is_refused<C: ToolCaller>(rt: &Runtime<C>, field: &str) {
    let p = preview_click(rt, "act-release").await;
    let lease = rt.acquire_lease(&p.record).await.expect("lease");
    let err = rt.release_lease(&lease).await.expect_err("misreported");
    match field {
        "leaseId" => assert_eq!(err.mismatched_field(), Some("leaseId"), "{err:?}"),
        _ => assert_eq!(code(&err), Some("invalid_response"), "{err:?}"),
    }
}

/// The release rewrite naming another lease.
pub fn other_lease_released(v: &mut serde_json::Value) {
    v["lease"]["leaseId"] = json!("lea-other");
}

/// The release rewrite that leaves the lease active.
pub fn lease_still_active(v: &mut serde_json::Value) {
    v["lease"]["state"] = json!("active");
}

/// A reservation release naming another reservation is refused.
pub async fn misreported_reservation_release_is_refused<C: ToolCaller>(rt: &Runtime<C>) {
    let p = preview_click(rt, "act-release-reservation").await;
    let reservation = rt
        .reserve_target(&p.record)
        .await
        .expect("reserve")
        .expect("a reservation");
    let err = rt
        .release_target(&reservation)
        .await
        .expect_err("misreported");
    assert_eq!(err.mismatched_field(), Some("reservationId"), "{err:?}");
}

/// The release rewrite naming another reservation.
pub fn other_reservation_released(v: &mut serde_json::Value) {
    v["reservation"]["reservationId"] = json!("res-other");
}

/// A session answer for another session, or without one, is an invalid response.
pub async fn misreported_session_is_refused<C: ToolCaller>(rt: &Runtime<C>, tool: &str) {
    let err = match tool {
        "start_session" => rt.start_session(None).await.expect_err("no session id"),
        _ => {
            let session = rt.start_session(None).await.expect("session");
            rt.pause_session(&session)
                .await
                .expect_err("another session")
        }
    };
    assert_eq!(code(&err), Some("invalid_response"), "{err:?}");
}

/// The session rewrite: another session id.
pub fn other_session(v: &mut serde_json::Value) {
    v["session"]["sessionId"] = json!("ses-other");
}

/// The session rewrite: no session at all.
pub fn no_session(v: &mut serde_json::Value) {
    *v = json!({});
}

/// A refused lease whose release fails too: both failures, the refusal first.
pub async fn refused_lease_with_failed_release_keeps_both<C: ToolCaller>(rt: &Runtime<C>) {
    let p = preview_click(rt, "act-both").await;
    let err = rt.acquire_lease(&p.record).await.expect_err("refused");
    match err {
        ComputerUseError::Cleanup { primary, cleanup } => {
            assert_eq!(primary.mismatched_field(), Some("sessionId"), "{primary:?}");
            assert!(code(&cleanup).is_some(), "{cleanup:?}");
        }
        other => panic!("expected both failures, got {other:?}"),
    }
}

/// The lease rewrite: another session, and a lease id the server never issued.
pub fn foreign_unknown_lease(v: &mut serde_json::Value) {
    v["lease"]["sessionId"] = json!("ses-other");
    v["lease"]["leaseId"] = json!("lea-never-issued");
}

/// An emergency stop the runtime reports as not done is an error.
pub async fn unperformed_emergency_stop_is_refused<C: ToolCaller>(rt: &Runtime<C>) {
    let err = rt.emergency_stop("test").await.expect_err("not stopped");
    assert_eq!(code(&err), Some("invalid_response"), "{err:?}");
}

/// The emergency-stop rewrite: `stopped: false`.
pub fn not_stopped(v: &mut serde_json::Value) {
    v["stopped"] = json!(false);
}

/// A lease or reservation the server issued but answered in a shape that does not decode
/// is refused, and still released by the id the answer carried.
pub async fn undecodable_grant_is_refused_and_released<C: ToolCaller>(rt: &Runtime<C>, tool: &str) {
    let p = preview_click(rt, "act-undecodable").await;
    let err = match tool {
        "reserve_target" => rt.reserve_target(&p.record).await.map(|_| ()),
        _ => rt.acquire_lease(&p.record).await.map(|_| ()),
    }
    .expect_err("undecodable");
    assert_eq!(code(&err), Some("invalid_response"), "{err:?}");
    let calls = rt.caller().calls();
    let release = match tool {
        "reserve_target" => "release_target_reservation",
        _ => "release_control_lease",
    };
    assert_eq!(calls.last().map(String::as_str), Some(release), "{calls:?}");
}

/// The rewrite that breaks a lease's or reservation's state but keeps its id.
pub fn bogus_state(v: &mut serde_json::Value) {
    for key in ["lease", "reservation"] {
        if let Some(object) = v.get_mut(key) {
            object["state"] = json!("bogus");
        }
    }
}

/// A text-entry preview carries the server's `targetSensitivity`, which its `argsDigest`
/// covers: the boundary recomputation must agree, or every typing action would be refused.
pub async fn text_entry_preview_binds_with_its_sensitivity<C: ToolCaller>(rt: &Runtime<C>) {
    let session_id = rt.start_session(None).await.expect("session");
    let form = observe_form(rt.caller()).await;
    let mut proposal = click_submit(&form, &session_id, "act-type");
    proposal.tool = "keyboard_type".into();
    proposal.arguments = serde_json::Map::new();
    proposal.arguments.insert("text".into(), json!("Ada"));
    proposal.postcondition = None;
    if let Some(target) = proposal.target.as_mut() {
        target.role = Some("text".into());
    }
    let record = rt.preview_action(&proposal).await.expect("preview");
    let envelope = record.preview().expect("preview").envelope;
    assert!(envelope.target_sensitivity.is_some(), "{envelope:?}");
    rt.acquire_lease(&record)
        .await
        .map(|_| ())
        .expect("the record still answers its proposal");
}
