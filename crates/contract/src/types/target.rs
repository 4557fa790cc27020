//! Evidence that binds an action to one fresh observation of its target.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::number::js_f64;

/// A platform window id. Upstream sends a number (X11, CGWindowID) or a string
/// (`"HWND:0x1A2B"`), and clients may send either for the same window, so comparisons go
/// through [`WindowId::same_window`] (`42` and `"42"` are the same window).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum WindowId {
    /// A numeric id.
    Number(u64),
    /// A textual id.
    String(String),
}

impl WindowId {
    /// The id as text: numbers in decimal, strings as they are.
    pub fn normalized(&self) -> Cow<'_, str> {
        match self {
            WindowId::Number(n) => Cow::Owned(n.to_string()),
            WindowId::String(s) => Cow::Borrowed(s),
        }
    }

    /// Whether two ids name the same window after normalisation.
    pub fn same_window(&self, other: &WindowId) -> bool {
        self.normalized() == other.normalized()
    }
}

impl fmt::Display for WindowId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.normalized())
    }
}

impl From<u64> for WindowId {
    fn from(value: u64) -> Self {
        WindowId::Number(value)
    }
}

impl From<&str> for WindowId {
    fn from(value: &str) -> Self {
        WindowId::String(value.to_owned())
    }
}

/// Screen rectangle of a target element, in the platform's logical coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bounds {
    /// Left edge.
    #[serde(with = "js_f64")]
    pub x: f64,
    /// Top edge.
    #[serde(with = "js_f64")]
    pub y: f64,
    /// Width.
    #[serde(with = "js_f64")]
    pub width: f64,
    /// Height.
    #[serde(with = "js_f64")]
    pub height: f64,
}

/// What the caller observed about the target. Carries digests, never raw titles or
/// labels, so it can sit in events and receipts. Execute revalidates it (window, app, pid,
/// title digest, bounds within ±4 px, age ≤ 30 s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TargetEvidence {
    /// Node-style platform name: `darwin`, `win32`, `linux`.
    pub platform: String,
    /// Application id (bundle id, executable path, desktop id).
    pub app_id: String,
    /// Owning process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Target window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_id: Option<WindowId>,
    /// `sha256:` digest of the window title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_title_digest: Option<String>,
    /// Display holding the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_id: Option<String>,
    /// Accessibility role of the target element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// `sha256:` digest of the element label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_digest: Option<String>,
    /// Element rectangle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Bounds>,
    /// The observation this evidence comes from.
    pub observation_id: String,
    /// Hash of the screenshot of that observation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot_hash: Option<String>,
    /// Revision of the accessibility tree of that observation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui_tree_revision: Option<String>,
    /// Confidence in the identification, 0..=1.
    #[serde(with = "js_f64")]
    pub confidence: f64,
    /// When the observation was taken (RFC 3339).
    pub captured_at: String,
}
