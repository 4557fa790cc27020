//! Finding the user's desktop session when a host starts the server with a minimal
//! environment. MCP hosts pass only HOME, PATH, SHELL, TERM, USER and the like to a
//! stdio server, so `DISPLAY`, `XAUTHORITY` and `DBUS_SESSION_BUS_ADDRESS` are often
//! missing although the user's desktop is right there. What is missing is looked up,
//! most precise source first:
//!
//! 1. the environment of the nearest ancestor process that has a display (the host
//!    itself, started from the desktop, usually has it);
//! 2. the sockets the session leaves: `$XDG_RUNTIME_DIR/wayland-N`,
//!    `/tmp/.X11-unix/XN` of an X server that answers and belongs to this user,
//!    `$XDG_RUNTIME_DIR/bus`;
//! 3. for `XAUTHORITY` and the session bus, another process of this user on the same
//!    display, then the usual files (`$XDG_RUNTIME_DIR/gdm/Xauthority`, `~/.Xauthority`).
//!
//! Values the environment sets are never replaced; [`Session`] says where each value
//! came from, for `check`.

use std::collections::BTreeMap;
#[cfg(unix)]
use std::os::unix::fs::{FileTypeExt, MetadataExt};
#[cfg(unix)]
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The variables that make up a desktop session, in the order they are reported.
pub const VARS: [&str; 5] = [
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
];

/// One variable's value and how it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub value: String,
    /// `environment`, or a sentence naming the process, socket or file.
    pub source: String,
}

/// The session as found: each of [`VARS`] that has a value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Session {
    pub vars: BTreeMap<&'static str, Found>,
}

#[cfg(unix)]
/// Where to look; the real system in production, a fixture tree in unit tests.
pub struct Roots {
    pub proc: PathBuf,
    pub x11_sockets: PathBuf,
    pub run_user: PathBuf,
    pub uid: u32,
    pub pid: u32,
    pub home: Option<PathBuf>,
}

#[cfg(unix)]
impl Roots {
    /// This process on this machine.
    pub fn system() -> Roots {
        let uid = std::fs::metadata("/proc/self")
            .map(|m| m.uid())
            .unwrap_or(0);
        Roots {
            proc: PathBuf::from("/proc"),
            x11_sockets: PathBuf::from("/tmp/.X11-unix"),
            run_user: PathBuf::from("/run/user"),
            uid,
            pid: std::process::id(),
            home: std::env::var_os("HOME").map(PathBuf::from),
        }
    }
}

impl Session {
    /// The value of `var`, if found.
    pub fn get(&self, var: &str) -> Option<&str> {
        self.vars.get(var).map(|f| f.value.as_str())
    }

    /// The session as JSON for `check`: each variable's value and source (null when
    /// nothing was found).
    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        for var in VARS {
            m.insert(
                var.to_string(),
                match self.vars.get(var) {
                    Some(f) => json!({"value": f.value, "source": f.source}),
                    None => Value::Null,
                },
            );
        }
        Value::Object(m)
    }

    fn set(&mut self, var: &'static str, value: String, source: impl Into<String>) {
        if !value.trim().is_empty() && !self.vars.contains_key(var) {
            self.vars.insert(
                var,
                Found {
                    value,
                    source: source.into(),
                },
            );
        }
    }

    #[cfg(unix)]
    fn has_display(&self) -> bool {
        self.vars.contains_key("DISPLAY") || self.vars.contains_key("WAYLAND_DISPLAY")
    }
}

#[cfg(unix)]
/// A process's environment (empty when it cannot be read: another user's, gone).
fn environ(proc: &Path, pid: u32) -> BTreeMap<String, String> {
    let Ok(raw) = std::fs::read(proc.join(pid.to_string()).join("environ")) else {
        return BTreeMap::new();
    };
    raw.split(|&b| b == 0)
        .filter_map(|kv| {
            let kv = std::str::from_utf8(kv).ok()?;
            let (k, v) = kv.split_once('=')?;
            Some((k.to_string(), v.to_string()))
        })
        .collect()
}

