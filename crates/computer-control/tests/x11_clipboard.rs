//! The clipboard and launching applications on a real X11 desktop (a private Xvfb desk
//! per test), through the server, beyond the conformance suite's scenarios (which use
//! this file's other client, `ForeignOwner`): GTK pastes with ctrl+v what
//! `clipboard.write` put there; another client's copy names its window, and a gone
//! owner leaves the clipboard empty; incremental, image-only and silent owners are
//! refused or read as no text, never leaking into an event or a log line;
//! `app.launch` starts a desktop entry and refuses a missing application, a path and
//! a shell string.

use crate::common;
use cc_test_kit::x11 as x11_support;

use common::{Server, center};
use common::{find_where, has_state};

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use x11_support::Desk;
use x11rb::connection::Connection;
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ConnectionExt as _, CreateWindowAux, EventMask, PropMode,
    SELECTION_NOTIFY_EVENT, SelectionNotifyEvent, Window, WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

const BIN: &str = env!("CARGO_BIN_EXE_computer-control");

/// `serve` on the desk at debug level, with extra environment.
fn serve(desk: &Desk, envs: &[(&str, &str)]) -> Server {
    let mut cmd = Command::new(BIN);
    desk.env(&mut cmd);
    cmd.arg("serve")
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env("COMPUTER_CONTROL_LOG", "debug");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    Server::start_command(cmd)
}

fn atom(c: &RustConnection, name: &str) -> Atom {
    c.intern_atom(false, name.as_bytes())
        .unwrap()
        .reply()
        .unwrap()
        .atom
}

fn own_window(c: &RustConnection, screen: usize) -> Window {
    let w = c.generate_id().unwrap();
    let root = c.setup().roots[screen].root;
    c.create_window(
        0,
        w,
        root,
        0,
        0,
        1,
        1,
        0,
        WindowClass::INPUT_ONLY,
        0,
        &CreateWindowAux::new(),
    )
    .unwrap()
    .check()
    .unwrap();
    w
}

/// The CLIPBOARD's UTF8_STRING as another client of the X server reads it.
pub(crate) fn read_as_another_client(desk: &Desk) -> Option<String> {
    let (c, screen) = desk.x_connection();
    let w = own_window(&c, screen);
    let (clipboard, utf8, prop) = (
        atom(&c, "CLIPBOARD"),
        atom(&c, "UTF8_STRING"),
        atom(&c, "TEST_DATA"),
    );
    c.convert_selection(w, clipboard, utf8, prop, x11rb::CURRENT_TIME)
        .unwrap();
    c.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(Event::SelectionNotify(n)) = c.poll_for_event().unwrap() {
            if n.property == u32::from(AtomEnum::NONE) {
                return None;
            }
            let r = c
                .get_property(true, w, prop, AtomEnum::ANY, 0, 1 << 20)
                .unwrap()
                .reply()
                .unwrap();
            return Some(String::from_utf8(r.value).unwrap());
        }
        assert!(Instant::now() < deadline, "the owner never answered");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// How another client's ownership answers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// TARGETS and UTF8_STRING.
    Text,
    /// Also `x-kde-passwordManagerHint` = `secret`, as a password manager does.
    Password,
    /// UTF8_STRING sent incrementally (an `INCR` property), as toolkits do for
    /// large data.
    Incremental,
    /// Only an image type: owned, but no text.
    ImageOnly,
    /// Never answers.
    Silent,
}

