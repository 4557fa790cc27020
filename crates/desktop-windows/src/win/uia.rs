//! The seam to UI Automation. On a real Windows the system's `CUIAutomation` is the
//! accessibility API applications implement (WPF, WinUI, Chromium, Electron answer
//! only it); Wine 8 has no such class, so the tree comes from MSAA (`a11y.rs`), which
//! Wine's standard controls answer. This module says which of the two the system has;
//! the tree walker over UI Automation is not built yet, so `a11y_tree` reads MSAA
//! everywhere and `check` says that UI Automation-only applications show their windows
//! without their insides.

use windows::Win32::System::Com::{CLSCTX_INPROC_SERVER, CoCreateInstance};
use windows::Win32::UI::Accessibility::{CUIAutomation, IUIAutomation};

/// Whether the system can create a UI Automation client, or why not.
pub fn probe() -> Result<(), String> {
    super::a11y::com_init();
    // SAFETY: a COM activation on a thread where COM is initialised; the object is
    // released when dropped.
    let created: windows::core::Result<IUIAutomation> =
        unsafe { CoCreateInstance(&CUIAutomation, None, CLSCTX_INPROC_SERVER) };
    created
        .map(|_| ())
        .map_err(|e| format!("no UI Automation client on this system: {e}"))
}
