//! UI Automation's vocabulary in the protocol's, without a desktop: control types to
//! roles, the patterns an element supports to the semantic actions it offers, its
//! properties to state flags, its bounding rectangle to physical pixels, and the rule
//! that a password field's value is never read. The walker over the system's
//! `IUIAutomation` (`win/uia.rs`) only gathers these facts; what they mean is here, so
//! it is tested on every platform (Wine has no UI Automation to test it against).

use cc_desktop::SemanticAction;
use cc_protocol::{PhysicalRect, Role, StateFlag};

/// `UIA_*ControlTypeId` → a role. Unknown types are `Custom`.
pub fn role(control_type: i32) -> Role {
    match control_type {
        50000 | 50031 => Role::Button, // Button, SplitButton
        50002 => Role::Checkbox,
        50003 => Role::Combobox,
        50004 => Role::Edit,
        50005 => Role::Hyperlink,
        50006 => Role::Image,
        50007 | 50029 => Role::Listitem, // ListItem, DataItem
        50008 => Role::List,
        50009 => Role::Menu,
        50010 => Role::Menubar,
        50011 => Role::Menuitem,
        50012 => Role::Progressbar,
        50013 => Role::Radiobutton,
        50014 => Role::Scrollbar,
        50015 => Role::Slider,
        50016 => Role::Spinner,
        50017 => Role::Statusbar,
        50018 => Role::Tab,
        50019 => Role::Tabitem,
        50020 => Role::Text,
        50021 | 50040 => Role::Toolbar, // ToolBar, AppBar
        50023 => Role::Tree,
        50024 => Role::Treeitem,
        50026 => Role::Group,
        50028 | 50036 => Role::Table, // DataGrid, Table
        50030 => Role::Document,
        50032 => Role::Window,
        50033 | 50039 => Role::Pane, // Pane, SemanticZoom
        50034 | 50035 => Role::Header,
        50038 => Role::Separator,
        _ => Role::Custom,
    }
}

/// `UIA_InvokePatternId`.
pub const INVOKE_PATTERN: i32 = 10000;
/// `UIA_ValuePatternId`.
pub const VALUE_PATTERN: i32 = 10002;
/// `UIA_ExpandCollapsePatternId`.
pub const EXPAND_COLLAPSE_PATTERN: i32 = 10005;
/// `UIA_SelectionItemPatternId`.
pub const SELECTION_ITEM_PATTERN: i32 = 10010;
/// `UIA_TogglePatternId`.
pub const TOGGLE_PATTERN: i32 = 10015;

/// The patterns an element supports, as far as the driver uses them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Patterns {
    /// `InvokePattern`: a button, a menu item, a link.
    pub invoke: bool,
    /// `TogglePattern`, with its state (`ToggleState_On` is 1).
    pub toggle: Option<i32>,
    /// `ValuePattern`, with `IsReadOnly`.
    pub value_read_only: Option<bool>,
    /// `SelectionItemPattern`, with `IsSelected`.
    pub selection_item: Option<bool>,
    /// `ExpandCollapsePattern`, with its state (`ExpandCollapseState_Expanded` is 1).
    pub expand_collapse: Option<i32>,
}

/// The semantic actions the patterns offer, in `Invoke`, `Toggle`, `Select` order.
/// An element that can only be expanded is invoked by expanding it.
pub fn actions(p: &Patterns) -> Vec<SemanticAction> {
    let mut out = Vec::new();
    if p.invoke || (p.expand_collapse.is_some() && p.toggle.is_none()) {
        out.push(SemanticAction::Invoke);
    }
    if p.toggle.is_some() {
        out.push(SemanticAction::Toggle);
    }
    if p.selection_item.is_some() {
        out.push(SemanticAction::Select);
    }
    out
}

/// What performing `action` on an element with these patterns calls, or why nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// `IUIAutomationInvokePattern::Invoke`.
    Invoke,
    /// `IUIAutomationExpandCollapsePattern::Expand` (or `Collapse` when expanded).
    ExpandOrCollapse,
    /// `IUIAutomationTogglePattern::Toggle`.
    Toggle,
    /// `IUIAutomationSelectionItemPattern::Select`.
    Select,
    /// `IUIAutomationElement::SetFocus`: activating an edit or a document is giving it
    /// the keyboard ([`invoke_focuses`]).
    Focus,
}

/// Whether invoking the element means giving it keyboard focus: an enabled, focusable
/// edit or document with no pattern that presses it. Without this its activation would
/// be a click at its centre, which may land on a caret position or a link inside it.
pub fn invoke_focuses(role: Role, f: &Facts, p: &Patterns) -> bool {
    matches!(role, Role::Edit | Role::Document)
        && f.focusable
        && f.enabled
        && !p.invoke
        && p.toggle.is_none()
        && p.expand_collapse.is_none()
}

