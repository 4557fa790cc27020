//! `computer-control check --json` and the MCP tool `check_setup` on real desks: a full
//! X11 desk (Xvfb, a session bus with the accessibility bus, openbox), a desk without a
//! session bus (no AT-SPI), a desk whose X server lacks XTest, the virtual desktop, and
//! the Windows build under Wine.
//! Every report is validated against `check.schema.json` (Python `jsonschema`, which
//! the MCP SDK installs). A host's minimal environment: the session is found in the
//! environment of the process that started the server, or from the X server's socket.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::tempfile_dir::TempDir;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_computer-control");

fn schema_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("check.schema.json")
}

/// Fails the test unless `doc` is valid against the published schema.
fn assert_valid(doc: &Value) {
    let errors = schema_errors(doc);
    assert!(
        errors.is_empty(),
        "the report does not match check.schema.json:\n{errors}\n{doc:#}"
    );
}

/// The schema's complaints about `doc`, one per line (empty: valid).
fn schema_errors(doc: &Value) -> String {
    let code = "import json, sys, jsonschema\n\
                schema = json.load(open(sys.argv[1]))\n\
                jsonschema.Draft7Validator.check_schema(schema)\n\
                errors = list(jsonschema.Draft7Validator(schema).iter_errors(json.load(sys.stdin)))\n\
                [print(list(e.absolute_path), e.message) for e in errors]\n\
                sys.exit(1 if errors else 0)";
    let mut child = Command::new("python3")
        .args(["-c", code, schema_path().to_str().expect("utf-8")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 with jsonschema (scripts/test.sh installs it with the MCP SDK)");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(doc.to_string().as_bytes())
            .expect("write the report");
    }
    let out = child.wait_with_output().expect("validator");
    let errors = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success() || !errors.is_empty(),
        "the validator failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    errors
}

/// A private desktop: Xvfb (with or without XTest), optionally a session bus (whose
/// activation starts the accessibility bus), openbox. Stopped on drop.
struct Desk {
    display: String,
    bus: Option<String>,
    dir: TempDir,
    children: Vec<Child>,
}

fn first_line(child: &mut Child, what: &str) -> String {
    use std::io::{BufRead, BufReader, Read};
    let out = child.stdout.take().expect("piped stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut r = BufReader::new(out);
        let mut line = String::new();
        let _ = r.read_line(&mut line);
        let _ = tx.send(line);
        let _ = r.read_to_end(&mut Vec::new());
    });
    let line = rx
        .recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("{what} did not start"));
    line.trim().to_string()
}

impl Desk {
    fn start(xtest: bool, bus: bool) -> Desk {
        let mut args = vec![
            "-displayfd",
            "1",
            "-screen",
            "0",
            "1280x800x24",
            "-nolisten",
            "tcp",
            // Without it a client that leaves before openbox has connected (the readiness
            // wait's own `check`, the orphan `check` scanning sockets) resets the server;
            // the suite in one process once saw openbox never manage a desk.
            "-noreset",
        ];
        if !xtest {
            args.extend(["-extension", "XTEST"]);
        }
        let mut xvfb = Command::new("Xvfb")
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb (scripts/test.sh installs xvfb)");
        let display = format!(":{}", first_line(&mut xvfb, "Xvfb"));
        let mut desk = Desk {
            display,
            bus: None,
            dir: TempDir::new(),
            children: vec![xvfb],
        };
        if bus {
            let address = format!("--address=unix:dir={}", desk.dir.0.display());
            let mut dbus = desk
                .cmd("dbus-daemon")
                .args(["--session", "--nofork", "--print-address=1", &address])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("dbus-daemon");
            desk.bus = Some(first_line(&mut dbus, "dbus-daemon"));
            desk.children.push(dbus);
        }
        let wm = desk
            .cmd("openbox")
            .arg("--sm-disable")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("openbox");
        desk.children.push(wm);
        // A readiness wait, generous for a loaded machine; not a timing assertion.
        let deadline = Instant::now() + Duration::from_secs(60);
        while !desk.managed() {
            assert!(
                Instant::now() < deadline,
                "openbox did not manage the screen of {} (openbox: {:?}); the last report: {:#}",
                desk.display,
                desk.children.last_mut().map(|wm| wm.try_wait()),
                desk.check(&[])
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        desk
    }

    /// A command with this desk's environment and nothing else a host would not pass.
    fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.0.display().to_string())
            .env("DISPLAY", &self.display)
            .env("XDG_RUNTIME_DIR", self.dir.0.display().to_string());
        if let Some(bus) = &self.bus {
            c.env("DBUS_SESSION_BUS_ADDRESS", bus);
        }
        c
    }

