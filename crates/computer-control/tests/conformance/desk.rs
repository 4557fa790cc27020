//! What a desktop must tell the conformance suite: how to start a private desk of it,
//! how to run the server there, what the server there can do, and how the suite reads
//! the desk back without the server (a typing oracle, the pointer, keys held, another
//! client's clipboard). A desk that cannot offer a read-back says so with `None`; a
//! server that cannot do something says so in its capabilities, and the suite checks
//! that refusal.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::Server;

/// The server under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_computer-control");

/// An application of the suite's own, opened on a desk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum App {
    /// A window with several named checkboxes (gtk3-widget-factory; gtk3-demo's
    /// `panes` where an application must be still; the virtual desktop's sign-in form).
    Checkboxes,
    /// A window with a password entry (gtk3-demo's `entry_buffer`; the sign-in form).
    PasswordForm,
}

/// Where typed text is read back, independently of the server: a terminal's
/// `cat > FILE`, an edit's value.
pub trait Oracle {
    /// Everything this sink has received so far.
    fn received(&self, s: &mut Server) -> String;
    /// What it shows for `typed` once all of it arrived: a terminal shows the text as
    /// is; the virtual form's edit takes each `\n` as Enter (it submits the form).
    fn shows(&self, typed: &str) -> String {
        typed.to_string()
    }
    /// Whether [`Oracle::received`] can be read while the server is busy acting (a
    /// file can; an edit read through the server waits for the action to end).
    fn independent(&self) -> bool {
        true
    }
}

/// A monitor layout change the desk made, and what the session must then report.
pub struct MonitorChange {
    /// A subset of the new surface (`session.configured`'s `surface`): arrays must
    /// have the same length, objects the keys given.
    pub surface: Value,
}

impl MonitorChange {
    /// A 1280×720 monitor added left of the 1920×1080 one: two displays, the layout
    /// from x = -1280.
    pub fn left_of_the_first() -> MonitorChange {
        MonitorChange {
            surface: json!({"displays": [{}, {}],
                            "physical": {"x": -1280, "y": 0, "width": 3200, "height": 1080}}),
        }
    }

    /// A 1280×720 monitor added right of the 1920×1080 one (where Mutter puts a
    /// virtual monitor): two displays, the layout from x = 0.
    #[cfg_attr(
        not(feature = "gnome"),
        allow(dead_code, reason = "only the GNOME desk")
    )]
    pub fn right_of_the_first() -> MonitorChange {
        MonitorChange {
            surface: json!({"displays": [{}, {}],
                            "physical": {"x": 0, "y": 0, "width": 3200, "height": 1080}}),
        }
    }
}

/// What another client of the desk offers on the clipboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Copy {
    /// Plain text.
    Text,
    /// Text a password manager marked secret (`x-kde-passwordManagerHint`).
    Password,
}

/// A desktop the suite runs every scenario against. One implementation per desktop,
/// one line in `conformance!` (`mod.rs`).
pub trait Desk: Sized {
    /// `session.start`'s `platform`.
    const PLATFORM: &'static str;
    /// How a `wait.for` on a window hears of it: `events` where the driver watches the
    /// display server's window changes, `polling` where it reads the list again.
    const WINDOW_WAITS: &'static str;
    /// Starts a private desk (1920×1080 physical pixels, one monitor).
    fn start() -> Self;
    /// The command that runs `serve` (stdio JSON-RPC) on this desk, with its
    /// environment; the suite appends `--config` and sets `COMPUTER_CONTROL_LOG`.
    fn serve(&self) -> Command;
    /// `session.start`'s `capabilities` on this desk, every key.
    fn capabilities(&self) -> Value;
    /// Opens `app` and returns its window id as `window.list` has it.
    fn open(&mut self, s: &mut Server, app: App) -> Value;
    /// Starts [`App::Checkboxes`] from outside the server without waiting for it, and
    /// returns the `wait.for` window selector that finds it; `None` when this desk
    /// changes only through the server's own actions.
    fn spawn_checkboxes(&mut self) -> Option<Value>;
    /// Ends the application of `window` (an entry of `window.list`, with its id and
    /// pid): from outside where the desk can (its process killed, without asking the
    /// server, which may be busy waiting), else through the server.
    fn close(&mut self, s: &mut Server, window: &Value);
    /// A focused text sink for `keyboard.type`, read back without the server.
    fn typing_oracle(&mut self, s: &mut Server) -> Box<dyn Oracle>;
    /// For a [`App::PasswordForm`] whose password entry was typed into: whether
    /// `secret` arrived, judged without the password entry's value (a plain entry
    /// sharing its buffer; the entry's own pixels, `before` and `after`).
    fn password_arrived(&self, snap: &Value, secret: &str, before: &[u8], after: &[u8]) -> bool;
    /// The pointer in physical pixels as the display server reports it, when the
    /// suite can ask it without the server.
    fn pointer(&self) -> Option<(i64, i64)>;
    /// Whether a pointer button is down, as the display server tells, when the suite
    /// can ask it without the server.
    fn button_down(&self) -> Option<bool>;
    /// Asserts that the desk holds no key and no button, as the display server (or
    /// `oracle`, where a held key would repeat) tells, beyond the server's own
    /// `system.status.held` that every scenario checks.
    fn assert_nothing_held(&self, oracle: &dyn Oracle, s: &mut Server);
    /// Changes the monitor layout: adds a second monitor, splits the screen in two, or
    /// (where the display server has one output only) changes the monitor's
    /// resolution; `None` when this desk cannot change its monitors, with the reason
    /// printed.
    fn add_monitor(&mut self, s: &mut Server) -> Option<MonitorChange>;
    /// Minimizes a window from outside the server (the window manager's own way), or
    /// `false` when this desk has none.
    fn minimize(&mut self, window: &Value) -> bool;
    /// The clipboard's text as another client reads it, or `None` when the desk has
    /// no other client to read it with.
    fn clipboard_elsewhere(&mut self, s: &mut Server) -> Option<String>;
    /// Another client takes the clipboard with `text` (kept while the guard lives), or
    /// `None` when the desk cannot offer that kind of copy.
    fn copy_elsewhere(
        &mut self,
        s: &mut Server,
        text: &str,
        kind: Copy,
    ) -> Option<Box<dyn std::any::Any>>;
    /// The keys that paste the clipboard into the typing oracle, or `None` when its
    /// terminal has none for the clipboard (the desk's own tests paste elsewhere).
    fn paste_keys(&self) -> Option<&'static str>;
    /// An application `app.launch` may start here, and asserts that what it started
    /// is this desk's: a window with its pid, and whatever else the desk can check.
    fn launchable(&self) -> &'static str;
    /// Checks, beyond the window with its pid, that the launched `window` runs on
    /// this desk as a launched application should.
    fn check_launched(&mut self, s: &mut Server, window: &Value, pid: u64);
    /// A private path for the suite's files.
    fn path(&self, name: &str) -> PathBuf;
    /// Presses the server's default emergency chord (Ctrl+Alt+F12) on the desk as a
    /// person's keyboard would, from outside the server, and returns true; `false`
    /// where the suite presses none here (the scenario then stops by
    /// `control.panic`; the desk's own tests press its chord).
    fn press_emergency_chord(&self) -> bool {
        false
    }
}

