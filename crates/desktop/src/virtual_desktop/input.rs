//! Pointer, buttons, scroll and keys: turning low-level input into scene changes.
//!
//! The rules mirror a plain toolkit: a click is press and release over the same widget,
//! a press anywhere in a window raises it, a title-bar drag moves the window live, and
//! keys act on press against the active window's focused widget.

use std::collections::BTreeSet;

use cc_protocol::keys::{ModifierFamily, Named, Numpad};
use cc_protocol::{Key, PhysicalRect};

use super::clipboard::Shortcut;
use super::scene::{Hit, Scene};
use super::widgets::WidgetId;
use crate::{Axis, Button, HeldInputs};

/// A button held down, and what it was pressed on.
#[derive(Debug, Clone)]
struct Press {
    button: Button,
    hit: Hit,
    /// Pointer position and window rectangle at press time, for title-bar drags.
    start: (i32, i32),
    window_rect: Option<PhysicalRect>,
}

/// What the user's hands are doing: pointer position, keys and buttons held.
#[derive(Debug, Clone)]
pub(super) struct Input {
    pointer: (i32, i32),
    keys: BTreeSet<String>,
    presses: Vec<Press>,
}

fn button_rank(b: Button) -> u8 {
    match b {
        Button::Left => 0,
        Button::Middle => 1,
        Button::Right => 2,
    }
}

/// The character a US keyboard produces for a key with shift held.
fn shifted(c: char) -> char {
    const PAIRS: &[(char, char)] = &[
        ('1', '!'),
        ('2', '@'),
        ('3', '#'),
        ('4', '$'),
        ('5', '%'),
        ('6', '^'),
        ('7', '&'),
        ('8', '*'),
        ('9', '('),
        ('0', ')'),
        (';', ':'),
        (',', '<'),
        ('-', '_'),
        ('.', '>'),
        ('/', '?'),
        ('`', '~'),
        ('[', '{'),
        ('\\', '|'),
        (']', '}'),
        ('\'', '"'),
        ('=', '+'),
    ];
    if c.is_ascii_lowercase() {
        return c.to_ascii_uppercase();
    }
    PAIRS
        .iter()
        .find(|(k, _)| *k == c)
        .map(|(_, s)| *s)
        .unwrap_or(c)
}

/// The character a numpad key types, if any.
fn numpad_char(p: Numpad) -> Option<char> {
    match p {
        Numpad::Digit(d) => char::from_digit(u32::from(d), 10),
        Numpad::Multiply => Some('*'),
        Numpad::Add => Some('+'),
        Numpad::Subtract => Some('-'),
        Numpad::Divide => Some('/'),
        Numpad::Decimal => Some('.'),
        Numpad::Enter => None,
    }
}

impl Input {
    /// Starts with the pointer at `at` and nothing held.
    pub(super) fn new(at: (i32, i32)) -> Input {
        Input {
            pointer: at,
            keys: BTreeSet::new(),
            presses: Vec::new(),
        }
    }

    pub(super) fn pointer(&self) -> (i32, i32) {
        self.pointer
    }

    /// Keys and buttons held, sorted (keys by name; buttons left, middle, right).
    pub(super) fn held(&self) -> HeldInputs {
        let mut buttons: Vec<Button> = self.presses.iter().map(|p| p.button).collect();
        buttons.sort_by_key(|&b| button_rank(b));
        HeldInputs {
            keys: self.keys.iter().cloned().collect(),
            buttons,
        }
    }

    fn family_held(&self, family: ModifierFamily) -> bool {
        family.names().iter().any(|n| self.keys.contains(*n))
    }

    /// Keeps the pointer on the desktop (after a move or a layout change).
    pub(super) fn clamp_pointer(&mut self, scene: &Scene) {
        let (x, y) = self.pointer;
        self.pointer = clamp_to(scene.bbox(), x, y);
    }

    /// Moves the pointer; a title-bar drag moves its window along.
    pub(super) fn pointer_move(&mut self, scene: &mut Scene, x: i32, y: i32) {
        self.pointer = clamp_to(scene.bbox(), x, y);
        let (px, py) = self.pointer;
        let Some(p) = self.presses.iter().find(|p| p.button == Button::Left) else {
            return;
        };
        match (p.hit, p.window_rect) {
            (Hit::TitleBar(id), Some(origin)) => {
                let dx = (px as i64 - p.start.0 as i64) as i32;
                let dy = (py as i64 - p.start.1 as i64) as i32;
                scene.place_window(id, origin, dx, dy);
            }
            (Hit::Widget(w, id), _) if pressable(id) => {
                let over = scene.hit(px, py) == p.hit;
                scene.pressed = over.then_some((w, id));
            }
            _ => {}
        }
    }

