//! The server's safety latches: the emergency stop and idle standby.
//!
//! They belong to the server, not to a session. A session that ends and a new one that
//! starts (a harness's `session.stop`/`session.start`, an MCP client's session on first
//! use, a governed session) inherit them, so an agent cannot shed a stop or standby by
//! restarting its session. Only a person releases them: the operator channel, or
//! removing the panic file that raised the stop. The hotkey only engages the stop: a
//! chord is input the agent can synthesize, so it releases nothing.

/// The latches, kept under the engine's one lock beside the session.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Latches {
    /// The emergency stop, and what raised it; `None` while released.
    pub stop: Option<PanicSource>,
    /// The panic file that raised the stop: its removal releases it, and while it
    /// exists nothing else does, even after the session that watched it has ended.
    pub stop_file: Option<String>,
    /// Idle standby: entered by the idle watchdog, left by `session.resume` (the
    /// hotkey turns it into the stop), never by a new session.
    pub standby: bool,
    /// The watched panic file existed at the last look (see `Core::sync_panic_file`).
    pub panic_file_seen: bool,
}

/// Where a panic came from (`safety.panic_triggered {source}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PanicSource {
    Hotkey,
    Protocol,
    File,
}

impl PanicSource {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            PanicSource::Hotkey => "hotkey",
            PanicSource::Protocol => "protocol",
            PanicSource::File => "file",
        }
    }
}