    /// openbox has set `_NET_SUPPORTING_WM_CHECK` (the check sees a window manager).
    fn managed(&self) -> bool {
        let v = self.check(&[]);
        v["display"]["reason"]
            .as_str()
            .is_some_and(|r| !r.contains("no EWMH"))
    }

    /// `check --json` on this desk, with a private journal.
    fn check(&self, extra: &[&str]) -> Value {
        let journal = self.dir.0.join("journal.db");
        let out = self
            .cmd(BIN)
            .args([
                "check",
                "--json",
                "--journal",
                journal.to_str().expect("utf-8"),
            ])
            .args(extra)
            .env("COMPUTER_CONTROL_LOG", "warn")
            .output()
            .expect("run check");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("check --json prints JSON")
    }
}

impl Drop for Desk {
    fn drop(&mut self) {
        for c in self.children.iter_mut().rev() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn areas(v: &Value, status: &str) -> Vec<String> {
    [
        "platform",
        "display",
        "input",
        "capture",
        "accessibility",
        "hotkey",
        "journal",
        "transports",
    ]
    .iter()
    .filter(|a| v[**a]["status"] == status)
    .map(|a| a.to_string())
    .collect()
}

fn blocker<'a>(v: &'a Value, area: &str) -> &'a Value {
    v["blockers"]
        .as_array()
        .and_then(|b| b.iter().find(|b| b["area"] == area))
        .unwrap_or_else(|| panic!("no blocker for {area}: {v:#}"))
}

#[test]
fn a_full_x11_desk_is_ready() {
    let desk = Desk::start(true, true);
    let v = desk.check(&[]);
    assert_valid(&v);
    assert_eq!(v["ready"], true, "{v:#}");
    assert_eq!(v["platform"]["backend"], "x11", "{v:#}");
    // The HTTP default port may be taken by a parallel test: transports may degrade.
    let not_ok: Vec<String> = areas(&v, "degraded")
        .into_iter()
        .chain(areas(&v, "missing"))
        .filter(|a| a != "transports")
        .collect();
    assert!(not_ok.is_empty(), "{not_ok:?}: {v:#}");
    assert_eq!(v["display"]["name"], desk.display);
    assert_eq!(v["session"]["DISPLAY"]["source"], "environment");
    assert!(
        v["hotkey"]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("ctrl+alt+f12")
    );

    // The text form says the same for a person.
    let text = desk
        .cmd(BIN)
        .args(["check", "--journal", "/nonexistent-dir/j.db"])
        .output()
        .expect("check");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("accessibility") && text.contains("AT-SPI"),
        "{text}"
    );
}

#[test]
fn a_desk_without_a_session_bus_has_no_accessibility_and_says_how_to_start_it() {
    let desk = Desk::start(true, false);
    let v = desk.check(&[]);
    assert_valid(&v);
    assert_eq!(v["accessibility"]["status"], "missing", "{v:#}");
    assert_eq!(v["ready"], false);
    let b = blocker(&v, "accessibility");
    assert!(
        b["next_step"]
            .as_str()
            .unwrap_or_default()
            .contains("DBUS_SESSION_BUS_ADDRESS"),
        "{b}"
    );
    assert_eq!(
        v["blockers"][0]["status"], "missing",
        "missing first: {v:#}"
    );
    // Input and capture still work: only accessibility is lost.
    assert_eq!(v["input"]["status"], "ok");
    assert_eq!(v["platform"]["backend"], "x11");
}

