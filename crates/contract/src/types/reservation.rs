//! Target reservations: advisory planner intents that keep two agents from planning on
//! one target. A reservation never authorizes a mutation; the lease does.

use serde::{Deserialize, Serialize};

use super::target::WindowId;

wire_enum! {
    /// Reservation lifecycle.
    pub enum ReservationState {
        /// Held.
        Active = "active",
        /// Given back by its holder.
        Released = "released",
        /// Past `expiresAt`.
        Expired = "expired",
        /// Ended by the server (session stop, emergency stop, ...).
        Cancelled = "cancelled",
    }
}

/// The reserved target: an app, optionally one of its windows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReservationScope {
    /// App id.
    pub app_id: String,
    /// Window, when the reservation is narrower than the app.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_id: Option<WindowId>,
}

/// A target reservation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TargetReservation {
    /// Reservation id.
    pub reservation_id: String,
    /// Increases on every change.
    pub revision: u64,
    /// The planner's intent (the action id, for the reference graph).
    pub intent_id: String,
    /// Owning session.
    pub session_id: String,
    /// Owning principal.
    pub principal_id: String,
    /// Multi-agent group, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_group_id: Option<String>,
    /// Reserving agent, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Reserved target.
    pub scope: ReservationScope,
    /// Lifecycle state.
    pub state: ReservationState,
    /// Grant time (RFC 3339).
    pub acquired_at: String,
    /// Expiry (RFC 3339).
    pub expires_at: String,
    /// Why it left `active` (`released`, `ttl_expired`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_reason: Option<String>,
}
