//! The plane's HTTP side: one console over every desk, signed in exactly as a desk's
//! console is (the operator token posted once to `POST /console/login`, then an
//! `HttpOnly` cookie plus a per-tab key, [`crate::transports::http::login`]), behind the
//! same Host/Origin guard. Only the fleet's operator token is accepted: the plane knows
//! no agent token, so an agent's token of any desk is refused (401) everywhere but the
//! public page, its static files and `/health`.

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::transports::http::auth::{self, Authorities};
use crate::transports::http::login::{KEY_HEADER, Logins};
use crate::transports::http::secret::ct_eq;

use super::watch::Fleet;
use super::{audit, stop};

const INDEX_HTML: &str = include_str!("../../fleet-console/index.html");
const APP_JS: &str = include_str!("../../fleet-console/app.js");
const STYLE_CSS: &str = include_str!("../../console/style.css");

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
frame-ancestors 'none'";

/// The status the plane answers for a desk's: the same, but a desk refusing the plane's
/// token (401) is the plane's misconfiguration, 502, never a sign that the person's
/// console session ended.
fn from_desk(status: u16) -> StatusCode {
    match status {
        401 => StatusCode::BAD_GATEWAY,
        s => StatusCode::from_u16(s).unwrap_or(StatusCode::BAD_GATEWAY),
    }
}

/// A failed call to a desk as the plane answers it: the desk's own refusal keeps its
/// status ([`from_desk`]; 409 when it came inside a JSON-RPC answer), no answer is 502.
fn desk_failed(e: &super::desk::DeskError) -> Response {
    let status = match (e.kind, e.status) {
        ("refused", Some(s)) if s >= 400 => from_desk(s),
        ("refused", _) => StatusCode::CONFLICT,
        _ => StatusCode::BAD_GATEWAY,
    };
    refuse(status, e.kind, e.to_string())
}

