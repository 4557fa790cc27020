//! `adk-computer-use`: a governance layer over a computer-use runtime (GOVERNANCE.md,
//! Part B).
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
//! Wire types come from `cc-contract`; this crate never redefines them.

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

pub use error::{ApprovalFailure, BoundaryAxis, ComputerUseError, ResponseObject};
pub use verification::{FailureReason, UnverifiedReason, VerificationOutcome, verify_receipt};