/// Another client owning the CLIPBOARD with `text`, answering as `mode` says, until
/// dropped.
pub(crate) struct ForeignOwner {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ForeignOwner {
    pub(crate) fn start(desk: &Desk, text: &str, mode: Mode) -> ForeignOwner {
        let (c, screen) = desk.x_connection();
        let w = own_window(&c, screen);
        let names = [
            "CLIPBOARD",
            "TARGETS",
            "UTF8_STRING",
            "x-kde-passwordManagerHint",
            "INCR",
            "image/png",
        ];
        let [clipboard, targets, utf8, hint, incr, png] = names.map(|n| atom(&c, n));
        c.set_selection_owner(w, clipboard, x11rb::CURRENT_TIME)
            .unwrap();
        let owner = c
            .get_selection_owner(clipboard)
            .unwrap()
            .reply()
            .unwrap()
            .owner;
        assert_eq!(owner, w, "the test client owns the clipboard");
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let text = text.to_string();
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::SeqCst) {
                while let Ok(Some(e)) = c.poll_for_event() {
                    let Event::SelectionRequest(r) = e else {
                        continue;
                    };
                    if mode == Mode::Silent {
                        continue;
                    }
                    let offered = match mode {
                        Mode::Password => vec![targets, utf8, hint],
                        Mode::ImageOnly => vec![targets, png],
                        _ => vec![targets, utf8],
                    };
                    let (p, req) = (r.property, r.requestor);
                    let ok = if r.target == targets {
                        c.change_property32(PropMode::REPLACE, req, p, AtomEnum::ATOM, &offered)
                            .is_ok()
                    } else if r.target == utf8 && mode == Mode::Incremental {
                        let size = [u32::try_from(text.len()).unwrap()];
                        c.change_property32(PropMode::REPLACE, req, p, incr, &size)
                            .is_ok()
                    } else if r.target == utf8 && mode != Mode::ImageOnly {
                        c.change_property8(PropMode::REPLACE, req, p, utf8, text.as_bytes())
                            .is_ok()
                    } else if r.target == hint && mode == Mode::Password {
                        c.change_property8(PropMode::REPLACE, req, p, utf8, b"secret")
                            .is_ok()
                    } else {
                        false
                    };
                    let n = SelectionNotifyEvent {
                        response_type: SELECTION_NOTIFY_EVENT,
                        sequence: 0,
                        time: r.time,
                        requestor: r.requestor,
                        selection: r.selection,
                        target: r.target,
                        property: if ok {
                            r.property
                        } else {
                            AtomEnum::NONE.into()
                        },
                    };
                    let _ = c.send_event(false, r.requestor, EventMask::NO_EVENT, n);
                    let _ = c.flush();
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            // Giving the window up gives the selection up.
            let _ = c.destroy_window(w);
            let _ = c.flush();
            let _ = c.get_input_focus().map(|r| r.reply());
        });
        ForeignOwner {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for ForeignOwner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn gtk_pastes_what_clipboard_write_put_there_and_a_gone_owner_leaves_it_empty() {
    const TEXT: &str = "Pasted by computer-control ✓";
    let mut desk = Desk::start();
    let factory = {
        let mut d = desk.driver();
        desk.widget_factory(&mut d)
    };
    let mut s = serve(&desk, &[]);
    let started = s.call("session.start", json!({}));
    assert_eq!(started["ok"], true, "{started}");

    s.ok("clipboard.write", json!({ "text": TEXT }));

    // ctrl+v in a GTK entry of gtk3-widget-factory pastes it.
    s.ok("window.focus", json!({ "id": factory }));
    let scoped = json!({"level": "full", "window": factory});
    let snap = s.ok("a11y.snapshot", scoped.clone());
    let entry = find_where(&snap["tree"], "edit", &|n| {
        has_state(n, "editable")
            && has_state(n, "enabled")
            && !has_state(n, "password")
            && n["rect"].is_array()
    })
    .unwrap_or_else(|| panic!("no editable entry: {snap}"))
    .clone();
    let (x, y) = center(&entry);
    s.ok("pointer.click", json!({"x": x, "y": y}));
    // The keys go where the focus is: wait until an entry has it.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let snap = s.ok("a11y.snapshot", scoped.clone());
        if find_where(&snap["tree"], "edit", &|n| has_state(n, "focused")).is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "no entry took the focus: {snap}");
        std::thread::sleep(Duration::from_millis(100));
    }
    s.ok("keyboard.combo", json!({"keys": "ctrl+a"}));
    s.ok("keyboard.combo", json!({"keys": "ctrl+v"}));
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let snap = s.ok("a11y.snapshot", scoped.clone());
        let pasted = find_where(&snap["tree"], "edit", &|n| has_state(n, "focused"));
        // Over the selection or at the caret (GTK's ctrl+a may race the click's own
        // selection handling): either way, the text GTK received is ours.
        if pasted.is_some_and(|n| n["value"].as_str().is_some_and(|v| v.contains(TEXT))) {
            break;
        }
        assert!(Instant::now() < deadline, "GTK never pasted: {snap}");
        std::thread::sleep(Duration::from_millis(100));
    }