/// The call that performs `action`, or the reason the element cannot.
pub fn call_for(action: SemanticAction, p: &Patterns) -> Result<Call, String> {
    match action {
        SemanticAction::Invoke if p.invoke => Ok(Call::Invoke),
        SemanticAction::Invoke if p.expand_collapse.is_some() => Ok(Call::ExpandOrCollapse),
        // A check box offers Toggle only; pressing it is toggling it.
        SemanticAction::Invoke if p.toggle.is_some() => Ok(Call::Toggle),
        SemanticAction::Toggle if p.toggle.is_some() => Ok(Call::Toggle),
        SemanticAction::Select if p.selection_item.is_some() => Ok(Call::Select),
        _ => Err(format!(
            "the element supports no UI Automation pattern for {action:?}"
        )),
    }
}

/// Whether `a11y.set_text` may write through `ValuePattern::SetValue`.
pub fn settable_text(p: &Patterns, enabled: bool) -> bool {
    enabled && p.value_read_only == Some(false)
}

/// The value a node may show: never a password field's (`IsPassword`), whatever the
/// element would answer; an empty value is no value, except an edit's.
pub fn value(role: Role, password: bool, read: Option<String>) -> Option<String> {
    if password {
        return None;
    }
    match read {
        Some(v) if !v.is_empty() || role == Role::Edit => Some(v),
        None if role == Role::Edit => Some(String::new()),
        _ => None,
    }
}

/// The properties that become state flags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Facts {
    /// `HasKeyboardFocus`.
    pub focused: bool,
    /// `IsKeyboardFocusable`.
    pub focusable: bool,
    /// `IsEnabled`.
    pub enabled: bool,
    /// `IsOffscreen`.
    pub offscreen: bool,
    /// `IsPassword`.
    pub password: bool,
}

/// The state flags of an element with these properties and patterns.
pub fn states(f: &Facts, p: &Patterns) -> Vec<StateFlag> {
    let mut out = Vec::new();
    if f.focused {
        out.push(StateFlag::Focused);
    }
    if f.focusable {
        out.push(StateFlag::Focusable);
    }
    if f.enabled {
        out.push(StateFlag::Enabled);
    }
    if p.toggle == Some(1) {
        out.push(StateFlag::Checked);
    }
    if p.selection_item == Some(true) {
        out.push(StateFlag::Selected);
    }
    if p.expand_collapse == Some(1) {
        out.push(StateFlag::Expanded);
    }
    if settable_text(p, f.enabled) {
        out.push(StateFlag::Editable);
    }
    if f.password {
        out.push(StateFlag::Password);
    }
    if !f.offscreen {
        out.push(StateFlag::Visible);
    }
    out
}

/// `BoundingRectangle` (screen coordinates as doubles; physical pixels in a
/// per-monitor aware process) → a rectangle. An empty or non-finite one (an element
/// that is not laid out) is `None`.
pub fn rect(left: f64, top: f64, width: f64, height: f64) -> Option<PhysicalRect> {
    let all = [left, top, width, height];
    if all.iter().any(|v| !v.is_finite()) || width < 0.5 || height < 0.5 {
        return None;
    }
    let limit = f64::from(i32::MAX);
    if all.iter().any(|v| v.abs() > limit) {
        return None;
    }
    Some(PhysicalRect {
        x: left.round() as i32,
        y: top.round() as i32,
        width: width.round() as u32,
        height: height.round() as u32,
    })
}

/// What every UI Automation element's handle starts with (MSAA's start `hwnd:`).
pub const HANDLE_PREFIX: &str = "uia:";

/// A UI Automation element's handle: `uia:` and its runtime id, which the walker finds
/// again under the same top-level window.
pub fn handle(window: u64, runtime_id: &[i32]) -> String {
    let ids: Vec<String> = runtime_id.iter().map(|i| format!("{i:x}")).collect();
    format!("{HANDLE_PREFIX}{window:x}:{}", ids.join("."))
}

