//! The built-in virtual desktop: a small, deterministic desktop that renders real pixels.
//!
//! It is the default backend when no display server exists, so every feature of the
//! product (capture, input, accessibility, verification by read-back) works anywhere.
//! Three windows live on it: a sign-in form, a scrollable list and a display-settings
//! window whose button adds or removes a second monitor. alt+F4 closes the active
//! window and `launch` of its application id opens it again; ctrl+c copies the form's
//! name and ctrl+v pastes into the focused field. No clocks, randomness or threads:
//! the same inputs always produce the same pixels.

mod a11y;
mod canvas;
mod clipboard;
mod input;
mod paint;
mod render;
mod scene;
mod widgets;

#[cfg(test)]
mod testkit;

use cc_protocol::{Key, PhysicalRect};

use crate::{
    Axis, Button, Capabilities, Changes, ClipboardContent, Driver, DriverError, DriverEvent,
    ElementHandle, ElementInfo, HeldInputs, Launched, Layout, PhysicalDisplay, RawNode,
    SemanticAction, Watching, WindowInfo,
};
use clipboard::{Clipboard, Shortcut};
use input::Input;
use render::Framebuffer;
use scene::Scene;

/// The monitors the virtual desktop starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VirtualConfig {
    /// Physical displays; an empty list means the default single display.
    pub displays: Vec<PhysicalDisplay>,
}

impl Default for VirtualConfig {
    /// One 1920x1080 primary display at the origin, like a plain desktop machine.
    fn default() -> Self {
        VirtualConfig {
            displays: vec![PhysicalDisplay {
                id: "0".into(),
                name: "VIRTUAL-1".into(),
                rect: PhysicalRect {
                    x: 0,
                    y: 0,
                    width: 1920,
                    height: 1080,
                },
                primary: true,
            }],
        }
    }
}

/// A deterministic desktop with real pixels, windows and an accessibility tree, used
/// as the backend wherever no real desktop is available.
pub struct VirtualDesktop {
    scene: Scene,
    input: Input,
    frame: Framebuffer,
    clipboard: Clipboard,
    /// The layout generation the last `poll_events` reported.
    polled_generation: u64,
}

impl VirtualDesktop {
    /// Builds the desktop in its initial state: the form focused, the pointer centred
    /// on the primary display.
    pub fn new(config: VirtualConfig) -> Self {
        let displays = if config.displays.is_empty() {
            VirtualConfig::default().displays
        } else {
            config.displays
        };
        let scene = Scene::new(displays);
        let at = scene.primary().map_or((0, 0), |d| {
            let cx = i64::from(d.rect.x) + i64::from(d.rect.width / 2);
            let cy = i64::from(d.rect.y) + i64::from(d.rect.height / 2);
            (cx as i32, cy as i32)
        });
        let mut input = Input::new(at);
        input.clamp_pointer(&scene);
        VirtualDesktop {
            polled_generation: scene.generation,
            scene,
            input,
            frame: Framebuffer::new(),
            clipboard: Clipboard::default(),
        }
    }

    /// Runs an input step, then keeps the pointer on the (possibly new) layout.
    fn with_input(&mut self, f: impl FnOnce(&mut Input, &mut Scene)) -> Result<(), DriverError> {
        f(&mut self.input, &mut self.scene);
        self.input.clamp_pointer(&self.scene);
        Ok(())
    }
}

impl Default for VirtualDesktop {
    fn default() -> Self {
        VirtualDesktop::new(VirtualConfig::default())
    }
}

