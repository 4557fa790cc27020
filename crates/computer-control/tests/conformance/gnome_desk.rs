//! A private headless GNOME Shell desk (`cc_test_kit::gnome`, the server run as the
//! desk's unprivileged user) as a conformance desk. Its applications are still:
//! gtk3-widget-factory animates and costs a whole core of software rendering here, so
//! the checkboxes are gtk3-demo's `panes` ("Paned Widgets": named "Resize" and
//! "Shrink" checkboxes, the topmost "Resize" unchecked), the password form gtk3-demo's
//! `entry_buffer`. Typed text is read back through foot's `cat > FILE`; a monitor is
//! added as Mutter's virtual monitor (`cc_test_kit::gnome_monitor`), which Mutter puts
//! right of the first; the clipboard is read and offered by `wl-paste` and `wl-copy`
//! (GNOME has no data-control protocol: they take keyboard focus with a surface of
//! their own for a moment). Wayland lets no client read the pointer or the keys down:
//! a held key shows as a terminal that keeps receiving text.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use cc_test_kit::gnome::GnomeDesk as Desktop;
use cc_test_kit::gnome_monitor::VirtualMonitor;
use serde_json::{Value, json};

use super::desk::{
    App, BIN, Copy, Desk, FileOracle, MonitorChange, Oracle, capabilities_but,
    open_gtk_password_form, wait_until, window_of, window_where,
};
use crate::common::Server;

/// The gtk3-demo demo whose window holds named checkboxes, and its window title.
const CHECKBOXES: (&str, &str) = ("--run=panes", "Paned Widgets");

/// The desk, the terminals opened on it and the monitor added to it (unplugged when
/// the desk goes).
pub struct GnomeDesk {
    // The monitor goes before the desk's shell.
    monitor: Option<VirtualMonitor>,
    desk: Desktop,
    terminals: u32,
}

/// `wl-copy` keeping the clipboard until dropped.
struct Owner(std::process::Child);

impl Drop for Owner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Desk for GnomeDesk {
    const PLATFORM: &'static str = "gnome";

    // The driver reads the shell's window list again; it does not watch it for waits.
    const WINDOW_WAITS: &'static str = "polling";

    fn start() -> Self {
        GnomeDesk {
            monitor: None,
            desk: Desktop::start(),
            terminals: 0,
        }
    }

    fn serve(&self) -> Command {
        let mut cmd = self.desk.command(BIN);
        cmd.args(["serve", "--platform", "gnome"]);
        cmd
    }

    fn capabilities(&self) -> Value {
        // The stop is a GNOME keyboard shortcut: no global grab on Wayland.
        capabilities_but(&["hotkey"])
    }

    fn open(&mut self, s: &mut Server, app: App) -> Value {
        match app {
            App::Checkboxes => {
                let pid = self.desk.spawn("gtk3-demo", &[CHECKBOXES.0]);
                // Its demo's window: gtk3-demo may map its own main window
                // ("Application Class") first.
                let w = window_where(s, CHECKBOXES.1, |w| {
                    w["pid"] == pid
                        && w["title"]
                            .as_str()
                            .is_some_and(|t| t.contains(CHECKBOXES.1))
                });
                // GTK's accessibility tree shows once the application is up.
                let scoped = json!({"level": "full", "window": w["id"]});
                wait_until("its checkboxes", Duration::from_secs(30), || {
                    let snap = s.ok("a11y.snapshot", scoped.clone());
                    crate::common::find_where(&snap["tree"], "checkbox", &|n| n["rect"].is_array())
                        .is_some()
                });
                w["id"].clone()
            }
            App::PasswordForm => open_gtk_password_form(s, |p, a| {
                self.desk.spawn(p, a);
            }),
        }
    }

    fn spawn_checkboxes(&mut self) -> Option<Value> {
        self.desk.spawn("gtk3-demo", &[CHECKBOXES.0]);
        Some(json!({"title_contains": CHECKBOXES.1}))
    }

    fn close(&mut self, _: &mut Server, window: &Value) {
        super::desk::kill_window_process(window);
    }

    fn typing_oracle(&mut self, s: &mut Server) -> Box<dyn Oracle> {
        self.terminals += 1;
        let app_id = format!("cc-oracle-{}", self.terminals);
        let file = self.desk.oracle_terminal(&app_id);
        let w = window_of(s, &app_id);
        s.ok("window.focus", json!({"id": w["id"]}));
        // The shell starts `cat` once the terminal maps.
        std::thread::sleep(Duration::from_millis(300));
        Box::new(FileOracle(file))
    }

