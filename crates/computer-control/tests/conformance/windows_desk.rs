//! The Windows build of the server under Wine on a private 1920×1080 Xvfb
//! (`cc_test_kit::wine`) as a conformance desk. Its applications are Wine's notepad
//! (the typing oracle: its edit control's value, read through the server's MSAA
//! snapshot, so not independent of the server) and the desk's own `cc-form.exe`
//! (`scripts/wine/cc-form.c`: named checkboxes, a password edit with a plain mirror).
//! Another Windows process of that program reads the desk back without the server:
//! the cursor and the keys and buttons down (`GetCursorPos`, `GetAsyncKeyState`), the
//! clipboard as another client, a copy another client owns (marked secret or not); it
//! also minimizes a window and ends a process from outside, as a taskbar would. The
//! emergency chord is pressed from the X side with xdotool, as a person's keys arrive.
//! Wine on one Xvfb shows one monitor; its monitor change is that monitor's
//! resolution, changed through the X server's RandR.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use cc_test_kit::wine::WineDesk;
use serde_json::{Value, json};

use super::desk::{App, BIN, Copy, Desk, MonitorChange, Oracle, capabilities_but, window_where};
use crate::common::{Server, center, find_where};

/// The Wine desk, the suite's files and the Windows programs it started.
pub struct WindowsDesk {
    desk: WineDesk,
    dir: cc_test_kit::TempDir,
    started: Vec<Child>,
}

/// A notepad's edit control, read through a snapshot of its window.
struct NotepadEdit {
    window: Value,
}

impl Oracle for NotepadEdit {
    fn received(&self, s: &mut Server) -> String {
        let snap = s.ok(
            "a11y.snapshot",
            json!({"level": "full", "window": self.window}),
        );
        let edit = find_where(&snap["tree"], "edit", &|_| true)
            .unwrap_or_else(|| panic!("notepad without its edit: {snap}"));
        edit["value"].as_str().unwrap_or_default().to_string()
    }

    /// Enter in a multi-line edit is a line break of two characters.
    fn shows(&self, typed: &str) -> String {
        typed.replace('\n', "\r\n")
    }

    fn independent(&self) -> bool {
        false
    }
}

/// The window ids of `app_id` the server lists now.
fn windows_of(s: &mut Server, app_id: &str) -> Vec<Value> {
    let list = s.ok("window.list", json!({}));
    list["windows"]
        .as_array()
        .map(|ws| {
            ws.iter()
                .filter(|w| w["app_id"] == app_id)
                .map(|w| w["id"].clone())
                .collect()
        })
        .unwrap_or_default()
}

/// A copy `cc-form.exe copy` owns until it is ended.
struct Copier(Child);

