//! The desktop's state: displays, windows in z-order and the widgets' values.
//!
//! Everything the pixels show lives here and nowhere else, so the renderer can tell
//! whether its cached frame is stale by comparing scenes. Input bookkeeping (pointer,
//! held keys) lives in `input.rs` because it never changes a pixel by itself.

use cc_protocol::PhysicalRect;

use super::widgets::{
    self, BORDER, H_NOTCH, H_OFFSET_MAX, ITEM_COUNT, ListState, TITLE_H, VISIBLE_ROWS, WidgetId,
    WindowKind,
};
use crate::PhysicalDisplay;

/// A built-in application's window as it first opens.
fn initial_window(kind: WindowKind) -> Window {
    let (id, r, focus) = match kind {
        WindowKind::Form => (FORM_ID, rect(120, 120, 640, 440), WidgetId::Name),
        WindowKind::List => (LIST_ID, rect(820, 120, 420, 520), WidgetId::List),
        WindowKind::Displays => (DISPLAYS_ID, rect(120, 620, 520, 200), WidgetId::Toggle),
    };
    Window {
        id,
        kind,
        rect: r,
        focus,
    }
}

/// A top-level window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Window {
    pub id: u64,
    pub kind: WindowKind,
    pub rect: PhysicalRect,
    /// The widget that has focus while this window is active.
    pub focus: WidgetId,
}

impl Window {
    /// The title bar text.
    pub(super) fn title(&self) -> &'static str {
        match self.kind {
            WindowKind::Form => "Sign in",
            WindowKind::List => "Items",
            WindowKind::Displays => "Displays",
        }
    }

    /// The application id reported by `windows()`.
    pub(super) fn app_id(&self) -> &'static str {
        self.kind.app_id()
    }
}

/// The sign-in form's values.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct FormState {
    pub name: String,
    /// Never leaves the driver: rendered as bullets, absent from every a11y read.
    pub password: String,
    pub remember: bool,
    pub status: String,
    /// The edit whose whole text is selected (after ctrl+a).
    pub select_all: Option<WidgetId>,
}

impl FormState {
    /// The form as its application opens it.
    fn fresh() -> FormState {
        FormState {
            name: String::new(),
            password: String::new(),
            remember: false,
            status: "Ready".into(),
            select_all: None,
        }
    }
}

impl std::fmt::Debug for FormState {
    /// Redacts the password, so no debug print or log can leak it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FormState")
            .field("name", &self.name)
            .field("password", &format_args!("<redacted>"))
            .field("remember", &self.remember)
            .field("status", &self.status)
            .field("select_all", &self.select_all)
            .finish()
    }
}

/// Everything visible on the desktop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Scene {
    pub displays: Vec<PhysicalDisplay>,
    pub generation: u64,
    /// The id of the display the "Displays" window added, while it exists.
    pub added_display: Option<String>,
    /// Topmost first; the first window is the focused one.
    pub windows: Vec<Window>,
    pub form: FormState,
    pub list: ListState,
    /// The widget drawn pressed (left button held on it).
    pub pressed: Option<(u64, WidgetId)>,
    /// The last right/middle click, shown in the taskbar.
    pub note: String,
}

/// Window ids, stable for the desktop's life.
pub(super) const FORM_ID: u64 = 0x0040_0001;
pub(super) const LIST_ID: u64 = 0x0040_0002;
pub(super) const DISPLAYS_ID: u64 = 0x0040_0003;

/// Height of the taskbar at the bottom of the primary display.
pub(super) const TASKBAR_H: u32 = 32;
/// Windows are kept within this distance of the origin so geometry never overflows.
const MAX_COORD: i32 = 1 << 24;

/// What lies under a physical point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hit {
    /// Outside every window, or on the taskbar.
    Desktop,
    TitleBar(u64),
    /// Inside a window but on no widget.
    Body(u64),
    Widget(u64, WidgetId),
}

impl Hit {
    /// The window hit, if any.
    pub(super) fn window(self) -> Option<u64> {
        match self {
            Hit::Desktop => None,
            Hit::TitleBar(w) | Hit::Body(w) | Hit::Widget(w, _) => Some(w),
        }
    }
}

