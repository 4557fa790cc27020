//! The operator's approval of governed `confirm` decisions (GOVERNANCE.md Part A:
//! "Approval is never a model tool"). Operator token only; an agent token gets 403.
//!
//! * `GET /approvals` → `200 {approvals: [request…]}`: the pending requests (session,
//!   principal, action, tool, class, target summary, redacted arguments, digests,
//!   policy reasons, expiry), newest first.
//! * `POST /approvals/approve {session_id, action_id, args_digest?, ttl_ms?}` →
//!   `200 {status:"approved", grant}`: a single-use `exact_action` grant, valid `ttl_ms`
//!   (default [`DEFAULT_GRANT_TTL_MS`](cc_governance::approvals::DEFAULT_GRANT_TTL_MS), at
//!   most [`MAX_TTL_MS`](cc_contract::limits::MAX_TTL_MS)).
//! * `POST /approvals/deny {session_id, action_id, args_digest?, reason?}` →
//!   `200 {status:"denied", approval}`.
//!
//! Refusals are `{error, message}`: 400 `invalid_request` (not JSON, unknown field,
//! bad `ttl_ms`), 403 `forbidden`, 404 `approval_not_found`, 409 `not_confirm`,
//! `already_decided`, `approval_changed` (the digest the operator saw is not the
//! request's any more), `session_not_running`, 410 `approval_expired`. Nothing is
//! written when a decision is refused. Every decision is announced on `/events`
//! (`governance.approval_resolved`), like every new request
//! (`governance.approval_requested`).

use axum::Extension;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use cc_contract::ErrorCode;
use cc_governance::Governance;
use cc_governance::approvals::{ApprovalDecision, ApprovalError, Decided};
use serde_json::{Value, json};
use std::sync::Arc;

use super::roles::Role;
use super::{AppState, json_response};
use cc_governance::Caller;

fn refuse(status: StatusCode, error: &str, message: impl Into<String>) -> Response {
    json_response(status, &json!({"error": error, "message": message.into()}))
}

/// Only the operator decides; the check comes before anything is read.
fn operator_only(role: Role) -> Option<Response> {
    (role != Role::Operator).then(|| {
        refuse(
            StatusCode::FORBIDDEN,
            "forbidden",
            "approving governed actions needs the operator token",
        )
    })
}

/// The host's kernel: the operator's view spans every principal of the journal.
fn kernel(st: &AppState) -> Result<Arc<Governance>, Box<Response>> {
    st.kernels.for_caller(&Caller::Host).map_err(|e| {
        Box::new(refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            e.error.as_str(),
            e.message,
        ))
    })
}

/// The status of each refusal.
fn status_of(e: &ApprovalError) -> StatusCode {
    match e {
        ApprovalError::InvalidRequest(_) => StatusCode::BAD_REQUEST,
        ApprovalError::NotFound { .. } => StatusCode::NOT_FOUND,
        ApprovalError::Expired { .. } => StatusCode::GONE,
        ApprovalError::Changed { .. }
        | ApprovalError::NotConfirm { .. }
        | ApprovalError::AlreadyDecided { .. } => StatusCode::CONFLICT,
        ApprovalError::Kernel(k) if k.error == ErrorCode::ExecutionFailed => {
            StatusCode::INTERNAL_SERVER_ERROR
        }
        ApprovalError::Kernel(_) => StatusCode::CONFLICT,
    }
}

/// `GET /approvals`.
pub async fn list(State(st): State<AppState>, Extension(role): Extension<Role>) -> Response {
    if let Some(r) = operator_only(role) {
        return r;
    }
    let k = match kernel(&st) {
        Ok(k) => k,
        Err(r) => return *r,
    };
    match tokio::task::spawn_blocking(move || k.pending_approvals()).await {
        Ok(Ok(list)) => json_response(StatusCode::OK, &json!({"approvals": list})),
        Ok(Err(e)) => refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            e.error.as_str(),
            e.message,
        ),
        Err(e) => refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("the journal task failed: {e}"),
        ),
    }
}

/// `POST /approvals/approve`.
pub async fn approve(st: State<AppState>, role: Extension<Role>, body: Bytes) -> Response {
    decide(st, role, body, true).await
}

/// `POST /approvals/deny`.
pub async fn deny(st: State<AppState>, role: Extension<Role>, body: Bytes) -> Response {
    decide(st, role, body, false).await
}

async fn decide(
    State(st): State<AppState>,
    Extension(role): Extension<Role>,
    body: Bytes,
    approve: bool,
) -> Response {
    if let Some(r) = operator_only(role) {
        return r;
    }
    let d: ApprovalDecision = match serde_json::from_slice(&body) {
        Ok(d) => d,
        Err(e) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                format!(
                    "the body must be {{session_id, action_id, args_digest?, {}}}: {e}",
                    if approve { "ttl_ms?" } else { "reason?" }
                ),
            );
        }
    };
    let k = match kernel(&st) {
        Ok(k) => k,
        Err(r) => return *r,
    };
    let out = tokio::task::spawn_blocking(move || k.decide_approval(&d, approve)).await;
    match out {
        Ok(Ok(Decided::Approved(grant))) => json_response(
            StatusCode::OK,
            &json!({"status": "approved", "grant": grant}),
        ),
        Ok(Ok(Decided::Denied(request))) => json_response(
            StatusCode::OK,
            &json!({"status": "denied", "approval": request}),
        ),
        Ok(Err(e)) => {
            let mut body = json!({"error": e.code(), "message": e.message()});
            if let ApprovalError::Changed { actual, .. } = &e {
                body["argsDigest"] = Value::String(actual.clone());
            }
            json_response(status_of(&e), &body)
        }
        Err(e) => refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("the journal task failed: {e}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_contract::{ContractError, PolicyVerdict};
    use cc_governance::approvals::RequestStatus;

    #[test]
    fn every_refusal_has_its_status() {
        let cases = [
            (ApprovalError::InvalidRequest("x".into()), 400),
            (
                ApprovalError::NotFound {
                    session_id: "s".into(),
                    action_id: "a".into(),
                },
                404,
            ),
            (
                ApprovalError::Changed {
                    expected: "e".into(),
                    actual: "a".into(),
                },
                409,
            ),
            (
                ApprovalError::NotConfirm {
                    decision: PolicyVerdict::Allow,
                },
                409,
            ),
            (
                ApprovalError::AlreadyDecided {
                    status: RequestStatus::Denied,
                },
                409,
            ),
            (
                ApprovalError::Expired {
                    expires_at: "t".into(),
                },
                410,
            ),
            (
                ApprovalError::Kernel(ContractError::new(ErrorCode::SessionNotRunning, "x")),
                409,
            ),
            (
                ApprovalError::Kernel(ContractError::new(ErrorCode::ExecutionFailed, "disk")),
                500,
            ),
        ];
        for (e, want) in cases {
            assert_eq!(status_of(&e).as_u16(), want, "{e:?}");
        }
    }

    #[test]
    fn only_the_operator_decides() {
        assert!(operator_only(Role::Operator).is_none());
        let r = operator_only(Role::Agent).expect("refused");
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
    }
}
