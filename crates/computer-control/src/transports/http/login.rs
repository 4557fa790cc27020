//! The console's sign-in (PROTOCOL §8): the operator token is posted once to
//! `POST /console/login` and never travels again, so no URL, history entry, autocomplete
//! suggestion or clipboard holds anything that approves.
//!
//! A sign-in is two halves, both needed on every request:
//!
//! * an `HttpOnly; SameSite=Strict` session cookie (`cc_console_<port>`, no `Max-Age`:
//!   the browser keeps it in memory only), which page scripts cannot read and no other
//!   site can make the browser send;
//! * a per-tab key returned in the login answer, which the page keeps in its tab's
//!   `sessionStorage` and sends as the `X-Console-Key` header.
//!
//! The cookie alone grants nothing: browsers send a host's cookies to every port of that
//! host (so a server an agent starts on `127.0.0.1:9999` would receive it) and to every
//! window of the browser (so a new window on this origin, or its developer tools,
//! would carry it). The key alone grants nothing either. Sessions expire after
//! [`IDLE`] without a request and [`MAX_AGE`] after sign-in; at most [`MAX_LOGINS`]
//! exist (the oldest goes first). A console session is always the operator and is
//! never accepted at `/mcp`, the agent's endpoint.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::json;

use super::{AppState, Role, json_response};

/// The header carrying the per-tab half of a sign-in.
pub const KEY_HEADER: &str = "x-console-key";

/// A session unused this long ends: the console polls every second while open.
pub const IDLE: Duration = Duration::from_secs(30 * 60);

/// A session ends this long after sign-in, used or not.
pub const MAX_AGE: Duration = Duration::from_secs(12 * 3600);

/// Open sign-ins kept at once; a new one past this ends the oldest.
pub const MAX_LOGINS: usize = 32;

/// The largest login body read (a token is 64 characters; the rest is JSON).
const MAX_BODY: usize = 4096;

struct Login {
    id: String,
    key: String,
    created: Instant,
    last: Instant,
}

/// The open console sign-ins of one listener.
pub struct Logins {
    cookie: String,
    open: Mutex<Vec<Login>>,
}

impl Logins {
    /// Sign-ins for the listener on `port`: the cookie's name carries the port, since
    /// cookies are shared by every port of a host and two listeners (the HTTP server and
    /// an operator channel) must not overwrite each other's.
    pub fn new(port: u16) -> Logins {
        Logins {
            cookie: format!("cc_console_{port}"),
            open: Mutex::new(Vec::new()),
        }
    }

    /// The cookie's name.
    pub fn cookie_name(&self) -> &str {
        &self.cookie
    }

    /// A new sign-in: `(session id, per-tab key)`.
    pub fn create(&self, now: Instant) -> anyhow::Result<(String, String)> {
        let (id, key) = (super::secret::generate()?, super::secret::generate()?);
        let mut open = self.lock();
        open.retain(|l| alive(l, now));
        if open.len() >= MAX_LOGINS {
            open.remove(0);
        }
        open.push(Login {
            id: id.clone(),
            key: key.clone(),
            created: now,
            last: now,
        });
        Ok((id, key))
    }

    /// True when `id` and `key` are one live sign-in (which then counts as used). Every
    /// open sign-in is compared, so the time says nothing about which was close.
    pub fn check(&self, id: &str, key: &str, now: Instant) -> bool {
        let mut open = self.lock();
        open.retain(|l| alive(l, now));
        let mut found = None;
        for (i, l) in open.iter().enumerate() {
            let hit = super::secret::ct_eq(id.as_bytes(), l.id.as_bytes())
                & super::secret::ct_eq(key.as_bytes(), l.key.as_bytes());
            if hit {
                found = Some(i);
            }
        }
        match found {
            Some(i) => {
                open[i].last = now;
                true
            }
            None => false,
        }
    }

    /// Ends the sign-in whose session id is `id`.
    pub fn remove(&self, id: &str) {
        self.lock()
            .retain(|l| !super::secret::ct_eq(id.as_bytes(), l.id.as_bytes()));
    }