impl Driver for VirtualDesktop {
    fn platform(&self) -> &'static str {
        "virtual"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            capture: true,
            input: true,
            accessibility: true,
            windows: true,
            hotkey: false,
            clipboard: true,
            launch: true,
        }
    }

    fn layout(&mut self) -> Result<Layout, DriverError> {
        Ok(Layout {
            displays: self.scene.displays.clone(),
            generation: self.scene.generation,
        })
    }

    fn capture(&mut self, rect: PhysicalRect) -> Result<crate::RgbImage, DriverError> {
        self.frame.update(&self.scene);
        self.frame.capture(rect)
    }

    fn pointer_position(&mut self) -> Result<(i32, i32), DriverError> {
        Ok(self.input.pointer())
    }

    fn pointer_move(&mut self, x: i32, y: i32) -> Result<(), DriverError> {
        self.with_input(|i, s| i.pointer_move(s, x, y))
    }

    fn button(&mut self, button: Button, down: bool) -> Result<(), DriverError> {
        self.with_input(|i, s| i.button(s, button, down))
    }

    fn scroll(&mut self, axis: Axis, positive: bool) -> Result<(), DriverError> {
        self.with_input(|i, s| i.scroll(s, axis, positive))
    }

    fn key(&mut self, key: Key, down: bool) -> Result<(), DriverError> {
        let shortcut = self.input.key(&mut self.scene, key, down);
        match shortcut {
            Some(Shortcut::Copy) => self.clipboard.copy(&self.scene),
            Some(Shortcut::Paste) => self.clipboard.paste(&mut self.scene),
            Some(Shortcut::Close) => {
                self.scene.close_focused();
            }
            None => {}
        }
        self.input.clamp_pointer(&self.scene);
        Ok(())
    }

    fn type_char(&mut self, c: char) -> Result<(), DriverError> {
        self.with_input(|i, s| i.type_char(s, c))
    }

    fn release_all(&mut self) -> Result<(), DriverError> {
        self.with_input(|i, s| i.release_all(s))
    }

    fn held_inputs(&mut self) -> HeldInputs {
        self.input.held()
    }

    fn windows(&mut self) -> Result<Vec<WindowInfo>, DriverError> {
        let pid = std::process::id();
        Ok(self
            .scene
            .windows
            .iter()
            .enumerate()
            .map(|(z, w)| WindowInfo {
                id: w.id,
                app_id: w.app_id().into(),
                pid: Some(pid),
                title: w.title().into(),
                rect: w.rect,
                focused: z == 0,
            })
            .collect())
    }

    /// What a click there would reach, as the desktop itself decides it: the taskbar
    /// covers the windows under it.
    fn window_at(&mut self, x: i32, y: i32) -> Result<Option<WindowInfo>, DriverError> {
        let Some(id) = self.scene.hit(x, y).window() else {
            return Ok(None);
        };
        Ok(self.windows()?.into_iter().find(|w| w.id == id))
    }

    fn focus_window(&mut self, id: u64) -> Result<(), DriverError> {
        if self.scene.raise(id) {
            Ok(())
        } else {
            Err(DriverError::Failed(format!("no window {id:#x}")))
        }
    }

    fn focused_is_password(&mut self) -> Result<bool, DriverError> {
        Ok(self.scene.focused().map(|(_, w)| w) == Some(widgets::WidgetId::Password))
    }

    fn a11y_tree(
        &mut self,
        window: Option<u64>,
        max_nodes: usize,
    ) -> Result<Vec<RawNode>, DriverError> {
        a11y::tree(&self.scene, window, max_nodes)
    }

    fn a11y_element(&mut self, handle: &ElementHandle) -> Result<Option<ElementInfo>, DriverError> {
        a11y::element(&self.scene, handle)
    }

    fn a11y_perform(
        &mut self,
        handle: &ElementHandle,
        action: SemanticAction,
    ) -> Result<(), DriverError> {
        a11y::perform(&mut self.scene, handle, action)?;
        self.input.clamp_pointer(&self.scene);
        Ok(())
    }

    fn a11y_set_text(&mut self, handle: &ElementHandle, text: &str) -> Result<(), DriverError> {
        a11y::set_text(&mut self.scene, handle, text)
    }

    fn watch_changes(&mut self, _on: bool) -> Watching {
        // The scene changes only through this driver's calls, none of which run while
        // the engine waits: every kind is known without looking again.
        Watching {
            pixels: true,
            a11y: true,
            windows: true,
            still: true,
        }
    }

    fn wait_changes(&mut self, timeout: std::time::Duration) -> Changes {
        std::thread::sleep(timeout);
        Changes::default()
    }

    fn clipboard_read(&mut self) -> Result<ClipboardContent, DriverError> {
        let (text, owner) = self.clipboard.read();
        Ok(ClipboardContent {
            text: text.map(str::to_string),
            owner: owner.map(str::to_string),
            // The password field never copies, so nothing on this clipboard is one.
            secret: false,
        })
    }

    fn clipboard_write(&mut self, text: &str) -> Result<(), DriverError> {
        self.clipboard.write(text);
        Ok(())
    }

    /// Only its own applications run here: `cc-form`, `cc-list` and `cc-display`
    /// (opened again if closed, raised if open). Their process is the desktop's.
    fn launch(&mut self, app: &str, args: &[String]) -> Result<Launched, DriverError> {
        let Some(kind) = widgets::WindowKind::from_app_id(app) else {
            let known: Vec<&str> = widgets::WindowKind::ALL
                .iter()
                .map(|k| k.app_id())
                .collect();
            return Ok(Launched::Refused(format!(
                "the virtual desktop runs only its own applications ({}); {app:?} is not one of them",
                known.join(", ")
            )));
        };
        if !args.is_empty() {
            return Ok(Launched::Refused(format!("{app} takes no arguments")));
        }
        let window = self.scene.open(kind);
        Ok(Launched::Started {
            pid: std::process::id(),
            window: Some(window),
        })
    }

    fn poll_events(&mut self) -> Vec<DriverEvent> {
        if self.scene.generation == self.polled_generation {
            return Vec::new();
        }
        self.polled_generation = self.scene.generation;
        vec![DriverEvent::LayoutChanged]
    }
}