#[cfg(unix)]
/// The parent pid and command name from `/proc/<pid>/stat` (the name may hold spaces
/// and parentheses, so the fields after the last `)` are parsed).
fn stat(proc: &Path, pid: u32) -> Option<(u32, String)> {
    let s = std::fs::read_to_string(proc.join(pid.to_string()).join("stat")).ok()?;
    let open = s.find('(')?;
    let close = s.rfind(')')?;
    let name = s.get(open + 1..close)?.to_string();
    let ppid = s
        .get(close + 1..)?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some((ppid, name))
}

#[cfg(unix)]
/// The processes of `uid`, by pid.
fn user_pids(roots: &Roots) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir(&roots.proc) else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = dir
        .filter_map(|e| {
            let e = e.ok()?;
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            (e.metadata().ok()?.uid() == roots.uid && pid != roots.pid).then_some(pid)
        })
        .collect();
    pids.sort_unstable();
    pids
}

#[cfg(unix)]
/// True when something listens on the Unix socket at `path`.
fn answers(path: &Path) -> bool {
    std::os::unix::net::UnixStream::connect(path).is_ok()
}

#[cfg(unix)]
fn owned_socket(path: &Path, uid: u32) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_socket() && m.uid() == uid)
}

#[cfg(unix)]
/// The X display numbers whose socket belongs to `uid` and answers, lowest first.
fn x11_displays(roots: &Roots) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir(&roots.x11_sockets) else {
        return Vec::new();
    };
    let mut found: Vec<u32> = dir
        .filter_map(|e| {
            let e = e.ok()?;
            let n: u32 = e.file_name().to_str()?.strip_prefix('X')?.parse().ok()?;
            (owned_socket(&e.path(), roots.uid) && answers(&e.path())).then_some(n)
        })
        .collect();
    found.sort_unstable();
    found
}

#[cfg(unix)]
/// The Wayland sockets (`wayland-N`, not their `.lock`) in the runtime directory.
fn wayland_sockets(runtime: &Path, uid: u32) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(runtime) else {
        return Vec::new();
    };
    let mut found: Vec<String> = dir
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().to_str()?.to_string();
            (name.starts_with("wayland-")
                && !name.ends_with(".lock")
                && owned_socket(&e.path(), uid)
                && answers(&e.path()))
            .then_some(name)
        })
        .collect();
    found.sort();
    found
}

#[cfg(unix)]
/// Looks up the session: `env` is this process's environment (what the host passed).
pub fn discover(env: &BTreeMap<String, String>, roots: &Roots) -> Session {
    let mut s = Session::default();
    for var in VARS {
        if let Some(v) = env.get(var) {
            s.set(var, v.clone(), "environment");
        }
    }
    from_ancestors(&mut s, roots);
    if !s.vars.contains_key("XDG_RUNTIME_DIR") {
        let dir = roots.run_user.join(roots.uid.to_string());
        if std::fs::metadata(&dir).is_ok_and(|m| m.is_dir() && m.uid() == roots.uid) {
            let source = format!("{} (this user's runtime directory)", dir.display());
            s.set("XDG_RUNTIME_DIR", dir.display().to_string(), source);
        }
    }
    let runtime = s.get("XDG_RUNTIME_DIR").map(PathBuf::from);
    if !s.has_display() {
        if let Some(rt) = &runtime
            && let Some(name) = wayland_sockets(rt, roots.uid).into_iter().next()
        {
            let source = format!("the Wayland socket {}", rt.join(&name).display());
            s.set("WAYLAND_DISPLAY", name, source);
        }
        let displays = x11_displays(roots);
        if let Some(n) = displays.first() {
            let path = roots.x11_sockets.join(format!("X{n}"));
            let more = if displays.len() > 1 {
                format!(
                    ", the lowest of {} answering X servers of this user",
                    displays.len()
                )
            } else {
                String::new()
            };
            let source = format!("the X11 socket {}{more}", path.display());
            s.set("DISPLAY", format!(":{n}"), source);
        }
    }
    if s.has_display() {
        from_same_display(&mut s, roots);
    }
    if !s.vars.contains_key("DBUS_SESSION_BUS_ADDRESS")
        && let Some(rt) = &runtime
    {
        let bus = rt.join("bus");
        if owned_socket(&bus, roots.uid) && answers(&bus) {
            let source = format!("the session bus socket {}", bus.display());
            s.set(
                "DBUS_SESSION_BUS_ADDRESS",
                format!("unix:path={}", bus.display()),
                source,
            );
        }
    }
    if s.vars.contains_key("DISPLAY") && !s.vars.contains_key("XAUTHORITY") {
        let mut files: Vec<PathBuf> = Vec::new();
        if let Some(rt) = &runtime {
            files.push(rt.join("gdm/Xauthority"));
        }
        if let Some(home) = &roots.home {
            files.push(home.join(".Xauthority"));
        }
        if let Some(f) = files.into_iter().find(|f| f.is_file()) {
            let source = format!("the file {}", f.display());
            s.set("XAUTHORITY", f.display().to_string(), source);
        }
    }
    s
}