/// The window and runtime id a `uia:` handle names, or `None` for any other text.
pub fn parse_handle(text: &str) -> Option<(u64, Vec<i32>)> {
    let rest = text.strip_prefix(HANDLE_PREFIX)?;
    let (window, ids) = rest.split_once(':')?;
    let window = u64::from_str_radix(window, 16).ok()?;
    let ids = ids
        .split('.')
        .map(|i| u32::from_str_radix(i, 16).ok().map(|u| u as i32))
        .collect::<Option<Vec<i32>>>()?;
    (!ids.is_empty()).then_some((window, ids))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_types_map_to_the_vocabulary() {
        assert_eq!(role(50000), Role::Button);
        assert_eq!(role(50031), Role::Button);
        assert_eq!(role(50004), Role::Edit);
        assert_eq!(role(50002), Role::Checkbox);
        assert_eq!(role(50032), Role::Window);
        assert_eq!(role(50025), Role::Custom);
        assert_eq!(role(12345), Role::Custom);
    }

    #[test]
    fn patterns_offer_actions() {
        let button = Patterns {
            invoke: true,
            ..Default::default()
        };
        assert_eq!(actions(&button), vec![SemanticAction::Invoke]);
        assert_eq!(call_for(SemanticAction::Invoke, &button), Ok(Call::Invoke));
        assert!(call_for(SemanticAction::Toggle, &button).is_err());

        let checkbox = Patterns {
            toggle: Some(0),
            ..Default::default()
        };
        assert_eq!(actions(&checkbox), vec![SemanticAction::Toggle]);
        assert_eq!(
            call_for(SemanticAction::Invoke, &checkbox),
            Ok(Call::Toggle)
        );

        let item = Patterns {
            selection_item: Some(false),
            ..Default::default()
        };
        assert_eq!(actions(&item), vec![SemanticAction::Select]);
        assert_eq!(call_for(SemanticAction::Select, &item), Ok(Call::Select));
        let refused = call_for(SemanticAction::Invoke, &item).unwrap_err();
        assert!(refused.contains("Invoke"), "{refused}");

        let menu = Patterns {
            expand_collapse: Some(0),
            ..Default::default()
        };
        assert_eq!(actions(&menu), vec![SemanticAction::Invoke]);
        assert_eq!(
            call_for(SemanticAction::Invoke, &menu),
            Ok(Call::ExpandOrCollapse)
        );
        assert!(actions(&Patterns::default()).is_empty());
    }

    #[test]
    fn only_a_reachable_edit_or_document_is_invoked_by_focusing_it() {
        let reachable = Facts {
            focusable: true,
            enabled: true,
            ..Facts::default()
        };
        let plain = Patterns::default();
        assert!(invoke_focuses(Role::Edit, &reachable, &plain));
        assert!(invoke_focuses(Role::Document, &reachable, &plain));
        assert!(!invoke_focuses(Role::Pane, &reachable, &plain));
        let disabled = Facts {
            enabled: false,
            ..reachable
        };
        assert!(!invoke_focuses(Role::Edit, &disabled, &plain));
        let unreachable = Facts {
            focusable: false,
            ..reachable
        };
        assert!(!invoke_focuses(Role::Edit, &unreachable, &plain));
        let pressable = Patterns {
            invoke: true,
            ..Default::default()
        };
        assert!(!invoke_focuses(Role::Edit, &reachable, &pressable));
    }

    #[test]
    fn passwords_are_never_shown() {
        let secret = Some("hunter2".to_string());
        assert_eq!(value(Role::Edit, true, secret.clone()), None);
        assert_eq!(value(Role::Edit, false, secret.clone()), secret);
        assert_eq!(value(Role::Edit, false, None), Some(String::new()));
        assert_eq!(value(Role::Button, false, Some(String::new())), None);
        assert_eq!(
            value(Role::Slider, false, Some("5".into())),
            Some("5".into())
        );
    }

    #[test]
    fn states_follow_properties_and_patterns() {
        let edit = Patterns {
            value_read_only: Some(false),
            ..Default::default()
        };
        let on = Facts {
            focused: true,
            focusable: true,
            enabled: true,
            offscreen: false,
            password: true,
        };
        let s = states(&on, &edit);
        for f in [
            StateFlag::Focused,
            StateFlag::Focusable,
            StateFlag::Enabled,
            StateFlag::Editable,
            StateFlag::Password,
            StateFlag::Visible,
        ] {
            assert!(s.contains(&f), "{f:?} in {s:?}");
        }
        let off = Facts::default();
        let s = states(&off, &edit);
        assert!(!s.contains(&StateFlag::Editable), "disabled: {s:?}");
        assert!(!s.contains(&StateFlag::Enabled));
        assert!(s.contains(&StateFlag::Visible));
        let hidden = Facts {
            offscreen: true,
            ..Facts::default()
        };
        assert!(!states(&hidden, &edit).contains(&StateFlag::Visible));
        let read_only = Patterns {
            value_read_only: Some(true),
            ..Default::default()
        };
        assert!(!settable_text(&read_only, true));
        let ticked = Patterns {
            toggle: Some(1),
            selection_item: Some(true),
            expand_collapse: Some(1),
            ..Default::default()
        };
        let s = states(&off, &ticked);
        assert!(s.contains(&StateFlag::Checked));
        assert!(s.contains(&StateFlag::Selected));
        assert!(s.contains(&StateFlag::Expanded));
    }

    #[test]
    fn bounding_rectangles_become_physical_pixels() {
        assert_eq!(
            rect(-1920.0, 10.4, 300.6, 20.0),
            Some(PhysicalRect {
                x: -1920,
                y: 10,
                width: 301,
                height: 20
            })
        );
        assert_eq!(rect(0.0, 0.0, 0.0, 0.0), None);
        assert_eq!(rect(f64::INFINITY, 0.0, 10.0, 10.0), None);
        assert_eq!(rect(f64::NAN, 0.0, 10.0, 10.0), None);
        assert_eq!(rect(1e12, 0.0, 10.0, 10.0), None);
    }

    #[test]
    fn handles_round_trip_and_others_are_refused() {
        let h = handle(0x1a2b, &[42, -1, 7]);
        assert_eq!(parse_handle(&h), Some((0x1a2b, vec![42, -1, 7])));
        assert_eq!(parse_handle("hwnd:1a2b"), None);
        assert_eq!(parse_handle("uia:zz:1"), None);
        assert_eq!(parse_handle("uia:1a2b:"), None);
        assert_eq!(parse_handle("uia:1a2b"), None);
    }
}