/// What every handler shares.
#[derive(Clone)]
pub struct Plane {
    pub fleet: Arc<Fleet>,
    pub token: Arc<String>,
    pub hosts: Arc<Authorities>,
    pub logins: Arc<Logins>,
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut r = (status, body.to_string()).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn refuse(status: StatusCode, error: &str, message: impl Into<String>) -> Response {
    json_response(status, &json!({"error": error, "message": message.into()}))
}

fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// The router: public page, static files, sign-in and `/health`; everything else needs
/// the operator (token or console session).
pub fn router(plane: Plane) -> Router {
    let protected = Router::new()
        .route("/whoami", get(whoami))
        .route("/fleet", get(fleet_view))
        .route("/fleet/approve", post(approve))
        .route("/fleet/deny", post(deny))
        .route("/fleet/resume", post(resume))
        .route("/fleet/stop-all", post(stop_all))
        .route("/fleet/journals", get(journals))
        .route("/fleet/frame/{desk}", get(frame))
        .route_layer(from_fn_with_state(plane.clone(), require_operator));
    Router::new()
        .route(
            "/",
            get(|| async { asset(INDEX_HTML, "text/html; charset=utf-8") }),
        )
        .route(
            "/fleet/app.js",
            get(|| async { asset(APP_JS, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/console/style.css",
            get(|| async { asset(STYLE_CSS, "text/css; charset=utf-8") }),
        )
        .route("/console/login", post(login))
        .route("/console/logout", post(logout))
        .route(
            "/health",
            get(|| async { json_response(StatusCode::OK, &json!({"status": "ok"})) }),
        )
        .merge(protected)
        .layer(from_fn_with_state(plane.clone(), guard))
        .with_state(plane)
}

/// The Host/Origin guard of the desk's HTTP transport (DNS-rebinding protection).
async fn guard(State(p): State<Plane>, req: Request, next: Next) -> Response {
    match auth::check_host_origin(&p.hosts, req.headers()) {
        Ok(()) => next.run(req).await,
        Err(r) => refuse(r.status, r.reason, r.message),
    }
}

/// The operator alone: the fleet's operator token as a bearer token, or a console
/// session (both halves, and an `Origin` on anything that changes something).
async fn require_operator(State(p): State<Plane>, req: Request, next: Next) -> Response {
    let headers = req.headers();
    if let Some(t) = auth::bearer(headers) {
        if ct_eq(t.as_bytes(), p.token.as_bytes()) {
            return next.run(req).await;
        }
        return refuse(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "the bearer token is not the fleet's operator token",
        );
    }
    let Some(id) = p.logins.cookie_of(headers) else {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "missing Authorization: Bearer <operator token>, or sign in to the console",
        );
    };
    let key = headers
        .get(KEY_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !p.logins.check(id, key, Instant::now()) {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "the console session has ended or is not this tab's: sign in again",
        );
    }
    let safe = matches!(*req.method(), Method::GET | Method::HEAD);
    if !safe && !headers.contains_key(header::ORIGIN) {
        return refuse(
            StatusCode::FORBIDDEN,
            "bad_origin",
            "a console request that changes something must carry its page's Origin",
        );
    }
    next.run(req).await
}

/// `POST /console/login {"token"}`: as a desk's console, operator token only.
async fn login(State(p): State<Plane>, headers: HeaderMap, body: Bytes) -> Response {
    if !headers.contains_key(header::ORIGIN) {
        return refuse(
            StatusCode::FORBIDDEN,
            "bad_origin",
            "the console signs in and out from its own page (an Origin header is required)",
        );
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        token: String,
    }
    let Some(Body { token }) = (body.len() <= 4096)
        .then(|| serde_json::from_slice::<Body>(&body).ok())
        .flatten()
    else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "the body must be {\"token\": \"<operator token>\"}",
        );
    };
    if !ct_eq(token.trim().as_bytes(), p.token.as_bytes()) {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "that is not the fleet's operator token",
        );
    }
    let (id, key) = match p.logins.create(Instant::now()) {
        Ok(pair) => pair,
        Err(e) => return refuse(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()),
    };
    let mut r = json_response(
        StatusCode::OK,
        &json!({"role": "operator", "key": key,
            "idle_timeout_s": crate::transports::http::login::IDLE.as_secs(),
            "max_age_s": crate::transports::http::login::MAX_AGE.as_secs()}),
    );
    let cookie = format!(
        "{}={id}; Path=/; HttpOnly; SameSite=Strict",
        p.logins.cookie_name()
    );
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

/// `POST /console/logout`.
async fn logout(State(p): State<Plane>, headers: HeaderMap) -> Response {
    if !headers.contains_key(header::ORIGIN) {
        return refuse(
            StatusCode::FORBIDDEN,
            "bad_origin",
            "the console signs in and out from its own page (an Origin header is required)",
        );
    }
    if let Some(id) = p.logins.cookie_of(&headers) {
        p.logins.remove(id);
    }
    let mut r = json_response(StatusCode::OK, &json!({"status": "signed_out"}));
    let clear = format!(
        "{}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0",
        p.logins.cookie_name()
    );
    if let Ok(v) = HeaderValue::from_str(&clear) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

async fn whoami() -> Response {
    json_response(
        StatusCode::OK,
        &json!({"role": "operator", "plane": "fleet"}),
    )
}

/// `GET /fleet`: every desk's view.
async fn fleet_view(State(p): State<Plane>) -> Response {
    json_response(StatusCode::OK, &p.fleet.view())
}

/// A decision's body: `{desk, request_id}` for the engine's confirmation
/// (`session.confirm`), or `{desk, session_id, action_id, args_digest?, ttl_ms?,
/// reason?}` for a governed approval (the desk's `/approvals/approve|deny`).
async fn decide(p: Plane, body: Bytes, approve: bool) -> Response {
    let Ok(Value::Object(mut b)) = serde_json::from_slice::<Value>(&body) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "the body must be a JSON object naming the desk",
        );
    };
    let Some(Value::String(name)) = b.remove("desk") else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "`desk` is required",
        );
    };
    let Some(desk) = p.fleet.desk(&name) else {
        return refuse(
            StatusCode::NOT_FOUND,
            "unknown_desk",
            format!("no desk {name:?} in the fleet"),
        );
    };
    if let Some(id) = b.get("request_id").cloned() {
        return match desk
            .rpc(
                "session.confirm",
                json!({"request_id": id, "approve": approve}),
            )
            .await
        {
            Ok(r) => json_response(StatusCode::OK, &json!({"desk": name, "result": r})),
            Err(e) => desk_failed(&e),
        };
    }
    let path = if approve {
        "/approvals/approve"
    } else {
        "/approvals/deny"
    };
    match desk.post(path, &Value::Object(b)).await {
        Ok((status, body)) => {
            json_response(from_desk(status), &json!({"desk": name, "answer": body}))
        }
        Err(e) => desk_failed(&e),
    }
}

