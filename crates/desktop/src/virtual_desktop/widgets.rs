//! The three built-in windows (`WindowKind`) and their widgets: identity, role, geometry
//! and focus order.
//!
//! Geometry is fixed and relative to the window's top-left corner, so a widget's
//! physical rectangle is always `window origin + offset`; only the list rows depend on
//! state (which rows are scrolled into view, `ListState`, which the scene holds).

use cc_protocol::{PhysicalRect, Role};

/// Which built-in application a window shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum WindowKind {
    Form,
    List,
    Displays,
}

impl WindowKind {
    /// Every built-in application, in the initial stacking order.
    pub(super) const ALL: [WindowKind; 3] =
        [WindowKind::Form, WindowKind::List, WindowKind::Displays];

    /// The application with this id (`cc-form`, `cc-list`, `cc-display`).
    pub(super) fn from_app_id(app: &str) -> Option<WindowKind> {
        WindowKind::ALL.into_iter().find(|k| k.app_id() == app)
    }

    /// The application id reported by `windows()`.
    pub(super) fn app_id(self) -> &'static str {
        match self {
            WindowKind::Form => "cc-form",
            WindowKind::List => "cc-list",
            WindowKind::Displays => "cc-display",
        }
    }
}

/// The list's selection and scroll offsets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct ListState {
    pub selected: Option<usize>,
    pub first_row: usize,
    /// Horizontal offset in pixels, `0..=H_OFFSET_MAX`.
    pub h_offset: i32,
}

/// Height of a window's title bar, in pixels.
pub(super) const TITLE_H: i32 = 28;
/// Width of a window's border, in pixels.
pub(super) const BORDER: i32 = 1;
/// How many items the list holds.
pub(super) const ITEM_COUNT: usize = 20;
/// How many list rows are visible at once.
pub(super) const VISIBLE_ROWS: usize = 8;
/// Height of one list row.
pub(super) const ROW_H: i32 = 32;
/// The largest horizontal offset of the list, in pixels.
pub(super) const H_OFFSET_MAX: i32 = 100;
/// One horizontal scroll notch, in pixels.
pub(super) const H_NOTCH: i32 = 10;

/// Where the list rows start and how wide they are (window-relative).
const LIST_X: i32 = 12;
const LIST_Y: i32 = 12;
const ROWS_W: u32 = 372;
const SCROLLBAR: u32 = 16;

/// One widget of a built-in window. The owning window is implied by the variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum WidgetId {
    NameLabel,
    Name,
    PasswordLabel,
    Password,
    Remember,
    Submit,
    Clear,
    Status,
    List,
    /// A list row, by 0-based index.
    Item(usize),
    VScroll,
    HScroll,
    SelectionLabel,
    LayoutLabel,
    Toggle,
}

/// The focusable widgets of a window, in Tab order.
pub(super) fn focus_order(kind: WindowKind) -> &'static [WidgetId] {
    match kind {
        WindowKind::Form => &[
            WidgetId::Name,
            WidgetId::Password,
            WidgetId::Remember,
            WidgetId::Submit,
            WidgetId::Clear,
        ],
        WindowKind::List => &[WidgetId::List],
        WindowKind::Displays => &[WidgetId::Toggle],
    }
}

/// The direct children of a window node, in tree order.
pub(super) fn top_level(kind: WindowKind) -> &'static [WidgetId] {
    match kind {
        WindowKind::Form => &[
            WidgetId::NameLabel,
            WidgetId::Name,
            WidgetId::PasswordLabel,
            WidgetId::Password,
            WidgetId::Remember,
            WidgetId::Submit,
            WidgetId::Clear,
            WidgetId::Status,
        ],
        WindowKind::List => &[WidgetId::List, WidgetId::SelectionLabel],
        WindowKind::Displays => &[WidgetId::LayoutLabel, WidgetId::Toggle],
    }
}

/// The children of a widget (only the list has any): rows, then the scrollbars.
pub(super) fn children(id: WidgetId) -> Vec<WidgetId> {
    match id {
        WidgetId::List => (0..ITEM_COUNT)
            .map(WidgetId::Item)
            .chain([WidgetId::VScroll, WidgetId::HScroll])
            .collect(),
        _ => Vec::new(),
    }
}