fn rect(x: i32, y: i32, width: u32, height: u32) -> PhysicalRect {
    PhysicalRect {
        x,
        y,
        width,
        height,
    }
}

impl Scene {
    /// The initial desktop on the given displays (never empty).
    pub(super) fn new(displays: Vec<PhysicalDisplay>) -> Scene {
        Scene {
            displays,
            generation: 1,
            added_display: None,
            windows: WindowKind::ALL.iter().map(|&k| initial_window(k)).collect(),
            form: FormState::fresh(),
            list: ListState::default(),
            pressed: None,
            note: String::new(),
        }
    }

    /// Closes the active window (alt+F4), as its application quitting would: a
    /// closed form forgets what was typed into it. False when no window is open.
    pub(super) fn close_focused(&mut self) -> bool {
        if self.windows.is_empty() {
            return false;
        }
        let w = self.windows.remove(0);
        match w.kind {
            WindowKind::Form => self.form = FormState::fresh(),
            WindowKind::List => self.list = ListState::default(),
            WindowKind::Displays => {}
        }
        if self.pressed.is_some_and(|(id, _)| id == w.id) {
            self.pressed = None;
        }
        true
    }

    /// Starts a built-in application: opens its window where it first was if it was
    /// closed, and raises and focuses it. Its window id.
    pub(super) fn open(&mut self, kind: WindowKind) -> u64 {
        let id = match self.window_of(kind) {
            Some(w) => w.id,
            None => {
                let w = initial_window(kind);
                let id = w.id;
                self.windows.insert(0, w);
                id
            }
        };
        self.raise(id);
        id
    }

    /// The union of all displays: the framebuffer's extent.
    pub(super) fn bbox(&self) -> PhysicalRect {
        let mut it = self.displays.iter().map(|d| d.rect);
        let first = it.next().unwrap_or(rect(0, 0, 0, 0));
        it.fold(first, |acc, r| acc.union(&r))
    }

    /// The primary display (the first one when none is marked).
    pub(super) fn primary(&self) -> Option<&PhysicalDisplay> {
        self.displays
            .iter()
            .find(|d| d.primary)
            .or(self.displays.first())
    }

    /// The strip at the bottom of the primary display.
    pub(super) fn taskbar_rect(&self) -> Option<PhysicalRect> {
        let p = self.primary()?.rect;
        let h = TASKBAR_H.min(p.height);
        let y = (p.y as i64 + p.height as i64 - h as i64) as i32;
        Some(rect(p.x, y, p.width, h))
    }

    pub(super) fn window(&self, id: u64) -> Option<&Window> {
        self.windows.iter().find(|w| w.id == id)
    }

    fn window_mut(&mut self, id: u64) -> Option<&mut Window> {
        self.windows.iter_mut().find(|w| w.id == id)
    }

    /// The window that owns widgets of this kind.
    pub(super) fn window_of(&self, kind: WindowKind) -> Option<&Window> {
        self.windows.iter().find(|w| w.kind == kind)
    }

    /// Raises and focuses a window; false when there is no such window.
    pub(super) fn raise(&mut self, id: u64) -> bool {
        let Some(i) = self.windows.iter().position(|w| w.id == id) else {
            return false;
        };
        if i > 0 {
            let w = self.windows.remove(i);
            self.windows.insert(0, w);
        }
        true
    }

    /// The widget with keyboard focus: the active window's focus.
    pub(super) fn focused(&self) -> Option<(u64, WidgetId)> {
        self.windows.first().map(|w| (w.id, w.focus))
    }

    /// Moves a window's focus to one of its focusable widgets.
    pub(super) fn set_focus(&mut self, window: u64, widget: WidgetId) {
        let changed = match self.window_mut(window) {
            Some(w) if w.kind == widget.owner() && w.focus != widget => {
                w.focus = widget;
                true
            }
            _ => false,
        };
        if changed {
            self.form.select_all = None;
        }
    }

