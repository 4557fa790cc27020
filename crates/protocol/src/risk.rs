//! Risk classes (PROTOCOL §4): ordered so thresholds compare with `>=`.

use serde::{Deserialize, Serialize};

/// How much harm an action can do; `high` needs a human by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Reads or moves nothing a person would mind.
    Benign,
    /// Changes something that can be undone.
    Moderate,
    /// Can do lasting harm: asks a person by default.
    High,
}

impl Risk {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Benign => "benign",
            Risk::Moderate => "moderate",
            Risk::High => "high",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(s: &str) -> Option<Risk> {
        match s {
            "benign" => Some(Risk::Benign),
            "moderate" => Some(Risk::Moderate),
            "high" => Some(Risk::High),
            _ => None,
        }
    }
}