#[cfg(test)]
mod tests {
    use super::testkit::*;
    use super::*;

    fn assert_send<T: Send>() {}

    #[test]
    fn is_send_and_describes_itself() {
        assert_send::<VirtualDesktop>();
        let d = desk();
        assert_eq!(d.platform(), "virtual");
        let c = d.capabilities();
        assert!(c.capture && c.input && c.accessibility && c.windows && !c.hotkey);
    }

    #[test]
    fn windows_start_in_z_order_with_one_focused() {
        let mut d = desk();
        let ws = d.windows().unwrap();
        let titles: Vec<&str> = ws.iter().map(|w| w.title.as_str()).collect();
        assert_eq!(titles, ["Sign in", "Items", "Displays"]);
        assert_eq!(ws.iter().filter(|w| w.focused).count(), 1);
        assert_eq!(ws[0].id, 0x0040_0001);
        assert_eq!(ws[0].app_id, "cc-form");
        assert_eq!(ws[0].pid, Some(std::process::id()));
        assert_eq!(ws[1].rect, rect(820, 120, 420, 520));
        d.focus_window(ws[2].id).unwrap();
        let ws = d.windows().unwrap();
        assert_eq!(ws[0].title, "Displays");
        assert!(ws[0].focused && !ws[1].focused && !ws[2].focused);
        assert!(
            matches!(d.focus_window(42), Err(DriverError::Failed(m)) if m.contains("no window"))
        );
    }

