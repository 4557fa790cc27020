//! Transports: each maps its wire format onto the same engine calls, nothing more.
//! Architecture invariant: no transport holds policy.

pub mod fifo;
pub mod http;
pub mod identity;
pub mod jsonrpc;
pub mod mcp;
pub mod pool;
pub mod stdio;

/// Where the HTTP transports listen unless told otherwise (`--host`): this machine only,
/// so nothing on the network reaches the desktop before an operator opens it up.
pub const DEFAULT_HOST: &str = "127.0.0.1";
/// The HTTP transports' port unless told otherwise (`--port`).
pub const DEFAULT_PORT: u16 = 8765;

/// The largest message any transport accepts (PROTOCOL §1): a stdio line, an `/rpc`
/// body, an MCP request body. Larger is refused whole, never cut.
pub const MAX_MESSAGE: usize = 10 * 1024 * 1024;
