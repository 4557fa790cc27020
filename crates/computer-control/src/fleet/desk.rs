//! One desk's operator channel, as the plane calls it: the same routes and the same
//! operator token a person's browser would use on that desk (`/health`, `/rpc`,
//! `/approvals`, `/journal`, `/frame`, `/events`). The plane has no other way in.

use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderValue};
use serde_json::{Value, json};

/// How long one request to a desk may take before the desk counts as unreachable.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(3);

/// Why a call to a desk failed, as the console shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DeskError {
    /// `unreachable` (no answer), `refused` (an HTTP error status) or `bad_answer`.
    pub kind: &'static str,
    /// The HTTP status, when there was one.
    pub status: Option<u16>,
    pub message: String,
}

impl std::fmt::Display for DeskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.status {
            Some(s) => write!(f, "{} ({s}): {}", self.kind, self.message),
            None => write!(f, "{}: {}", self.kind, self.message),
        }
    }
}

fn unreachable(e: reqwest::Error) -> DeskError {
    DeskError {
        kind: "unreachable",
        status: None,
        message: e.to_string(),
    }
}

/// A client for one desk.
#[derive(Clone)]
pub struct Desk {
    http: reqwest::Client,
    base: String,
    auth: HeaderValue,
}

impl Desk {
    /// A client of `base` presenting `token` (the operator token) as a bearer token.
    pub fn new(http: reqwest::Client, base: &str, token: &str) -> anyhow::Result<Desk> {
        let mut auth = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| anyhow::anyhow!("the operator token is not a valid header value"))?;
        auth.set_sensitive(true);
        Ok(Desk {
            http,
            base: base.to_string(),
            auth,
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    async fn send(&self, req: reqwest::RequestBuilder) -> Result<(u16, Value), DeskError> {
        let res = req
            .header(AUTHORIZATION, self.auth.clone())
            .timeout(REQUEST_TIMEOUT)
            .send()
            .await
            .map_err(unreachable)?;
        let status = res.status().as_u16();
        let bytes = res.bytes().await.map_err(unreachable)?;
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).map_err(|e| DeskError {
                kind: "bad_answer",
                status: Some(status),
                message: format!("not JSON: {e}"),
            })?
        };
        Ok((status, body))
    }

    fn ok(status: u16, body: Value) -> Result<Value, DeskError> {
        if (200..300).contains(&status) {
            return Ok(body);
        }
        let message = body
            .get("message")
            .or_else(|| body.pointer("/error/message"))
            .and_then(Value::as_str)
            .unwrap_or("no message")
            .to_string();
        Err(DeskError {
            kind: "refused",
            status: Some(status),
            message,
        })
    }

    /// `GET /health`: `(ready, body)`; a 503 is an answer (not ready), not a failure.
    pub async fn health(&self) -> Result<(bool, Value), DeskError> {
        let (status, body) = self.send(self.http.get(self.url("/health"))).await?;
        match status {
            200 => Ok((true, body)),
            503 => Ok((false, body)),
            _ => Self::ok(status, body).map(|b| (false, b)),
        }
    }

    /// `POST /rpc` with one request: the envelope's `result`, or the envelope's or the
    /// HTTP refusal as an error.
    pub async fn rpc(&self, method: &str, params: Value) -> Result<Value, DeskError> {
        let msg = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let (status, body) = self
            .send(self.http.post(self.url("/rpc")).json_body(&msg))
            .await?;
        let body = Self::ok(status, body)?;
        let envelope = body.get("result").cloned().unwrap_or(Value::Null);
        if envelope.get("ok") == Some(&Value::Bool(true)) {
            return Ok(envelope.get("result").cloned().unwrap_or(Value::Null));
        }
        Err(DeskError {
            kind: "refused",
            status: Some(status),
            message: envelope
                .pointer("/error/message")
                .or_else(|| body.pointer("/error/message"))
                .and_then(Value::as_str)
                .unwrap_or("the desk refused the call")
                .to_string(),
        })
    }

    /// `GET` of a JSON route.
    pub async fn get(&self, path: &str) -> Result<Value, DeskError> {
        let (status, body) = self.send(self.http.get(self.url(path))).await?;
        Self::ok(status, body)
    }

    /// `POST` of a JSON route, answering the status with the body (the console shows
    /// a desk's refusal, e.g. 410 for an expired approval, as the desk worded it).
    pub async fn post(&self, path: &str, body: &Value) -> Result<(u16, Value), DeskError> {
        self.send(self.http.post(self.url(path)).json_body(body))
            .await
    }

    /// `GET /frame`: the latest capture's bytes, its content type and its frame number;
    /// `None` before any capture.
    pub async fn frame(&self) -> Result<Option<(Vec<u8>, String)>, DeskError> {
        let res = self
            .http
            .get(self.url("/frame"))
            .header(AUTHORIZATION, self.auth.clone())
            .timeout(REQUEST_TIMEOUT)
            .send()
            .await
            .map_err(unreachable)?;
        let status = res.status().as_u16();
        if status == 204 {
            return Ok(None);
        }
        if status != 200 {
            return Err(DeskError {
                kind: "refused",
                status: Some(status),
                message: "the desk refused its frame".into(),
            });
        }
        let mime = res
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("application/octet-stream")
            .to_string();
        let bytes = res.bytes().await.map_err(unreachable)?;
        Ok(Some((bytes.to_vec(), mime)))
    }

    /// `GET /events`, opened: the caller reads it chunk by chunk.
    pub async fn events(&self) -> Result<reqwest::Response, DeskError> {
        let res = self
            .http
            .get(self.url("/events"))
            .header(AUTHORIZATION, self.auth.clone())
            .send()
            .await
            .map_err(unreachable)?;
        if res.status().is_success() {
            Ok(res)
        } else {
            Err(DeskError {
                kind: "refused",
                status: Some(res.status().as_u16()),
                message: "the desk refused its event stream".into(),
            })
        }
    }
}

/// A JSON body without reqwest's `json` feature.
trait JsonBody {
    fn json_body(self, v: &Value) -> Self;
}

impl JsonBody for reqwest::RequestBuilder {
    fn json_body(self, v: &Value) -> Self {
        self.header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(v.to_string())
    }
}
