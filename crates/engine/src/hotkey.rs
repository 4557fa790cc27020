//! The emergency hotkey, noticed while an action runs: the worker's driver is wrapped
//! so that every input step first polls the desktop's events. A hotkey press engages
//! the stop at once (the next `check_stop` of the action in flight sees it); other
//! events are kept for the worker's next tick. The wrapper also publishes what the
//! driver holds after every key or button step, so `system.status.held` is live even
//! during a long drag.

use std::sync::Arc;

use cc_desktop::{
    Axis, Button, Capabilities, Driver, DriverError, DriverEvent, ElementHandle, ElementInfo,
    HeldInputs, Layout, Pace, RawNode, SemanticAction, WindowInfo,
};
use cc_protocol::{Key, PhysicalRect};

use crate::core::Core;

/// A driver whose input steps notice the emergency hotkey.
pub struct HotkeyAware {
    inner: Box<dyn Driver>,
    core: Arc<Core>,
    /// Non-hotkey events seen during polls, returned by the next `poll_events`.
    kept: Vec<DriverEvent>,
}

impl HotkeyAware {
    /// Wraps a driver.
    pub fn new(inner: Box<dyn Driver>, core: Arc<Core>) -> Self {
        HotkeyAware {
            inner,
            core,
            kept: Vec::new(),
        }
    }

    /// Publishes the held keys and buttons (`system.status.held`).
    fn publish_held(&mut self) {
        let held = self.inner.held_inputs();
        self.core.lock().held = held;
    }

    /// Handles pending hotkey presses now; keeps the other events.
    fn poll(&mut self) {
        for e in self.inner.poll_events() {
            if e == DriverEvent::Hotkey {
                self.core.hotkey();
            } else if !self.kept.contains(&e) {
                self.kept.push(e);
            }
        }
    }
}

impl Driver for HotkeyAware {
    fn platform(&self) -> &'static str {
        self.inner.platform()
    }
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }
    fn layout(&mut self) -> Result<Layout, DriverError> {
        self.inner.layout()
    }
    fn capture(&mut self, rect: PhysicalRect) -> Result<cc_desktop::RgbImage, DriverError> {
        self.poll();
        self.inner.capture(rect)
    }
    fn pointer_position(&mut self) -> Result<(i32, i32), DriverError> {
        self.inner.pointer_position()
    }
    fn pointer_move(&mut self, x: i32, y: i32) -> Result<(), DriverError> {
        self.poll();
        self.inner.pointer_move(x, y)
    }
    fn button(&mut self, button: Button, down: bool) -> Result<(), DriverError> {
        self.poll();
        let r = self.inner.button(button, down);
        self.publish_held();
        r
    }
    fn scroll(&mut self, axis: Axis, positive: bool) -> Result<(), DriverError> {
        self.poll();
        self.inner.scroll(axis, positive)
    }
    fn key(&mut self, key: Key, down: bool) -> Result<(), DriverError> {
        self.poll();
        let r = self.inner.key(key, down);
        self.publish_held();
        r
    }
    fn type_char(&mut self, c: char) -> Result<(), DriverError> {
        self.poll();
        self.inner.type_char(c)
    }
    fn prepare_typing(&mut self, text: &str, pace: Pace) -> Result<(), DriverError> {
        self.inner.prepare_typing(text, pace)
    }
    fn release_all(&mut self) -> Result<(), DriverError> {
        let r = self.inner.release_all();
        self.publish_held();
        r
    }
    fn held_inputs(&mut self) -> HeldInputs {
        self.inner.held_inputs()
    }
    fn windows(&mut self) -> Result<Vec<WindowInfo>, DriverError> {
        self.inner.windows()
    }
    fn window_shown(&mut self, id: u64) -> Result<Option<WindowInfo>, DriverError> {
        self.inner.window_shown(id)
    }
    fn window_at(&mut self, x: i32, y: i32) -> Result<Option<WindowInfo>, DriverError> {
        self.inner.window_at(x, y)
    }
    fn focus_window(&mut self, id: u64) -> Result<(), DriverError> {
        self.poll();
        self.inner.focus_window(id)
    }
    fn focused_is_password(&mut self) -> Result<bool, DriverError> {
        self.inner.focused_is_password()
    }
    fn a11y_tree(
        &mut self,
        window: Option<u64>,
        max_nodes: usize,
    ) -> Result<Vec<RawNode>, DriverError> {
        self.poll();
        self.inner.a11y_tree(window, max_nodes)
    }
    fn a11y_element(&mut self, handle: &ElementHandle) -> Result<Option<ElementInfo>, DriverError> {
        self.inner.a11y_element(handle)
    }
    fn a11y_perform(
        &mut self,
        handle: &ElementHandle,
        action: SemanticAction,
    ) -> Result<(), DriverError> {
        self.poll();
        self.inner.a11y_perform(handle, action)
    }
    fn a11y_set_text(&mut self, handle: &ElementHandle, text: &str) -> Result<(), DriverError> {
        self.poll();
        self.inner.a11y_set_text(handle, text)
    }
    fn set_hotkey(&mut self, keys: &[Key]) -> Result<(), DriverError> {
        self.inner.set_hotkey(keys)
    }
    fn set_indicator(&mut self, state: cc_desktop::Indicator) -> Result<(), DriverError> {
        self.inner.set_indicator(state)
    }
    fn clipboard_read(&mut self) -> Result<cc_desktop::ClipboardContent, DriverError> {
        self.poll();
        self.inner.clipboard_read()
    }
    fn clipboard_write(&mut self, text: &str) -> Result<(), DriverError> {
        self.poll();
        self.inner.clipboard_write(text)
    }
    fn launch(&mut self, app: &str, args: &[String]) -> Result<cc_desktop::Launched, DriverError> {
        self.poll();
        self.inner.launch(app, args)
    }
    fn poll_events(&mut self) -> Vec<DriverEvent> {
        self.poll();
        std::mem::take(&mut self.kept)
    }
    fn pump(&mut self) {
        self.poll();
    }
    fn watch_changes(&mut self, on: bool) -> cc_desktop::Watching {
        self.inner.watch_changes(on)
    }
    fn wait_changes(&mut self, timeout: std::time::Duration) -> cc_desktop::Changes {
        // A hotkey pressed during a wait on a condition engages the stop at once.
        let changes = self.inner.wait_changes(timeout);
        self.poll();
        changes
    }
}