    fn password_arrived(&self, snap: &Value, secret: &str, _: &[u8], _: &[u8]) -> bool {
        super::desk::gtk_demo_password_arrived(snap, secret)
    }

    fn pointer(&self) -> Option<(i64, i64)> {
        None
    }

    fn button_down(&self) -> Option<bool> {
        None
    }

    fn assert_nothing_held(&self, oracle: &dyn Oracle, s: &mut Server) {
        // What Mutter was handed before the stop reaches the terminal within moments;
        // past the desk's key-repeat delay a held key would have repeated into the file.
        std::thread::sleep(Duration::from_millis(300));
        let got = oracle.received(s);
        std::thread::sleep(Duration::from_millis(
            u64::from(cc_test_kit::gnome::REPEAT_DELAY_MS) + 500,
        ));
        assert_eq!(got, oracle.received(s), "the terminal kept receiving keys");
    }

    fn add_monitor(&mut self, _: &mut Server) -> Option<MonitorChange> {
        let monitor = VirtualMonitor::add(&self.desk.bus, &self.desk.path("pipewire-0"))
            .unwrap_or_else(|e| panic!("a virtual monitor: {e}\n{}", self.desk.log()));
        self.monitor = Some(monitor);
        Some(MonitorChange::right_of_the_first())
    }

    fn minimize(&mut self, _: &Value) -> bool {
        // gtk3-demo shows its demo as a dialog of its main window: Mutter minimizes no
        // dialog on its own, and activating the main window focuses the dialog again,
        // so GNOME's own Super+H cannot minimize it (a minimized window's refusal is
        // the same engine code the X11 desk checks).
        false
    }

    fn clipboard_elsewhere(&mut self, _: &mut Server) -> Option<String> {
        let out = self
            .desk
            .command("wl-paste")
            .arg("--no-newline")
            .output()
            .expect("wl-paste");
        assert!(out.status.success(), "{out:?}");
        Some(String::from_utf8_lossy(&out.stdout).to_string())
    }

    fn copy_elsewhere(
        &mut self,
        s: &mut Server,
        text: &str,
        kind: Copy,
    ) -> Option<Box<dyn std::any::Any>> {
        let mut cmd = self.desk.command("wl-copy");
        cmd.arg("--foreground");
        match kind {
            Copy::Text => cmd.arg(text),
            Copy::Password => cmd.args(["--type", "x-kde-passwordManagerHint", "secret"]),
        };
        cmd.stdin(std::process::Stdio::null());
        let owner = Owner(cmd.spawn().expect("wl-copy"));
        // It owns the clipboard once the server's read sees something of it.
        let mut last = Value::Null;
        let owns = self.desk.try_wait(Duration::from_secs(10), || {
            last = s.tool("clipboard.read", json!({}));
            match kind {
                Copy::Text => last["result"]["text"] == text,
                Copy::Password => last["error"]["code"] == "policy_denied",
            }
        });
        assert!(owns, "wl-copy never owned the clipboard: {last}");
        Some(Box::new(owner))
    }

    fn paste_keys(&self) -> Option<&'static str> {
        Some("ctrl+shift+v")
    }

    fn launchable(&self) -> &'static str {
        // A desktop entry here (Debian's foot.desktop).
        "foot"
    }

    fn check_launched(&mut self, s: &mut Server, window: &Value, _: u64) {
        // It is this shell's client: a command typed into its shell runs.
        self.terminals += 1;
        let out = self.desk.path(&format!("launched-{}.txt", self.terminals));
        s.ok("window.focus", json!({"id": window["id"]}));
        std::thread::sleep(Duration::from_millis(500));
        s.ok(
            "keyboard.type",
            json!({"text": format!("echo launched here > '{}'\n", out.display())}),
        );
        let ran = self.desk.try_wait(Duration::from_secs(20), || {
            std::fs::read_to_string(&out).is_ok_and(|t| t == "launched here\n")
        });
        if !ran {
            let list = s.ok("window.list", json!({}));
            panic!(
                "the launched terminal ran nothing: {list}\n{}",
                self.desk.log()
            );
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.desk.path(name)
    }
}
