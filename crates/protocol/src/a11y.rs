//! Accessibility snapshot vocabulary (PROTOCOL §4.2): one set of roles and states
//! whatever the platform, so a model's plan never depends on the toolkit.

use serde::{Deserialize, Serialize};

/// The platform-neutral role of an element. Unknown platform roles map to `Custom`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Window,
    Dialog,
    Pane,
    Group,
    Button,
    Checkbox,
    Radiobutton,
    Edit,
    Combobox,
    List,
    Listitem,
    Menu,
    Menubar,
    Menuitem,
    Tab,
    Tabitem,
    Text,
    Image,
    Hyperlink,
    Slider,
    Scrollbar,
    Spinner,
    Progressbar,
    Toolbar,
    Statusbar,
    Tree,
    Treeitem,
    Table,
    Row,
    Cell,
    Header,
    Document,
    Separator,
    Custom,
}

impl Role {
    /// Every role, in the spec's order.
    pub const ALL: [Role; 34] = [
        Role::Window,
        Role::Dialog,
        Role::Pane,
        Role::Group,
        Role::Button,
        Role::Checkbox,
        Role::Radiobutton,
        Role::Edit,
        Role::Combobox,
        Role::List,
        Role::Listitem,
        Role::Menu,
        Role::Menubar,
        Role::Menuitem,
        Role::Tab,
        Role::Tabitem,
        Role::Text,
        Role::Image,
        Role::Hyperlink,
        Role::Slider,
        Role::Scrollbar,
        Role::Spinner,
        Role::Progressbar,
        Role::Toolbar,
        Role::Statusbar,
        Role::Tree,
        Role::Treeitem,
        Role::Table,
        Role::Row,
        Role::Cell,
        Role::Header,
        Role::Document,
        Role::Separator,
        Role::Custom,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        // Kept in sync with serde by the test below.
        match self {
            Role::Window => "window",
            Role::Dialog => "dialog",
            Role::Pane => "pane",
            Role::Group => "group",
            Role::Button => "button",
            Role::Checkbox => "checkbox",
            Role::Radiobutton => "radiobutton",
            Role::Edit => "edit",
            Role::Combobox => "combobox",
            Role::List => "list",
            Role::Listitem => "listitem",
            Role::Menu => "menu",
            Role::Menubar => "menubar",
            Role::Menuitem => "menuitem",
            Role::Tab => "tab",
            Role::Tabitem => "tabitem",
            Role::Text => "text",
            Role::Image => "image",
            Role::Hyperlink => "hyperlink",
            Role::Slider => "slider",
            Role::Scrollbar => "scrollbar",
            Role::Spinner => "spinner",
            Role::Progressbar => "progressbar",
            Role::Toolbar => "toolbar",
            Role::Statusbar => "statusbar",
            Role::Tree => "tree",
            Role::Treeitem => "treeitem",
            Role::Table => "table",
            Role::Row => "row",
            Role::Cell => "cell",
            Role::Header => "header",
            Role::Document => "document",
            Role::Separator => "separator",
            Role::Custom => "custom",
        }
    }
}

/// The platform-neutral states an element can report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StateFlag {
    Focused,
    Focusable,
    Enabled,
    Checked,
    Selected,
    Expanded,
    Editable,
    Password,
    Visible,
}

/// One node of a snapshot. `rect` is `[left, top, right, bottom]` on the canvas.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct A11yNode {
    pub id: u32,
    /// A reference to the element that stays valid across snapshots while the element
    /// lives (absent on the synthetic desktop root).
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub element_ref: Option<String>,
    pub role: Role,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub states: Vec<StateFlag>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rect: Option<[i32; 4]>,
    /// Set on top-level window nodes: the `id` of `window.list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_id: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<A11yNode>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_spelling_matches_serde() {
        for role in Role::ALL {
            assert_eq!(
                serde_json::to_value(role).unwrap(),
                serde_json::Value::String(role.as_str().into())
            );
        }
    }
}