#[test]
fn a_desk_without_xtest_falls_back_to_the_virtual_desktop_and_says_why() {
    let desk = Desk::start(false, true);
    let v = desk.check(&[]);
    assert_valid(&v);
    assert_eq!(v["input"]["status"], "missing", "{v:#}");
    assert_eq!(v["platform"]["status"], "degraded");
    assert_eq!(v["platform"]["backend"], "virtual");
    let step = blocker(&v, "input")["next_step"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(step.contains("XTEST"), "{step}");
    // One blocker per distinct step: the platform's fallback has the same cause.
    let same: Vec<&Value> = v["blockers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["next_step"] == step.as_str())
        .collect();
    assert_eq!(same.len(), 1, "{v:#}");
    // Forcing X11 there: the platform is usable for capture and accessibility only.
    let forced = desk.check(&["--platform", "x11"]);
    assert_valid(&forced);
    assert_eq!(forced["platform"]["backend"], "x11");
    assert_eq!(forced["accessibility"]["status"], "ok", "{forced:#}");
}

#[test]
fn the_virtual_desktop_is_ready_without_a_hotkey() {
    let dir = TempDir::new();
    let journal = dir.0.join("j.db");
    let out = Command::new(BIN)
        .args(["check", "--json", "--platform", "virtual", "--journal"])
        .arg(&journal)
        .env_remove("DISPLAY")
        .output()
        .expect("check");
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_valid(&v);
    assert_eq!(v["ready"], true, "{v:#}");
    assert_eq!(v["platform"]["backend"], "virtual");
    assert_eq!(v["hotkey"]["status"], "degraded");
    assert!(blocker(&v, "hotkey")["next_step"].is_string());
    assert!(!journal.exists(), "check creates no journal");
}

/// The Windows build under Wine on a private Xvfb (`cc_test_kit::wine`): the report
/// names the Windows backend, says capture fell back to GDI because Wine has no Desktop
/// Duplication and that the tree comes from MSAA because it has no UI Automation, finds
/// the hotkey free and the process per-monitor DPI aware, and puts the journal on the
/// Windows side.
#[test]
fn the_windows_build_under_wine_reports_gdi_msaa_and_the_hotkey() {
    let desk = cc_test_kit::wine::WineDesk::start();
    let exe = cc_test_kit::wine::WineDesk::windows_exe(BIN);
    let dir = TempDir::new();
    // Wine's drive Z: is the Unix root.
    let journal = format!("Z:{}", dir.0.join("j.db").display());
    let out = desk
        .server(
            &exe,
            &[
                "check",
                "--json",
                "--platform",
                "windows",
                "--journal",
                &journal,
            ],
        )
        .output()
        .expect("wine64 computer-control.exe check");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_valid(&v);
    assert_eq!(v["platform"]["backend"], "windows", "{v:#}");
    assert_eq!(v["capture"]["path"], "gdi", "{v:#}");
    assert_eq!(v["capture"]["status"], "degraded", "{v:#}");
    let why = v["capture"]["reason"].as_str().unwrap_or_default();
    assert!(why.contains("Desktop Duplication"), "{v:#}");
    assert_eq!(v["accessibility"]["api"], "msaa", "{v:#}");
    // Why, with the HRESULT of the failed CoCreateInstance(CUIAutomation).
    let why = v["accessibility"]["reason"].as_str().unwrap_or_default();
    assert!(why.contains("0x80040154"), "{v:#}");
    assert!(
        blocker(&v, "accessibility")["next_step"].is_string(),
        "{v:#}"
    );
    assert_eq!(v["hotkey"]["status"], "ok", "{v:#}");
    assert_eq!(v["input"]["status"], "ok", "{v:#}");
    assert_eq!(v["display"]["dpi_aware"], true, "{v:#}");
    assert_eq!(v["display"]["monitors"], 1, "{v:#}");
    assert_eq!(v["journal"]["status"], "ok", "{v:#}");
    assert_eq!(v["ready"], true, "{v:#}");
    assert!(out.status.success(), "{v:#}");
    assert!(!dir.0.join("j.db").exists(), "check creates no journal");
}

#[test]
fn the_schema_is_published_by_the_binary_and_valid() {
    let out = Command::new(BIN)
        .args(["check", "--json-schema"])
        .output()
        .expect("check --json-schema");
    assert!(out.status.success());
    let printed: Value = serde_json::from_slice(&out.stdout).expect("a JSON schema");
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path()).expect("schema file"))
            .expect("JSON");
    assert_eq!(printed, file);
    // A report missing an area, or a problem without its next step, is refused.
    let out = Command::new(BIN)
        .args(["check", "--json", "--platform", "virtual"])
        .output()
        .expect("check");
    let good: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_valid(&good);
    let mut no_area = good.clone();
    no_area.as_object_mut().expect("object").remove("journal");
    assert!(!schema_errors(&no_area).is_empty());
    let mut no_step = good.clone();
    no_step["hotkey"]
        .as_object_mut()
        .expect("object")
        .remove("next_step");
    assert!(!schema_errors(&no_step).is_empty());
    let mut step_when_ok = good.clone();
    step_when_ok["input"]["next_step"] = "restart".into();
    assert!(!schema_errors(&step_when_ok).is_empty());
    let mut bad_status = good;
    bad_status["display"]["status"] = "fine".into();
    assert!(!schema_errors(&bad_status).is_empty());
    // Bad flags: a clear usage error, nothing on stdout.
    let out = Command::new(BIN)
        .args(["check", "--json", "--json-schema"])
        .output()
        .expect("check");
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
}

