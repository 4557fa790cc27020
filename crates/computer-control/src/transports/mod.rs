//! Transports: each maps its wire format onto the same engine calls, nothing more.
//! Architecture invariant: no transport holds policy.

pub mod jsonrpc;
pub mod pool;
pub mod stdio;
