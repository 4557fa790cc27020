//! Command-line interface (PROTOCOL §1).

use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use serde_json::{Value, json};

use cc_engine::config::{ConfigStack, config_json_schema, load_file};

use crate::compose::Transport;
use crate::transports::{DEFAULT_HOST, DEFAULT_PORT};
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
    /// Serve MCP on stdio: `serve --transport mcp` in a form no host launcher mistakes
    /// for its own options (the MCP Inspector reads `--transport` itself).
    Mcp(CommonArgs),
    /// Diagnose the desktop: platform, display, input, capture, accessibility, hotkey,
    /// journal and transports, each with what to do about a problem.
    Check(check::CheckArgs),
    /// Print the snippet that adds this server to an MCP host (Claude Desktop, Claude
    /// Code, Codex, Cursor, the MCP Inspector, any stdio client).
    Setup(crate::setup::SetupArgs),
    /// List the declared tools, vendor vocabularies and events.
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print manifest.json (the plugin manifest).
    Manifest {
        /// How its `entry.command` starts the server: from `PATH` (the repository's
        /// manifest.json), or as the npm or PyPI package ships it.
        #[arg(long, value_enum, default_value = "path")]
        entry: manifest::Entry,
    },
    /// Print the JSON Schema of the configuration.
    ConfigSchema,
    /// One operator plane over many desks: one console, every approval, one stop-all,
    /// every journal verified (docs/FLEET.md).
    Fleet(crate::fleet::FleetArgs),
}

#[derive(Debug, clap::Args)]
struct ServeArgs {
    /// Transport.
    #[arg(long, value_enum, default_value = "stdio")]
    transport: Transport,
    /// HTTP bind address.
    #[arg(long, default_value = DEFAULT_HOST)]
    host: String,
    /// HTTP port.
    #[arg(long, default_value_t = DEFAULT_PORT)]
    port: u16,
    #[command(flatten)]
    common: CommonArgs,
}

/// The options `serve` and `mcp` share: what the server governs and where it keeps it.
#[derive(Debug, clap::Args)]
pub struct CommonArgs {
    /// Config file (JSON). Also COMPUTER_CONTROL_CONFIG; blank means none.
    #[arg(long, env = "COMPUTER_CONTROL_CONFIG")]
    config: Option<String>,
    /// Desktop backend (overrides platform.name of the config). Also
    /// COMPUTER_CONTROL_PLATFORM.
    #[arg(long, env = "COMPUTER_CONTROL_PLATFORM",
          value_parser = clap::builder::PossibleValuesParser::new(platform::names()))]
    platform: Option<String>,
    /// Governance journal (SQLite, WAL) of the governed tools (MCP); overrides
    /// `governance.journal`. Default: `$XDG_STATE_HOME/computer-control/governance.db`
    /// (or `~/.local/state/…`; on Windows `%LOCALAPPDATA%\computer-control\…`).
    #[arg(long, env = "COMPUTER_CONTROL_JOURNAL")]
    journal: Option<std::path::PathBuf>,
    /// The principal governed operations act for; overrides `governance.principal_id`
    /// (default `local-user`). Set by the host, never by tool arguments. Over HTTP, an
    /// `http.agents` token acts for its own principal instead.
    #[arg(long, env = "COMPUTER_CONTROL_PRINCIPAL")]
    principal_id: Option<String>,
    /// Read the agent token (`http.token`) from this file, once at start (surrounding
    /// whitespace trimmed): a mounted Kubernetes Secret, so the token never sits in a
    /// config file or on the command line. Also COMPUTER_CONTROL_TOKEN_FILE.
    #[arg(long, env = "COMPUTER_CONTROL_TOKEN_FILE", value_name = "PATH")]
    token_file: Option<std::path::PathBuf>,
    /// Read the operator token (`http.operator_token`) from this file, once at start,
    /// like `--token-file`. Also COMPUTER_CONTROL_OPERATOR_TOKEN_FILE.
    #[arg(
        long,
        env = "COMPUTER_CONTROL_OPERATOR_TOKEN_FILE",
        value_name = "PATH"
    )]
    operator_token_file: Option<std::path::PathBuf>,
    /// Beside `--transport mcp` or `mcp-http`: serve the operator side of the HTTP
    /// transport (console, /rpc, /events, /frame, /approvals, /health) on HOST:PORT, or
    /// on 127.0.0.1:PORT for a bare PORT (0 picks a free port), operator token only. MCP
    /// has no other channel on which a person can approve a `confirm` action.
    #[arg(long, value_name = "HOST:PORT")]
    operator_listen: Option<transports::http::operator::Listen>,
    /// Another name (or address) the HTTP listeners answer to, beside the bound
    /// address and the loopback names: what other machines put in `Host` to reach this
    /// one, such as a pod's IP and DNS names. Repeatable; also
    /// COMPUTER_CONTROL_ALLOW_HOSTS, comma-separated. Requests naming any other host
    /// are refused (DNS-rebinding protection).
    #[arg(long = "allow-host", value_name = "NAME", env = "COMPUTER_CONTROL_ALLOW_HOSTS",
          value_delimiter = ',', value_parser = transports::http::auth::allowed_host)]
    allow_hosts: Vec<String>,
}

