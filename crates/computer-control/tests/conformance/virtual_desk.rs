//! The built-in virtual desktop as a conformance desk: the server draws it itself, so
//! the suite reads it back through what it shows (an edit's value, pixels); it has no
//! other client to share a clipboard with and no window manager of its own to
//! minimize with.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use super::desk::{App, BIN, Copy, Desk, MonitorChange, Oracle, capabilities_but, window_of};
use crate::common::{Server, center, find_node};

/// A private directory; the desktop itself lives in the server.
pub struct VirtualDesk {
    dir: cc_test_kit::TempDir,
}

/// The sign-in form's "Name" edit, read through a snapshot.
struct NameField;

impl Oracle for NameField {
    fn received(&self, s: &mut Server) -> String {
        let snap = s.ok("a11y.snapshot", json!({"level": "full"}));
        let n = find_node(&snap["tree"], "edit", "Name")
            .unwrap_or_else(|| panic!("no Name edit: {snap}"));
        n["value"].as_str().unwrap_or_default().to_string()
    }

    fn shows(&self, typed: &str) -> String {
        typed.replace('\n', "")
    }

    fn independent(&self) -> bool {
        false
    }
}

impl Desk for VirtualDesk {
    const PLATFORM: &'static str = "virtual";

    const WINDOW_WAITS: &'static str = "events";

    fn start() -> Self {
        VirtualDesk {
            dir: cc_test_kit::TempDir::new(),
        }
    }

    fn serve(&self) -> Command {
        let mut cmd = Command::new(BIN);
        cmd.args(["serve", "--platform", "virtual"])
            .env_remove("COMPUTER_CONTROL_CONFIG");
        cmd
    }

    fn capabilities(&self) -> Value {
        // No keyboard of a person's to press a chord on.
        capabilities_but(&["hotkey"])
    }

    fn open(&mut self, s: &mut Server, app: App) -> Value {
        match app {
            App::Checkboxes | App::PasswordForm => window_of(s, "cc-form")["id"].clone(),
        }
    }

    fn spawn_checkboxes(&mut self) -> Option<Value> {
        None
    }

    fn close(&mut self, s: &mut Server, window: &Value) {
        // alt+F4 closes the focused window.
        s.ok("window.focus", json!({"id": window["id"]}));
        s.ok("keyboard.combo", json!({"keys": "alt+f4"}));
    }

    fn typing_oracle(&mut self, s: &mut Server) -> Box<dyn Oracle> {
        s.click_node("edit", "Name");
        Box::new(NameField)
    }

    fn password_arrived(&self, _: &Value, _: &str, before: &[u8], after: &[u8]) -> bool {
        // The entry draws a bullet per character and nothing else changes it.
        before != after
    }

    fn pointer(&self) -> Option<(i64, i64)> {
        None
    }

    fn button_down(&self) -> Option<bool> {
        None
    }

    fn assert_nothing_held(&self, _: &dyn Oracle, _: &mut Server) {
        // The desktop is the server's: `system.status.held` is all there is to ask.
    }

    fn add_monitor(&mut self, s: &mut Server) -> Option<MonitorChange> {
        // Its "Displays" application adds a 1280×720 display left of the first.
        let snap = s.ok("a11y.snapshot", json!({"level": "full"}));
        let button = find_node(&snap["tree"], "button", "Add left display")
            .unwrap_or_else(|| panic!("no Add left display: {snap}"))
            .clone();
        let (x, y) = center(&button);
        s.ok("pointer.click", json!({"x": x, "y": y}));
        Some(MonitorChange::left_of_the_first())
    }

    fn minimize(&mut self, _: &Value) -> bool {
        false
    }

    fn clipboard_elsewhere(&mut self, _: &mut Server) -> Option<String> {
        None
    }

    fn copy_elsewhere(
        &mut self,
        s: &mut Server,
        text: &str,
        kind: Copy,
    ) -> Option<Box<dyn std::any::Any>> {
        // The form copies its Name field (ctrl+a, ctrl+c); no application here marks
        // a copy as a password.
        if kind == Copy::Password {
            return None;
        }
        s.click_node("edit", "Name");
        s.ok("keyboard.combo", json!({"keys": "ctrl+a"}));
        // In two pieces, so the whole text is only ever on the clipboard.
        let mid = text
            .char_indices()
            .nth(text.chars().count() / 2)
            .map_or(0, |(i, _)| i);
        for piece in [&text[..mid], &text[mid..]] {
            s.ok("keyboard.type", json!({"text": piece}));
        }
        s.ok("keyboard.combo", json!({"keys": "ctrl+a"}));
        s.ok("keyboard.combo", json!({"keys": "ctrl+c"}));
        Some(Box::new(()))
    }

    fn paste_keys(&self) -> Option<&'static str> {
        Some("ctrl+v")
    }

    fn launchable(&self) -> &'static str {
        "cc-display"
    }

    fn check_launched(&mut self, _: &mut Server, _: &Value, _: u64) {}

    fn path(&self, name: &str) -> PathBuf {
        self.dir.0.join(name)
    }
}
