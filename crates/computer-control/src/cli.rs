//! Command-line interface (PROTOCOL §1).

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use serde_json::{Value, json};

use cc_engine::config::{ConfigStack, config_json_schema, load_file};

use crate::{check, manifest, platform, transports};

/// Governed desktop automation for AI agents: observe and act on a desktop through a
/// safety gate, as a dsh plugin (stdio JSON-RPC).
#[derive(Debug, Parser)]
#[command(name = "computer-control", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the protocol (stdio JSON-RPC by default).
    Serve(ServeArgs),
    /// Diagnose the desktop: display, XTest, SHM, RandR, accessibility bus, hotkey.
    Check {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// List the declared tools, vendor vocabularies and events.
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print manifest.json (the plugin manifest).
    Manifest,
    /// Print the JSON Schema of the configuration.
    ConfigSchema,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Transport {
    Stdio,
    Http,
    Mcp,
    McpHttp,
}

#[derive(Debug, clap::Args)]
struct ServeArgs {
    /// Config file (JSON). Also COMPUTER_CONTROL_CONFIG; blank means none.
    #[arg(long, env = "COMPUTER_CONTROL_CONFIG")]
    config: Option<String>,
    /// Transport.
    #[arg(long, value_enum, default_value = "stdio")]
    transport: Transport,
    /// HTTP bind address.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// HTTP port.
    #[arg(long, default_value_t = 8765)]
    port: u16,
    /// Desktop backend (overrides platform.name of the config).
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(platform::names()))]
    platform: Option<String>,
    /// Governance journal (SQLite, WAL) of the governed tools (MCP); overrides
    /// `governance.journal`. Default: `$XDG_STATE_HOME/computer-control/governance.db`
    /// (or `~/.local/state/…`).
    #[arg(long, env = "COMPUTER_CONTROL_JOURNAL")]
    journal: Option<std::path::PathBuf>,
    /// The principal governed operations act for; overrides `governance.principal_id`
    /// (default `local-user`). Set by the host, never by tool arguments. Over HTTP, an
    /// `http.agents` token acts for its own principal instead.
    #[arg(long, env = "COMPUTER_CONTROL_PRINCIPAL")]
    principal_id: Option<String>,
    /// Beside `--transport mcp` or `mcp-http`: serve the operator side of the HTTP
    /// transport (console, /rpc, /events, /frame, /approvals, /health) on HOST:PORT, or
    /// on 127.0.0.1:PORT for a bare PORT (0 picks a free port), operator token only. MCP
    /// has no other channel on which a person can approve a `confirm` action.
    #[arg(long, value_name = "HOST:PORT")]
    operator_listen: Option<transports::http::operator::Listen>,
}

/// The journal path: `governance.journal` (the flag already applied over it), else the
/// XDG state directory (created if needed).
fn journal_path(configured: &str) -> anyhow::Result<std::path::PathBuf> {
    if !configured.is_empty() {
        return Ok(std::path::PathBuf::from(configured));
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".local/state")))
        .context("neither XDG_STATE_HOME nor HOME is set; pass --journal")?;
    let dir = state.join("computer-control");
    std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
    Ok(dir.join("governance.db"))
}

/// Defaults, then the config file, then `--platform`, `--principal-id` and `--journal`
/// (each validated like the config key it overrides).
fn base_config(a: &ServeArgs) -> anyhow::Result<ConfigStack> {
    let mut stack = config_file(a.config.as_deref(), a.platform.as_deref())?;
    let mut governance = serde_json::Map::new();
    if let Some(p) = &a.principal_id {
        governance.insert("principal_id".into(), json!(p));
    }
    if let Some(j) = &a.journal {
        let Some(j) = j.to_str() else {
            anyhow::bail!("--journal {} is not valid UTF-8", j.display());
        };
        governance.insert("journal".into(), json!(j));
    }
    if !governance.is_empty() {
        stack
            .apply(&json!({"governance": governance}))
            .map_err(|e| anyhow::anyhow!("--principal-id / --journal: {e}"))?;
    }
    Ok(stack)
}

