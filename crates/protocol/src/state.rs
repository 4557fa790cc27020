//! Session states of PROTOCOL §5.1.

use serde::{Deserialize, Serialize};

/// Where the session is in its life. `confirming` is implicit: it is reported while a
/// confirmation is pending, and is otherwise `ready`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    /// No session: only `session.start` and status calls work.
    Idle,
    /// Accepting actions.
    Ready,
    /// An action waits for a person's decision.
    Confirming,
    /// The emergency stop is engaged: nothing acts until `session.resume`.
    Stopped,
    /// Idle too long: nothing acts until `session.resume`.
    Standby,
}

impl SessionState {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionState::Idle => "idle",
            SessionState::Ready => "ready",
            SessionState::Confirming => "confirming",
            SessionState::Stopped => "stopped",
            SessionState::Standby => "standby",
        }
    }
}
