//! Transports: each maps its wire format onto the same engine calls, nothing more.
//! Architecture invariant: no transport holds policy.

pub mod fifo;
pub mod http;
pub mod identity;
pub mod jsonrpc;
pub mod mcp;
pub mod pool;
pub mod stdio;