/// Defaults, then the config file, then `--platform`.
fn config_file(path: Option<&str>, platform: Option<&str>) -> anyhow::Result<ConfigStack> {
    let mut stack = ConfigStack::new();
    if let Some(p) = path.filter(|p| !p.trim().is_empty()) {
        let v = load_file(p).map_err(|e| anyhow::anyhow!("{e}"))?;
        stack
            .apply(&v)
            .map_err(|e| anyhow::anyhow!("invalid config file {p}: {e}"))?;
    }
    if let Some(name) = platform {
        stack
            .apply(&json!({"platform": {"name": name}}))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    Ok(stack)
}

fn print_json(v: &Value) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(v).context("serialize")?);
    Ok(())
}

/// Runs the chosen command.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve(a) => {
            if a.operator_listen.is_some()
                && !matches!(a.transport, Transport::Mcp | Transport::McpHttp)
            {
                anyhow::bail!(
                    "--operator-listen is for --transport mcp or mcp-http: --transport http \
                     already serves the operator console on its own port, and stdio JSON-RPC \
                     confirms through session.confirm"
                );
            }
            let base = base_config(&a)?;
            let governance = base.config().governance.clone();
            let driver = platform::select(&base)?;
            #[cfg(feature = "fault-injection")]
            let driver = crate::fault_driver::wrap(driver)?;
            let engine = cc_engine::Engine::new(driver, base);
            if a.transport == Transport::Stdio {
                transports::stdio::serve(engine)?;
                return Ok(ExitCode::SUCCESS);
            }
            // One governed kernel per process, shared by every MCP endpoint.
            let journal = journal_path(&governance.journal)?;
            let kernels = Arc::new(transports::mcp::Kernels::open(
                engine.clone(),
                &journal,
                &governance.principal_id,
            )?);
            let server = transports::mcp::McpServer::new(engine.clone(), kernels.clone());
            match a.transport {
                Transport::Mcp => {
                    let operator = a
                        .operator_listen
                        .map(|listen| transports::mcp::StdioOperator {
                            engine: engine.clone(),
                            kernels: kernels.clone(),
                            listen,
                        });
                    transports::mcp::serve_stdio(server, operator)?
                }
                Transport::McpHttp | Transport::Http | Transport::Stdio => {
                    let mcp = if a.transport == Transport::McpHttp {
                        transports::http::Mcp::Only(server)
                    } else {
                        transports::http::Mcp::Mounted(server)
                    };
                    let opts = transports::http::Options {
                        host: a.host.clone(),
                        port: a.port,
                        mcp,
                        kernels: kernels.clone(),
                        operator: a.operator_listen,
                    };
                    transports::http::serve(engine, opts)?
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Check { json } => Ok(check::run(json)),
        Command::List { json } => {
            let m = manifest::manifest();
            if json {
                print_json(
                    &json!({"tools": m["tools"], "vocabularies": m["vocabularies"], "events": m["events"]}),
                )?;
            } else {
                println!("tools:");
                for t in m["tools"].as_array().into_iter().flatten() {
                    println!(
                        "  {:<16} {:<9} {}",
                        t["name"].as_str().unwrap_or_default(),
                        t["risk"].as_str().unwrap_or_default(),
                        t["summary"].as_str().unwrap_or_default()
                    );
                }
                println!("vocabularies:");
                for v in m["vocabularies"].as_array().into_iter().flatten() {
                    println!(
                        "  {:<18} {:<9} {}",
                        v["name"].as_str().unwrap_or_default(),
                        v["vendor"].as_str().unwrap_or_default(),
                        v["summary"].as_str().unwrap_or_default()
                    );
                }
                println!("events:");
                for e in m["events"].as_array().into_iter().flatten() {
                    println!(
                        "  {:<30} {}",
                        e["name"].as_str().unwrap_or_default(),
                        e["summary"].as_str().unwrap_or_default()
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Manifest => {
            print_json(&manifest::manifest())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::ConfigSchema => {
            print_json(&config_json_schema())?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
