//! The computer-control engine: sessions, tools, the safety gate, the coordinate
//! contract, frames, snapshots and events.
//!
//! Architecture invariant: the engine knows no transport. It takes method names and
//! JSON values and returns envelopes and events; stdio, HTTP and MCP are thin mappings
//! onto [`Engine`]. Every action reaches the driver only through the worker, after the
//! gate.
//!
//! The boundary (what other crates use): [`Engine`] and its events; [`config`] (the
//! layered configuration); [`tools`] (the tool table, read-only); [`assess`] (how an
//! action is judged, for the governed preview); [`clock`] (injectable time);
//! [`encode`] (the image codecs, for benchmarks and drivers' tests); [`Lookout`] and [`Looking`]
//! (waiting without a wake-up, for a transport that looks for its next request); the vendors'
//! vocabularies ([`vocabularies`]), served over `tools.call` and MCP. Everything else is
//! private to the engine.
#![warn(missing_docs)]

mod approval;
pub mod assess;
mod bounded;
mod call;
mod changes;
pub mod clock;
pub mod config;
mod coords;
mod core;
pub mod encode;
mod engine;
mod events;
mod flag_scope;
mod frames;
mod gate;
mod handed;
mod hotkey;
mod inline;
mod latch;
mod lookout;
mod panic_file;
mod rules;
mod selector;
mod session;
mod snapshot;
mod spec;
pub mod tools;
mod vendor;
mod worker;

#[cfg(test)]
mod approved_tests;
#[cfg(test)]
mod call_tests;
#[cfg(test)]
mod safety_tests;

pub use assess::{Outcome, redact, redact_result};
pub use bounded::bounded;
pub use call::{CallControl, Notice, Progress};
pub use engine::{Engine, METHODS, tool_json};
pub use events::{
    Answering, BusStats, EventBus, EventQueue, RING_BYTES, RING_SIZE, SharedEvent, Subscription,
};
pub use frames::Shot;
pub use handed::Handed;
pub use inline::{Inline, InlineCaller};
pub use lookout::{Looking, Lookout};
pub use rules::{CONSOLE_TITLE, Landing, Policy, Verdict};
pub use spec::Issue;
pub use tools::def::REDACTED;
pub use vendor::{Vocabulary, find_vocabulary, vocabularies, vocabulary_json};