#[cfg(unix)]
/// The nearest ancestor with a display (the one ours equals, when we have one) lends
/// every variable still missing: one process's session, never a mix.
fn from_ancestors(s: &mut Session, roots: &Roots) {
    let ours = s.get("DISPLAY").map(str::to_string);
    let ours_wl = s.get("WAYLAND_DISPLAY").map(str::to_string);
    let mut pid = roots.pid;
    for _ in 0..64 {
        let Some((ppid, _)) = stat(&roots.proc, pid) else {
            return;
        };
        if ppid <= 1 {
            return;
        }
        pid = ppid;
        let env = environ(&roots.proc, pid);
        let (d, w) = (env.get("DISPLAY"), env.get("WAYLAND_DISPLAY"));
        let has = |v: Option<&String>| v.is_some_and(|v| !v.trim().is_empty());
        if !has(d) && !has(w) {
            continue;
        }
        let matches = match (&ours, &ours_wl) {
            (Some(o), _) => d == Some(o),
            (None, Some(o)) => w == Some(o),
            (None, None) => true,
        };
        if !matches {
            continue;
        }
        let name = stat(&roots.proc, pid).map(|(_, n)| n).unwrap_or_default();
        let source =
            format!("the environment of process {pid} ({name}), which started this server");
        for var in VARS {
            if let Some(v) = env.get(var) {
                s.set(var, v.clone(), source.clone());
            }
        }
        return;
    }
}

#[cfg(unix)]
/// `XAUTHORITY` and the session bus from another process of this user on the same
/// X display (a terminal, the panel: anything the desktop started).
fn from_same_display(s: &mut Session, roots: &Roots) {
    let wanted = ["XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS"];
    if wanted.iter().all(|v| s.vars.contains_key(v)) {
        return;
    }
    let display = s.get("DISPLAY").map(str::to_string);
    let wayland = s.get("WAYLAND_DISPLAY").map(str::to_string);
    for pid in user_pids(roots) {
        let env = environ(&roots.proc, pid);
        let same = match (&display, &wayland) {
            (Some(d), _) => env.get("DISPLAY") == Some(d),
            (None, Some(w)) => env.get("WAYLAND_DISPLAY") == Some(w),
            (None, None) => false,
        };
        if !same {
            continue;
        }
        let name = stat(&roots.proc, pid).map(|(_, n)| n).unwrap_or_default();
        for var in wanted {
            if let Some(v) = env.get(var) {
                let source =
                    format!("the environment of process {pid} ({name}) on the same display");
                s.set(var, v.clone(), source);
            }
        }
        if wanted.iter().all(|v| s.vars.contains_key(v)) {
            return;
        }
    }
}

/// The session [`adopt`] found, kept for the `check_setup` MCP tool.
static ADOPTED: std::sync::OnceLock<Session> = std::sync::OnceLock::new();

/// Set on the process [`adopt`] restarts: each adopted variable and where it was found
/// (`VAR<TAB>source` lines), so the restarted process reports the same sources and does
/// not look again.
const ADOPTED_MARK: &str = "COMPUTER_CONTROL_ADOPTED_SESSION";

