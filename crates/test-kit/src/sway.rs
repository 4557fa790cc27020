//! A private headless sway desk per test: sway refuses to run as root, so the desk runs
//! as an unprivileged user (`ccdesk`, created when missing) with its own runtime
//! directory (mode 0700) inside its own `dbus-run-session`; applications and the server
//! under test run as that user too, with the desk's environment. Everything started is
//! in process groups of its own, ended on drop.
//!
//! The tools must be installed (`scripts/test.sh` installs them); without them every
//! test fails with a message saying so, never a silent skip.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The user the desks run as.
pub const USER: &str = "ccdesk";

const TOOLS: &[&str] = &[
    "sway",
    "swaymsg",
    "foot",
    "dbus-run-session",
    "setpriv",
    "wtype",
    "wl-copy",
    "wl-paste",
];

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
}

/// Panics with the install hint when a tool is missing.
pub fn require_tools() {
    let missing: Vec<&str> = TOOLS.iter().copied().filter(|t| !on_path(t)).collect();
    assert!(
        missing.is_empty(),
        "the Wayland tests need a headless sway desk, missing: {}. Install it (see \
         scripts/test.sh): apt-get install -y --no-install-recommends sway foot grim wtype \
         wl-clipboard xwayland dbus-x11 at-spi2-core gtk-3-examples util-linux",
        missing.join(", ")
    );
}

static USER_LOCK: Mutex<()> = Mutex::new(());

/// The desk user's uid and gid, creating the user when missing (tests run as root).
pub fn desk_user() -> (u32, u32) {
    let _g = USER_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let id = |flag: &str| -> Option<u32> {
        let out = Command::new("id").args([flag, USER]).output().ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    };
    if id("-u").is_none() {
        // Another test process may create it at the same moment: check again after.
        let _ = Command::new("useradd").args(["-m", USER]).output();
    }
    match (id("-u"), id("-g")) {
        (Some(u), Some(g)) => (u, g),
        _ => panic!("cannot create the desk user {USER} (the Wayland tests run as root)"),
    }
}

/// What a desk looks like.
#[derive(Debug, Clone, Default)]
pub struct DeskOptions {
    /// Run Xwayland (`xwayland force`).
    pub xwayland: bool,
    /// Lines appended to the sway config.
    pub extra_config: String,
}

/// One private desk.
pub struct Desk {
    /// Its private directory (mode 0700, owned by the desk user), removed with the desk.
    pub runtime_dir: PathBuf,
    /// Its session bus's address.
    pub bus: String,
    /// sway's IPC socket.
    pub swaysock: PathBuf,
    /// The Xwayland display (`:N`), with `xwayland`.
    pub x_display: Option<String>,
    uid: u32,
    gid: u32,
    sway: Child,
    children: Vec<Child>,
}

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

impl Desk {
    /// A desk with one 1920×1080 output and no Xwayland.
    pub fn start() -> Desk {
        Desk::start_with(DeskOptions::default())
    }

    /// A desk as `opts` says.
    pub fn start_with(opts: DeskOptions) -> Desk {
        require_tools();
        let (uid, gid) = desk_user();
        let dir = crate::temp::private_dir("cc-wl-desk");
        std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).expect("chown runtime dir");
        let config = dir.join("sway.conf");
        std::fs::write(
            &config,
            format!(
                "output HEADLESS-1 mode 1920x1080 position 0 0\n\
                 default_border none\n\
                 xwayland {}\n\
                 exec sh -c 'echo \"$DISPLAY\" > {}/display.tmp && mv {}/display.tmp {}/display'\n\
                 {}\n",
                if opts.xwayland { "force" } else { "disable" },
                dir.display(),
                dir.display(),
                dir.display(),
                opts.extra_config
            ),
        )
        .unwrap();
        std::os::unix::fs::chown(&config, Some(uid), Some(gid)).unwrap();
        let bus_file = dir.join("bus");
        let mut cmd = Command::new("setpriv");
        cmd.args([
            &format!("--reuid={uid}"),
            &format!("--regid={gid}"),
            "--init-groups",
            "--",
            "env",
            "-i",
        ]);
        cmd.arg(format!(
            "PATH={}",
            std::env::var("PATH").unwrap_or_default()
        ))
        .arg(format!("HOME=/home/{USER}"))
        .arg(format!("XDG_RUNTIME_DIR={}", dir.display()))
        .args([
            "WLR_BACKENDS=headless",
            "WLR_LIBINPUT_NO_DEVICES=1",
            "WLR_RENDERER=pixman",
            "dbus-run-session",
            "--",
            "sh",
            "-c",
        ])
        .arg(format!(
            "echo \"$DBUS_SESSION_BUS_ADDRESS\" > {b}.tmp && mv {b}.tmp {b} && exec sway -c {c}",
            b = sh_quote(&bus_file.display().to_string()),
            c = sh_quote(&config.display().to_string())
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(
            std::fs::File::create(dir.join("sway.log"))
                .map(Stdio::from)
                .unwrap_or_else(|_| Stdio::null()),
        );
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let sway = cmd.spawn().expect("start sway");
        let mut desk = Desk {
            runtime_dir: dir.clone(),
            bus: String::new(),
            swaysock: PathBuf::new(),
            x_display: None,
            uid,
            gid,
            sway,
            children: Vec::new(),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let sock = std::fs::read_dir(&dir).ok().and_then(|rd| {
                rd.flatten().map(|e| e.path()).find(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("sway-ipc."))
                })
            });
            if let (Some(sock), Ok(bus)) = (sock, std::fs::read_to_string(&bus_file))
                && dir.join("wayland-1").exists()
                && desk.ipc_ready(&sock)
            {
                desk.swaysock = sock;
                desk.bus = bus.trim().to_string();
                break;
            }
            if let Ok(Some(st)) = desk.sway.try_wait() {
                panic!("sway exited ({st}): {}", desk.log());
            }
            assert!(
                Instant::now() < deadline,
                "sway did not start: {}",
                desk.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        if opts.xwayland {
            let f = dir.join("display");
            desk.wait_until("Xwayland's display", Duration::from_secs(20), || {
                std::fs::read_to_string(&f).is_ok_and(|s| !s.trim().is_empty())
            });
            desk.x_display = std::fs::read_to_string(&f)
                .ok()
                .map(|s| s.trim().to_string());
        }
        desk
    }

    fn ipc_ready(&self, sock: &Path) -> bool {
        let mut c = self.command_raw("swaymsg");
        c.env("SWAYSOCK", sock).args(["-t", "get_version"]);
        c.output().is_ok_and(|o| o.status.success())
    }

    /// sway's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.runtime_dir.join("sway.log")).unwrap_or_default()
    }

