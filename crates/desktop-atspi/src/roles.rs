//! AT-SPI roles and states mapped to the protocol's one vocabulary (PROTOCOL §4.2).
//! Numbers are `AtspiRole` / `AtspiStateType` values: a stable ABI, read raw so that a
//! toolkit newer than this code (an unknown role or state) never breaks a snapshot.

use cc_protocol::{Role, StateFlag};

/// `AtspiRole` values used below.
pub(crate) mod r {
    pub const ACCELERATOR_LABEL: u32 = 1;
    pub const ALERT: u32 = 2;
    pub const ANIMATION: u32 = 3;
    pub const CANVAS: u32 = 6;
    pub const CHECK_BOX: u32 = 7;
    pub const CHECK_MENU_ITEM: u32 = 8;
    pub const COLOR_CHOOSER: u32 = 9;
    pub const COLUMN_HEADER: u32 = 10;
    pub const COMBO_BOX: u32 = 11;
    pub const DIAL: u32 = 15;
    pub const DIALOG: u32 = 16;
    pub const DIRECTORY_PANE: u32 = 17;
    pub const FILE_CHOOSER: u32 = 19;
    pub const FILLER: u32 = 20;
    pub const FONT_CHOOSER: u32 = 22;
    pub const FRAME: u32 = 23;
    pub const GLASS_PANE: u32 = 24;
    pub const HTML_CONTAINER: u32 = 25;
    pub const ICON: u32 = 26;
    pub const IMAGE: u32 = 27;
    pub const INTERNAL_FRAME: u32 = 28;
    pub const LABEL: u32 = 29;
    pub const LAYERED_PANE: u32 = 30;
    pub const LIST: u32 = 31;
    pub const LIST_ITEM: u32 = 32;
    pub const MENU: u32 = 33;
    pub const MENU_BAR: u32 = 34;
    pub const MENU_ITEM: u32 = 35;
    pub const OPTION_PANE: u32 = 36;
    pub const PAGE_TAB: u32 = 37;
    pub const PAGE_TAB_LIST: u32 = 38;
    pub const PANEL: u32 = 39;
    pub const PASSWORD_TEXT: u32 = 40;
    pub const POPUP_MENU: u32 = 41;
    pub const PROGRESS_BAR: u32 = 42;
    pub const BUTTON: u32 = 43;
    pub const RADIO_BUTTON: u32 = 44;
    pub const RADIO_MENU_ITEM: u32 = 45;
    pub const ROOT_PANE: u32 = 46;
    pub const ROW_HEADER: u32 = 47;
    pub const SCROLL_BAR: u32 = 48;
    pub const SCROLL_PANE: u32 = 49;
    pub const SEPARATOR: u32 = 50;
    pub const SLIDER: u32 = 51;
    pub const SPIN_BUTTON: u32 = 52;
    pub const SPLIT_PANE: u32 = 53;
    pub const STATUS_BAR: u32 = 54;
    pub const TABLE: u32 = 55;
    pub const TABLE_CELL: u32 = 56;
    pub const TABLE_COLUMN_HEADER: u32 = 57;
    pub const TABLE_ROW_HEADER: u32 = 58;
    pub const TEAROFF_MENU_ITEM: u32 = 59;
    pub const TERMINAL: u32 = 60;
    pub const TEXT: u32 = 61;
    pub const TOGGLE_BUTTON: u32 = 62;
    pub const TOOL_BAR: u32 = 63;
    pub const TREE: u32 = 65;
    pub const TREE_TABLE: u32 = 66;
    pub const VIEWPORT: u32 = 68;
    pub const WINDOW: u32 = 69;
    pub const HEADER: u32 = 71;
    pub const FOOTER: u32 = 72;
    pub const PARAGRAPH: u32 = 73;
    pub const APPLICATION: u32 = 75;
    pub const AUTOCOMPLETE: u32 = 76;
    pub const EDITBAR: u32 = 77;
    pub const EMBEDDED: u32 = 78;
    pub const ENTRY: u32 = 79;
    pub const CAPTION: u32 = 81;
    pub const DOCUMENT_FRAME: u32 = 82;
    pub const HEADING: u32 = 83;
    pub const SECTION: u32 = 85;
    pub const FORM: u32 = 87;
    pub const LINK: u32 = 88;
    pub const TABLE_ROW: u32 = 90;
    pub const TREE_ITEM: u32 = 91;
    pub const DOCUMENT_SPREADSHEET: u32 = 92;
    pub const DOCUMENT_PRESENTATION: u32 = 93;
    pub const DOCUMENT_TEXT: u32 = 94;
    pub const DOCUMENT_WEB: u32 = 95;
    pub const DOCUMENT_EMAIL: u32 = 96;
    pub const LIST_BOX: u32 = 98;
    pub const GROUPING: u32 = 99;
    pub const INFO_BAR: u32 = 102;
    pub const LEVEL_BAR: u32 = 103;
    pub const ARTICLE: u32 = 109;
    pub const LANDMARK: u32 = 110;
    pub const STATIC: u32 = 116;
    pub const PUSH_BUTTON_MENU: u32 = 129;
    pub const SWITCH: u32 = 130;
}

