//! The HTTP transport (PROTOCOL §1, §6, §8): `POST /rpc` (JSON-RPC, the same semantics
//! as stdio), `GET /events` (SSE), `GET /health`, `GET /frame` (the latest capture) and
//! the operator console at `GET /`; with a governed kernel, MCP over Streamable HTTP at
//! `/mcp` (the only route but `/health` under `--transport mcp-http`). Beside MCP, the
//! operator side alone can also be served on a listener of its own
//! (`--operator-listen`, [`operator`]), operator token only.
//!
//! Layers, outermost first: the Host/Origin guard on every route (DNS-rebinding
//! protection), then the credential check on every route but `/health`, the console's
//! static files and its sign-in (they carry no data; the page signs in before it
//! fetches anything): a bearer token, or a console session ([`login`]) everywhere but
//! `/mcp`. Like every transport this maps the wire onto [`Engine`] calls and
//! holds no policy; the one decision it makes is *who* may call an operator method.

mod accept;
mod approvals;
pub mod auth;
mod console;
mod health;
mod journal;
pub mod limits;
pub mod login;
pub mod operator;
mod readiness;
mod roles;
pub mod routes;
mod rpc;
pub(crate) mod secret;
pub mod sse;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::from_fn_with_state;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use serde_json::Value;

use cc_engine::Engine;

pub use crate::transports::identity::{Identity, Role};
pub use auth::Tokens;
use routes::Listener;

use cc_governance::Kernels;

use super::mcp::{McpServer, streamable};

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
    /// `--operator-listen` beside `--transport mcp-http`: the operator side on a
    /// listener of its own, bound before anything is served.
    pub operator: Option<operator::Listen>,
    /// `--allow-host`: more names the `Host` header may carry, on every listener.
    pub allow_hosts: Vec<String>,
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
    /// The console sign-ins of this listener.
    logins: Arc<login::Logins>,
    sse: Arc<sse::Hub>,
    kernels: Arc<Kernels>,
    /// Connections and event streams per caller, shared by every listener.
    limits: Arc<limits::Limits>,
}

/// A JSON body with a status; every HTTP-level refusal uses this.
fn json_response(status: StatusCode, body: &Value) -> Response {
    bytes_response(
        status,
        serde_json::to_vec(body).unwrap_or_else(|_| b"{}".to_vec()),
    )
}