    #[test]
    fn display_toggle_changes_the_layout_and_emits_one_event() {
        let mut d = desk();
        assert!(d.poll_events().is_empty());
        let before = d.layout().unwrap();
        assert_eq!(before.displays.len(), 1);
        let button = find(&mut d, cc_protocol::Role::Button, "Add left display");
        click_rect(&mut d, button.rect.unwrap());
        let after = d.layout().unwrap();
        assert_eq!(after.generation, before.generation + 1);
        assert_eq!(after.displays.len(), 2);
        let added = &after.displays[1];
        assert_eq!((added.id.as_str(), added.name.as_str()), ("1", "VIRTUAL-2"));
        assert_eq!(added.rect, rect(-1280, 0, 1280, 1024));
        assert!(!added.primary);
        assert_eq!(d.poll_events(), vec![DriverEvent::LayoutChanged]);
        assert!(d.poll_events().is_empty(), "reported once");
        // The framebuffer now covers the union, with a black gap under the new display.
        let full = d.capture(rect(-1280, 0, 3200, 1080)).unwrap();
        assert_eq!((full.width, full.height), (3200, 1080));
        assert_eq!(full.get(10, 1070), Some([0, 0, 0]));
        assert_ne!(full.get(10, 500), Some([0, 0, 0]));
        // The pointer may now go left of zero.
        d.pointer_move(-5000, 10).unwrap();
        assert_eq!(d.pointer_position().unwrap(), (-1280, 10));
        // The same button (same handle) now removes it.
        let same = find(&mut d, cc_protocol::Role::Button, "Remove left display");
        assert_eq!(same.handle, button.handle);
        d.a11y_perform(&same.handle, SemanticAction::Invoke)
            .unwrap();
        let back = d.layout().unwrap();
        assert_eq!(back.displays, before.displays);
        assert_eq!(back.generation, before.generation + 2);
        assert_eq!(d.poll_events(), vec![DriverEvent::LayoutChanged]);
        assert_eq!(
            d.pointer_position().unwrap(),
            (0, 10),
            "pointer kept on screen"
        );
        assert!(d.capture(rect(-1280, 0, 100, 100)).is_err());
    }

    fn combo(d: &mut VirtualDesktop, keys: &[&str]) {
        let keys: Vec<Key> = keys.iter().map(|k| Key::parse(k).unwrap()).collect();
        for k in &keys {
            d.key(*k, true).unwrap();
        }
        for k in keys.iter().rev() {
            d.key(*k, false).unwrap();
        }
    }

    #[test]
    fn copy_and_paste_between_the_fields_never_from_the_password() {
        let mut d = desk();
        assert_eq!(d.clipboard_read().unwrap(), ClipboardContent::default());
        click_on(&mut d, cc_protocol::Role::Edit, "Name");
        type_str(&mut d, "ada");
        combo(&mut d, &["ctrl", "c"]);
        let c = d.clipboard_read().unwrap();
        assert_eq!(
            (c.text.as_deref(), c.owner.as_deref()),
            (Some("ada"), Some("cc-form"))
        );
        assert!(
            !format!("{c:?}").contains("ada"),
            "debug never shows the text"
        );
        // ctrl+a then ctrl+v replaces the selection with the clipboard.
        combo(&mut d, &["ctrl", "a"]);
        d.clipboard_write("grace").unwrap();
        combo(&mut d, &["ctrl", "v"]);
        assert_eq!(
            value_of(&mut d, cc_protocol::Role::Edit, "Name").as_deref(),
            Some("grace")
        );
        assert_eq!(
            d.clipboard_read().unwrap().owner.as_deref(),
            Some("computer-control")
        );
        // The password field pastes, but never copies.
        tap(&mut d, "tab");
        combo(&mut d, &["ctrl", "v"]);
        type_str(&mut d, "-pw");
        combo(&mut d, &["ctrl", "a"]);
        combo(&mut d, &["ctrl", "c"]);
        assert_eq!(d.clipboard_read().unwrap().text.as_deref(), Some("grace"));
        assert!(d.focused_is_password().unwrap());
        // Pasting into something that is not a field does nothing.
        tap(&mut d, "tab");
        combo(&mut d, &["ctrl", "v"]);
        assert_eq!(
            value_of(&mut d, cc_protocol::Role::Edit, "Name").as_deref(),
            Some("grace")
        );
        assert!(d.held_inputs().keys.is_empty());
    }