impl WidgetId {
    /// The window kind that owns this widget.
    pub(super) fn owner(self) -> WindowKind {
        match self {
            WidgetId::NameLabel
            | WidgetId::Name
            | WidgetId::PasswordLabel
            | WidgetId::Password
            | WidgetId::Remember
            | WidgetId::Submit
            | WidgetId::Clear
            | WidgetId::Status => WindowKind::Form,
            WidgetId::List
            | WidgetId::Item(_)
            | WidgetId::VScroll
            | WidgetId::HScroll
            | WidgetId::SelectionLabel => WindowKind::List,
            WidgetId::LayoutLabel | WidgetId::Toggle => WindowKind::Displays,
        }
    }

    /// The accessibility role.
    pub(super) fn role(self) -> Role {
        match self {
            WidgetId::NameLabel
            | WidgetId::PasswordLabel
            | WidgetId::SelectionLabel
            | WidgetId::LayoutLabel => Role::Text,
            WidgetId::Name | WidgetId::Password => Role::Edit,
            WidgetId::Remember => Role::Checkbox,
            WidgetId::Submit | WidgetId::Clear | WidgetId::Toggle => Role::Button,
            WidgetId::Status => Role::Statusbar,
            WidgetId::List => Role::List,
            WidgetId::Item(_) => Role::Listitem,
            WidgetId::VScroll | WidgetId::HScroll => Role::Scrollbar,
        }
    }

    /// True for widgets that take keyboard focus.
    pub(super) fn focusable(self) -> bool {
        focus_order(self.owner()).contains(&self) || matches!(self, WidgetId::Item(_))
    }

    /// True for the text fields.
    pub(super) fn is_edit(self) -> bool {
        matches!(self, WidgetId::Name | WidgetId::Password)
    }

    /// The handle suffix (`w<id>/<slug>`).
    pub(super) fn slug(self) -> String {
        match self {
            WidgetId::NameLabel => "name-label".into(),
            WidgetId::Name => "name".into(),
            WidgetId::PasswordLabel => "password-label".into(),
            WidgetId::Password => "password".into(),
            WidgetId::Remember => "remember".into(),
            WidgetId::Submit => "submit".into(),
            WidgetId::Clear => "clear".into(),
            WidgetId::Status => "status".into(),
            WidgetId::List => "list".into(),
            WidgetId::Item(i) => format!("item{}", i + 1),
            WidgetId::VScroll => "vscroll".into(),
            WidgetId::HScroll => "hscroll".into(),
            WidgetId::SelectionLabel => "selection".into(),
            WidgetId::LayoutLabel => "layout".into(),
            WidgetId::Toggle => "toggle".into(),
        }
    }

    /// The inverse of [`WidgetId::slug`]; `None` for anything else.
    pub(super) fn from_slug(slug: &str) -> Option<WidgetId> {
        let fixed = [
            WidgetId::NameLabel,
            WidgetId::Name,
            WidgetId::PasswordLabel,
            WidgetId::Password,
            WidgetId::Remember,
            WidgetId::Submit,
            WidgetId::Clear,
            WidgetId::Status,
            WidgetId::List,
            WidgetId::VScroll,
            WidgetId::HScroll,
            WidgetId::SelectionLabel,
            WidgetId::LayoutLabel,
            WidgetId::Toggle,
        ];
        if let Some(id) = fixed.into_iter().find(|w| w.slug() == slug) {
            return Some(id);
        }
        let n: usize = slug.strip_prefix("item")?.parse().ok()?;
        // Reject "item01" and friends so every element has exactly one handle.
        let index = n.checked_sub(1).filter(|&i| i < ITEM_COUNT)?;
        Some(WidgetId::Item(index)).filter(|w| w.slug() == slug)
    }
}

/// A rectangle relative to the window's top-left corner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Local {
    pub x: i32,
    pub y: i32,
    pub w: u32,
    pub h: u32,
}

const fn local(x: i32, y: i32, w: u32, h: u32) -> Local {
    // Offsets are given in client coordinates (inside border and title bar).
    Local {
        x: x + BORDER,
        y: y + BORDER + TITLE_H,
        w,
        h,
    }
}