    /// Tab / shift+Tab within the active window.
    pub(super) fn focus_next(&mut self, backwards: bool) {
        let Some((id, current)) = self.focused() else {
            return;
        };
        let order = widgets::focus_order(current.owner());
        let n = order.len();
        if n == 0 {
            return;
        }
        let i = order.iter().position(|&w| w == current).unwrap_or(0);
        let next = if backwards {
            (i + n - 1) % n
        } else {
            (i + 1) % n
        };
        self.set_focus(id, order[next]);
    }

    /// Moves a window by a pointer delta from where it started.
    pub(super) fn place_window(&mut self, id: u64, origin: PhysicalRect, dx: i32, dy: i32) {
        let clamp = |v: i32, d: i32| v.saturating_add(d).clamp(-MAX_COORD, MAX_COORD);
        if let Some(w) = self.window_mut(id) {
            w.rect.x = clamp(origin.x, dx);
            w.rect.y = clamp(origin.y, dy);
        }
    }

    /// What lies under a physical point (the taskbar covers windows).
    pub(super) fn hit(&self, x: i32, y: i32) -> Hit {
        if self.taskbar_rect().is_some_and(|t| t.contains(x, y)) {
            return Hit::Desktop;
        }
        let Some(w) = self.windows.iter().find(|w| w.rect.contains(x, y)) else {
            return Hit::Desktop;
        };
        let lx = (x as i64 - w.rect.x as i64) as i32;
        let ly = (y as i64 - w.rect.y as i64) as i32;
        if ly < BORDER + TITLE_H {
            return Hit::TitleBar(w.id);
        }
        match widgets::widget_at(w.kind, &self.list, lx, ly) {
            Some(id) => Hit::Widget(w.id, id),
            None => Hit::Body(w.id),
        }
    }

    /// The physical rectangle of a widget (`None` for rows out of view).
    pub(super) fn widget_rect(&self, widget: WidgetId) -> Option<PhysicalRect> {
        let w = self.window_of(widget.owner())?;
        let l = widgets::local_rect(widget, &self.list)?;
        Some(widgets::to_physical(&w.rect, l))
    }

    /// The label or accessible name of a widget.
    pub(super) fn widget_name(&self, widget: WidgetId) -> String {
        match widget {
            WidgetId::NameLabel | WidgetId::Name => "Name".into(),
            WidgetId::PasswordLabel | WidgetId::Password => "Password".into(),
            WidgetId::Remember => "Remember me".into(),
            WidgetId::Submit => "Submit".into(),
            WidgetId::Clear => "Clear".into(),
            WidgetId::Status => "Status".into(),
            WidgetId::List => "Items".into(),
            WidgetId::Item(i) => format!("Item {}", i + 1),
            WidgetId::VScroll => "Vertical".into(),
            WidgetId::HScroll => "Horizontal".into(),
            WidgetId::SelectionLabel => match self.list.selected {
                Some(i) => format!("Selected: Item {}", i + 1),
                None => "Selected: none".into(),
            },
            WidgetId::LayoutLabel => self.layout_text(),
            WidgetId::Toggle => match self.added_display {
                Some(_) => "Remove left display".into(),
                None => "Add left display".into(),
            },
        }
    }

    /// The describing line of the "Displays" window.
    fn layout_text(&self) -> String {
        let b = self.bbox();
        let n = self.displays.len();
        let s = if n == 1 { "" } else { "s" };
        format!(
            "{n} display{s}, desktop {}x{} at ({},{})",
            b.width, b.height, b.x, b.y
        )
    }

    /// The text of an edit (the password too: only the renderer may count it).
    pub(super) fn edit_text(&self, widget: WidgetId) -> Option<&str> {
        match widget {
            WidgetId::Name => Some(&self.form.name),
            WidgetId::Password => Some(&self.form.password),
            _ => None,
        }
    }

    fn edit_text_mut(&mut self, widget: WidgetId) -> Option<&mut String> {
        match widget {
            WidgetId::Name => Some(&mut self.form.name),
            WidgetId::Password => Some(&mut self.form.password),
            _ => None,
        }
    }

    /// Inserts text at the caret (the end), replacing a select-all.
    pub(super) fn insert(&mut self, widget: WidgetId, text: &str) {
        let replace = self.form.select_all == Some(widget);
        if let Some(t) = self.edit_text_mut(widget) {
            if replace {
                t.clear();
            }
            t.push_str(text);
            self.form.select_all = None;
        }
    }

