//! A private X11 desk (Xvfb, a session bus with AT-SPI, openbox; `cc_test_kit::x11`)
//! as a conformance desk: the X server is read back over a connection of the suite's
//! own (pointer, keys and buttons down, the CLIPBOARD as another client), typed text
//! through xterm's `cat > FILE`.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use cc_test_kit::x11;
use serde_json::{Value, json};

use super::desk::{
    App, BIN, Copy, Desk, FileOracle, MonitorChange, Oracle, capabilities_but,
    open_gtk_password_form, spawn_gtk_widget_factory, wait_until,
};
use crate::common::Server;
use crate::x11_clipboard::{ForeignOwner, Mode, read_as_another_client};

/// The desk and the number of terminals opened on it. `A11Y` false runs the server
/// with no session bus to reach: the desk whose server says it has no accessibility,
/// so the suite checks its refusals.
pub struct X11Desk<const A11Y: bool = true> {
    desk: x11::Desk,
    terminals: u32,
}

impl<const A11Y: bool> Desk for X11Desk<A11Y> {
    const PLATFORM: &'static str = "x11";

    const WINDOW_WAITS: &'static str = "events";

    fn start() -> Self {
        X11Desk {
            desk: x11::Desk::start(),
            terminals: 0,
        }
    }

    fn serve(&self) -> Command {
        let mut cmd = Command::new(BIN);
        self.desk.env(&mut cmd);
        cmd.args(["serve", "--platform", "x11"])
            .env_remove("COMPUTER_CONTROL_CONFIG");
        if !A11Y {
            let nowhere = format!("unix:path={}", self.desk.path("no-bus").display());
            cmd.env("DBUS_SESSION_BUS_ADDRESS", nowhere);
        }
        cmd
    }

    fn capabilities(&self) -> Value {
        if A11Y {
            capabilities_but(&[])
        } else {
            capabilities_but(&["accessibility"])
        }
    }

    fn open(&mut self, s: &mut Server, app: App) -> Value {
        match app {
            App::Checkboxes => {
                let mut d = self.desk.driver();
                json!(self.desk.widget_factory(&mut d))
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
        let title = format!("cc-oracle-{}", self.terminals);
        let script = format!("cat > '{}'", file.display());
        self.desk.spawn(
            "xterm",
            &[
                "-u8",
                "-title",
                &title,
                "-geometry",
                "80x20+50+50",
                "-e",
                "sh",
                "-c",
                &script,
            ],
        );
        let w = super::desk::window_where(s, &title, |w| w["title"] == title.as_str());
        s.ok("window.focus", json!({"id": w["id"]}));
        let r = &w["rect"];
        let g = |k: &str| r[k].as_i64().unwrap_or_default();
        s.ok(
            "pointer.click",
            json!({"x": g("x") + g("width") / 2, "y": g("y") + g("height") / 2}),
        );
        // The terminal starts `cat` once it maps (its pty is open then).
        std::thread::sleep(Duration::from_millis(300));
        Box::new(FileOracle(file))
    }

    fn password_arrived(&self, snap: &Value, secret: &str, _: &[u8], _: &[u8]) -> bool {
        super::desk::gtk_demo_password_arrived(snap, secret)
    }

    fn pointer(&self) -> Option<(i64, i64)> {
        let (x, y) = self.desk.pointer();
        Some((i64::from(x), i64::from(y)))
    }

    fn button_down(&self) -> Option<bool> {
        Some(self.desk.inputs_down().1 != 0)
    }

    fn assert_nothing_held(&self, _: &dyn Oracle, _: &mut Server) {
        assert_eq!(self.desk.inputs_down(), (0, 0), "keys, buttons down");
    }

    fn add_monitor(&mut self, _: &mut Server) -> Option<MonitorChange> {
        for args in [
            &[][..],
            &["--setmonitor", "LEFT", "960/254x1080/286+0+0", "screen"],
            &["--setmonitor", "RIGHT", "960/254x1080/286+960+0", "none"],
        ] {
            let out = self.desk.run("xrandr", args);
            assert!(out.status.success(), "xrandr {args:?}: {out:?}");
        }
        Some(MonitorChange {
            surface: json!({"displays": [
                {"name": "LEFT", "canvas": {"x": 0, "y": 0, "width": 960, "height": 1080}},
                {"name": "RIGHT", "canvas": {"x": 960, "y": 0, "width": 960, "height": 1080}},
            ]}),
        })
    }

    fn minimize(&mut self, window: &Value) -> bool {
        let id = window.to_string();
        let out = self.desk.run("xdotool", &["windowminimize", &id]);
        assert!(out.status.success(), "{out:?}");
        // The window manager unmaps it and keeps it in its client list.
        wait_until("the window is minimized", Duration::from_secs(10), || {
            let info = self.desk.run("xwininfo", &["-id", &id]);
            String::from_utf8_lossy(&info.stdout).contains("IsUnMapped")
        });
        true
    }

    fn clipboard_elsewhere(&mut self, _: &mut Server) -> Option<String> {
        read_as_another_client(&self.desk)
    }

    fn copy_elsewhere(
        &mut self,
        _: &mut Server,
        text: &str,
        kind: Copy,
    ) -> Option<Box<dyn std::any::Any>> {
        let mode = match kind {
            Copy::Text => Mode::Text,
            Copy::Password => Mode::Password,
        };
        Some(Box::new(ForeignOwner::start(&self.desk, text, mode)))
    }

    fn paste_keys(&self) -> Option<&'static str> {
        // xterm pastes PRIMARY, not CLIPBOARD: `x11_clipboard.rs` pastes into GTK.
        None
    }

    fn launchable(&self) -> &'static str {
        "xterm"
    }

    fn check_launched(&mut self, _: &mut Server, _: &Value, pid: u64) {
        let (pgrp, stdin) = detached(pid);
        assert_eq!(pgrp, pid, "its own process group");
        assert_eq!(stdin, "/dev/null");
    }

    fn path(&self, name: &str) -> PathBuf {
        self.desk.path(name)
    }
}

/// The `pid`'s process group and standard input, from `/proc`.
fn detached(pid: u64) -> (u64, String) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let pgrp: u64 = after.split(' ').nth(2).unwrap().parse().unwrap();
    let stdin = std::fs::read_link(format!("/proc/{pid}/fd/0")).unwrap();
    (pgrp, stdin.display().to_string())
}
