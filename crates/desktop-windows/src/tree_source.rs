//! Which accessibility API the driver reads the tree through, and what is lost when it
//! is MSAA: said by `check` and the driver's report, so nobody mistakes a tree without
//! an application's insides for an empty application.

/// The API the driver walks windows with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeSource {
    /// UI Automation through the system's `CUIAutomation` (a window it cannot read
    /// still comes from MSAA).
    UiAutomation,
    /// MSAA only, because the system has no UI Automation client (Wine): why.
    Msaa {
        /// The failed creation of the client, with its HRESULT.
        why: String,
    },
}

/// What a tree read through MSAA lacks compared with UI Automation.
pub const MSAA_MISSING: &str = "applications that answer only UI Automation (WPF, WinUI, \
Chromium, Electron) show their windows without their insides, and actions are MSAA default \
actions (no Invoke, Toggle, Value, ExpandCollapse or SelectionItem patterns)";

impl TreeSource {
    /// The name `check --json` reports (`uia` or `msaa`).
    pub fn name(&self) -> &'static str {
        match self {
            TreeSource::UiAutomation => "uia",
            TreeSource::Msaa { .. } => "msaa",
        }
    }

    /// What the tree lacks and why, or `None` when UI Automation reads it.
    pub fn missing(&self) -> Option<String> {
        match self {
            TreeSource::UiAutomation => None,
            TreeSource::Msaa { why } => Some(format!("{why}: {MSAA_MISSING}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msaa_says_why_and_what_is_missing() {
        let msaa = TreeSource::Msaa {
            why: "CoCreateInstance(CUIAutomation) failed: 0x80040154".into(),
        };
        assert_eq!(msaa.name(), "msaa");
        let missing = msaa.missing().unwrap();
        assert!(missing.contains("0x80040154"), "{missing}");
        assert!(missing.contains("Chromium"), "{missing}");
        assert_eq!(TreeSource::UiAutomation.name(), "uia");
        assert_eq!(TreeSource::UiAutomation.missing(), None);
    }
}
