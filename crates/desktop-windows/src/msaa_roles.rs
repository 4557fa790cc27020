//! MSAA roles and states in the protocol's vocabulary, without a desktop, and the
//! window classes whose role Wine's proxies do not report.

use cc_protocol::{Role, StateFlag};

/// `ROLE_SYSTEM_*` → a role. Unknown roles are `Custom`.
pub fn role(msaa: i32) -> Role {
    match msaa {
        0x02 => Role::Menubar,
        0x03 => Role::Scrollbar,
        0x09 => Role::Window,
        0x0A | 0x10 => Role::Pane,
        0x0B => Role::Menu,
        0x0C => Role::Menuitem,
        0x0F => Role::Document,
        0x12 => Role::Dialog,
        0x14 => Role::Group,
        0x15 => Role::Separator,
        0x16 => Role::Toolbar,
        0x17 => Role::Statusbar,
        0x18 => Role::Table,
        0x19 | 0x1A => Role::Header,
        0x1C => Role::Row,
        0x1D => Role::Cell,
        0x1E => Role::Hyperlink,
        0x21 => Role::List,
        0x22 => Role::Listitem,
        0x23 => Role::Tree,
        0x24 => Role::Treeitem,
        0x25 => Role::Tabitem,
        0x28 => Role::Image,
        0x29 => Role::Text,
        0x2A => Role::Edit,
        0x2B => Role::Button,
        0x2C => Role::Checkbox,
        0x2D => Role::Radiobutton,
        0x2E => Role::Combobox,
        0x30 => Role::Progressbar,
        0x33 => Role::Slider,
        0x34 => Role::Spinner,
        0x3C => Role::Tab,
        _ => Role::Custom,
    }
}

/// The role a standard window class stands for, where an MSAA proxy reports only a
/// generic client (Wine has no Button proxy). `style` picks check and radio buttons.
pub fn class_role(class: &str, style: u32) -> Option<Role> {
    const BS_TYPEMASK: u32 = 0xF;
    Some(match class.to_ascii_lowercase().as_str() {
        "edit" | "richedit20w" | "richedit50w" => Role::Edit,
        "static" => Role::Text,
        "combobox" => Role::Combobox,
        "listbox" => Role::List,
        "button" => match style & BS_TYPEMASK {
            0x2 | 0x3 | 0x5 | 0x6 => Role::Checkbox,
            0x4 | 0x9 => Role::Radiobutton,
            0x7 => Role::Group,
            _ => Role::Button,
        },
        "#32770" => Role::Dialog,
        "msctls_statusbar32" => Role::Statusbar,
        "toolbarwindow32" => Role::Toolbar,
        "msctls_progress32" => Role::Progressbar,
        "msctls_trackbar32" => Role::Slider,
        "systreeview32" => Role::Tree,
        "syslistview32" => Role::List,
        "systabcontrol32" => Role::Tab,
        _ => return None,
    })
}

/// A button's `BM_GETCHECK` answer as MSAA state bits: `BST_CHECKED` is
/// `STATE_SYSTEM_CHECKED`, `BST_INDETERMINATE` is `STATE_SYSTEM_MIXED`.
pub fn check_bits(check: isize) -> u32 {
    match check {
        1 => 0x10,
        2 => 0x20,
        _ => 0,
    }
}

/// `ES_PASSWORD`: an edit control that shows bullets.
pub const ES_PASSWORD: u32 = 0x20;
/// `ES_READONLY`.
pub const ES_READONLY: u32 = 0x800;

/// `STATE_SYSTEM_*` bits → flags. `visible` and `enabled` are the absence of
/// `INVISIBLE` and `UNAVAILABLE`; `editable` needs the caller's role.
pub fn states(bits: u32, editable_role: bool) -> Vec<StateFlag> {
    let mut out = Vec::new();
    let has = |b: u32| bits & b != 0;
    if has(0x4) {
        out.push(StateFlag::Focused);
    }
    if has(0x10_0000) {
        out.push(StateFlag::Focusable);
    }
    if !has(0x1) {
        out.push(StateFlag::Enabled);
    }
    if has(0x10) {
        out.push(StateFlag::Checked);
    }
    if has(0x2) {
        out.push(StateFlag::Selected);
    }
    if has(0x200) {
        out.push(StateFlag::Expanded);
    }
    if editable_role && !has(0x40) && !has(0x1) {
        out.push(StateFlag::Editable);
    }
    if has(0x2000_0000) {
        out.push(StateFlag::Password);
    }
    if !has(0x8000) {
        out.push(StateFlag::Visible);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msaa_roles_map_to_the_vocabulary() {
        assert_eq!(role(0x2A), Role::Edit);
        assert_eq!(role(0x2B), Role::Button);
        assert_eq!(role(0x0A), Role::Pane);
        assert_eq!(role(0x7777), Role::Custom);
    }

    #[test]
    fn classes_stand_in_where_the_proxy_is_generic() {
        assert_eq!(class_role("Button", 0x0), Some(Role::Button));
        assert_eq!(class_role("BUTTON", 0x3), Some(Role::Checkbox));
        assert_eq!(class_role("Button", 0x9), Some(Role::Radiobutton));
        assert_eq!(class_role("Edit", 0), Some(Role::Edit));
        assert_eq!(class_role("Notepad", 0), None);
    }

    #[test]
    fn a_buttons_check_is_the_checked_bit() {
        assert!(states(check_bits(1), false).contains(&StateFlag::Checked));
        assert!(!states(check_bits(0), false).contains(&StateFlag::Checked));
        assert!(!states(check_bits(2), false).contains(&StateFlag::Checked));
    }

    #[test]
    fn states_follow_the_bits() {
        let plain = states(0, true);
        assert!(plain.contains(&StateFlag::Enabled));
        assert!(plain.contains(&StateFlag::Visible));
        assert!(plain.contains(&StateFlag::Editable));
        let locked = states(0x1 | 0x40 | 0x8000 | 0x2000_0000 | 0x4, true);
        assert!(!locked.contains(&StateFlag::Enabled));
        assert!(!locked.contains(&StateFlag::Editable));
        assert!(!locked.contains(&StateFlag::Visible));
        assert!(locked.contains(&StateFlag::Password));
        assert!(locked.contains(&StateFlag::Focused));
        assert!(!states(0, false).contains(&StateFlag::Editable));
    }
}