    /// The desk's environment for a process run as the desk user.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut v = vec![
            ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
            ("HOME".into(), format!("/home/{USER}")),
            (
                "XDG_RUNTIME_DIR".into(),
                self.runtime_dir.display().to_string(),
            ),
            ("WAYLAND_DISPLAY".into(), "wayland-1".into()),
            ("SWAYSOCK".into(), self.swaysock.display().to_string()),
            ("DBUS_SESSION_BUS_ADDRESS".into(), self.bus.clone()),
            ("GDK_BACKEND".into(), "wayland".into()),
            ("LANG".into(), "C.UTF-8".into()),
        ];
        if let Some(d) = &self.x_display {
            v.push(("DISPLAY".into(), d.clone()));
        }
        v
    }

    fn command_raw(&self, program: &str) -> Command {
        let mut c = Command::new("setpriv");
        c.args([
            &format!("--reuid={}", self.uid),
            &format!("--regid={}", self.gid),
            "--init-groups",
            "--",
        ]);
        c.arg(program);
        c.env_clear();
        c.env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", format!("/home/{USER}"))
            .env("XDG_RUNTIME_DIR", &self.runtime_dir)
            .env("WAYLAND_DISPLAY", "wayland-1");
        c
    }

    /// A command run as the desk user with the desk's environment.
    pub fn command(&self, program: &str) -> Command {
        let mut c = self.command_raw(program);
        for (k, v) in self.env() {
            c.env(k, v);
        }
        c.current_dir(&self.runtime_dir);
        c
    }

    /// Starts an application on the desk; it is ended with the desk.
    pub fn spawn(&mut self, program: &str, args: &[&str]) -> u32 {
        let mut c = self.command(program);
        c.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut c, 0);
        let child = c.spawn().unwrap_or_else(|e| panic!("start {program}: {e}"));
        let pid = child.id();
        self.children.push(child);
        pid
    }

    /// `swaymsg ARGS`, asserting success; its output.
    pub fn swaymsg(&self, args: &[&str]) -> String {
        // `--` so that a negative position is not taken for an option.
        let mut c = self.command("swaymsg");
        if args.first() != Some(&"-t") {
            c.arg("--");
        }
        let out: Output = c.args(args).output().expect("swaymsg");
        assert!(
            out.status.success(),
            "swaymsg {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    /// The views of sway's tree.
    pub fn views(&self) -> Vec<Value> {
        let tree: Value = serde_json::from_str(&self.swaymsg(&["-t", "get_tree"])).unwrap();
        let mut out = Vec::new();
        fn walk(n: &Value, out: &mut Vec<Value>) {
            if n.get("pid").is_some_and(|p| !p.is_null()) {
                out.push(n.clone());
            }
            for k in ["nodes", "floating_nodes"] {
                for c in n[k].as_array().into_iter().flatten() {
                    walk(c, out);
                }
            }
        }
        walk(&tree, &mut out);
        out
    }

    /// Waits until a view whose app id (or X11 class) contains `needle` is mapped.
    pub fn wait_view(&self, needle: &str) -> Value {
        let mut found = None;
        self.wait_until(
            &format!("a window of {needle}"),
            Duration::from_secs(30),
            || {
                found = self.views().into_iter().find(|v| {
                    let app = v["app_id"].as_str().unwrap_or_default();
                    let class = v["window_properties"]["class"].as_str().unwrap_or_default();
                    app.contains(needle) || class.contains(needle)
                });
                found.is_some()
            },
        );
        found.unwrap()
    }

    /// Polls `cond` until it holds, or panics with `what`.
    pub fn wait_until(&self, what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
        let deadline = Instant::now() + limit;
        while !cond() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A path inside the desk's private directory (readable by the desk user).
    pub fn path(&self, name: &str) -> PathBuf {
        self.runtime_dir.join(name)
    }
}

fn kill_group(pid: u32) {
    let _ = Command::new("kill")
        .args(["-TERM", "--", &format!("-{pid}")])
        .stderr(Stdio::null())
        .status();
}

impl Drop for Desk {
    fn drop(&mut self) {
        for c in &mut self.children {
            kill_group(c.id());
        }
        for c in &mut self.children {
            let _ = c.wait();
        }
        kill_group(self.sway.id());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.sway.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.sway.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.sway.wait();
        crate::temp::remove_runtime_dir(&self.runtime_dir);
    }
}