/// A JSON body already written.
fn bytes_response(status: StatusCode, bytes: Vec<u8>) -> Response {
    let mut r = (status, bytes).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// Which routes a listener serves.
enum Routes<'a> {
    /// `--transport http`: everything, `/mcp` included.
    All(&'a McpServer),
    /// `--transport mcp-http`: `/mcp` and `/health`.
    McpOnly(&'a McpServer),
    /// `--operator-listen`: the operator side (console, `/rpc`, `/events`, `/frame`,
    /// `/whoami`, `/approvals`, `/health`), never `/mcp`, operator token only.
    Operator,
}

/// The handler of a table route; `None` for `/mcp`, a service mounted apart.
fn handler(path: &str) -> Option<MethodRouter<AppState>> {
    Some(match path {
        "/health" => get(health::health),
        "/" => get(console::index),
        "/console/app.js" => get(console::app_js),
        "/console/style.css" => get(console::style_css),
        "/console/login" => post(login::login),
        "/console/logout" => post(login::logout),
        "/rpc" => post(rpc::rpc),
        "/events" => get(sse::events),
        "/frame" => get(console::frame),
        "/whoami" => get(health::whoami),
        "/approvals" => get(approvals::list),
        "/approvals/approve" => post(approvals::approve),
        "/approvals/deny" => post(approvals::deny),
        "/journal" => get(journal::journal),
        _ => return None,
    })
}

/// The application: every route of [`routes::ROUTES`] this listener serves, with its
/// guards.
fn router(state: AppState, routes: &Routes) -> Router {
    let listener = match routes {
        Routes::All(_) => Listener::Http,
        Routes::McpOnly(_) => Listener::McpHttp,
        Routes::Operator => Listener::Operator,
    };
    let mut protected = Router::new();
    let mut bearer_only = Router::new();
    let mut public = Router::new();
    for r in routes::ROUTES.iter().filter(|r| r.on.contains(&listener)) {
        if let Some(h) = handler(r.path) {
            if r.public {
                public = public.route(r.path, h);
            } else {
                protected = protected.route(r.path, h);
            }
        } else if let (true, Routes::All(server) | Routes::McpOnly(server)) =
            (r.path == "/mcp", routes)
        {
            bearer_only = bearer_only.route_service(r.path, streamable::service((*server).clone()));
        }
    }
    // Layers added later run first: the token check, then (on the operator channel)
    // the operator-only check, then the connection's principal bound. axum refuses a
    // route layer on a router without routes (`mcp-http` has no session-admitting
    // route, `--operator-listen` no `/mcp`).
    if protected.has_routes() {
        protected = protected.route_layer(axum::middleware::from_fn(limits::admit));
        if matches!(routes, Routes::Operator) {
            protected = protected.route_layer(axum::middleware::from_fn(auth::require_operator));
        }
        protected = protected.route_layer(from_fn_with_state(state.clone(), auth::require_token));
    }
    if bearer_only.has_routes() {
        bearer_only = bearer_only
            .route_layer(axum::middleware::from_fn(limits::admit))
            .route_layer(from_fn_with_state(state.clone(), auth::require_bearer));
    }
    protected
        .merge(bearer_only)
        .merge(public)
        // The /rpc extractor turns an oversized body into a 413 JSON-RPC error.
        .layer(DefaultBodyLimit::max(crate::transports::MAX_MESSAGE))
        .layer(from_fn_with_state(state.clone(), auth::guard))
        .with_state(state)
}

/// Binds `host:port`; `what` names the flag in the error (`""` for `--host/--port`).
async fn bind(host: &str, port: u16, what: &str) -> anyhow::Result<(tokio::net::TcpListener, u16)> {
    let listener = tokio::net::TcpListener::bind((host, port))
        .await
        .with_context(|| format!("cannot listen on {what}{}", auth::authority(host, port)))?;
    let addr: SocketAddr = listener.local_addr().context("local address")?;
    Ok((listener, addr.port()))
}

/// Serves every listener until `until` completes (a signal, or the end of the MCP
/// stdio stream beside the operator channel) or one server fails, then stops them
/// all. SSE streams never end by themselves: after the stop, requests in flight get
/// a moment, then they are no longer waited for. Returns `until`'s result.
async fn serve_until(
    apps: Vec<(tokio::net::TcpListener, Router)>,
    limits: &Arc<limits::Limits>,
    until: impl std::future::Future<Output = anyhow::Result<()>>,
) -> anyhow::Result<()> {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut servers = tokio::task::JoinSet::new();
    for (listener, app) in apps {
        servers.spawn(accept::serve(
            listener,
            app,
            limits.clone(),
            stop_rx.clone(),
        ));
    }
    let result = tokio::select! {
        r = until => r,
        Some(r) = servers.join_next() => {
            match r {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::error!("http server failed: {e}"),
                Err(e) => tracing::error!("http server task failed: {e}"),
            }
            Ok(())
        }
    };
    let _ = stop_tx.send(true);
    let drained = async { while servers.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(Duration::from_secs(2), drained).await;
    servers.abort_all();
    result
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
    let (listener, port) = bind(&opts.host, opts.port, "").await?;
    let base = format!("http://{}", auth::authority(&opts.host, port));
    let channel = match &opts.operator {
        Some(listen) => Some(operator::Channel::bind(listen, &opts.allow_hosts).await?),
        None => None,
    };
    let console = match (&channel, &opts.mcp) {
        (Some(channel), _) => Some(channel.base().to_string()),
        (None, Mcp::Mounted(_)) => Some(base.clone()),
        (None, Mcp::Only(_)) => None,
    };
    // An approval announced to an MCP client links to the console's page for it.
    if let (Some(console), Mcp::Mounted(server) | Mcp::Only(server)) = (&console, &opts.mcp) {
        server.set_console(console);
    }
    let http = &engine.base_config().config().http;
    let urls = auth::Urls { agent: Some(&base) };
    if channel.is_some() {
        operator::require_operator_token(&http.operator_token)?;
    }
    let tokens = Tokens::resolve(&http.token, &http.operator_token, &http.agents, &urls)?;
    let state = AppState {
        engine: engine.clone(),
        tokens: Arc::new(tokens),
        hosts: Arc::new(auth::Authorities::new(&opts.host, port).allowing(&opts.allow_hosts)),
        logins: Arc::new(login::Logins::new(port)),
        sse: sse::Hub::start(&engine).context("cannot start the event fan-out")?,
        kernels: opts.kernels.clone(),
        limits: limits::Limits::new(limits::Bounds::from_config(http)),
    };
    // Plain stderr lines (not logs): a harness parses them whatever the log level. The
    // "listening" line comes last: once it is out, everything above is true.
    if let Some(path) = state.tokens.file() {
        eprintln!(
            "computer-control: generated agent token written to {} ({})",
            path.display(),
            // What keeps other users out: the file's mode, or on Windows the ACL of
            // the profile directory it is in.
            if cfg!(windows) {
                "in this user's profile"
            } else {
                "mode 0600"
            }
        );
    }
    if console.is_some() && !state.tokens.has_operator() {
        eprintln!("computer-control: {}", operator::NO_OPERATOR);
    }
    let routes = match &opts.mcp {
        Mcp::Mounted(server) => Routes::All(server),
        Mcp::Only(server) => Routes::McpOnly(server),
    };
    let mut apps = vec![(listener, router(state.clone(), &routes))];
    match channel {
        Some(channel) => {
            channel.announce();
            apps.push(channel.into_app(&state));
        }
        None if console.is_some() => {
            eprintln!(
                "computer-control: operator console at {base}/ (sign in with the operator token)"
            );
        }
        None => {}
    }
    eprintln!("computer-control: mcp endpoint at {base}/mcp");
    eprintln!("computer-control: http listening on {base}");
    let result = serve_until(apps, &state.limits, async {
        shutdown_signal().await;
        Ok(())
    })
    .await;
    let stop = tokio::task::spawn_blocking(move || engine.stop()).await;
    if let Ok(env) = stop
        && !env.ok
    {
        tracing::warn!("session.stop at shutdown failed: {:?}", env.error);
    }
    state.tokens.remove_file();
    result
}

/// SIGINT or SIGTERM.
pub(crate) async fn shutdown_signal() {
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
