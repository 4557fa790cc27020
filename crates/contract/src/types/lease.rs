//! The control lease: the one writer gate. No mutation executes without an active lease
//! whose budget and boundaries admit it.

use serde::{Deserialize, Serialize};

use super::action::ExecutionMode;
use super::target::WindowId;

wire_enum! {
    /// How the lease shares the desktop with the user.
    pub enum LeaseKind {
        /// Revoked by the user's own input.
        Cooperative = "cooperative",
        /// Held against the user; requires foreground mode.
        Exclusive = "exclusive",
    }
}

wire_enum! {
    /// Lease lifecycle; only `active` authorizes anything.
    pub enum LeaseState {
        /// In force.
        Active = "active",
        /// Given back by its holder.
        Released = "released",
        /// Taken away (user activity, boundary escape, emergency stop, ...).
        Revoked = "revoked",
        /// Past `expiresAt`.
        Expired = "expired",
    }
}

/// Where a lease may act. An empty list means no constraint on that axis.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LeaseBoundaries {
    /// Allowed apps (upstream may omit the list: decoded as empty).
    #[serde(default)]
    pub app_ids: Vec<String>,
    /// Allowed windows, compared with [`WindowId::same_window`].
    #[serde(default)]
    pub window_ids: Vec<WindowId>,
    /// Allowed displays.
    #[serde(default)]
    pub display_ids: Vec<String>,
}

/// A control lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ControlLease {
    /// Lease id.
    pub lease_id: String,
    /// Increases on every change.
    pub revision: u64,
    /// Owning session.
    pub session_id: String,
    /// Owning principal.
    pub principal_id: String,
    /// Holding agent, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Sharing kind.
    pub kind: LeaseKind,
    /// Mode the lease authorizes.
    pub execution_mode: ExecutionMode,
    /// Lifecycle state.
    pub state: LeaseState,
    /// Grant time (RFC 3339).
    pub acquired_at: String,
    /// Expiry (RFC 3339).
    pub expires_at: String,
    /// Actions allowed, 1..=10000.
    pub action_budget: u32,
    /// Actions consumed; the lease authorizes only while `actions_used < action_budget`.
    pub actions_used: u32,
    /// Where it may act.
    pub boundaries: LeaseBoundaries,
    /// Why it left `active` (`target_boundary_escape`, `action_indeterminate`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_reason: Option<String>,
}