/// `AtspiStateType` values used below.
pub(crate) mod s {
    pub const CHECKED: u32 = 4;
    pub const DEFUNCT: u32 = 6;
    pub const EDITABLE: u32 = 7;
    pub const ENABLED: u32 = 8;
    pub const EXPANDED: u32 = 10;
    pub const FOCUSABLE: u32 = 11;
    pub const FOCUSED: u32 = 12;
    pub const PRESSED: u32 = 20;
    pub const SELECTED: u32 = 23;
    pub const SENSITIVE: u32 = 24;
    pub const SHOWING: u32 = 25;
    pub const VISIBLE: u32 = 30;
    pub const MANAGES_DESCENDANTS: u32 = 31;
    pub const READ_ONLY: u32 = 43;
}

/// A state set as the two 32-bit words AT-SPI sends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct States(pub u64);

impl States {
    /// From the `au` of the wire (missing words are empty).
    pub fn from_words(words: &[u32]) -> States {
        let lo = u64::from(words.first().copied().unwrap_or(0));
        let hi = u64::from(words.get(1).copied().unwrap_or(0));
        States(lo | (hi << 32))
    }

    pub fn has(self, state: u32) -> bool {
        state < 64 && self.0 & (1u64 << state) != 0
    }

    /// On screen now: showing and visible.
    pub fn showing(self) -> bool {
        self.has(s::SHOWING) && self.has(s::VISIBLE)
    }
}

