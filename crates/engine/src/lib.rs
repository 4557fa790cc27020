//! The computer-control engine: sessions, tools, the safety gate, the coordinate
//! contract, frames, snapshots and events.
//!
//! Architecture invariant: the engine knows no transport. It takes method names and
//! JSON values and returns envelopes and events; stdio, HTTP and MCP are thin mappings
//! onto [`Engine`]. Every action reaches the driver only through the worker, after the
//! gate ([`gate::decide`]).

pub mod approval;
pub mod clock;
pub mod config;
pub mod coords;
mod core;
pub mod encode;
pub mod engine;
pub mod events;
pub mod frames;
pub mod gate;
mod hotkey;
mod latch;
mod panic_file;
pub mod risk;
pub mod rules;
pub mod session;
pub mod snapshot;
pub mod spec;
pub mod tools;
mod worker;

#[cfg(test)]
mod approved_tests;
#[cfg(test)]
mod safety_tests;

pub use approval::Approval;
pub use engine::{Engine, METHODS, tool_json};
/// How events and logs hide secret text; the governed kernel applies the same rule to
/// the arguments it shows an operator.
pub use worker::{REDACTED, redact};
