//! [`McpTimeouts`]: how long the MCP client waits, so a server that never answers fails
//! the call instead of hanging the graph.

use std::time::Duration;

/// How long to wait for the server to initialize and, optionally, for each tool call.
///
/// No call limit by default: an `execute_action` may legitimately wait for the desktop
/// (the engine bounds it itself), and a caller that times out an execute no longer knows
/// whether it ran (a retry with the same action id replays its receipt).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpTimeouts {
    /// Limit on the MCP handshake.
    pub initialize: Duration,
    /// Limit on each tool call and tool listing; `None` waits for the answer.
    pub call: Option<Duration>,
}

impl Default for McpTimeouts {
    fn default() -> Self {
        Self {
            initialize: Duration::from_secs(60),
            call: None,
        }
    }
}