async fn approve(State(p): State<Plane>, body: Bytes) -> Response {
    decide(p, body, true).await
}

async fn deny(State(p): State<Plane>, body: Bytes) -> Response {
    decide(p, body, false).await
}

/// `POST /fleet/resume {desk}`: releases that desk's stop (`control.panic {on:false}`).
async fn resume(State(p): State<Plane>, body: Bytes) -> Response {
    let name = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.get("desk").and_then(Value::as_str).map(str::to_string));
    let Some(name) = name else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "the body must be {\"desk\": NAME}",
        );
    };
    let Some(desk) = p.fleet.desk(&name) else {
        return refuse(
            StatusCode::NOT_FOUND,
            "unknown_desk",
            format!("no desk {name:?} in the fleet"),
        );
    };
    match desk.rpc("control.panic", json!({"on": false})).await {
        Ok(r) => json_response(StatusCode::OK, &json!({"desk": name, "result": r})),
        Err(e) => desk_failed(&e),
    }
}

/// `POST /fleet/stop-all`.
async fn stop_all(State(p): State<Plane>) -> Response {
    let out = stop::stop_all(p.fleet.desks()).await;
    json_response(StatusCode::OK, &out)
}

/// `GET /fleet/journals`.
async fn journals(State(p): State<Plane>) -> Response {
    json_response(StatusCode::OK, &audit::gather(p.fleet.desks()).await)
}

/// `GET /fleet/frame/{desk}`: that desk's latest capture; 204 before any.
async fn frame(State(p): State<Plane>, Path(name): Path<String>) -> Response {
    let Some(desk) = p.fleet.desk(&name) else {
        return refuse(
            StatusCode::NOT_FOUND,
            "unknown_desk",
            format!("no desk {name:?} in the fleet"),
        );
    };
    match desk.frame().await {
        Ok(None) => StatusCode::NO_CONTENT.into_response(),
        Ok(Some((bytes, mime))) => {
            let mut r = bytes.into_response();
            if let Ok(v) = HeaderValue::from_str(&mime) {
                r.headers_mut().insert(header::CONTENT_TYPE, v);
            }
            r.headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            r
        }
        Err(e) => desk_failed(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The built-in rules keep agents off a console's window by this title: the fleet's
    /// page carries it too.
    #[test]
    fn the_page_title_is_the_one_the_rules_protect() {
        let title = INDEX_HTML
            .split_once("<title>")
            .and_then(|(_, rest)| rest.split_once("</title>"))
            .map(|(t, _)| t)
            .expect("a title");
        assert!(title.contains(cc_engine::CONSOLE_TITLE), "{title}");
    }

    #[test]
    fn a_desks_refusal_keeps_its_status() {
        let e = |kind, status| super::super::desk::DeskError {
            kind,
            status,
            message: "m".into(),
        };
        assert_eq!(desk_failed(&e("refused", Some(410))).status(), 410);
        assert_eq!(desk_failed(&e("refused", Some(401))).status(), 502);
        assert_eq!(desk_failed(&e("refused", Some(200))).status(), 409);
        assert_eq!(desk_failed(&e("unreachable", None)).status(), 502);
        assert_eq!(desk_failed(&e("bad_answer", Some(200))).status(), 502);
    }
}
