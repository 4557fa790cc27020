//! The governed tools' limits, defined once: the server enforces them, the argument
//! types' JSON Schemas state them, the client library keeps its requests inside them,
//! and the governance crate's tests check that GOVERNANCE.md and the README quote them.

/// Longest lifetime of a lease, a target reservation, an envelope or an approval grant,
/// in milliseconds: authority granted to an agent expires within five minutes.
pub const MAX_TTL_MS: u64 = 300_000;

/// An envelope's lifetime when `expires_in_ms` is absent, and an approval grant's when
/// the operator names none: long enough for a person to decide, short enough that a
/// stale preview is not approved.
pub const DEFAULT_TTL_MS: u64 = 60_000;

/// Largest `action_budget` of one lease: a lease is revoked once its budget is spent, so
/// a runaway agent stops even before the lease expires.
pub const MAX_ACTION_BUDGET: u32 = 10_000;

/// Largest page of `get_session_events` (also its default) and `get_follow_ups`, and the
/// largest `prune_sessions` batch: one answer stays a bounded size.
pub const MAX_PAGE: u32 = 1000;

/// The page of `get_follow_ups` and the batch of `prune_sessions` when none is given.
pub const DEFAULT_PAGE: u32 = 100;

/// Longest `submit_follow_up` instruction, in characters.
pub const MAX_INSTRUCTION_CHARS: usize = 10_000;