    /// This listener's session cookie in a request, if any.
    pub fn cookie_of<'a>(&self, headers: &'a HeaderMap) -> Option<&'a str> {
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(name, _)| *name == self.cookie)
            .map(|(_, value)| value.trim())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Login>> {
        // A panic while holding the list leaves it consistent (every change is one
        // Vec operation), so a poisoned lock is still usable.
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn alive(l: &Login, now: Instant) -> bool {
    now.saturating_duration_since(l.last) < IDLE
        && now.saturating_duration_since(l.created) < MAX_AGE
}

fn refuse(status: StatusCode, error: &str, message: &str) -> Response {
    json_response(status, &json!({"error": error, "message": message}))
}

/// The guard already refused a foreign `Origin`; a sign-in or sign-out also needs one
/// present, as every browser sends with a `fetch` POST: a request without it is not the
/// console's.
fn needs_origin(headers: &HeaderMap) -> Option<Response> {
    (!headers.contains_key(header::ORIGIN)).then(|| {
        refuse(
            StatusCode::FORBIDDEN,
            "bad_origin",
            "the console signs in and out from its own page (an Origin header is required)",
        )
    })
}

/// `POST /console/login {"token": "<operator token>"}` → `200 {role, key,
/// idle_timeout_s, max_age_s}` and the session cookie. 401 for a wrong token, 403 for
/// an agent token or when no operator token was handed in, 400 for a malformed body.
pub async fn login(State(st): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    if let Some(r) = needs_origin(&headers) {
        return r;
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        token: String,
    }
    let parsed = (body.len() <= MAX_BODY)
        .then(|| serde_json::from_slice::<Body>(&body).ok())
        .flatten();
    let Some(Body { token }) = parsed else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "the body must be {\"token\": \"<operator token>\"}",
        );
    };
    if !st.tokens.has_operator() {
        return refuse(
            StatusCode::FORBIDDEN,
            "no_operator_token",
            "this server was started without an operator token, so nobody can sign in: \
             hand one in at start (--operator-token-file or http.operator_token; see \
             docs/SECURITY.md)",
        );
    }
    match st.tokens.identify(token.trim()).map(|i| i.role) {
        Some(Role::Operator) => {}
        Some(Role::Agent) => {
            return refuse(
                StatusCode::FORBIDDEN,
                "forbidden",
                "the console signs in with the operator token only",
            );
        }
        None => {
            return refuse(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "that is not the operator token",
            );
        }
    }
    let (id, key) = match st.logins.create(Instant::now()) {
        Ok(pair) => pair,
        Err(e) => {
            return refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                &e.to_string(),
            );
        }
    };
    let mut r = json_response(
        StatusCode::OK,
        &json!({
            "role": Role::Operator.as_str(),
            "key": key,
            "idle_timeout_s": IDLE.as_secs(),
            "max_age_s": MAX_AGE.as_secs(),
        }),
    );
    let cookie = format!(
        "{}={id}; Path=/; HttpOnly; SameSite=Strict",
        st.logins.cookie_name()
    );
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// `POST /console/logout` → `204`: ends the sign-in named by the cookie (if any) and
/// clears the cookie.
pub async fn logout(State(st): State<AppState>, headers: HeaderMap) -> Response {
    if let Some(r) = needs_origin(&headers) {
        return r;
    }
    if let Some(id) = st.logins.cookie_of(&headers) {
        st.logins.remove(id);
    }
    let mut r = json_response(StatusCode::OK, &json!({"status": "signed_out"}));
    let clear = format!(
        "{}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0",
        st.logins.cookie_name()
    );
    if let Ok(v) = HeaderValue::from_str(&clear) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_halves_are_needed_and_sessions_expire() {
        let logins = Logins::new(8765);
        let t0 = Instant::now();
        let (id, key) = logins.create(t0).unwrap();
        assert_eq!((id.len(), key.len()), (64, 64));
        assert!(logins.check(&id, &key, t0));
        assert!(!logins.check(&id, "", t0), "the cookie alone");
        assert!(!logins.check("", &key, t0), "the key alone");
        assert!(!logins.check(&key, &id, t0), "swapped");
        // Used within the idle time: still open; then idle too long: gone for good.
        let t1 = t0 + IDLE - Duration::from_secs(1);
        assert!(logins.check(&id, &key, t1));
        assert!(!logins.check(&id, &key, t1 + IDLE));
        assert!(
            !logins.check(&id, &key, t1),
            "an expired sign-in never comes back"
        );
        // Kept busy, a sign-in still ends at its maximum age.
        let (id, key) = logins.create(t0).unwrap();
        let mut t = t0;
        while t < t0 + MAX_AGE - IDLE {
            t += IDLE / 2;
            assert!(logins.check(&id, &key, t));
        }
        assert!(!logins.check(&id, &key, t0 + MAX_AGE));
    }

    #[test]
    fn logout_ends_a_sign_in_and_the_oldest_goes_first() {
        let logins = Logins::new(1);
        let now = Instant::now();
        let (id, key) = logins.create(now).unwrap();
        logins.remove(&id);
        assert!(!logins.check(&id, &key, now));
        let first = logins.create(now).unwrap();
        for _ in 1..MAX_LOGINS {
            logins.create(now).unwrap();
        }
        assert!(logins.check(&first.0, &first.1, now));
        let last = logins.create(now).unwrap();
        assert!(
            !logins.check(&first.0, &first.1, now),
            "the oldest was ended"
        );
        assert!(logins.check(&last.0, &last.1, now));
    }

    #[test]
    fn the_cookie_is_found_by_its_listener_name_only() {
        let logins = Logins::new(8765);
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("cc_console_9999=other; cc_console_8765=mine ; x=y"),
        );
        assert_eq!(logins.cookie_of(&h), Some("mine"));
        assert_eq!(Logins::new(1).cookie_of(&h), None);
        assert_eq!(logins.cookie_of(&HeaderMap::new()), None);
    }
}
