//! [`RuntimeOptions`]: what the governed runtime asks for on the caller's behalf.

use std::sync::Arc;

use cc_contract::limits::DEFAULT_TTL_MS;

use crate::runtime::{Clock, SystemClock};

/// How a governed runtime requests leases and reservations, reads the screen, and tells
/// time for its boundary checks.
///
/// Leases default to a budget of one action: the reference graph acquires one lease per
/// action, and a lease that can do only what was approved is the least authority there is.
#[derive(Clone)]
pub struct RuntimeOptions {
    /// The clock of every freshness and expiry check at the call boundary.
    pub clock: Arc<dyn Clock>,
    /// `ttl_ms` of a lease, at most [`MAX_TTL_MS`](cc_contract::limits::MAX_TTL_MS).
    pub lease_ttl_ms: u64,
    /// `action_budget` of a lease, 1..=[`MAX_ACTION_BUDGET`](cc_contract::limits::MAX_ACTION_BUDGET).
    pub lease_budget: u32,
    /// `ttl_ms` of a target reservation, at most
    /// [`MAX_TTL_MS`](cc_contract::limits::MAX_TTL_MS).
    pub reservation_ttl_ms: u64,
    /// The tool that takes a screenshot (`screen_capture` on computer-control).
    pub screenshot_tool: &'static str,
    /// The tool that snapshots the accessibility tree (`a11y_snapshot`).
    pub snapshot_tool: &'static str,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        Self {
            clock: Arc::new(SystemClock),
            lease_ttl_ms: DEFAULT_TTL_MS,
            lease_budget: 1,
            reservation_ttl_ms: DEFAULT_TTL_MS,
            screenshot_tool: "screen_capture",
            snapshot_tool: "a11y_snapshot",
        }
    }
}

impl std::fmt::Debug for RuntimeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeOptions")
            .field("lease_ttl_ms", &self.lease_ttl_ms)
            .field("lease_budget", &self.lease_budget)
            .field("reservation_ttl_ms", &self.reservation_ttl_ms)
            .field("screenshot_tool", &self.screenshot_tool)
            .field("snapshot_tool", &self.snapshot_tool)
            .finish_non_exhaustive()
    }
}