/// Defaults, then the config file, then `--platform`, `--principal-id`, `--journal` and
/// the token files (each validated like the config key it overrides).
fn base_config(a: &CommonArgs) -> anyhow::Result<ConfigStack> {
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
    let mut http = serde_json::Map::new();
    if let Some(p) = &a.token_file {
        http.insert("token".into(), json!(token_from_file("--token-file", p)?));
    }
    if let Some(p) = &a.operator_token_file {
        let t = token_from_file("--operator-token-file", p)?;
        http.insert("operator_token".into(), json!(t));
    }
    if !http.is_empty() {
        stack
            .apply(&json!({"http": http}))
            .map_err(|e| anyhow::anyhow!("--token-file / --operator-token-file: {e}"))?;
    }
    Ok(stack)
}

/// A token file's content, trimmed; an unreadable, non-UTF-8 or blank file stops the
/// start (a blank one would otherwise mean "generate a token", silently).
fn token_from_file(flag: &str, path: &std::path::Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{flag} {}: cannot read it", path.display()))?;
    let token = text.trim();
    if token.is_empty() {
        anyhow::bail!("{flag} {}: the file is empty", path.display());
    }
    Ok(token.to_string())
}

/// Defaults, then the config file, then `--platform`.
pub fn config_file(path: Option<&str>, platform: Option<&str>) -> anyhow::Result<ConfigStack> {
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

/// `serve` as the command line asked for it.
fn serve(a: ServeArgs) -> anyhow::Result<ExitCode> {
    let base = base_config(&a.common)?;
    crate::compose::serve(crate::compose::Plan {
        transport: a.transport,
        host: a.host,
        port: a.port,
        operator: a.common.operator_listen,
        allow_hosts: a.common.allow_hosts,
        base,
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Runs the chosen command.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve(a) => serve(a),
        Command::Mcp(common) => serve(ServeArgs {
            transport: Transport::Mcp,
            host: DEFAULT_HOST.into(),
            port: DEFAULT_PORT,
            common,
        }),
        Command::Check(a) => {
            let session = if a.wants_desktop() {
                crate::session::adopt()
            } else {
                crate::session::current()
            };
            check::run(&a, &session)
        }
        Command::Setup(a) => {
            crate::setup::run(&a, &crate::session::adopt())?;
            Ok(ExitCode::SUCCESS)
        }
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
        Command::Manifest { entry } => {
            print_json(&manifest::manifest_with(entry.command()))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::ConfigSchema => {
            print_json(&config_json_schema())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Fleet(a) => {
            crate::fleet::run(a)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
