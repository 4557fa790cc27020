//! The MCP hosts this server knows: `setup --print HOST` writes a snippet for each
//! (`setup.rs`), and the hosts that read a file of this user's have it named per
//! operating system (`places::host_config`).

use clap::ValueEnum;

/// The hosts with a snippet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Host {
    /// Claude Desktop: `claude_desktop_config.json`.
    ClaudeDesktop,
    /// Claude Code: `claude mcp add`.
    ClaudeCode,
    /// OpenAI Codex: `~/.codex/config.toml`.
    Codex,
    /// Cursor: `~/.cursor/mcp.json` or `.cursor/mcp.json`.
    Cursor,
    /// The MCP Inspector (`npx @modelcontextprotocol/inspector`).
    Inspector,
    /// Any stdio MCP client: the command, its arguments and environment.
    Stdio,
    /// The dsh harness (the plugin protocol, not MCP): writes a plugin directory
    /// (`--dir`) holding the `manifest.json` whose entry starts this server.
    Dsh,
}
