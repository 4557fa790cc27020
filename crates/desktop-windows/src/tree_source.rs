//! Which accessibility API the driver reads the tree through, and what is lost when it
//! is MSAA: said by `check` and the driver's report, so nobody mistakes a tree without
//! an application's insides for an empty application.

use cc_desktop::RawNode;

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

/// The trees of `windows` in order, each read through `uia` when there is a client and
/// it can read the window, else through `msaa`, all taking nodes from one `budget`:
/// the windows after the one the budget ran out in are not read.
pub fn read_windows<U, M>(
    windows: &[u64],
    budget: &mut usize,
    mut uia: Option<U>,
    mut msaa: M,
) -> Vec<RawNode>
where
    U: FnMut(u64, &mut usize) -> Result<Option<RawNode>, String>,
    M: FnMut(u64, &mut usize) -> Option<RawNode>,
{
    let mut out = Vec::new();
    for &w in windows {
        let node = match uia.as_mut().map(|read| read(w, budget)) {
            Some(Ok(node)) => node,
            Some(Err(_)) | None => msaa(w, budget),
        };
        match node {
            Some(n) => out.push(n),
            None => break,
        }
    }
    out
}

/// A failed call as the report words it: the call, its HRESULT, and the system's
/// text for it, or the HRESULT's name where the system has no text (Wine has none).
pub fn failure(call: &str, hresult: u32, message: &str) -> String {
    let message = message.trim();
    let name = match hresult {
        0x8004_0154 => "REGDB_E_CLASSNOTREG, the class is not registered",
        0x8000_4001 => "E_NOTIMPL",
        0x8007_0005 => "E_ACCESSDENIED",
        0x8004_0201 => "UIA_E_ELEMENTNOTAVAILABLE",
        _ => "",
    };
    let text = if message.is_empty() { name } else { message };
    if text.is_empty() {
        format!("{call} failed: {hresult:#010x}")
    } else {
        format!("{call} failed: {hresult:#010x} ({text})")
    }
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
    use cc_desktop::ElementHandle;
    use cc_protocol::Role;

    fn window(api: &str, w: u64, budget: &mut usize) -> Option<RawNode> {
        *budget = budget.checked_sub(1)?;
        Some(RawNode {
            handle: ElementHandle(format!("{api}:{w:x}")),
            role: Role::Window,
            name: String::new(),
            value: None,
            states: Vec::new(),
            rect: None,
            window_id: Some(w),
            children: Vec::new(),
        })
    }

    fn handles(nodes: &[RawNode]) -> Vec<&str> {
        nodes.iter().map(|n| n.handle.0.as_str()).collect()
    }

    #[test]
    fn failures_name_their_hresult_when_the_system_has_no_text() {
        assert_eq!(
            failure("CoCreateInstance(CUIAutomation)", 0x8004_0154, ""),
            "CoCreateInstance(CUIAutomation) failed: 0x80040154 (REGDB_E_CLASSNOTREG, the \
             class is not registered)"
        );
        assert_eq!(
            failure("Invoke", 0x8004_0154, "Class not registered\r\n"),
            "Invoke failed: 0x80040154 (Class not registered)"
        );
        assert_eq!(
            failure("Toggle", 0x8000_ffff, " "),
            "Toggle failed: 0x8000ffff"
        );
    }

    #[test]
    fn a_window_ui_automation_cannot_read_comes_from_msaa() {
        let uia = |w: u64, b: &mut usize| {
            if w == 2 {
                Err("ElementFromHandle failed: 0x80070005".to_string())
            } else {
                Ok(window("uia", w, b))
            }
        };
        let msaa = |w: u64, b: &mut usize| window("hwnd", w, b);
        let mut budget = 10;
        let read = read_windows(&[1, 2, 3], &mut budget, Some(uia), msaa);
        assert_eq!(handles(&read), ["uia:1", "hwnd:2", "uia:3"]);
        assert_eq!(budget, 7);
    }

    #[test]
    fn without_a_client_every_window_is_msaa_and_the_budget_ends_the_list() {
        type Uia = fn(u64, &mut usize) -> Result<Option<RawNode>, String>;
        let msaa = |w: u64, b: &mut usize| window("hwnd", w, b);
        let mut budget = 2;
        let read = read_windows(&[1, 2, 3], &mut budget, None::<Uia>, msaa);
        assert_eq!(handles(&read), ["hwnd:1", "hwnd:2"]);
        assert_eq!(budget, 0);
    }

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
