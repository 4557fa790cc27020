//! A governed client for computer-use runtimes: it drives a server of the governed-action
//! contract through a deterministic graph and checks every answer before trusting it.
//!
//! Published as `computer-control-client`; in Rust code the crate is `adk_computer_use`.
//!
//! # Quick start
//!
//! Start `computer-control` (or any server of the contract) as a child over MCP, let a
//! planner pick the action, and run one thread. A `confirm` decision interrupts the
//! thread until a person approves it on the server's operator channel; the thread can
//! be resumed later, from another process too, because its checkpoints are durable.
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use adk_computer_use::checkpoint::SqliteCheckpointer;
//! use adk_computer_use::governed::RuntimeOptions;
//! use adk_computer_use::graph::{
//!     ComputerUseGraph, PlanError, PlanInput, PlannedAction, ResumeInput, RunOutcome,
//! };
//! use adk_computer_use::mcp::ComputerUseMcpRuntime;
//! use adk_computer_use::runtime::SystemClock;
//! use serde_json::{Map, json};
//!
//! /// Clicks the middle of the canvas (a real planner reads `input.semantic.tree`).
//! fn planner(_input: &PlanInput<'_>) -> Result<PlannedAction, PlanError> {
//!     let mut arguments = Map::new();
//!     arguments.insert("x".into(), json!(960));
//!     arguments.insert("y".into(), json!(540));
//!     Ok(PlannedAction::new("pointer.click", arguments))
//! }
//!
//! # fn grant_from_the_operator(
//! #     _: &adk_computer_use::graph::ApprovalRequest,
//! # ) -> adk_computer_use::ApprovalGrant {
//! #     unimplemented!()
//! # }
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let mut server = tokio::process::Command::new("computer-control");
//! server.args(["serve", "--transport", "mcp", "--platform", "virtual"]);
//! let runtime = ComputerUseMcpRuntime::spawn(server, RuntimeOptions::default()).await?;
//! let checkpoints = SqliteCheckpointer::open("graph.db")?;
//! let graph = ComputerUseGraph::new(runtime, planner, checkpoints, Arc::new(SystemClock));
//! match graph.run("thread-1").await? {
//!     RunOutcome::Completed(done) => println!("{:?}", done.result.outcome),
//!     RunOutcome::Blocked(why) => println!("blocked: {why:?}"),
//!     RunOutcome::Interrupted(request) => {
//!         // Show `request.preview` to a person; once the operator channel has issued a
//!         // grant for it, resume (possibly in another process):
//!         let grant = grant_from_the_operator(&request);
//!         graph.resume("thread-1", ResumeInput::exact_grant(grant)).await?;
//!     }
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # What it adds
//!
//! The runtime (for example the `computer-use-mcp` server or `computer-control`) is the
//! authority and performs every effect; this crate performs none. What it adds is the rule
//! that nothing the runtime returns is trusted until it has been bound back to the request
//! that produced it: typed decoding proves shape, not provenance, so a well-formed lease of
//! another session decodes without complaint.
//!
//! * [`runtime::binding`] — the validators that turn raw responses (`ControlLease`,
//!   `TargetReservation`, `ExecutionReceipt`, approvals) into bound values, and
//!   [`runtime::binding::authorize_execute`], the only way to obtain the authorization the
//!   mutation path requires.
//! * [`bound`] — the bound types. Only the validators construct them, so the compiler
//!   rejects a mutation path fed with an unvalidated response.
//! * [`verification`] — what counts as evidence that an action's effect happened.
//! * [`graph`] — the reference graph: observe, plan, preview, route, the approval
//!   interrupt, reserve, lease, execute, verify; checkpointed by [`checkpoint`] in SQLite.
//! * [`error`] — [`ComputerUseError`], structured so callers can branch on the field or
//!   bound that failed.
//!
//! Wire types come from the contract crate (`computer-control-contract`), re-exported as
//! [`contract`] and, for the types of this crate's signatures, at the root; this crate
//! never redefines them.
//!
//! # Features
//!
//! * `mcp` (default): [`mcp::ComputerUseMcpRuntime`], an MCP client over a child
//!   process's stdio or Streamable HTTP.
//! * `sqlite` (default): [`checkpoint::SqliteCheckpointer`], durable checkpoints.
//!   Without it, [`checkpoint::MemoryCheckpointer`] keeps them for the process's life.
//! * `rustls`: `https://` endpoints for the MCP runtime.
//! * `local`: `LocalRuntime`, the governed kernel in-process (links the engine and the
//!   desktop drivers).

#![warn(missing_docs)]

pub mod bound;
pub mod checkpoint;
pub mod error;
#[cfg(any(feature = "mcp", feature = "local"))]
pub mod governed;
pub mod graph;
#[cfg(feature = "local")]
pub mod local;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod runtime;
pub mod verification;

/// The contract's wire types, as this crate uses them.
pub use cc_contract as contract;
pub use cc_contract::{
    ActionEnvelope, ActionPostcondition, ActionPreview, ActionProvenance, ApprovalGrant,
    ControlLease, DataLabel, ExecutionMode, ExecutionReceipt, PolicyVerdict, ReceiptStatus,
    TargetEvidence, TargetReservation, WindowId,
};
pub use error::{ApprovalFailure, BoundaryAxis, ComputerUseError, ResponseObject};
pub use verification::{FailureReason, UnverifiedReason, VerificationOutcome, verify_receipt};