/// A host started from the desktop passes the server a minimal environment: the
/// session comes from the host's own environment (the server's parent process).
#[test]
fn a_minimal_environment_finds_the_session_of_the_host_process() {
    let desk = Desk::start(true, true);
    let journal = desk.dir.0.join("j.db");
    // `sh` stands for the host: it has the desktop's environment; the server gets only
    // what an MCP SDK client passes (`; true` keeps sh as the parent).
    let script = format!(
        "env -i HOME=/nonexistent PATH=\"$PATH\" TERM=dumb '{BIN}' check --json --journal '{}'; true",
        journal.display()
    );
    let out = desk.cmd("sh").args(["-c", &script]).output().expect("sh");
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_valid(&v);
    let display = &v["session"]["DISPLAY"];
    assert_eq!(display["value"], desk.display, "{v:#}");
    let source = display["source"].as_str().unwrap_or_default();
    assert!(
        source.contains("process") && source.contains("(sh)"),
        "{source}"
    );
    assert_eq!(
        v["session"]["DBUS_SESSION_BUS_ADDRESS"]["value"],
        desk.bus.clone().unwrap_or_default()
    );
    assert_eq!(v["display"]["status"], "ok", "{v:#}");
    assert_eq!(v["accessibility"]["status"], "ok", "{v:#}");
}

/// No process to learn from (the server is an orphan): the X server's socket of this
/// user is the session.
#[test]
fn without_a_host_environment_the_x11_socket_is_found() {
    let desk = Desk::start(true, false);
    let out_file = desk.dir.0.join("report.json");
    let script = format!(
        "(env -i HOME=/nonexistent PATH=\"$PATH\" XDG_RUNTIME_DIR='{}' '{BIN}' check --json --platform x11 --journal '{}' > '{}' 2>/dev/null &)",
        desk.dir.0.display(),
        desk.dir.0.join("j.db").display(),
        out_file.display()
    );
    let st = Command::new("sh")
        .args(["-c", &script])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .status()
        .expect("sh");
    assert!(st.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let v: Value = loop {
        if let Ok(t) = std::fs::read_to_string(&out_file)
            && let Ok(v) = serde_json::from_str(&t)
        {
            break v;
        }
        assert!(
            Instant::now() < deadline,
            "no report in {}",
            out_file.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_valid(&v);
    let source = v["session"]["DISPLAY"]["source"]
        .as_str()
        .unwrap_or_default();
    assert!(source.contains("/tmp/.X11-unix/X"), "{v:#}");
    // Tests run in parallel, each with its X server of this user: the orphan may find
    // another test's (any answering server of this user is a right answer). The report
    // is about the display it found, and about this desk's when that is the one.
    let found = v["session"]["DISPLAY"]["value"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(v["display"]["name"], found, "{v:#}");
    if found == desk.display {
        assert_eq!(v["display"]["status"], "ok", "{v:#}");
    }
    assert_eq!(v["platform"]["backend"], "x11");
}

/// The MCP tool through the official SDK (which validates the result against the tool's
/// output schema), on the full desk, started by `computer-control mcp`: the running
/// server holds the hotkey and the journal itself.
#[test]
fn the_mcp_tool_reports_the_running_server() {
    let desk = Desk::start(true, true);
    let journal = desk.dir.0.join("j.db");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/packaging/mcp_smoke.py");
    let out = Command::new("python3")
        .arg(&script)
        .args(["--env", &format!("DISPLAY={}", desk.display)])
        .args([
            "--env",
            &format!(
                "DBUS_SESSION_BUS_ADDRESS={}",
                desk.bus.clone().unwrap_or_default()
            ),
        ])
        .args([
            "--",
            BIN,
            "mcp",
            "--journal",
            journal.to_str().expect("utf-8"),
        ])
        .output()
        .expect("python3 with the MCP SDK");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = text
        .lines()
        .find_map(|l| l.strip_prefix("CHECK "))
        .expect("a CHECK line");
    let v: Value = serde_json::from_str(report).expect("JSON");
    assert_valid(&v);
    assert_eq!(v["platform"]["backend"], "x11", "{v:#}");
    assert!(
        v["hotkey"]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("this server"),
        "{v:#}"
    );
    assert!(
        v["journal"]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("this server"),
        "{v:#}"
    );
    assert!(text.contains("PASS screen_capture"));
}
