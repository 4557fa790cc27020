//! `GET /health` (no token: a supervisor probes it) and `GET /whoami` (the console
//! learns whether it holds the operator token before offering operator buttons).

use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use super::{AppState, Role, json_response, readiness};

/// `{ok, ready, display, driver, journal, state, platform, buffered, buffered_bytes,
/// subscribers, dropped, last_seq, connections}`: 200 when the display, the driver and
/// the journal are all ready ([`readiness`]), else 503 with `ok` and `ready` false and
/// each part's `{ready, detail}` saying which is not. `buffered` is the replay ring's
/// fill (≤ 200 events, `buffered_bytes` of JSON), `subscribers` the open event streams,
/// `dropped` every event a subscriber lost because it did not keep up (since the server
/// started), `connections` the open connections by holder (`anonymous`: no
/// authenticated request yet).
pub async fn health(State(st): State<AppState>) -> Response {
    let (display, driver, journal) = tokio::join!(
        readiness::display(st.engine.platform()),
        readiness::driver(&st.engine),
        readiness::journal(&st.kernels),
    );
    let ready = display.ready && driver.ready && journal.ready;
    let engine = st.engine.clone();
    let state = tokio::task::spawn_blocking(move || engine.status())
        .await
        .ok()
        .and_then(|env| serde_json::to_value(env.meta.state).ok())
        .unwrap_or(Value::Null);
    let bus = st.engine.bus_stats();
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let (anonymous, agents, operator) = st.limits.held();
    json_response(
        status,
        &json!({
            "ok": ready,
            "ready": ready,
            "display": display,
            "driver": driver,
            "journal": journal,
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
