//! Frame numbers and layout generations: a coordinate computed from a capture taken
//! before the layout changed is refused (`stale_frame`), never clicked.

use cc_protocol::{ErrorCode, ToolError};

/// Frame bookkeeping of one server.
#[derive(Debug, Clone, Default)]
pub struct Frames {
    latest: u64,
    /// The first frame number of the current layout generation.
    generation_start: u64,
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

    /// Records a layout change: every frame so far is stale.
    pub fn layout_changed(&mut self) {
        self.generation_start = self.latest + 1;
    }

    /// Checks a cited frame.
    pub fn check(&self, cited: Option<u64>) -> Result<(), ToolError> {
        let Some(f) = cited else {
            return Ok(());
        };
        if f > self.latest {
            return Err(ToolError::new(
                ErrorCode::InvalidArguments,
                format!("frame {f} was never captured (latest is {})", self.latest),
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
    }
}