/// `serve` on `desk` with a config file holding `config`, logging at `level`.
pub fn serve<D: Desk>(desk: &D, level: &str, config: Option<Value>) -> Server {
    let mut cmd = desk.serve();
    cmd.env("COMPUTER_CONTROL_LOG", level);
    if let Some(c) = config {
        let path = desk.path(&format!("config-{}.json", next()));
        std::fs::write(&path, c.to_string()).expect("write the config file");
        make_readable(&path);
        cmd.arg("--config").arg(path);
    }
    Server::start_command(cmd)
}

fn next() -> u64 {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A file the suite writes for a server that may run as the desk's own user.
fn make_readable(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt as _;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644));
}

/// Polls `f` every 50 ms until it is true; panics with `what` after `limit`.
pub fn wait_until(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The window of `window.list` whose `key` satisfies `pred`, waiting for it.
pub fn window_where(s: &mut Server, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let list = s.ok("window.list", json!({}));
        if let Some(w) = list["windows"]
            .as_array()
            .and_then(|ws| ws.iter().find(|w| pred(w)))
        {
            return w.clone();
        }
        assert!(Instant::now() < deadline, "no {what} window: {list}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The window whose app id (or X11 class) contains `app_id`, waiting for it.
pub fn window_of(s: &mut Server, app_id: &str) -> Value {
    window_where(s, app_id, |w| {
        w["app_id"].as_str().is_some_and(|a| a.contains(app_id))
    })
}

/// A terminal's `cat > FILE` as an oracle: what reached the file.
pub struct FileOracle(pub PathBuf);

impl Oracle for FileOracle {
    fn received(&self, _: &mut Server) -> String {
        std::fs::read_to_string(&self.0).unwrap_or_default()
    }
}

/// The window of a snapshot's top level that holds a password entry, waiting for it.
pub fn password_window(s: &mut Server) -> Value {
    let is_password = |n: &Value| crate::common::has_state(n, "password");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let snap = s.ok("a11y.snapshot", json!({"level": "full"}));
        let owner = snap["tree"]["children"].as_array().and_then(|tops| {
            tops.iter().find(|w| {
                w["window_id"].is_u64()
                    && crate::common::find_where(w, "edit", &is_password).is_some()
            })
        });
        if let Some(w) = owner {
            return w["window_id"].clone();
        }
        assert!(Instant::now() < deadline, "no password entry: {snap}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Whether `secret` typed into gtk3-demo's password entry arrived: its plain entry
/// shares the password entry's buffer, so shows it.
pub fn gtk_demo_password_arrived(snap: &Value, secret: &str) -> bool {
    crate::common::find_where(&snap["tree"], "edit", &|n| {
        !crate::common::has_state(n, "password") && n["value"] == secret
    })
    .is_some()
}

/// Kills the process of `window` (an entry of `window.list`), by its pid.
pub fn kill_window_process(window: &Value) {
    let pid = window["pid"]
        .as_u64()
        .unwrap_or_else(|| panic!("a window without a pid: {window}"));
    let out = std::process::Command::new("kill")
        .arg(pid.to_string())
        .output()
        .expect("kill");
    assert!(out.status.success(), "kill {pid}: {out:?}");
}

/// Every capability but `missing`: what `session.start` reports on a desk that lacks
/// only those.
pub fn capabilities_but(missing: &[&str]) -> Value {
    let mut caps = json!({"capture": true, "input": true, "accessibility": true,
                          "windows": true, "hotkey": true, "clipboard": true, "launch": true});
    for m in missing {
        caps[*m] = json!(false);
    }
    caps
}

/// Starts gtk3-demo's password form (`entry_buffer`) with the desk's `spawn` and
/// returns its window id.
pub fn open_gtk_password_form(s: &mut Server, spawn: impl FnOnce(&str, &[&str])) -> Value {
    spawn("gtk3-demo", &["--run=entry_buffer"]);
    password_window(s)
}

/// Starts gtk3-widget-factory with the desk's `spawn`; returns the `wait.for` window
/// selector that finds it.
pub fn spawn_gtk_widget_factory(spawn: impl FnOnce(&str, &[&str])) -> Value {
    spawn("gtk3-widget-factory", &[]);
    json!({"title_contains": "widget-factory"})
}