/// The protocol role of an AT-SPI role. A text role is `edit` when editable (or a
/// password) and `text` otherwise; unknown roles are `custom`.
pub(crate) fn role(atspi: u32, states: States) -> Role {
    match atspi {
        r::FRAME | r::WINDOW => Role::Window,
        r::DIALOG
        | r::ALERT
        | r::FILE_CHOOSER
        | r::COLOR_CHOOSER
        | r::FONT_CHOOSER
        | r::OPTION_PANE => Role::Dialog,
        r::PANEL
        | r::SCROLL_PANE
        | r::SPLIT_PANE
        | r::VIEWPORT
        | r::ROOT_PANE
        | r::LAYERED_PANE
        | r::GLASS_PANE
        | r::DIRECTORY_PANE
        | r::INTERNAL_FRAME
        | r::EMBEDDED
        | r::APPLICATION => Role::Pane,
        r::FILLER | r::GROUPING | r::SECTION | r::FORM | r::LANDMARK | r::FOOTER | r::INFO_BAR => {
            Role::Group
        }
        r::BUTTON | r::TOGGLE_BUTTON | r::PUSH_BUTTON_MENU | r::SWITCH => Role::Button,
        r::CHECK_BOX => Role::Checkbox,
        r::RADIO_BUTTON => Role::Radiobutton,
        r::ENTRY | r::PASSWORD_TEXT | r::EDITBAR | r::TERMINAL => Role::Edit,
        r::TEXT if states.has(s::EDITABLE) => Role::Edit,
        r::TEXT | r::LABEL | r::STATIC | r::CAPTION | r::PARAGRAPH | r::ACCELERATOR_LABEL => {
            Role::Text
        }
        r::COMBO_BOX | r::AUTOCOMPLETE => Role::Combobox,
        r::LIST | r::LIST_BOX => Role::List,
        r::LIST_ITEM => Role::Listitem,
        r::MENU | r::POPUP_MENU => Role::Menu,
        r::MENU_BAR => Role::Menubar,
        r::MENU_ITEM | r::CHECK_MENU_ITEM | r::RADIO_MENU_ITEM | r::TEAROFF_MENU_ITEM => {
            Role::Menuitem
        }
        r::PAGE_TAB_LIST => Role::Tab,
        r::PAGE_TAB => Role::Tabitem,
        r::IMAGE | r::ICON | r::ANIMATION | r::CANVAS => Role::Image,
        r::LINK => Role::Hyperlink,
        r::SLIDER | r::DIAL => Role::Slider,
        r::SCROLL_BAR => Role::Scrollbar,
        r::SPIN_BUTTON => Role::Spinner,
        r::PROGRESS_BAR | r::LEVEL_BAR => Role::Progressbar,
        r::TOOL_BAR => Role::Toolbar,
        r::STATUS_BAR => Role::Statusbar,
        r::TREE | r::TREE_TABLE => Role::Tree,
        r::TREE_ITEM => Role::Treeitem,
        r::TABLE => Role::Table,
        r::TABLE_ROW => Role::Row,
        r::TABLE_CELL => Role::Cell,
        r::HEADER
        | r::HEADING
        | r::COLUMN_HEADER
        | r::ROW_HEADER
        | r::TABLE_COLUMN_HEADER
        | r::TABLE_ROW_HEADER => Role::Header,
        r::DOCUMENT_FRAME
        | r::DOCUMENT_TEXT
        | r::DOCUMENT_WEB
        | r::DOCUMENT_SPREADSHEET
        | r::DOCUMENT_PRESENTATION
        | r::DOCUMENT_EMAIL
        | r::HTML_CONTAINER
        | r::ARTICLE => Role::Document,
        r::SEPARATOR => Role::Separator,
        _ => Role::Custom,
    }
}

/// True for the roles whose `checked` comes from `pressed` too (toggle buttons).
fn pressed_means_checked(atspi: u32) -> bool {
    matches!(atspi, r::TOGGLE_BUTTON | r::SWITCH)
}

/// The protocol states, in vocabulary order. A password field always carries
/// `password` (the role alone says so on AT-SPI).
pub(crate) fn states(atspi_role: u32, st: States) -> Vec<StateFlag> {
    let flags = [
        (StateFlag::Focused, st.has(s::FOCUSED)),
        (StateFlag::Focusable, st.has(s::FOCUSABLE)),
        (
            StateFlag::Enabled,
            st.has(s::ENABLED) || st.has(s::SENSITIVE),
        ),
        (
            StateFlag::Checked,
            st.has(s::CHECKED) || (pressed_means_checked(atspi_role) && st.has(s::PRESSED)),
        ),
        (StateFlag::Selected, st.has(s::SELECTED)),
        (StateFlag::Expanded, st.has(s::EXPANDED)),
        (
            StateFlag::Editable,
            st.has(s::EDITABLE) && !st.has(s::READ_ONLY),
        ),
        (StateFlag::Password, atspi_role == r::PASSWORD_TEXT),
        (StateFlag::Visible, st.showing()),
    ];
    flags
        .into_iter()
        .filter(|(_, on)| *on)
        .map(|(f, _)| f)
        .collect()
}

/// True for roles whose value is text read through the Text interface.
pub(crate) fn text_valued(atspi_role: u32, st: States) -> bool {
    match atspi_role {
        r::ENTRY | r::EDITBAR => true,
        r::TEXT => st.has(s::EDITABLE),
        _ => false,
    }
}

/// True for roles whose value is a number read through the Value interface.
pub(crate) fn number_valued(atspi_role: u32) -> bool {
    matches!(
        atspi_role,
        r::SLIDER | r::DIAL | r::SCROLL_BAR | r::SPIN_BUTTON | r::PROGRESS_BAR | r::LEVEL_BAR
    )
}

