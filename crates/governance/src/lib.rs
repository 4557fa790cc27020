//! The server-side governed-action kernel (GOVERNANCE.md Part A) over the engine.
//!
//! The engine stays the only way to touch the desktop: every governed action is
//! prepared once as the engine's typed call ([`cc_engine::Engine::prepare`]), judged
//! with it and performed through [`cc_engine::Engine::run`] (or, once an operator's grant
//! for a `confirm` decision was consumed, [`cc_engine::Engine::run_approved`]), so the
//! engine's safety gate still applies on top of the governance checks. This crate adds what the engine does not
//! know: who acts (the host's principal), under which session, control lease and
//! reservation, with which approval, and what the receipt of each action is — all
//! journaled in one SQLite database with a hash chain of events per session.
//!
//! Entry point: [`Governance`]; [`Governance::call`] dispatches the governed MCP tools
//! by name with their JSON arguments.

#![warn(missing_docs)]

pub mod aliases;
pub mod approvals;
pub mod args;
pub mod audit;
mod deletion;
pub mod error;
mod execute;
mod failpoint;
mod follow_ups;
mod grants;
mod journal_lock;
mod kernel;
mod leases;
mod policy;
mod preview;
mod previews;
mod principals;
mod reservations;
mod sensitivity;
pub mod sessions;
pub mod store;
mod util;
mod verify;

pub use cc_contract::tools::{Changes, GOVERNED_TOOLS, GovernedTool, governed_tool};
pub use error::GovResult;
pub use execute::Executed;
pub use failpoint::FAILPOINT_ENV;
pub use kernel::Governance;
pub use policy::{mcp_tool_name, resolve_tool};
pub use principals::{Caller, Kernels};
pub use sessions::Recovery;
pub use store::verify_chain;