    /// Backspace: deletes the last character, or everything when all is selected.
    pub(super) fn delete_back(&mut self, widget: WidgetId) {
        let all = self.form.select_all == Some(widget);
        if let Some(t) = self.edit_text_mut(widget) {
            if all {
                t.clear();
            } else {
                t.pop();
            }
            self.form.select_all = None;
        }
    }

    /// ctrl+a in an edit.
    pub(super) fn select_all(&mut self, widget: WidgetId) {
        if widget.is_edit() {
            self.form.select_all = Some(widget);
        }
    }

    /// Replaces an edit's text (the value interface); false when not an edit.
    pub(super) fn set_text(&mut self, widget: WidgetId, text: &str) -> bool {
        match self.edit_text_mut(widget) {
            Some(t) => {
                text.clone_into(t);
                self.form.select_all = None;
                true
            }
            None => false,
        }
    }

    /// Flips the "Remember me" checkbox.
    pub(super) fn toggle_remember(&mut self) {
        self.form.remember = !self.form.remember;
    }

    /// Presses a button; false when the widget is not a button.
    pub(super) fn invoke(&mut self, widget: WidgetId) -> bool {
        match widget {
            WidgetId::Submit => {
                self.form.status = format!("Submitted: {}", self.form.name);
            }
            WidgetId::Clear => {
                self.form.name.clear();
                self.form.password.clear();
                self.form.remember = false;
                self.form.select_all = None;
                self.form.status = "Cleared".into();
            }
            WidgetId::Toggle => self.toggle_left_display(),
            _ => return false,
        }
        true
    }

    /// Selects a list row and scrolls it into view.
    pub(super) fn select_item(&mut self, index: usize) {
        if index >= ITEM_COUNT {
            return;
        }
        self.list.selected = Some(index);
        let l = &mut self.list;
        if index < l.first_row {
            l.first_row = index;
        } else if index >= l.first_row + VISIBLE_ROWS {
            l.first_row = index + 1 - VISIBLE_ROWS;
        }
    }

    /// Moves the selection by `delta` rows (clamped); no selection starts at the top.
    pub(super) fn move_selection(&mut self, delta: i64) {
        let target = match self.list.selected {
            None => 0,
            Some(i) => (i as i64)
                .saturating_add(delta)
                .clamp(0, ITEM_COUNT as i64 - 1) as usize,
        };
        self.select_item(target);
    }

    /// One scroll notch over the list; `positive` is up or right.
    pub(super) fn scroll_list(&mut self, vertical: bool, positive: bool) {
        let l = &mut self.list;
        if vertical {
            let max = ITEM_COUNT - VISIBLE_ROWS;
            l.first_row = if positive {
                l.first_row.saturating_sub(1)
            } else {
                (l.first_row + 1).min(max)
            };
        } else {
            let d = if positive { H_NOTCH } else { -H_NOTCH };
            l.h_offset = (l.h_offset + d).clamp(0, H_OFFSET_MAX);
        }
    }

    /// Adds a 1280x1024 display left of the others, or removes the one it added.
    fn toggle_left_display(&mut self) {
        match self.added_display.take() {
            Some(id) => self.displays.retain(|d| d.id != id),
            None => {
                let left = self.displays.iter().map(|d| d.rect.x).min().unwrap_or(0);
                let n = (self.displays.len()..)
                    .find(|n| !self.displays.iter().any(|d| d.id == n.to_string()))
                    .unwrap_or(self.displays.len());
                self.displays.push(PhysicalDisplay {
                    id: n.to_string(),
                    name: format!("VIRTUAL-{}", n + 1),
                    rect: rect(left.saturating_sub(1280), 0, 1280, 1024),
                    primary: false,
                });
                self.added_display = Some(n.to_string());
            }
        }
        self.generation += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_redacts_the_password() {
        let mut scene = Scene::new(Vec::new());
        scene.set_text(WidgetId::Password, "s3cret-value");
        let shown = format!("{scene:?}");
        assert!(!shown.contains("s3cret-value"));
        assert!(shown.contains("<redacted>"));
    }
}