/// Finds the session for this process and, when the environment lacked part of it,
/// restarts this same program (same pid, arguments and stdio: `exec`) with the found
/// variables added, so the X11, Wayland and accessibility connections (which read the
/// environment) use them. Changing the environment of a running process is unsound
/// once threads exist; an `exec` never is. Returns only when nothing was missing, or
/// in the restarted process, or when the restart failed (logged; the server then runs
/// with the environment it was given).
pub fn adopt() -> Session {
    let env: BTreeMap<String, String> = std::env::vars()
        .filter(|(_, v)| !v.trim().is_empty())
        .collect();
    if let Some(mark) = env.get(ADOPTED_MARK) {
        let s = from_mark(&env, mark);
        let _ = ADOPTED.set(s.clone());
        return s;
    }
    // A Windows process runs in its user's interactive session: nothing to find.
    #[cfg(not(unix))]
    let s = from_mark(&env, "");
    #[cfg(unix)]
    let s = discover(&env, &Roots::system());
    #[cfg(unix)]
    {
        let found: Vec<(&str, &Found)> = s
            .vars
            .iter()
            .filter(|(_, f)| f.source != "environment")
            .map(|(v, f)| (*v, f))
            .collect();
        if !found.is_empty() {
            let err = restart_with(&found);
            tracing::warn!(
                "could not restart with the desktop session found ({err}); serving without it"
            );
        }
    }
    let _ = ADOPTED.set(s.clone());
    s
}

#[cfg(unix)]
/// `exec`s this program again with `found` added to its environment; returns only on
/// failure.
fn restart_with(found: &[(&str, &Found)]) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return e,
    };
    let mut args = std::env::args_os();
    let mut cmd = std::process::Command::new(exe);
    if let Some(arg0) = args.next() {
        cmd.arg0(arg0);
    }
    cmd.args(args);
    let mut mark = String::new();
    for (var, f) in found {
        tracing::info!("session: {var}={} from {}", f.value, f.source);
        cmd.env(var, &f.value);
        mark.push_str(&format!("{var}\t{}\n", f.source.replace(['\t', '\n'], " ")));
    }
    cmd.env(ADOPTED_MARK, mark);
    cmd.exec()
}

/// The session of a restarted process: the variables named in `mark` with the sources
/// it gives, the rest from the environment.
fn from_mark(env: &BTreeMap<String, String>, mark: &str) -> Session {
    let sources: BTreeMap<&str, &str> = mark.lines().filter_map(|l| l.split_once('\t')).collect();
    let mut s = Session::default();
    for var in VARS {
        if let Some(v) = env.get(var) {
            let source = sources.get(var).copied().unwrap_or("environment");
            s.set(var, v.clone(), source);
        }
    }
    s
}