/// The window-relative rectangle of a widget; `None` for list rows scrolled out of view.
pub(super) fn local_rect(id: WidgetId, list: &ListState) -> Option<Local> {
    let rows_h = ROW_H as u32 * VISIBLE_ROWS as u32;
    Some(match id {
        WidgetId::NameLabel => local(24, 26, 100, 20),
        WidgetId::Name => local(140, 20, 470, 32),
        WidgetId::PasswordLabel => local(24, 74, 100, 20),
        WidgetId::Password => local(140, 68, 470, 32),
        WidgetId::Remember => local(140, 116, 132, 24),
        WidgetId::Submit => local(140, 164, 110, 34),
        WidgetId::Clear => local(264, 164, 110, 34),
        WidgetId::Status => local(0, 380, 638, 30),
        WidgetId::List => local(LIST_X, LIST_Y, ROWS_W + SCROLLBAR, rows_h + SCROLLBAR),
        WidgetId::Item(i) => {
            let row = i.checked_sub(list.first_row)?;
            if row >= VISIBLE_ROWS || i >= ITEM_COUNT {
                return None;
            }
            local(LIST_X, LIST_Y + row as i32 * ROW_H, ROWS_W, ROW_H as u32)
        }
        WidgetId::VScroll => local(LIST_X + ROWS_W as i32, LIST_Y, SCROLLBAR, rows_h),
        WidgetId::HScroll => local(LIST_X, LIST_Y + rows_h as i32, ROWS_W, SCROLLBAR),
        WidgetId::SelectionLabel => local(12, 300, 388, 20),
        WidgetId::LayoutLabel => local(16, 20, 490, 20),
        WidgetId::Toggle => local(16, 70, 220, 36),
    })
}

/// The area the list rows are drawn in (window-relative).
pub(super) fn rows_area() -> Local {
    local(LIST_X, LIST_Y, ROWS_W, ROW_H as u32 * VISIBLE_ROWS as u32)
}

/// Converts a window-relative rectangle into physical pixels.
pub(super) fn to_physical(window: &PhysicalRect, l: Local) -> PhysicalRect {
    PhysicalRect {
        x: window.x.saturating_add(l.x),
        y: window.y.saturating_add(l.y),
        width: l.w,
        height: l.h,
    }
}

/// The widget under a window-relative point, most specific first (rows before the list).
pub(super) fn widget_at(kind: WindowKind, list: &ListState, lx: i32, ly: i32) -> Option<WidgetId> {
    let inside = |l: Local| {
        lx >= l.x
            && ly >= l.y
            && (lx as i64) < l.x as i64 + l.w as i64
            && (ly as i64) < l.y as i64 + l.h as i64
    };
    let mut candidates: Vec<WidgetId> = Vec::new();
    for &id in top_level(kind) {
        candidates.extend(children(id));
        candidates.push(id);
    }
    candidates
        .into_iter()
        .find(|&id| local_rect(id, list).is_some_and(inside))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_round_trip_and_reject_junk() {
        for kind in [WindowKind::Form, WindowKind::List, WindowKind::Displays] {
            for &id in top_level(kind) {
                for w in std::iter::once(id).chain(children(id)) {
                    assert_eq!(WidgetId::from_slug(&w.slug()), Some(w));
                    assert_eq!(w.owner(), kind);
                }
            }
        }
        for junk in [
            "", "item0", "item21", "item01", "item-1", "itemx", "Name", "name/",
        ] {
            assert_eq!(WidgetId::from_slug(junk), None, "{junk}");
        }
    }

    #[test]
    fn rows_follow_the_scroll_position() {
        let list = ListState {
            first_row: 3,
            ..ListState::default()
        };
        assert!(local_rect(WidgetId::Item(2), &list).is_none());
        assert!(local_rect(WidgetId::Item(3), &list).is_some());
        assert!(local_rect(WidgetId::Item(10), &list).is_some());
        assert!(local_rect(WidgetId::Item(11), &list).is_none());
        let first = local_rect(WidgetId::Item(3), &list);
        let hit = first.and_then(|l| widget_at(WindowKind::List, &list, l.x + 2, l.y + 2));
        assert_eq!(hit, Some(WidgetId::Item(3)));
    }
}
