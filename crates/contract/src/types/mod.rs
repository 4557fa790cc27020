//! The wire types of the governed-action contract (GOVERNANCE.md, Part A), one module per
//! concept. Field names are camelCase on the wire; timestamps are RFC 3339 strings (see
//! [`crate::timestamp`]); optional fields are omitted when absent, as upstream omits them.
//!
//! Every object whose upstream schema is closed uses `deny_unknown_fields`: an unexpected
//! field is a decode error rather than data silently dropped. Free-form payloads
//! (`ExecutionReceipt.result`, `SessionEvent.payload`, `ContractError.details`) are JSON
//! maps and keep everything.

#[macro_use]
mod wire_enum;

pub mod action;
pub mod capability;
pub mod contract_error;
pub mod error;
pub mod event;
pub mod grant;
pub mod lease;
pub mod number;
pub mod postcondition;
pub mod preview;
pub mod receipt;
pub mod reservation;
pub mod sensitivity;
pub mod session;
pub mod target;

pub use action::{
    ActionClass, ActionEnvelope, ActionProvenance, ActionResource, DataLabel, ExecutionMode,
};
pub use capability::{
    CapabilityCertification, ExecutionCapability, InterferenceLevel, VerificationSource,
};
pub use contract_error::ContractError;
pub use error::ErrorCode;
pub use event::{EventIntegrity, EventSchemaVersion, SessionEvent};
pub use grant::{ApprovalGrant, GrantScope};
pub use lease::{ControlLease, LeaseBoundaries, LeaseKind, LeaseState};
pub use postcondition::{ActionPostcondition, NotRunning, PostconditionError};
pub use preview::{ActionPreview, Blocker, PolicyDecision, PolicyVerdict};
pub use receipt::{ExecutionReceipt, ReceiptError, ReceiptResult, ReceiptStatus, Verification};
pub use reservation::{ReservationScope, ReservationState, TargetReservation};
pub use sensitivity::{
    SensitivityAssessment, SensitivityError, SensitivitySignal, SensitivitySource,
    TargetSensitivity,
};
pub use session::{
    CompletionPostcondition, Session, SessionCompletion, SessionDeletion, SessionFollowUp,
    SessionState,
};
pub use target::{Bounds, TargetEvidence, WindowId};
pub use wire_enum::UnknownVariant;