    /// Presses or releases a button at the pointer.
    pub(super) fn button(&mut self, scene: &mut Scene, button: Button, down: bool) {
        let (x, y) = self.pointer;
        let held = self.presses.iter().position(|p| p.button == button);
        if down {
            if held.is_some() {
                return;
            }
            let hit = scene.hit(x, y);
            if let Some(w) = hit.window() {
                scene.raise(w);
            }
            let window_rect = hit.window().and_then(|w| scene.window(w)).map(|w| w.rect);
            match (button, hit) {
                (Button::Left, Hit::Widget(w, id)) if pressable(id) => {
                    scene.pressed = Some((w, id));
                }
                _ => {}
            }
            self.presses.push(Press {
                button,
                hit,
                start: (x, y),
                window_rect,
            });
            return;
        }
        let Some(i) = held else {
            return;
        };
        let press = self.presses.remove(i);
        match button {
            Button::Left => {
                scene.pressed = None;
                match press.hit {
                    Hit::Widget(w, id) if scene.hit(x, y) == press.hit => {
                        let ctrl = self.family_held(ModifierFamily::Ctrl);
                        click(scene, w, id, ctrl)
                    }
                    _ => {}
                }
            }
            Button::Right | Button::Middle => {
                let which = if button == Button::Right {
                    "right"
                } else {
                    "middle"
                };
                scene.note = format!("{which} click at ({x}, {y})");
            }
        }
    }

    /// One scroll notch at the pointer: only the list scrolls.
    pub(super) fn scroll(&mut self, scene: &mut Scene, axis: Axis, positive: bool) {
        let (x, y) = self.pointer;
        let over_list = matches!(
            scene.hit(x, y),
            Hit::Widget(
                _,
                WidgetId::List | WidgetId::Item(_) | WidgetId::VScroll | WidgetId::HScroll
            )
        );
        // Shift turns the wheel sideways, as toolkits do: down scrolls right.
        let sideways = axis == Axis::Vertical && self.family_held(ModifierFamily::Shift);
        if over_list {
            if sideways {
                scene.scroll_list(false, !positive);
            } else {
                scene.scroll_list(axis == Axis::Vertical, positive);
            }
        }
    }

    /// Presses or releases a key; presses act on the focused widget, except the
    /// shortcuts the desktop handles (returned for it to act on).
    pub(super) fn key(&mut self, scene: &mut Scene, key: Key, down: bool) -> Option<Shortcut> {
        let name = key.name();
        if !down {
            self.keys.remove(&name);
            return None;
        }
        self.keys.insert(name);
        let ctrl = self.family_held(ModifierFamily::Ctrl);
        let alt = self.family_held(ModifierFamily::Alt);
        let win = self.family_held(ModifierFamily::Win);
        let shift = self.family_held(ModifierFamily::Shift);
        let (_, focus) = scene.focused()?;
        if ctrl || alt || win {
            // ctrl+a, ctrl+c, ctrl+v and alt+F4 mean something here; other combos
            // do nothing.
            return match key {
                Key::Char('a') if ctrl && !alt && !win => {
                    scene.select_all(focus);
                    None
                }
                Key::Char('c') if ctrl && !alt && !win => Some(Shortcut::Copy),
                Key::Char('v') if ctrl && !alt && !win => Some(Shortcut::Paste),
                Key::Function(4) if alt && !ctrl && !win => Some(Shortcut::Close),
                _ => None,
            };
        }
        match key {
            Key::Named(Named::Tab) => scene.focus_next(shift),
            Key::Named(Named::Enter) | Key::Numpad(Numpad::Enter) => enter(scene, focus),
            Key::Named(Named::Space) => match focus {
                WidgetId::Remember => scene.toggle_remember(),
                f if f.is_edit() => scene.insert(f, " "),
                f => {
                    scene.invoke(f);
                }
            },
            Key::Named(Named::Backspace | Named::Delete) => scene.delete_back(focus),
            Key::Named(n) if focus == WidgetId::List => {
                let delta = match n {
                    Named::Up => -1,
                    Named::Down => 1,
                    Named::PgUp => -8,
                    Named::PgDn => 8,
                    Named::Home => i64::MIN / 2,
                    Named::End => i64::MAX / 2,
                    _ => return None,
                };
                scene.move_selection(delta);
            }
            Key::Char(c) => {
                let c = if shift { shifted(c) } else { c };
                scene.insert(focus, c.encode_utf8(&mut [0; 4]));
            }
            Key::Numpad(p) => {
                if let Some(c) = numpad_char(p) {
                    scene.insert(focus, c.encode_utf8(&mut [0; 4]));
                }
            }
            _ => {}
        }
        None
    }

