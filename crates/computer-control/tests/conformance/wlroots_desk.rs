//! A private headless sway desk (`cc_test_kit::sway`, run as its own unprivileged
//! user) as a conformance desk: typed text is read back through foot's `cat > FILE`,
//! the clipboard through `wl-paste` and `wl-copy`, the layout through sway's IPC.
//! Wayland lets no client read the pointer or the keys down: a held key shows as a
//! terminal that keeps receiving text.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use cc_test_kit::sway;
use serde_json::{Value, json};

use super::desk::{
    App, BIN, Copy, Desk, FileOracle, MonitorChange, Oracle, capabilities_but,
    open_gtk_password_form, spawn_gtk_widget_factory, wait_until, window_of,
};
use crate::common::Server;

/// The desk and the number of terminals opened on it.
pub struct WlrootsDesk {
    desk: sway::Desk,
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

impl Desk for WlrootsDesk {
    const PLATFORM: &'static str = "wlroots";

    // The driver reads the toplevel list again; it does not watch it for waits.
    const WINDOW_WAITS: &'static str = "polling";

    fn start() -> Self {
        WlrootsDesk {
            desk: sway::Desk::start(),
            terminals: 0,
        }
    }

    fn serve(&self) -> Command {
        let mut cmd = self.desk.command(BIN);
        cmd.args(["serve", "--platform", "wlroots"]);
        cmd
    }

    fn capabilities(&self) -> Value {
        // The stop is a compositor binding: no global grab on Wayland.
        capabilities_but(&["hotkey"])
    }

    fn open(&mut self, s: &mut Server, app: App) -> Value {
        match app {
            App::Checkboxes => {
                self.desk.spawn("gtk3-widget-factory", &[]);
                let w = window_of(s, "widget-factory");
                // Floating and moved: not at the origin, so an element's rectangle is
                // right only if the window's place on the layout is added to it.
                self.desk.swaymsg(&[
                    &format!("[con_id={}]", w["id"]),
                    "floating",
                    "enable,",
                    "move",
                    "position",
                    "200",
                    "150",
                ]);
                wait_until("the window moved", Duration::from_secs(10), || {
                    let v = self.desk.wait_view("widget-factory");
                    v["rect"]["x"].as_i64().is_some_and(|x| x >= 200)
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
        Some(spawn_gtk_widget_factory(|p, a| {
            self.desk.spawn(p, a);
        }))
    }

    fn close(&mut self, _: &mut Server, window: &Value) {
        super::desk::kill_window_process(window);
    }

    fn typing_oracle(&mut self, s: &mut Server) -> Box<dyn Oracle> {
        self.terminals += 1;
        let file = self.desk.path(&format!("typed-{}.txt", self.terminals));
        let app_id = format!("cc-oracle-{}", self.terminals);
        let script = format!("cat > '{}'", file.display());
        self.desk
            .spawn("foot", &["--app-id", &app_id, "sh", "-c", &script]);
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
        // What the compositor was handed before the stop reaches the terminal within
        // moments; past the terminal's key-repeat delay (600 ms) a held key would have
        // repeated into the file.
        std::thread::sleep(Duration::from_millis(300));
        let got = oracle.received(s);
        std::thread::sleep(Duration::from_millis(1200));
        assert_eq!(got, oracle.received(s), "the terminal kept receiving keys");
    }

    fn add_monitor(&mut self, _: &mut Server) -> Option<MonitorChange> {
        self.desk.swaymsg(&["create_output"]);
        self.desk.swaymsg(&[
            "output",
            "HEADLESS-2",
            "mode",
            "1280x720",
            "position",
            "-1280",
            "0",
        ]);
        Some(MonitorChange::left_of_the_first())
    }

    fn minimize(&mut self, _: &Value) -> bool {
        // sway has no minimized state (the scratchpad is its nearest:
        // `wlroots_serve.rs`).
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
        wait_until(
            "wl-copy owns the clipboard",
            Duration::from_secs(10),
            || {
                let env = s.tool("clipboard.read", json!({}));
                match kind {
                    Copy::Text => env["result"]["text"] == text,
                    Copy::Password => env["error"]["code"] == "policy_denied",
                }
            },
        );
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
        // It is this compositor's client: a command typed into its shell runs.
        self.terminals += 1;
        let out = self.desk.path(&format!("launched-{}.txt", self.terminals));
        s.ok("window.focus", json!({"id": window["id"]}));
        std::thread::sleep(Duration::from_millis(500));
        s.ok(
            "keyboard.type",
            json!({"text": format!("echo launched here > '{}'\n", out.display())}),
        );
        wait_until("the command's file", Duration::from_secs(20), || {
            std::fs::read_to_string(&out).is_ok_and(|t| t == "launched here\n")
        });
    }

    fn path(&self, name: &str) -> PathBuf {
        self.desk.path(name)
    }
}