/// True for roles that can be toggled by their click/press action.
pub(crate) fn toggles(atspi_role: u32) -> bool {
    matches!(
        atspi_role,
        r::CHECK_BOX
            | r::RADIO_BUTTON
            | r::TOGGLE_BUTTON
            | r::SWITCH
            | r::CHECK_MENU_ITEM
            | r::RADIO_MENU_ITEM
    )
}

/// True for roles that are selected within their parent (list rows, tabs…).
pub(crate) fn selectable_item(atspi_role: u32) -> bool {
    matches!(
        atspi_role,
        r::LIST_ITEM | r::TREE_ITEM | r::PAGE_TAB | r::TABLE_ROW | r::TABLE_CELL | r::MENU_ITEM
    )
}

/// True for an unnamed, unfocusable filler or panel (a box that only lays its children
/// out) or separator (a line between them). Snapshots give it no `rect` (PROTOCOL §4.2
/// makes `rect` optional): nothing can be aimed at it that its neighbours do not offer,
/// and each rectangle costs the application an X round trip on its main loop (about a
/// quarter of a GTK snapshot's rectangles were such nodes).
pub(crate) fn layout_only(atspi_role: u32, name: &str, st: States) -> bool {
    matches!(atspi_role, r::FILLER | r::PANEL | r::SEPARATOR)
        && name.is_empty()
        && !st.has(s::FOCUSABLE)
}

/// A number as the value string: integers without a fraction.
pub(crate) fn format_number(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(bits: &[u32]) -> States {
        States(bits.iter().fold(0, |a, b| a | (1u64 << b)))
    }

    #[test]
    fn roles_map_to_the_vocabulary() {
        let none = States::default();
        assert_eq!(role(r::FRAME, none), Role::Window);
        assert_eq!(role(r::PUSH_BUTTON_MENU, none), Role::Button);
        assert_eq!(role(r::CHECK_BOX, none), Role::Checkbox);
        assert_eq!(role(r::PASSWORD_TEXT, none), Role::Edit);
        assert_eq!(role(r::TEXT, st(&[s::EDITABLE])), Role::Edit);
        assert_eq!(role(r::TEXT, none), Role::Text);
        assert_eq!(role(r::LABEL, none), Role::Text);
        assert_eq!(role(r::PAGE_TAB, none), Role::Tabitem);
        assert_eq!(role(999, none), Role::Custom);
        assert_eq!(role(0, none), Role::Custom);
    }

    #[test]
    fn states_map_and_passwords_are_marked() {
        let w = st(&[s::FOCUSED, s::ENABLED, s::SHOWING, s::VISIBLE, s::EDITABLE]);
        assert_eq!(
            states(r::PASSWORD_TEXT, w),
            [
                StateFlag::Focused,
                StateFlag::Enabled,
                StateFlag::Editable,
                StateFlag::Password,
                StateFlag::Visible
            ]
        );
        assert_eq!(
            states(r::TOGGLE_BUTTON, st(&[s::PRESSED, s::SHOWING])),
            [StateFlag::Checked]
        );
        assert_eq!(States::from_words(&[1 << 4, 1]).0, (1 << 4) | (1 << 32));
        assert!(States::from_words(&[]).0 == 0);
        assert!(!States(u64::MAX).has(64));
    }

    #[test]
    fn only_unnamed_unfocusable_boxes_are_layout_only() {
        let none = States::default();
        assert!(layout_only(r::FILLER, "", none));
        assert!(layout_only(r::PANEL, "", none));
        assert!(layout_only(r::SEPARATOR, "", none));
        assert!(!layout_only(r::PANEL, "Settings", none));
        assert!(!layout_only(r::FILLER, "", st(&[s::FOCUSABLE])));
        assert!(!layout_only(r::CHECK_BOX, "", none));
    }

    #[test]
    fn numbers_format_plainly() {
        assert_eq!(format_number(50.0), "50");
        assert_eq!(format_number(-3.0), "-3");
        assert_eq!(format_number(0.25), "0.25");
    }
}
