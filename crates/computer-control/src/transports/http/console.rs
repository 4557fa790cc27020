//! The operator console (PROTOCOL §8): static files compiled into the binary, and
//! `GET /frame`, the image of the latest capture.
//!
//! The page, its script and its style are public: they hold no data and no secret, and
//! a browser cannot attach a bearer token to a page load. Everything the page shows comes
//! from token-protected requests. The Content-Security-Policy allows nothing but this
//! origin, so the page cannot load (or leak to) anything on the network.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::AppState;

const INDEX_HTML: &str = include_str!("../../../console/index.html");
const APP_JS: &str = include_str!("../../../console/app.js");
const STYLE_CSS: &str = include_str!("../../../console/style.css");

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
frame-ancestors 'none'";

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

/// `GET /`.
pub async fn index() -> Response {
    asset(INDEX_HTML, "text/html; charset=utf-8")
}

/// `GET /console/app.js`.
pub async fn app_js() -> Response {
    asset(APP_JS, "text/javascript; charset=utf-8")
}

/// `GET /console/style.css`.
pub async fn style_css() -> Response {
    asset(STYLE_CSS, "text/css; charset=utf-8")
}

/// `GET /frame`: the latest `screen.capture` image, as the agent received it; `204`
/// before any capture, `304` when `If-None-Match` already names it. Headers say which
/// frame it is and what part of the canvas it shows, so the console can mark where a
/// pending pointer action would land.
pub async fn frame(State(st): State<AppState>, headers: HeaderMap) -> Response {
    let Some(shot) = st.engine.latest_frame() else {
        return StatusCode::NO_CONTENT.into_response();
    };
    let etag = format!("\"frame-{}\"", shot.frame);
    let unchanged = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let mut r = if unchanged {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        axum::body::Bytes::from_owner(shot.bytes.clone()).into_response()
    };
    let h = r.headers_mut();
    let region = shot.region;
    let pairs = [
        (header::CONTENT_TYPE.as_str(), shot.mime.to_string()),
        (header::ETAG.as_str(), etag),
        (header::CACHE_CONTROL.as_str(), "no-store".to_string()),
        ("x-frame", shot.frame.to_string()),
        ("x-frame-size", format!("{}x{}", shot.width, shot.height)),
        (
            "x-frame-region",
            format!(
                "{},{},{},{}",
                region.x, region.y, region.width, region.height
            ),
        ),
    ];
    for (k, v) in pairs {
        if let Ok(v) = HeaderValue::from_str(&v) {
            h.insert(k, v);
        }
    }
    r
}

#[cfg(test)]
mod title_tests {
    use super::INDEX_HTML;

    /// The built-in rules recognise a console's window by this title.
    #[test]
    fn the_page_title_is_the_one_the_rules_protect() {
        let title = format!("<title>{}</title>", cc_engine::CONSOLE_TITLE);
        assert!(INDEX_HTML.contains(&title), "{title}");
    }
}
