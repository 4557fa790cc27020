//! The HTTP transport (PROTOCOL §1, §6, §8): `POST /rpc` (JSON-RPC, the same semantics
//! as stdio), `GET /events` (SSE), `GET /health`, `GET /frame` (the latest capture) and
//! the operator console at `GET /`; with a governed kernel, MCP over Streamable HTTP at
//! `/mcp` (the only route but `/health` under `--transport mcp-http`).
//!
//! Layers, outermost first: the Host/Origin guard on every route (DNS-rebinding
//! protection), then the bearer-token check on every route but `/health` and the
//! console's static files (they carry no data; the page asks for a token before it
//! fetches anything). Like every transport this maps the wire onto [`Engine`] calls and
//! holds no policy; the one decision it makes is *who* may call an operator method.

mod approvals;
mod auth;
mod console;
mod health;
mod identity;
mod roles;
mod rpc;
mod sse;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::from_fn_with_state;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;

use cc_engine::Engine;

pub use auth::Tokens;
pub use identity::Identity;
pub use roles::Role;

use super::mcp::{Kernels, McpServer, streamable};

/// Where to listen.
#[derive(Clone)]
pub struct Options {
    /// `--host` (default `127.0.0.1`).
    pub host: String,
    /// `--port` (0 picks a free port; the chosen one is printed).
    pub port: u16,
    /// MCP at `/mcp`: beside the other routes, or alone.
    pub mcp: Mcp,
    /// The process's governed kernels (the same ones `/mcp` uses): the operator's
    /// approvals act on them.
    pub kernels: Arc<Kernels>,
}

/// MCP at `/mcp`, behind the same Host/Origin guard and bearer tokens as `/rpc`.
#[derive(Clone)]
pub enum Mcp {
    /// `/mcp` beside `/rpc`, `/events` and the console (`--transport http`).
    Mounted(McpServer),
    /// `/mcp` and `/health` only (`--transport mcp-http`).
    Only(McpServer),
}

impl std::fmt::Debug for Mcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mcp::Mounted(_) => "Mounted",
            Mcp::Only(_) => "Only",
        })
    }
}

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    engine: Engine,
    tokens: Arc<Tokens>,
    hosts: Arc<auth::Authorities>,
    sse: Arc<sse::Hub>,
    kernels: Arc<Kernels>,
}

/// A JSON body with a status; every HTTP-level refusal uses this.
fn json_response(status: StatusCode, body: &Value) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_else(|_| b"{}".to_vec());
    let mut r = (status, bytes).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// The application: every route with its guards.
fn router(state: AppState, mcp: &Mcp) -> Router {
    let mut protected = Router::new();
    let mut public = Router::new().route("/health", get(health::health));
    if !matches!(mcp, Mcp::Only(_)) {
        protected = protected
            .route("/rpc", post(rpc::rpc))
            .route("/events", get(sse::events))
            .route("/frame", get(console::frame))
            .route("/whoami", get(health::whoami))
            .route("/approvals", get(approvals::list))
            .route("/approvals/approve", post(approvals::approve))
            .route("/approvals/deny", post(approvals::deny));
        public = public
            .route("/", get(console::index))
            .route("/console/app.js", get(console::app_js))
            .route("/console/style.css", get(console::style_css));
    }
    let (Mcp::Mounted(server) | Mcp::Only(server)) = mcp;
    protected = protected.route_service("/mcp", streamable::service(server.clone()));
    let protected = protected.route_layer(from_fn_with_state(state.clone(), auth::require_token));
    protected
        .merge(public)
        // The /rpc extractor turns an oversized body into a 413 JSON-RPC error.
        .layer(DefaultBodyLimit::max(rpc::MAX_BODY))
        .layer(from_fn_with_state(state.clone(), auth::guard))
        .with_state(state)
}

/// Serves until SIGINT or SIGTERM; then ends the session (releasing anything held) and
/// removes the token file it wrote.
pub fn serve(engine: Engine, opts: Options) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("cc-http")
        .build()
        .context("cannot start the async runtime")?;
    let r = rt.block_on(run(engine, opts));
    // Requests still blocked in the engine (a long wait.pause) must not hold the exit.
    rt.shutdown_timeout(Duration::from_secs(1));
    r
}

async fn run(engine: Engine, opts: Options) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind((opts.host.as_str(), opts.port))
        .await
        .with_context(|| format!("cannot listen on {}:{}", opts.host, opts.port))?;
    let addr: SocketAddr = listener.local_addr().context("local address")?;
    let base = format!("http://{}", auth::authority(&opts.host, addr.port()));
    let http = &engine.base_config().config().http;
    let tokens = Tokens::resolve(&http.token, &http.operator_token, &http.agents, &base)?;
    let state = AppState {
        engine: engine.clone(),
        tokens: Arc::new(tokens),
        hosts: Arc::new(auth::Authorities::new(&opts.host, addr.port())),
        sse: sse::Hub::start(&engine).context("cannot start the event fan-out")?,
        kernels: opts.kernels.clone(),
    };
    // Plain stderr lines (not logs): a harness parses them whatever the log level. The
    // "listening" line comes last: once it is out, everything above is true.
    if let Some(path) = state.tokens.file() {
        eprintln!(
            "computer-control: generated tokens written to {} (mode 0600)",
            path.display()
        );
    }
    if !matches!(opts.mcp, Mcp::Only(_)) {
        eprintln!("computer-control: operator console at {base}/ (add #token=<operator token>)");
    }
    eprintln!("computer-control: mcp endpoint at {base}/mcp");
    eprintln!("computer-control: http listening on {base}");
    let app = router(state.clone(), &opts.mcp);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let server = axum::serve(listener, app).with_graceful_shutdown(async move {
        shutdown_signal().await;
        let _ = stop_tx.send(true);
    });
    let server = tokio::spawn(async move { server.await });
    // SSE streams never end by themselves: after the signal, give requests in flight a
    // moment, then stop waiting for them.
    let mut stop_rx = stop_rx;
    tokio::select! {
        r = server => match r {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::error!("http server failed: {e}"),
            Err(e) => tracing::error!("http server task failed: {e}"),
        },
        _ = async {
            let _ = stop_rx.wait_for(|s| *s).await;
            tokio::time::sleep(Duration::from_secs(2)).await;
        } => {}
    }
    let stop = tokio::task::spawn_blocking(move || engine.stop()).await;
    if let Ok(env) = stop
        && !env.ok
    {
        tracing::warn!("session.stop at shutdown failed: {:?}", env.error);
    }
    state.tokens.remove_file();
    Ok(())
}

/// SIGINT or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
    eprintln!("computer-control: shutting down");
}
