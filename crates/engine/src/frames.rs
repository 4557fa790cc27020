//! Frame numbers and layout generations: a coordinate computed from a capture taken
//! before the layout changed is refused (`stale_frame`), never clicked.

use std::sync::{Arc, Mutex};

use cc_protocol::{ErrorCode, Rect, ToolError};

/// The latest encoded capture, exactly as the agent received it, kept so an operator
/// console can show what the model is looking at (HTTP `GET /frame`).
#[derive(Debug, Clone)]
pub struct Shot {
    /// The frame number the agent cites back (`stale_frame` checks it).
    pub frame: u64,
    /// MIME type of `bytes` (`image/png`, `image/jpeg`, `image/webp`).
    pub mime: &'static str,
    /// The encoded image, shared rather than copied per reader.
    pub bytes: Arc<[u8]>,
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// The canvas rectangle the image shows.
    pub region: Rect,
}

/// Shared between the worker (which writes it) and the engine facade (which reads it).
pub type ShotSlot = Arc<Mutex<Option<Arc<Shot>>>>;

/// The latest capture the agent received with its image, remembered (as a fingerprint,
/// not its pixels) to tell whether the next one shows anything new, and where.
#[derive(Debug, Clone)]
pub struct Seen {
    pub frame: u64,
    /// What was asked (area, image size, format…): an equal key and an equal
    /// fingerprint make an equal image.
    pub key: String,
    /// The physical rectangle captured.
    pub area: cc_protocol::PhysicalRect,
    pub fingerprint: crate::changes::Fingerprint,
}

/// Frame bookkeeping of one server.
#[derive(Debug, Clone, Default)]
pub struct Frames {
    latest: u64,
    /// The first frame number of the current layout generation.
    generation_start: u64,
    /// The latest capture's image.
    shot: ShotSlot,
    /// The latest capture the session's agent received, in this layout generation.
    seen: Option<Seen>,
}

impl Frames {
    /// Numbers a new capture.
    pub fn issue(&mut self) -> u64 {
        self.latest += 1;
        self.latest
    }

    /// The latest frame number (0 before any capture).
    pub fn latest(&self) -> u64 {
        self.latest
    }

    /// Keeps a capture's image as the latest one (replacing the previous one).
    pub fn publish(&self, shot: Shot) {
        *self.shot.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(shot));
    }

    /// The slot holding the latest capture's image.
    pub fn shot_slot(&self) -> ShotSlot {
        self.shot.clone()
    }

    /// Records a layout change: every frame so far is stale.
    pub fn layout_changed(&mut self) {
        self.generation_start = self.latest + 1;
        self.seen = None;
    }

    /// The latest capture the agent received, if any in this session and layout.
    pub fn seen(&self) -> Option<&Seen> {
        self.seen.as_ref()
    }

    /// Remembers the capture the agent just received.
    pub fn saw(&mut self, seen: Seen) {
        self.seen = Some(seen);
    }

    /// Forgets what the agent saw: a new session's agent has seen nothing.
    pub fn forget_seen(&mut self) {
        self.seen = None;
    }

    /// Checks a cited frame.
    pub fn check(&self, cited: Option<u64>) -> Result<(), ToolError> {
        let Some(f) = cited else {
            return Ok(());
        };
        if f == 0 || f > self.latest {
            let msg = format!("frame {f} was never captured (latest is {})", self.latest);
            return Err(ToolError::with_data(
                ErrorCode::InvalidArguments,
                msg.clone(),
                serde_json::json!({"issues": [{"path": "frame", "message": msg}]}),
            ));
        }
        if f < self.generation_start {
            return Err(ToolError::with_data(
                ErrorCode::StaleFrame,
                format!("frame {f} was taken before the screen layout changed; capture again"),
                serde_json::json!({"frame": f, "first_valid_frame": self.generation_start}),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_before_a_change_are_stale() {
        let mut f = Frames::default();
        let a = f.issue();
        assert!(f.check(Some(a)).is_ok());
        f.layout_changed();
        assert_eq!(f.check(Some(a)).unwrap_err().code, ErrorCode::StaleFrame);
        let b = f.issue();
        assert!(f.check(Some(b)).is_ok());
        assert_eq!(
            f.check(Some(b + 1)).unwrap_err().code,
            ErrorCode::InvalidArguments
        );
        assert!(f.check(None).is_ok());
        assert_eq!(
            f.check(Some(0)).unwrap_err().code,
            ErrorCode::InvalidArguments,
            "frame numbers start at 1"
        );
    }
}