    /// Types one character exactly; `'\n'` is Enter and `'\t'` is Tab.
    pub(super) fn type_char(&mut self, scene: &mut Scene, c: char) {
        let Some((_, focus)) = scene.focused() else {
            return;
        };
        match c {
            '\n' => enter(scene, focus),
            '\t' => scene.focus_next(false),
            c => scene.insert(focus, c.encode_utf8(&mut [0; 4])),
        }
    }

    /// Releases every button (with the effects of a release) and every key.
    pub(super) fn release_all(&mut self, scene: &mut Scene) {
        let mut buttons: Vec<Button> = self.presses.iter().map(|p| p.button).collect();
        buttons.sort_by_key(|&b| button_rank(b));
        for b in buttons {
            self.button(scene, b, false);
        }
        self.presses.clear();
        self.keys.clear();
    }
}

fn clamp_to(b: PhysicalRect, x: i32, y: i32) -> (i32, i32) {
    let max =
        |origin: i32, len: u32| (origin as i64 + len.max(1) as i64 - 1).min(i32::MAX as i64) as i32;
    (
        x.clamp(b.x, max(b.x, b.width)),
        y.clamp(b.y, max(b.y, b.height)),
    )
}

/// Widgets drawn pressed while the left button is held on them.
fn pressable(id: WidgetId) -> bool {
    matches!(
        id,
        WidgetId::Submit | WidgetId::Clear | WidgetId::Toggle | WidgetId::Remember
    )
}

/// A completed left click on a widget.
/// A left click's effect; with ctrl held, a click on the selected row unselects it (as
/// a single-selection list does in GTK and Qt).
fn click(scene: &mut Scene, window: u64, id: WidgetId, ctrl: bool) {
    match id {
        WidgetId::Name | WidgetId::Password => {
            scene.set_focus(window, id);
            scene.form.select_all = None;
        }
        WidgetId::Remember => {
            scene.set_focus(window, id);
            scene.toggle_remember();
        }
        WidgetId::Submit | WidgetId::Clear | WidgetId::Toggle => {
            scene.set_focus(window, id);
            scene.invoke(id);
        }
        WidgetId::Item(i) => {
            scene.set_focus(window, WidgetId::List);
            if ctrl && scene.list.selected == Some(i) {
                scene.list.selected = None;
            } else {
                scene.select_item(i);
            }
        }
        WidgetId::List | WidgetId::VScroll | WidgetId::HScroll => {
            scene.set_focus(window, WidgetId::List);
        }
        WidgetId::NameLabel
        | WidgetId::PasswordLabel
        | WidgetId::Status
        | WidgetId::SelectionLabel
        | WidgetId::LayoutLabel => {}
    }
}

