//! Accessibility snapshot vocabulary (PROTOCOL §4.2): one set of roles and states
//! whatever the platform, so a model's plan never depends on the toolkit.

use serde::{Deserialize, Serialize};

/// The platform-neutral role of an element. Unknown platform roles map to `Custom`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A top-level window.
    Window,
    /// A dialog or alert.
    Dialog,
    /// A panel, frame or other plain container.
    Pane,
    /// A labelled grouping (a group box, a fieldset).
    Group,
    /// A push or toggle button.
    Button,
    /// A check box (`checked` in its states).
    Checkbox,
    /// A radio button.
    Radiobutton,
    /// A text field or text area.
    Edit,
    /// A drop-down or combo box.
    Combobox,
    /// A list or list box.
    List,
    /// An item of a list.
    Listitem,
    /// A menu or pop-up menu.
    Menu,
    /// A menu bar.
    Menubar,
    /// A menu item (check and radio items too).
    Menuitem,
    /// A tab list (the strip of tabs).
    Tab,
    /// One tab.
    Tabitem,
    /// Static text or a label.
    Text,
    /// An image or icon.
    Image,
    /// A link.
    Hyperlink,
    /// A slider.
    Slider,
    /// A scroll bar.
    Scrollbar,
    /// A spin button.
    Spinner,
    /// A progress bar.
    Progressbar,
    /// A tool bar.
    Toolbar,
    /// A status bar.
    Statusbar,
    /// A tree view.
    Tree,
    /// A node of a tree view.
    Treeitem,
    /// A table or grid.
    Table,
    /// A row of a table.
    Row,
    /// A cell of a table.
    Cell,
    /// A column or row header.
    Header,
    /// A document or web page.
    Document,
    /// A separator.
    Separator,
    /// Any role the platform has that this list does not: kept, not guessed.
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
    /// Has the keyboard focus.
    Focused,
    /// Can take the keyboard focus.
    Focusable,
    /// Accepts input (absent: greyed out).
    Enabled,
    /// Checked or pressed.
    Checked,
    /// Selected in its list, tree or table.
    Selected,
    /// Expanded (a tree node, a combo box).
    Expanded,
    /// Its text can be edited.
    Editable,
    /// A password field: its value is never read, and typing into it is redacted.
    Password,
    /// On screen now.
    Visible,
}

/// One node of a snapshot. `rect` is `[left, top, right, bottom]` on the canvas.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct A11yNode {
    /// The node's number in this snapshot: what `snapshot_id` + `id` name, valid until the next snapshot.
    pub id: u32,
    /// A reference to the element that stays valid across snapshots while the element
    /// lives (absent on the synthetic desktop root).
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub element_ref: Option<String>,
    /// What kind of element it is.
    pub role: Role,
    /// Its accessible name (a button's label, a field's label).
    pub name: String,
    /// Its current value (a field's text, a slider's position); never set for a password field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Its states; what is absent is false.
    pub states: Vec<StateFlag>,
    /// `[left, top, right, bottom]` on the canvas; absent when the platform gives none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rect: Option<[i32; 4]>,
    /// Set on top-level window nodes: the `id` of `window.list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_id: Option<u64>,
    /// Its child elements, in the platform's order.
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