impl Drop for Copier {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl WindowsDesk {
    /// Starts a Windows program on the desk without waiting for it.
    fn spawn(&mut self, exe: &Path, args: &[&str]) {
        let child = self
            .desk
            .server(exe, args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", exe.display()));
        self.started.push(child);
    }

    /// Starts `exe` and returns the one new window of `app_id` the server lists.
    fn open_new(&mut self, s: &mut Server, exe: &Path, app_id: &str) -> Value {
        let before = windows_of(s, app_id);
        self.spawn(exe, &[]);
        window_where(s, app_id, |w| {
            w["app_id"] == app_id && !before.contains(&w["id"])
        })
    }

    /// The cursor and the virtual keys down, as another Windows process reads them.
    fn probe(&self) -> ((i64, i64), Vec<u32>) {
        let out = self.desk.form(&["probe"]);
        let mut words = out.split_whitespace();
        let mut num = || -> i64 {
            words
                .next()
                .and_then(|w| w.parse().ok())
                .unwrap_or_else(|| panic!("cc-form.exe probe printed {out:?}"))
        };
        let at = (num(), num());
        let down = out
            .split_whitespace()
            .skip(2)
            .filter_map(|w| w.parse().ok())
            .collect();
        (at, down)
    }
}

impl Drop for WindowsDesk {
    fn drop(&mut self) {
        for mut c in self.started.drain(..) {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// `VK_LBUTTON`, `VK_RBUTTON`, `VK_MBUTTON`.
const BUTTONS: [u32; 3] = [0x01, 0x02, 0x04];

impl Desk for WindowsDesk {
    const PLATFORM: &'static str = "windows";

    /// The driver reads the window list again; it subscribes to no window events.
    const WINDOW_WAITS: &'static str = "polling";

    fn start() -> Self {
        WindowsDesk {
            desk: WineDesk::start_sized(1920, 1080),
            dir: cc_test_kit::TempDir::new(),
            started: Vec::new(),
        }
    }

    fn serve(&self) -> Command {
        let exe = WineDesk::windows_exe(BIN);
        let mut cmd = self.desk.server(&exe, &["serve", "--platform", "windows"]);
        cmd.env_remove("COMPUTER_CONTROL_CONFIG");
        cmd
    }

    fn capabilities(&self) -> Value {
        capabilities_but(&[])
    }

    fn open(&mut self, s: &mut Server, app: App) -> Value {
        match app {
            App::Checkboxes | App::PasswordForm => {
                let exe = self.desk.form_exe();
                self.open_new(s, &exe, "cc-form.exe")["id"].clone()
            }
        }
    }

    fn spawn_checkboxes(&mut self) -> Option<Value> {
        let exe = self.desk.form_exe();
        self.spawn(&exe, &[]);
        Some(json!({"title_contains": "cc-form"}))
    }

    fn close(&mut self, _: &mut Server, window: &Value) {
        let pid = window["pid"]
            .as_u64()
            .unwrap_or_else(|| panic!("a window without a pid: {window}"));
        self.desk.form(&["kill", &pid.to_string()]);
    }

    fn typing_oracle(&mut self, s: &mut Server) -> Box<dyn Oracle> {
        let window = self.open_new(s, Path::new("notepad"), "notepad.exe")["id"].clone();
        s.ok("window.focus", json!({"id": window}));
        let snap = s.ok("a11y.snapshot", json!({"level": "full", "window": window}));
        let edit = find_where(&snap["tree"], "edit", &|_| true)
            .unwrap_or_else(|| panic!("notepad without its edit: {snap}"));
        let (x, y) = center(edit);
        s.ok("pointer.click", json!({"x": x, "y": y}));
        Box::new(NotepadEdit { window })
    }

    fn password_arrived(&self, snap: &Value, secret: &str, _: &[u8], _: &[u8]) -> bool {
        // cc-form's plain edit mirrors the password edit, as gtk3-demo's shares its buffer.
        super::desk::gtk_demo_password_arrived(snap, secret)
    }

    fn pointer(&self) -> Option<(i64, i64)> {
        Some(self.probe().0)
    }

    fn button_down(&self) -> Option<bool> {
        Some(self.probe().1.iter().any(|vk| BUTTONS.contains(vk)))
    }

    fn assert_nothing_held(&self, _: &dyn Oracle, _: &mut Server) {
        let down = self.probe().1;
        assert!(down.is_empty(), "virtual keys down: {down:?}");
    }

    /// The one monitor Wine shows becomes 1280×720: a Xvfb has one output, so the
    /// change a person can make here is its resolution (`WineDesk::set_mode`), which
    /// reaches Wine's programs as a new monitor rectangle.
    fn add_monitor(&mut self, _: &mut Server) -> Option<MonitorChange> {
        self.desk.set_mode(1280, 720);
        Some(MonitorChange {
            surface: json!({"displays": [{}],
                            "physical": {"x": 0, "y": 0, "width": 1280, "height": 720}}),
        })
    }

    fn minimize(&mut self, window: &Value) -> bool {
        self.desk.form(&["minimize", &window.to_string()]);
        true
    }

    fn clipboard_elsewhere(&mut self, _: &mut Server) -> Option<String> {
        Some(self.desk.form(&["paste"]))
    }

    fn copy_elsewhere(
        &mut self,
        _: &mut Server,
        text: &str,
        kind: Copy,
    ) -> Option<Box<dyn std::any::Any>> {
        let mut args = vec!["copy", text];
        if kind == Copy::Password {
            args.push("secret");
        }
        let mut child = self
            .desk
            .server(&self.desk.form_exe(), &args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start cc-form.exe copy");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("its stdout");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("cc-form.exe copy says it copied");
        assert_eq!(line.trim(), "copied", "cc-form.exe copy");
        Some(Box::new(Copier(child)))
    }

    fn paste_keys(&self) -> Option<&'static str> {
        Some("ctrl+v")
    }

    fn launchable(&self) -> &'static str {
        "notepad"
    }

    fn check_launched(&mut self, _: &mut Server, window: &Value, _: u64) {
        assert_eq!(window["app_id"], "notepad.exe", "{window}");
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn press_emergency_chord(&self) -> bool {
        let out = self.desk.xdotool(&["key", "ctrl+alt+F12"]);
        assert!(out.status.success(), "xdotool: {out:?}");
        true
    }
}