    #[test]
    fn alt_f4_closes_and_launch_opens_again_or_raises() {
        let mut d = desk();
        click_on(&mut d, cc_protocol::Role::Edit, "Name");
        type_str(&mut d, "ada");
        combo(&mut d, &["alt", "f4"]);
        let ws = d.windows().unwrap();
        assert_eq!(
            ws.iter().map(|w| w.app_id.as_str()).collect::<Vec<_>>(),
            ["cc-list", "cc-display"]
        );
        assert!(ws[0].focused);
        // Raising an open one.
        let r = d.launch("cc-display", &[]).unwrap();
        assert_eq!(
            r,
            Launched::Started {
                pid: std::process::id(),
                window: Some(ws[1].id)
            }
        );
        assert_eq!(d.windows().unwrap()[0].app_id, "cc-display");
        // Opening a closed one: where it first was, empty, focused.
        let Launched::Started { window, .. } = d.launch("cc-form", &[]).unwrap() else {
            panic!("refused");
        };
        let ws = d.windows().unwrap();
        assert_eq!((Some(ws[0].id), ws[0].focused), (window, true));
        assert_eq!(ws[0].rect, rect(120, 120, 640, 440));
        assert_eq!(
            value_of(&mut d, cc_protocol::Role::Edit, "Name").as_deref(),
            Some("")
        );
        // Anything else is refused, with what exists.
        for (app, args) in [("xterm", vec![]), ("cc-list", vec!["x".to_string()])] {
            let Launched::Refused(why) = d.launch(app, &args).unwrap() else {
                panic!("{app} launched");
            };
            assert!(
                why.contains("cc-form") || why.contains("no arguments"),
                "{why}"
            );
        }
        // Closing everything leaves a desktop that still answers.
        for _ in 0..4 {
            combo(&mut d, &["alt", "f4"]);
        }
        assert!(d.windows().unwrap().is_empty());
        assert!(d.a11y_tree(None, 100).unwrap().is_empty());
        d.capture(rect(0, 0, 100, 100)).unwrap();
        combo(&mut d, &["ctrl", "v"]);
    }

    /// Drags a window by its title bar.
    fn drag_title(d: &mut VirtualDesktop, w: &WindowInfo, dx: i32, dy: i32) {
        let (x, y) = (w.rect.x + 100, w.rect.y + 10);
        d.pointer_move(x, y).unwrap();
        d.button(Button::Left, true).unwrap();
        d.pointer_move(x + dx, y + dy).unwrap();
        d.button(Button::Left, false).unwrap();
    }

    #[test]
    fn the_window_at_a_point_is_the_one_a_click_reaches() {
        let mut d = desk();
        let ws = d.windows().unwrap();
        let (form, list, displays) = (ws[0].clone(), ws[1].clone(), ws[2].clone());
        let at = |d: &mut VirtualDesktop, x, y| d.window_at(x, y).unwrap().map(|w| w.id);
        assert_eq!(at(&mut d, form.rect.x + 5, form.rect.y + 5), Some(form.id));
        assert_eq!(at(&mut d, 5, 5), None, "the bare desktop");
        // The list dragged over the form: where they overlap, the raised list.
        drag_title(&mut d, &list, -500, 0);
        assert_eq!(at(&mut d, 400, 300), Some(list.id));
        assert_eq!(d.windows().unwrap()[1].id, form.id);
        // The displays window dragged under the taskbar: its list rectangle still
        // holds the point, but a click there reaches the taskbar.
        drag_title(&mut d, &displays, 0, 300);
        let moved = d.windows().unwrap()[0].clone();
        assert_eq!(moved.id, displays.id);
        assert!(moved.rect.contains(displays.rect.x + 10, 1060));
        assert_eq!(at(&mut d, displays.rect.x + 10, 1060), None);
        assert_eq!(at(&mut d, displays.rect.x + 10, 1000), Some(displays.id));
    }

    #[test]
    fn empty_config_falls_back_to_one_display() {
        let mut d = VirtualDesktop::new(VirtualConfig { displays: vec![] });
        assert_eq!(
            d.layout().unwrap().displays,
            VirtualConfig::default().displays
        );
    }
}