/// Enter: a button invokes itself; in the form's edits it submits.
fn enter(scene: &mut Scene, focus: WidgetId) {
    match focus {
        WidgetId::Name | WidgetId::Password => {
            scene.invoke(WidgetId::Submit);
        }
        f => {
            scene.invoke(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use cc_protocol::{Role, StateFlag};

    use super::super::testkit::*;
    use crate::{Axis, Button, Driver, HeldInputs};

    #[test]
    fn clicking_the_checkbox_toggles_it_in_the_tree_and_the_pixels() {
        let mut d = desk();
        let node = find(&mut d, Role::Checkbox, "Remember me");
        let r = node.rect.unwrap();
        assert!(!node.states.contains(&StateFlag::Checked));
        let before = d.capture(r).unwrap();
        click_rect(&mut d, r);
        let node = find(&mut d, Role::Checkbox, "Remember me");
        assert!(node.states.contains(&StateFlag::Checked));
        assert!(node.states.contains(&StateFlag::Focused));
        let after = d.capture(r).unwrap();
        assert_eq!((after.width, after.height), (r.width, r.height));
        assert_ne!(before, after, "the check mark is drawn");
        click_rect(&mut d, r);
        assert!(
            !find(&mut d, Role::Checkbox, "Remember me")
                .states
                .contains(&StateFlag::Checked)
        );
        assert_eq!(d.capture(r).unwrap().pixels.len(), before.pixels.len());
    }

    #[test]
    fn unicode_goes_into_the_name_exactly() {
        let mut d = desk();
        let text = "héllo wörld — 日本語 🎉 e\u{301}";
        click_on(&mut d, Role::Edit, "Name");
        let r = find(&mut d, Role::Edit, "Name").rect.unwrap();
        let before = d.capture(r).unwrap();
        type_str(&mut d, text);
        assert_eq!(value_of(&mut d, Role::Edit, "Name").as_deref(), Some(text));
        assert_ne!(d.capture(r).unwrap(), before);
        let handle = find(&mut d, Role::Edit, "Name").handle;
        let info = d.a11y_element(&handle).unwrap().unwrap();
        assert_eq!(info.value.as_deref(), Some(text));
        assert!(info.settable_text);
    }

    #[test]
    fn the_password_never_leaves_the_driver() {
        let mut d = desk();
        let secret = "hunter2-Sekr3t";
        click_on(&mut d, Role::Edit, "Name");
        type_str(&mut d, "ada");
        assert!(!d.focused_is_password().unwrap());
        tap(&mut d, "tab");
        assert!(d.focused_is_password().unwrap());
        type_str(&mut d, secret);
        assert!(d.focused_is_password().unwrap());
        tap(&mut d, "enter"); // submits
        assert_eq!(
            value_of(&mut d, Role::Statusbar, "Status").as_deref(),
            Some("Submitted: ada")
        );
        let tree = d.a11y_tree(None, usize::MAX).unwrap();
        assert!(!format!("{tree:?}").contains(secret));
        for n in all_nodes(&mut d) {
            let info = d.a11y_element(&n.handle).unwrap().unwrap();
            assert!(!format!("{info:?}{n:?}").contains(secret));
        }
        let pw = find(&mut d, Role::Edit, "Password");
        assert_eq!(pw.value, None);
        assert!(pw.states.contains(&StateFlag::Password));
        // Bullets only: another password of the same length draws the same pixels.
        let r = pw.rect.unwrap();
        let shot = d.capture(r).unwrap();
        d.a11y_set_text(&pw.handle, "xxxxxxxxxxxxxx").unwrap();
        assert_eq!(d.capture(r).unwrap(), shot);
        d.a11y_set_text(&pw.handle, "x").unwrap();
        assert_ne!(d.capture(r).unwrap(), shot);
        assert_eq!(d.a11y_element(&pw.handle).unwrap().unwrap().value, None);
    }

    #[test]
    fn submit_and_clear() {
        let mut d = desk();
        click_on(&mut d, Role::Edit, "Name");
        type_str(&mut d, "Grace");
        click_on(&mut d, Role::Edit, "Password");
        type_str(&mut d, "pw");
        click_on(&mut d, Role::Checkbox, "Remember me");
        assert_eq!(
            value_of(&mut d, Role::Statusbar, "Status").as_deref(),
            Some("Ready")
        );
        let status = find(&mut d, Role::Statusbar, "Status").rect.unwrap();
        let ready = d.capture(status).unwrap();
        click_on(&mut d, Role::Button, "Submit");
        assert_eq!(
            value_of(&mut d, Role::Statusbar, "Status").as_deref(),
            Some("Submitted: Grace")
        );
        assert_ne!(d.capture(status).unwrap(), ready);
        click_on(&mut d, Role::Button, "Clear");
        assert_eq!(
            value_of(&mut d, Role::Statusbar, "Status").as_deref(),
            Some("Cleared")
        );
        assert_eq!(value_of(&mut d, Role::Edit, "Name").as_deref(), Some(""));
        assert!(
            !find(&mut d, Role::Checkbox, "Remember me")
                .states
                .contains(&StateFlag::Checked)
        );
        // The password is empty again: Submit after typing one char shows no bullets left over.
        click_on(&mut d, Role::Button, "Submit");
        assert_eq!(
            value_of(&mut d, Role::Statusbar, "Status").as_deref(),
            Some("Submitted: ")
        );
    }

    fn focused_name(d: &mut super::super::VirtualDesktop) -> String {
        all_nodes(d)
            .into_iter()
            .find(|n| n.states.contains(&StateFlag::Focused))
            .map(|n| format!("{}:{}", n.role.as_str(), n.name))
            .unwrap_or_default()
    }

    #[test]
    fn tab_moves_focus_in_order_and_shift_tab_back() {
        let mut d = desk();
        assert_eq!(focused_name(&mut d), "edit:Name");
        let order = [
            "edit:Password",
            "checkbox:Remember me",
            "button:Submit",
            "button:Clear",
            "edit:Name",
        ];
        for want in order {
            tap(&mut d, "tab");
            assert_eq!(focused_name(&mut d), want);
        }
        chord(&mut d, "shift", "tab");
        assert_eq!(focused_name(&mut d), "button:Clear");
        d.type_char('\t').unwrap();
        assert_eq!(focused_name(&mut d), "edit:Name");
        // Space on a focused checkbox toggles; Enter and Space on buttons invoke.
        tap(&mut d, "tab");
        tap(&mut d, "tab");
        tap(&mut d, "space");
        assert!(
            find(&mut d, Role::Checkbox, "Remember me")
                .states
                .contains(&StateFlag::Checked)
        );
        tap(&mut d, "tab");
        tap(&mut d, "tab");
        tap(&mut d, "enter");
        assert_eq!(
            value_of(&mut d, Role::Statusbar, "Status").as_deref(),
            Some("Cleared")
        );
    }

    #[test]
    fn keys_edit_text_like_a_us_keyboard() {
        let mut d = desk();
        tap(&mut d, "h");
        chord(&mut d, "shift", "i");
        chord(&mut d, "rshift", "1");
        tap(&mut d, "space");
        chord(&mut d, "lshift", "/");
        tap(&mut d, "numpad7");
        tap(&mut d, "numpad_+");
        tap(&mut d, "ctrl"); // a modifier alone does nothing
        chord(&mut d, "ctrl", "c"); // other combos do nothing
        chord(&mut d, "alt", "x");
        assert_eq!(
            value_of(&mut d, Role::Edit, "Name").as_deref(),
            Some("hI! ?7+")
        );
        tap(&mut d, "backspace");
        tap(&mut d, "delete");
        assert_eq!(
            value_of(&mut d, Role::Edit, "Name").as_deref(),
            Some("hI! ?")
        );
        chord(&mut d, "ctrl", "a");
        d.type_char('é').unwrap();
        assert_eq!(value_of(&mut d, Role::Edit, "Name").as_deref(), Some("é"));
        type_str(&mut d, "abc");
        chord(&mut d, "rctrl", "a");
        tap(&mut d, "backspace");
        assert_eq!(value_of(&mut d, Role::Edit, "Name").as_deref(), Some(""));
        assert_eq!(d.held_inputs(), HeldInputs::default());
    }

    #[test]
    fn list_selection_by_click_and_keys_and_scrolling() {
        let mut d = desk();
        click_on(&mut d, Role::Listitem, "Item 3");
        assert_eq!(
            d.windows().unwrap()[0].title,
            "Items",
            "click raised the window"
        );
        let item = find(&mut d, Role::Listitem, "Item 3");
        assert!(item.states.contains(&StateFlag::Selected));
        assert!(
            find(&mut d, Role::List, "Items")
                .states
                .contains(&StateFlag::Focused)
        );
        tap(&mut d, "down");
        tap(&mut d, "down");
        tap(&mut d, "up");
        assert!(
            find(&mut d, Role::Listitem, "Item 4")
                .states
                .contains(&StateFlag::Selected)
        );
        assert_eq!(
            find(&mut d, Role::Text, "Selected: Item 4").role,
            Role::Text
        );
        // End selects the last row and scrolls it into view.
        tap(&mut d, "end");
        assert_eq!(
            value_of(&mut d, Role::Scrollbar, "Vertical").as_deref(),
            Some("12")
        );
        let last = find(&mut d, Role::Listitem, "Item 20");
        assert!(last.states.contains(&StateFlag::Selected) && last.rect.is_some());
        let first = find(&mut d, Role::Listitem, "Item 1");
        assert!(first.rect.is_none() && !first.states.contains(&StateFlag::Visible));
        tap(&mut d, "home");
        assert_eq!(
            value_of(&mut d, Role::Scrollbar, "Vertical").as_deref(),
            Some("0")
        );
        // Wheel over the list: down three notches, then clamped at both ends.
        let list = find(&mut d, Role::List, "Items").rect.unwrap();
        let (x, y) = center(list);
        d.pointer_move(x, y).unwrap();
        for _ in 0..3 {
            d.scroll(Axis::Vertical, false).unwrap();
        }
        assert_eq!(
            value_of(&mut d, Role::Scrollbar, "Vertical").as_deref(),
            Some("3")
        );
        for _ in 0..30 {
            d.scroll(Axis::Vertical, false).unwrap();
        }
        assert_eq!(
            value_of(&mut d, Role::Scrollbar, "Vertical").as_deref(),
            Some("12")
        );
        for _ in 0..30 {
            d.scroll(Axis::Vertical, true).unwrap();
        }
        assert_eq!(
            value_of(&mut d, Role::Scrollbar, "Vertical").as_deref(),
            Some("0")
        );
        let rows = d.capture(list).unwrap();
        d.scroll(Axis::Horizontal, true).unwrap();
        assert_eq!(
            value_of(&mut d, Role::Scrollbar, "Horizontal").as_deref(),
            Some("10")
        );
        assert_ne!(d.capture(list).unwrap(), rows, "the text shifted");
        for _ in 0..20 {
            d.scroll(Axis::Horizontal, true).unwrap();
        }
        assert_eq!(
            value_of(&mut d, Role::Scrollbar, "Horizontal").as_deref(),
            Some("100")
        );
        d.scroll(Axis::Horizontal, false).unwrap();
        assert_eq!(
            value_of(&mut d, Role::Scrollbar, "Horizontal").as_deref(),
            Some("90")
        );
        // Scrolling elsewhere does nothing.
        d.pointer_move(5, 5).unwrap();
        d.scroll(Axis::Vertical, false).unwrap();
        assert_eq!(
            value_of(&mut d, Role::Scrollbar, "Vertical").as_deref(),
            Some("0")
        );
    }

    #[test]
    fn ctrl_click_unselects_and_shift_scrolls_sideways() {
        let mut d = desk();
        click_on(&mut d, Role::Listitem, "Item 2");
        let item = find(&mut d, Role::Listitem, "Item 2");
        let (x, y) = center(item.rect.expect("rect"));
        d.key(cc_protocol::Key::parse("ctrl").unwrap(), true)
            .unwrap();
        click_with(&mut d, Button::Left, x, y);
        d.key(cc_protocol::Key::parse("ctrl").unwrap(), false)
            .unwrap();
        assert_eq!(find(&mut d, Role::Text, "Selected: none").role, Role::Text);
        // Without ctrl the click selects again.
        click_with(&mut d, Button::Left, x, y);
        assert_eq!(
            find(&mut d, Role::Text, "Selected: Item 2").role,
            Role::Text
        );
        d.key(cc_protocol::Key::parse("shift").unwrap(), true)
            .unwrap();
        d.scroll(Axis::Vertical, false).unwrap();
        d.key(cc_protocol::Key::parse("shift").unwrap(), false)
            .unwrap();
        assert_ne!(
            value_of(&mut d, Role::Scrollbar, "Horizontal").as_deref(),
            Some("0")
        );
        assert_eq!(
            value_of(&mut d, Role::Scrollbar, "Vertical").as_deref(),
            Some("0")
        );
    }

    #[test]
    fn a_click_needs_press_and_release_on_the_same_widget() {
        let mut d = desk();
        let submit = find(&mut d, Role::Button, "Submit").rect.unwrap();
        let (x, y) = center(submit);
        d.pointer_move(x, y).unwrap();
        d.button(Button::Left, true).unwrap();
        d.pointer_move(x, y + 200).unwrap();
        d.button(Button::Left, false).unwrap();
        assert_eq!(
            value_of(&mut d, Role::Statusbar, "Status").as_deref(),
            Some("Ready")
        );
    }

    #[test]
    fn dragging_the_title_bar_moves_the_window() {
        let mut d = desk();
        let before = d.windows().unwrap()[1].clone();
        assert_eq!(before.title, "Items");
        let (x, y) = (before.rect.x + 100, before.rect.y + 10);
        d.pointer_move(x, y).unwrap();
        d.button(Button::Left, true).unwrap();
        d.pointer_move(x - 300, y + 50).unwrap();
        d.pointer_move(x - 500, y + 80).unwrap();
        d.button(Button::Left, false).unwrap();
        let after = d.windows().unwrap();
        assert_eq!(after[0].id, before.id, "raised and focused");
        assert_eq!(
            after[0].rect,
            rect(before.rect.x - 500, before.rect.y + 80, 420, 520)
        );
        let list = find(&mut d, Role::List, "Items").rect.unwrap();
        assert_eq!(
            (list.x, list.y),
            (before.rect.x - 500 + 13, before.rect.y + 80 + 41)
        );
    }

    #[test]
    fn right_and_middle_clicks_show_in_the_taskbar() {
        let mut d = desk();
        let bar = rect(0, 1048, 1920, 32);
        let plain = d.capture(bar).unwrap();
        click_with(&mut d, Button::Right, 400, 300);
        let right = d.capture(bar).unwrap();
        assert_ne!(right, plain);
        click_with(&mut d, Button::Middle, 401, 300);
        assert_ne!(d.capture(bar).unwrap(), right);
        // Focusing another window changes the title shown there too.
        let id = d.windows().unwrap()[2].id;
        let shot = d.capture(bar).unwrap();
        d.focus_window(id).unwrap();
        assert_ne!(d.capture(bar).unwrap(), shot);
    }

    #[test]
    fn release_all_empties_held_inputs() {
        let mut d = desk();
        for k in ["shift", "ctrl", "a"] {
            d.key(cc_protocol::Key::parse(k).unwrap(), true).unwrap();
        }
        d.button(Button::Right, true).unwrap();
        d.button(Button::Left, true).unwrap();
        let held = d.held_inputs();
        assert_eq!(held.keys, ["a", "ctrl", "shift"]);
        assert_eq!(held.buttons, [Button::Left, Button::Right]);
        d.release_all().unwrap();
        assert_eq!(d.held_inputs(), HeldInputs::default());
        // Releasing what is not held is harmless.
        d.button(Button::Left, false).unwrap();
        d.key(cc_protocol::Key::parse("x").unwrap(), false).unwrap();
    }

    #[test]
    fn hostile_input_never_panics() {
        let mut d = desk();
        let extremes = [i32::MIN, -1, 0, 1, 959, 1919, 1920, i32::MAX];
        for &x in &extremes {
            for &y in &extremes {
                d.pointer_move(x, y).unwrap();
                let (px, py) = d.pointer_position().unwrap();
                assert!((0..1920).contains(&px) && (0..1080).contains(&py));
                for b in [Button::Left, Button::Right, Button::Middle] {
                    d.button(b, true).unwrap();
                    d.pointer_move(y, x).unwrap();
                    d.scroll(Axis::Vertical, x > 0).unwrap();
                    d.button(b, false).unwrap();
                }
            }
        }
        // Many drags cannot push a window beyond sane coordinates.
        for _ in 0..200 {
            let w = d.windows().unwrap()[0].rect;
            d.pointer_move(w.x.saturating_add(5), w.y.saturating_add(5))
                .unwrap();
            d.button(Button::Left, true).unwrap();
            d.pointer_move(i32::MIN, i32::MIN).unwrap();
            d.button(Button::Left, false).unwrap();
        }
        for c in ['\0', '\u{7f}', '\u{10ffff}', '\r', '\u{200b}'] {
            d.type_char(c).unwrap();
        }
        for name in cc_protocol::Key::all_names() {
            tap(&mut d, &name);
        }
        let shot = d
            .capture(rect(i32::MIN, i32::MIN, u32::MAX, u32::MAX))
            .unwrap();
        assert_eq!((shot.width, shot.height), (1920, 1080));
        assert!(d.a11y_tree(None, usize::MAX).is_ok());
    }
}