/// The session this process adopted, or (never adopted: the virtual desktop) what the
/// environment says.
pub fn current() -> Session {
    ADOPTED.get().cloned().unwrap_or_else(|| {
        let env: BTreeMap<String, String> = std::env::vars()
            .filter(|(_, v)| !v.trim().is_empty())
            .collect();
        let mut s = Session::default();
        for var in VARS {
            if let Some(v) = env.get(var) {
                s.set(var, v.clone(), "environment");
            }
        }
        s
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A restarted process reports the sources its first run found, and the
    /// environment's own values as `environment`.
    #[test]
    fn a_restarted_process_keeps_the_sources_it_was_given() {
        let env: BTreeMap<String, String> = [
            ("DISPLAY", ":3"),
            ("XAUTHORITY", "/home/me/.Xauthority"),
            ("XDG_RUNTIME_DIR", "/run/user/1000"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let s = from_mark(
            &env,
            "DISPLAY\tthe X server socket /tmp/.X11-unix/X3\nbogus line\n",
        );
        assert_eq!(
            s.vars["DISPLAY"].source,
            "the X server socket /tmp/.X11-unix/X3"
        );
        assert_eq!(s.vars["XAUTHORITY"].source, "environment");
        assert_eq!(s.get("XDG_RUNTIME_DIR"), Some("/run/user/1000"));
        assert!(s.get("WAYLAND_DISPLAY").is_none());
    }

    struct Tree(PathBuf);
    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn tree(name: &str) -> (Tree, Roots) {
        let dir = std::env::temp_dir().join(format!("cc-session-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("proc")).expect("fixture dir");
        let roots = Roots {
            proc: dir.join("proc"),
            x11_sockets: dir.join("x11"),
            run_user: dir.join("run"),
            uid: std::fs::metadata(&dir).map(|m| m.uid()).unwrap_or(0),
            pid: 100,
            home: Some(dir.join("home")),
        };
        (Tree(dir), roots)
    }

    fn process(roots: &Roots, pid: u32, ppid: u32, name: &str, env: &[(&str, &str)]) {
        let d = roots.proc.join(pid.to_string());
        std::fs::create_dir_all(&d).expect("proc dir");
        std::fs::write(d.join("stat"), format!("{pid} ({name}) S {ppid} 1 1 0")).expect("stat");
        let environ: Vec<u8> = env
            .iter()
            .flat_map(|(k, v)| format!("{k}={v}\0").into_bytes())
            .collect();
        std::fs::write(d.join("environ"), environ).expect("environ");
    }

    #[test]
    fn the_environment_wins_and_is_never_replaced() {
        let (_t, roots) = tree("env");
        process(&roots, 100, 50, "computer-control", &[]);
        process(
            &roots,
            50,
            1,
            "host",
            &[("DISPLAY", ":7"), ("XAUTHORITY", "/a")],
        );
        let env = BTreeMap::from([("DISPLAY".to_string(), ":3".to_string())]);
        let s = discover(&env, &roots);
        assert_eq!(s.get("DISPLAY"), Some(":3"));
        assert_eq!(s.vars["DISPLAY"].source, "environment");
        // The ancestor is on another display: nothing of it is mixed in.
        assert_eq!(s.get("XAUTHORITY"), None);
    }

    #[test]
    fn an_ancestor_lends_its_whole_session() {
        let (_t, roots) = tree("ancestor");
        process(&roots, 100, 60, "computer-control", &[("PATH", "/bin")]);
        process(&roots, 60, 50, "npm exec", &[("PATH", "/bin")]);
        process(
            &roots,
            50,
            1,
            "claude (desktop)",
            &[
                ("DISPLAY", ":1"),
                ("XAUTHORITY", "/run/user/1000/xauth_x"),
                ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
            ],
        );
        let s = discover(&BTreeMap::new(), &roots);
        assert_eq!(s.get("DISPLAY"), Some(":1"));
        assert_eq!(s.get("XAUTHORITY"), Some("/run/user/1000/xauth_x"));
        assert_eq!(
            s.get("DBUS_SESSION_BUS_ADDRESS"),
            Some("unix:path=/run/user/1000/bus")
        );
        assert!(
            s.vars["DISPLAY"]
                .source
                .contains("process 50 (claude (desktop))"),
            "{:?}",
            s.vars["DISPLAY"]
        );
        let j = s.to_json();
        assert_eq!(j["WAYLAND_DISPLAY"], Value::Null);
        assert_eq!(j["DISPLAY"]["value"], ":1");
    }

    #[test]
    fn nothing_found_leaves_the_session_empty() {
        let (_t, roots) = tree("none");
        process(&roots, 100, 1, "computer-control", &[]);
        let s = discover(&BTreeMap::new(), &roots);
        assert!(s.vars.is_empty(), "{s:?}");
        // An unreadable /proc is the same as nothing found, not a failure.
        let gone = Roots {
            proc: roots.proc.join("missing"),
            ..roots
        };
        assert!(discover(&BTreeMap::new(), &gone).vars.is_empty());
    }

    #[test]
    fn xauthority_from_another_process_on_the_same_display() {
        let (_t, roots) = tree("same");
        process(&roots, 100, 1, "computer-control", &[]);
        process(
            &roots,
            120,
            1,
            "xterm",
            &[("DISPLAY", ":4"), ("XAUTHORITY", "/x4")],
        );
        process(
            &roots,
            110,
            1,
            "other",
            &[("DISPLAY", ":5"), ("XAUTHORITY", "/x5")],
        );
        let env = BTreeMap::from([("DISPLAY".to_string(), ":4".to_string())]);
        let s = discover(&env, &roots);
        assert_eq!(s.get("XAUTHORITY"), Some("/x4"));
        assert!(s.vars["XAUTHORITY"].source.contains("process 120 (xterm)"));
    }

    #[test]
    fn xauthority_file_in_home() {
        let (t, roots) = tree("home");
        process(&roots, 100, 1, "computer-control", &[]);
        std::fs::create_dir_all(t.0.join("home")).expect("home");
        std::fs::write(t.0.join("home/.Xauthority"), b"").expect("xauthority");
        let env = BTreeMap::from([("DISPLAY".to_string(), ":9".to_string())]);
        let s = discover(&env, &roots);
        assert_eq!(
            s.get("XAUTHORITY").map(PathBuf::from),
            Some(t.0.join("home/.Xauthority"))
        );
    }
}
