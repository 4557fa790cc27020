//! `GET /journal` (operator only): every governed session of this desk's journal with
//! its whole hash chain, so an auditor elsewhere (the fleet plane) gathers journals over
//! the operator channel it already has and verifies every chain itself.

use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use super::roles::Role;
use super::{AppState, json_response};
use cc_governance::Caller;

fn refuse(status: StatusCode, error: &str, message: String) -> Response {
    json_response(status, &json!({"error": error, "message": message}))
}

/// The handler: `200 {"sessions": [{session, events}]}`; 403 for an agent's token.
pub async fn journal(State(st): State<AppState>, Extension(role): Extension<Role>) -> Response {
    if role != Role::Operator {
        return refuse(
            StatusCode::FORBIDDEN,
            "forbidden",
            "reading the whole journal needs the operator token".into(),
        );
    }
    let k = match st.kernels.for_caller(&Caller::Host) {
        Ok(k) => k,
        Err(e) => {
            return refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                e.error.as_str(),
                e.message,
            );
        }
    };
    match tokio::task::spawn_blocking(move || k.export_journal()).await {
        Ok(Ok(sessions)) => json_response(StatusCode::OK, &json!({"sessions": sessions})),
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
