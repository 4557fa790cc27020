//! `GET /health` (no token: a supervisor probes it) and `GET /whoami` (the console
//! learns whether it holds the operator token before offering operator buttons).

use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use super::{AppState, Role, json_response};

/// `{ok, state, platform, buffered, buffered_bytes, subscribers, dropped, last_seq,
/// connections}`: `buffered` is the replay ring's fill (≤ 200 events, `buffered_bytes`
/// of JSON), `subscribers` the open event streams, `dropped` every event a subscriber
/// lost because it did not keep up (since the server started), `connections` the
/// open connections by holder (`anonymous`: no authenticated request yet).
pub async fn health(State(st): State<AppState>) -> Response {
    let engine = st.engine.clone();
    let state = tokio::task::spawn_blocking(move || engine.status())
        .await
        .ok()
        .and_then(|env| serde_json::to_value(env.meta.state).ok())
        .unwrap_or(Value::Null);
    let bus = st.engine.bus_stats();
    let (anonymous, agents, operator) = st.limits.held();
    json_response(
        StatusCode::OK,
        &json!({
            "ok": true,
            "state": state,
            "platform": st.engine.platform(),
            "buffered": bus.buffered,
            "buffered_bytes": bus.buffered_bytes,
            "subscribers": st.sse.clients(),
            "dropped": bus.dropped + st.sse.dropped(),
            "last_seq": bus.last_seq,
            "connections": {"anonymous": anonymous, "agents": agents, "operator": operator},
        }),
    )
}

/// `{role}` of the presented token.
pub async fn whoami(Extension(role): Extension<Role>) -> Response {
    json_response(StatusCode::OK, &json!({"role": role.as_str()}))
}