    // Another client copies: ours is gone, theirs is read.
    let other = ForeignOwner::start(&desk, "theirs", Mode::Text);
    let r = s.ok("clipboard.read", json!({}));
    assert_eq!(r["text"], "theirs", "{r}");
    assert!(r["owner"].as_str().unwrap().starts_with("window 0x"), "{r}");
    drop(other);
    // Nobody owns it now: an empty clipboard, not an error.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let r = s.ok("clipboard.read", json!({}));
        if r == json!({"text": null, "chars": 0, "owner": null}) {
            break;
        }
        assert!(Instant::now() < deadline, "{r}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn clipboard_read_refuses_incremental_and_silent_owners_and_leaks_nowhere() {
    const SECRET: &str = "Copied-Elsewhere-Secret-7731";
    let desk = Desk::start();
    let mut s = serve(&desk, &[]);
    let started = s.call("session.start", json!({}));
    assert_eq!(started["ok"], true, "{started}");

    // An incremental transfer is refused as too large, never read in part.
    let owner = ForeignOwner::start(&desk, SECRET, Mode::Incremental);
    let e = s.fails("clipboard.read", json!({}), "driver_failed");
    assert!(e["message"].as_str().unwrap().contains("INCR"), "{e}");
    drop(owner);
    // Owned, but no text: no text, and who owns it.
    let owner = ForeignOwner::start(&desk, SECRET, Mode::ImageOnly);
    let r = s.ok("clipboard.read", json!({}));
    assert!(r["text"].is_null(), "{r}");
    assert!(r["owner"].as_str().unwrap().starts_with("window 0x"), "{r}");
    drop(owner);
    // An owner that never answers: a bounded wait, then a clear failure.
    let owner = ForeignOwner::start(&desk, SECRET, Mode::Silent);
    let e = s.fails("clipboard.read", json!({}), "driver_failed");
    assert!(e["message"].as_str().unwrap().contains("no answer"), "{e}");
    drop(owner);
    // The server goes on.
    s.ok("clipboard.write", json!({"text": "after"}));
    assert_eq!(read_as_another_client(&desk).as_deref(), Some("after"));

    crate::conformance::scenarios::clipboard::assert_read_leaks_nowhere(&mut s, SECRET);
}

fn wait_for_window(s: &mut Server, title: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let list = s.ok("window.list", json!({}));
        if let Some(w) = list["windows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["title"] == title)
        {
            return w.clone();
        }
        assert!(Instant::now() < deadline, "no window {title:?}: {list}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn app_launch_starts_a_desktop_entry_and_refuses_what_is_no_application() {
    let desk = Desk::start();
    // A desktop entry of the test's own, found through XDG_DATA_HOME.
    let data = desk.path("data");
    std::fs::create_dir_all(data.join("applications")).unwrap();
    std::fs::write(
        data.join("applications/cc-test-term.desktop"),
        "[Desktop Entry]\nType=Application\nName=Test terminal\nExec=xterm -title \"cc entry\" %U\n",
    )
    .unwrap();
    let data_home = data.display().to_string();
    let mut s = serve(&desk, &[("XDG_DATA_HOME", &data_home)]);
    let started = s.call("session.start", json!({}));
    assert_eq!(started["ok"], true, "{started}");

    // A desktop-file id, listed by the operator, runs at once.
    let env = s.call(
        "session.configure",
        json!({"apps": {"launch_allowed": ["cc-test-term", "no-such-app-4711", "xterm"]}}),
    );
    assert_eq!(env["ok"], true, "{env}");
    let r = s.ok("app.launch", json!({"app": "cc-test-term"}));
    let w = wait_for_window(&mut s, "cc entry");
    assert_eq!(w["pid"], r["pid"], "{w}");

    // A missing application, a path and a shell string are refused clearly.
    let e = s.fails(
        "app.launch",
        json!({"app": "no-such-app-4711"}),
        "invalid_arguments",
    );
    assert!(
        e["message"].as_str().unwrap().contains("no application"),
        "{e}"
    );
    assert_eq!(e["data"]["issues"][0]["path"], "app");
    let env = s.call(
        "session.configure",
        json!({"apps": {"launch_allowed": ["/usr/bin/xterm", "xterm -e id"]}}),
    );
    assert_eq!(env["ok"], true, "{env}");
    for bad in ["/usr/bin/xterm", "xterm -e id"] {
        let e = s.fails("app.launch", json!({ "app": bad }), "invalid_arguments");
        assert!(e["message"].as_str().unwrap().contains(bad), "{e}");
    }
}
