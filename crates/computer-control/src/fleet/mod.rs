//! `computer-control fleet`: one operator plane over many desks. It finds the desks (a
//! list of operator-channel URLs, or the headless Service's DNS name), talks to each only
//! over that desk's operator channel with the operator token (the same routes a person's
//! browser uses there: no new privileged path), and serves one console: every desk's
//! health, state, pending approvals, recent actions and latest capture; approve or deny
//! any desk's action; one stop-all that pre-empts the action in flight on every desk at
//! once; every journal gathered and its hash chains verified here (docs/FLEET.md).

pub mod audit;
pub mod desk;
pub mod discovery;
pub mod server;
pub mod stop;
pub mod watch;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use crate::transports::http::auth::{self, Authorities};
use crate::transports::http::login::Logins;

/// The options of `computer-control fleet`.
#[derive(Debug, clap::Args)]
pub struct FleetArgs {
    /// A desk's operator channel, `http://HOST:PORT` (repeat for each desk).
    #[arg(long = "desk", value_parser = discovery::parse_url)]
    pub desks: Vec<String>,
    /// The headless Service's DNS name and the operator port, `NAME:PORT`: every
    /// address it resolves to is a desk, resolved again at every refresh.
    #[arg(long = "discover")]
    pub discover: Vec<discovery::Source>,
    /// The desks' operator token (a file or a descriptor such as /dev/fd/3); it is
    /// also the only token the plane's console signs in with.
    #[arg(long)]
    pub operator_token_file: PathBuf,
    /// The plane's bind address.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// The plane's port (0 picks a free one; the chosen one is printed).
    #[arg(long, default_value_t = 8770)]
    pub port: u16,
    /// More names the `Host` header may carry (the plane's Service name).
    #[arg(long = "allow-host", value_parser = auth::allowed_host)]
    pub allow_hosts: Vec<String>,
    /// How often every desk is asked for its state, in milliseconds.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(100..=60_000))]
    pub refresh_ms: u64,
}

/// Runs the plane until SIGINT or SIGTERM.
pub fn run(a: FleetArgs) -> anyhow::Result<()> {
    if a.desks.is_empty() && a.discover.is_empty() {
        anyhow::bail!(
            "name the desks: --desk http://HOST:PORT (repeatable) or --discover NAME:PORT"
        );
    }
    let text = std::fs::read_to_string(&a.operator_token_file).with_context(|| {
        format!(
            "--operator-token-file {}: cannot read it",
            a.operator_token_file.display()
        )
    })?;
    let token = text.trim().to_string();
    if token.is_empty() {
        anyhow::bail!(
            "--operator-token-file {}: the file is empty",
            a.operator_token_file.display()
        );
    }
    let mut sources: Vec<discovery::Source> = a
        .desks
        .iter()
        .cloned()
        .map(discovery::Source::Url)
        .collect();
    sources.extend(a.discover.iter().cloned());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    rt.block_on(serve(a, sources, token))
}

async fn serve(a: FleetArgs, sources: Vec<discovery::Source>, token: String) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind((a.host.as_str(), a.port))
        .await
        .with_context(|| format!("cannot listen on {}", auth::authority(&a.host, a.port)))?;
    let port = listener.local_addr()?.port();
    let fleet = Arc::new(watch::Fleet::new(sources, token.clone())?);
    let plane = server::Plane {
        fleet: fleet.clone(),
        token: Arc::new(token),
        hosts: Arc::new(Authorities::new(&a.host, port).allowing(&a.allow_hosts)),
        logins: Arc::new(Logins::new(port)),
    };
    let refresh = Duration::from_millis(a.refresh_ms);
    let refresher = tokio::spawn(async move {
        loop {
            fleet.refresh().await;
            tokio::time::sleep(refresh).await;
        }
    });
    let base = format!("http://{}", auth::authority(&a.host, port));
    eprintln!("computer-control: fleet console at {base}/ (sign in with the operator token)");
    eprintln!("computer-control: fleet plane listening on {base}");
    let result = axum::serve(listener, server::router(plane))
        .with_graceful_shutdown(shutdown())
        .await
        .context("the fleet plane stopped");
    refresher.abort();
    result
}

async fn shutdown() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
