//! The composition root of `serve`: which desktop, which transports beside which, over
//! one engine and one set of governed kernels, and how they stop together. Transports
//! know nothing of each other; what runs beside what is decided here only.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;

use cc_engine::Engine;
use cc_engine::config::ConfigStack;
use cc_governance::Kernels;

use crate::platform;
use crate::transports::http::operator::{self, Listen};
use crate::transports::{http, mcp, stdio};

/// The wire a `serve` speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Transport {
    /// JSON-RPC on stdin/stdout (the plugin protocol).
    Stdio,
    /// HTTP with the operator console, `/rpc`, `/events` and MCP at `/mcp`.
    Http,
    /// MCP on stdin/stdout.
    Mcp,
    /// MCP over Streamable HTTP only.
    McpHttp,
}

/// Everything `serve` needs, as the command line and the config decided it.
pub struct Plan {
    pub transport: Transport,
    /// HTTP bind address and port.
    pub host: String,
    pub port: u16,
    /// The operator channel beside MCP (`--operator-listen`).
    pub operator: Option<Listen>,
    /// `--allow-host`: more names the HTTP listeners answer to.
    pub allow_hosts: Vec<String>,
    /// Defaults, the config file and the flags, validated.
    pub base: ConfigStack,
}

/// Serves until the client goes (stdin closed, or a signal for HTTP): the desktop the
/// config picks, behind the engine's safety gate, on the chosen transport.
pub fn serve(mut plan: Plan) -> anyhow::Result<()> {
    keep_memory_private();
    // `http.allowed_hosts` (the operator's config) and `--allow-host` are one list.
    for name in &plan.base.config().http.allowed_hosts {
        let checked = crate::transports::http::auth::allowed_host(name)
            .map_err(|e| anyhow::anyhow!("http.allowed_hosts: {e}"))?;
        if !plan.allow_hosts.contains(&checked) {
            plan.allow_hosts.push(checked);
        }
    }
    if plan.operator.is_some() && !matches!(plan.transport, Transport::Mcp | Transport::McpHttp) {
        anyhow::bail!(
            "--operator-listen is for --transport mcp or mcp-http: --transport http \
             already serves the operator console on its own port, and stdio JSON-RPC \
             confirms through session.confirm"
        );
    }
    if plan.base.config().platform.name != "virtual" {
        crate::session::adopt();
    }
    let governance = plan.base.config().governance.clone();
    let driver = platform::select(&plan.base)?;
    #[cfg(feature = "fault-injection")]
    let driver = crate::fault_driver::wrap(driver)?;
    let engine = Engine::new(driver, plan.base);
    if plan.transport == Transport::Stdio {
        return stdio::serve(engine);
    }
    // One set of governed kernels per process, shared by every MCP endpoint and the
    // operator's approvals.
    let journal = journal_path(&governance.journal)?;
    let (kernels, recovery) = Kernels::open(engine.clone(), &journal, &governance.principal_id)
        .map_err(|e| anyhow::anyhow!("governance journal {}: {}", journal.display(), e.message))?;
    if !recovery.paused_session_ids.is_empty() || !recovery.revoked_lease_ids.is_empty() {
        tracing::warn!(?recovery, "recovered governed sessions from the journal");
    }
    let kernels = Arc::new(kernels);
    let server = mcp::McpServer::new(engine.clone(), kernels.clone());
    match plan.transport {
        Transport::Mcp => {
            mcp_with_operator(server, engine, kernels, plan.operator, &plan.allow_hosts)
        }
        Transport::McpHttp | Transport::Http | Transport::Stdio => {
            let mcp = if plan.transport == Transport::McpHttp {
                http::Mcp::Only(server)
            } else {
                http::Mcp::Mounted(server)
            };
            let opts = http::Options {
                host: plan.host,
                port: plan.port,
                mcp,
                kernels,
                operator: plan.operator,
                allow_hosts: plan.allow_hosts,
            };
            http::serve(engine, opts)
        }
    }
}

/// Makes this process non-dumpable: its memory, environment and descriptors under
/// `/proc/<pid>/`, and attaching a debugger, are then closed to the other processes of
/// the same user (the agent's programs among them), so the operator token the server
/// holds in memory stays its own (docs/SECURITY.md). Programs it launches are dumpable
/// again after their exec. A failure is logged, not fatal: the server works as before.
fn keep_memory_private() {
    #[cfg(target_os = "linux")]
    if let Err(e) = nix::sys::prctl::set_dumpable(false) {
        tracing::warn!("cannot make the server non-dumpable: {e}");
    }
}

/// MCP on stdio; with `operator`, the operator channel is bound first (a busy port
/// fails the start before any MCP message) and served beside it until stdin closes or
/// SIGINT/SIGTERM arrives. Nothing but MCP ever goes to stdout.
fn mcp_with_operator(
    server: mcp::McpServer,
    engine: Engine,
    kernels: Arc<Kernels>,
    operator: Option<Listen>,
    allow_hosts: &[String],
) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("tokio runtime")?;
    let Some(listen) = operator else {
        return rt.block_on(mcp::serve_stdio(server));
    };
    let r = rt.block_on(async move {
        let channel = operator::Channel::bind(&listen, allow_hosts).await?;
        server.set_console(channel.base());
        let until = async {
            tokio::select! {
                r = mcp::serve_stdio(server) => r,
                _ = http::shutdown_signal() => Ok(()),
            }
        };
        operator::beside_stdio(&engine, kernels, channel, until).await
    });
    // An operator's open event stream must not hold the exit.
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    r
}

/// The journal path: `governance.journal` (the flag already applied over it), else the
/// XDG state directory (created if needed).
fn journal_path(configured: &str) -> anyhow::Result<PathBuf> {
    let path = crate::places::default_journal(configured)?;
    if let Some(dir) = path.parent().filter(|_| configured.is_empty()) {
        // The journal's own directory: no other account needs to list it.
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
            .create(dir)
            .with_context(|| format!("create {}", dir.display()))?;
    }
    Ok(path)
}
