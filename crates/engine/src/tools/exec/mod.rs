//! What running a tool on the driver needs, shared by several tools: [`Exec`], the
//! pre-emptible steps, the pointer's moves and the wait for a condition. A tool's own
//! body lives in its file; nothing here imports a tool.
//!
//! Architecture invariant: nothing here decides *whether* an action may run; the gate
//! did that before `run` was called. This module only decides *how*.

pub(crate) mod pointer;
pub(crate) mod watch;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use cc_desktop::{Driver, DriverError};
use cc_protocol::{ErrorCode, ToolError};

use crate::config::Config;
use crate::coords::Canvas;
use crate::frames::Frames;
use crate::snapshot::Snapshots;

/// Everything a tool may touch while it runs.
pub struct Exec<'a> {
    pub driver: &'a mut dyn Driver,
    pub canvas: &'a Canvas,
    pub config: &'a Config,
    pub stop: &'a AtomicBool,
    /// The caller's own stop and progress sink, for this call only.
    pub call: &'a crate::call::CallControl,
    pub frames: &'a mut Frames,
    pub snapshots: &'a mut Snapshots,
    /// Elements the action names that could not be found when it was judged: finding
    /// one now is refused, never acted on (the gate saw no place for it).
    pub unplaced: Vec<crate::tools::ElementTarget>,
}

/// How an interrupted action reports itself.
pub fn interrupted() -> ToolError {
    ToolError::new(
        ErrorCode::SafetyStopped,
        "interrupted by the emergency stop; every held key and button was released",
    )
}

/// Maps a driver failure to the envelope's codes.
pub fn driver_error(e: DriverError) -> ToolError {
    match e {
        DriverError::Unavailable(m) => ToolError::new(ErrorCode::BackendUnavailable, m),
        DriverError::Failed(m) => ToolError::new(ErrorCode::DriverFailed, m),
    }
}

impl Exec<'_> {
    /// Reports how far the call is to its caller (nothing without a sink).
    pub fn progress(&self, p: crate::call::Progress) {
        self.call.report(p);
    }

    /// Fails when the emergency stop engaged, or the caller cancelled this call:
    /// called between every two steps.
    pub fn check_stop(&self) -> Result<(), ToolError> {
        if self.stop.load(Ordering::SeqCst) {
            Err(interrupted())
        } else if self.call.cancelled() {
            Err(crate::call::cancelled())
        } else {
            Ok(())
        }
    }

    /// Sleeps in slices of at most 5 ms, stopping early on panic (hotkey included).
    pub fn sleep_ms(&mut self, ms: u64) -> Result<(), ToolError> {
        let deadline = std::time::Instant::now() + Duration::from_millis(ms);
        loop {
            // A hotkey pressed during a pure wait engages the stop here.
            self.driver.pump();
            self.check_stop()?;
            let now = std::time::Instant::now();
            if now >= deadline {
                return Ok(());
            }
            std::thread::sleep((deadline - now).min(Duration::from_millis(5)));
        }
    }
}

/// Lifts a driver result.
pub fn drv<T>(r: Result<T, DriverError>) -> Result<T, ToolError> {
    r.map_err(driver_error)
}
