//! A private headless GNOME desk per test: `gnome-shell --headless --wayland --no-x11
//! --virtual-monitor 1920x1080` as the unprivileged desk user, with its own runtime
//! directory (mode 0700, also its config and data homes, so dconf and extensions are
//! private), its own `dbus-run-session` (whose bus also lets root in, so a test's own
//! driver can join it), a stand-in system bus (the shell dies looking for logind
//! without one), and PipeWire with WirePlumber for the screen cast. The project's shell
//! extension is installed and enabled before the shell starts unless asked not to be;
//! the shell starts in the Overview, which the desk leaves with Escape through the
//! GNOME driver.
//!
//! Everything is ended on drop: the process groups started, then every process whose
//! environment names the desk's runtime directory (D-Bus-activated services, the
//! accessibility bus, dconf and portals outlive the shell), by pid.
//!
//! The tools must be installed (`scripts/test.sh` installs them); without them every
//! test fails with a message saying so, never a silent skip.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cc_desktop::Driver as _;
use cc_desktop_gnome::{GnomeDesktop, GnomeOptions};

use crate::sway::{USER, desk_user};

const TOOLS: &[&str] = &[
    "gnome-shell",
    "pipewire",
    "wireplumber",
    "dbus-run-session",
    "dbus-daemon",
    "gsettings",
    "gdbus",
    "setpriv",
    "foot",
    "gtk3-demo",
];

/// The Wayland socket the shell is told to create.
pub const WAYLAND_DISPLAY: &str = "wayland-gnome";

/// How long a desk may take to start.
const START_LIMIT: Duration = Duration::from_secs(150);

/// The desk's key-repeat delay in milliseconds (GNOME's default is 500). A shell
/// rendering in software on a loaded machine can stall its main loop between a key's
/// press and its release for longer than the default, and the application then repeats
/// the key; a test that looks for a held key waits longer than this.
pub const REPEAT_DELAY_MS: u32 = 1500;

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
}

/// Panics with the install hint when a tool is missing.
pub fn require_tools() {
    let missing: Vec<&str> = TOOLS.iter().copied().filter(|t| !on_path(t)).collect();
    assert!(
        missing.is_empty(),
        "the GNOME tests need a headless GNOME desk, missing: {}. Install it (see \
         scripts/test.sh): apt-get install -y --no-install-recommends mutter gnome-shell \
         pipewire wireplumber foot gtk-3-examples util-linux",
        missing.join(", ")
    );
}

/// What a desk looks like.
#[derive(Debug, Clone)]
pub struct GnomeDeskOptions {
    /// Install and enable the project's shell extension (window rectangles).
    pub extension: bool,
}

impl Default for GnomeDeskOptions {
    fn default() -> Self {
        GnomeDeskOptions { extension: true }
    }
}

/// One private GNOME desk.
pub struct GnomeDesk {
    /// Its private directory (mode 0700, owned by the desk user), removed with the desk.
    pub runtime_dir: PathBuf,
    /// Its session bus's address.
    pub bus: String,
    uid: u32,
    gid: u32,
    shell: Child,
    children: Vec<Child>,
}

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The session bus's configuration: the standard one, and root may connect too.
const BUS_CONFIG: &str = r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <include>/usr/share/dbus-1/session.conf</include>
  <policy context="default"><allow user="root"/></policy>
</busconfig>
"#;

/// Runs inside `dbus-run-session` as the desk user: publishes the bus address, starts
/// the stand-in system bus, PipeWire and WirePlumber (their pids go to `pids`), enables
/// the extension when it is installed, then becomes the shell.
const START: &str = r#"set -e
R="$XDG_RUNTIME_DIR"
echo "$DBUS_SESSION_BUS_ADDRESS" > "$R/bus.tmp" && mv "$R/bus.tmp" "$R/bus"
dbus-daemon --session --address="unix:path=$R/sysbus" --nofork --nopidfile >/dev/null 2>&1 &
echo $! >> "$R/pids"
export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$R/sysbus"
pipewire > "$R/pipewire.log" 2>&1 &
echo $! >> "$R/pids"
# WirePlumber started before PipeWire listens exits at once ("Failed to connect to
# PipeWire"), and then no screen cast's stream is ever linked: no frame would come.
i=0
until [ -S "$R/pipewire-0" ] || [ "$i" -ge 200 ]; do
  i=$((i + 1))
  sleep 0.05
done
wireplumber > "$R/wireplumber.log" 2>&1 &
echo $! >> "$R/pids"
if [ -n "$CC_EXTENSION" ]; then
  gsettings set org.gnome.shell enabled-extensions "['$CC_EXTENSION']"
fi
gsettings set org.gnome.desktop.interface enable-animations false || true
gsettings set org.gnome.desktop.peripherals.keyboard delay "$CC_REPEAT_DELAY" || true
exec gnome-shell --headless --wayland --no-x11 --wayland-display="$CC_WAYLAND" \
  --virtual-monitor 1920x1080
"#;

impl GnomeDesk {
    /// A desk with the extension, one 1920×1080 monitor, out of the Overview.
    pub fn start() -> GnomeDesk {
        GnomeDesk::start_with(GnomeDeskOptions::default())
    }

    /// A desk as `opts` says.
    pub fn start_with(opts: GnomeDeskOptions) -> GnomeDesk {
        require_tools();
        let (uid, gid) = desk_user();
        let dir = crate::temp::private_dir("cc-gnome-desk");
        let own = |p: &std::path::Path| {
            std::os::unix::fs::chown(p, Some(uid), Some(gid)).expect("chown desk file");
        };
        own(&dir);
        let write = |name: &str, text: &str| {
            let p = dir.join(name);
            std::fs::write(&p, text).expect("write desk file");
            own(&p);
            p
        };
        let start = write("start.sh", START);
        let config = write("session.conf", BUS_CONFIG);
        for sub in ["config", "data", "cache"] {
            let p = dir.join(sub);
            std::fs::create_dir_all(&p).expect("desk dirs");
            own(&p);
        }
        if opts.extension {
            let mut p = dir.join("data");
            for part in ["gnome-shell", "extensions", cc_desktop_gnome::shell::UUID] {
                p = p.join(part);
                std::fs::create_dir_all(&p).expect("extension dir");
                own(&p);
            }
            for (name, text) in cc_desktop_gnome::shell::FILES {
                let f = p.join(name);
                std::fs::write(&f, text).expect("extension file");
                own(&f);
            }
        }
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
        .arg(format!("XDG_CONFIG_HOME={}/config", dir.display()))
        .arg(format!("XDG_DATA_HOME={}/data", dir.display()))
        .arg(format!("XDG_CACHE_HOME={}/cache", dir.display()))
        // WirePlumber keeps what it restores there: one desk's must not reach the next.
        .arg(format!("XDG_STATE_HOME={}/state", dir.display()))
        .arg(format!("CC_WAYLAND={WAYLAND_DISPLAY}"))
        .arg(format!("CC_REPEAT_DELAY={REPEAT_DELAY_MS}"))
        .arg(format!(
            "CC_EXTENSION={}",
            if opts.extension {
                cc_desktop_gnome::shell::UUID
            } else {
                ""
            }
        ))
        .args([
            "LANG=C.UTF-8",
            "XDG_SESSION_TYPE=wayland",
            "XDG_CURRENT_DESKTOP=GNOME",
        ])
        .arg("dbus-run-session")
        .arg(format!("--config-file={}", config.display()))
        .args(["--", "sh"])
        .arg(&start)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(
            std::fs::File::create(dir.join("shell.log"))
                .map(Stdio::from)
                .unwrap_or_else(|_| Stdio::null()),
        );
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let shell = cmd.spawn().expect("start gnome-shell");
        let mut desk = GnomeDesk {
            runtime_dir: dir.clone(),
            bus: String::new(),
            uid,
            gid,
            shell,
            children: Vec::new(),
        };
        // Many desks start at once on a loaded CI machine: the shell can take far longer
        // than the few seconds it takes alone.
        let deadline = Instant::now() + START_LIMIT;
        let mut driver = loop {
            if let Ok(bus) = std::fs::read_to_string(dir.join("bus")) {
                desk.bus = bus.trim().to_string();
            }
            let waiting_for = if desk.bus.is_empty() {
                "the session bus's address".to_string()
            } else if !dir.join(WAYLAND_DISPLAY).exists() {
                "the shell's Wayland socket".to_string()
            } else if !dir.join("pipewire-0").exists() {
                "PipeWire's socket".to_string()
            } else {
                match desk.try_driver() {
                    Ok(d) => break d,
                    Err(e) => format!("the GNOME driver to connect ({e})"),
                }
            };
            if let Ok(Some(st)) = desk.shell.try_wait() {
                panic!(
                    "gnome-shell exited ({st}) while waiting for {waiting_for}\n{}",
                    desk.logs()
                );
            }
            assert!(
                Instant::now() < deadline,
                "gnome-shell did not start in {} s: still waiting for {waiting_for}\n{}\n\
                 (still waiting for {waiting_for})",
                START_LIMIT.as_secs(),
                desk.logs()
            );
            std::thread::sleep(Duration::from_millis(200));
        };
        // The shell starts in the Overview; Escape leaves it.
        let esc = cc_protocol::Key::parse("esc").expect("esc");
        driver.key(esc, true).expect("press Escape");
        driver.key(esc, false).expect("release Escape");
        drop(driver);
        // Input is held back until the Overview has closed.
        if opts.extension {
            desk.wait_until("the Overview to close", Duration::from_secs(20), || {
                desk.overview_visible() == Some(false)
            });
        } else {
            std::thread::sleep(Duration::from_millis(1500));
        }
        desk
    }

    /// The GNOME driver on this desk, run by the test itself (root may join the desk's
    /// bus), reading frames from the desk's PipeWire.
    pub fn driver(&self) -> GnomeDesktop {
        self.try_driver()
            .unwrap_or_else(|e| panic!("the GNOME driver: {e}\n{}", self.log()))
    }

    fn try_driver(&self) -> Result<GnomeDesktop, cc_desktop::DriverError> {
        GnomeDesktop::connect_with(GnomeOptions {
            session_bus: Some(self.bus.clone()),
            pipewire: Some(self.runtime_dir.join("pipewire-0")),
        })
    }

    /// Whether the Overview covers the screen, as the extension says (`None`: no
    /// answer).
    pub fn overview_visible(&self) -> Option<bool> {
        let out = self
            .command("gdbus")
            .args([
                "call",
                "--session",
                "--dest",
                "org.gnome.Shell",
                "--object-path",
                "/org/computercontrol/Shell",
                "--method",
                "org.computercontrol.Shell.OverviewVisible",
            ])
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        if text.contains("true") {
            Some(true)
        } else if text.contains("false") {
            Some(false)
        } else {
            None
        }
    }

    /// The shell's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.runtime_dir.join("shell.log")).unwrap_or_default()
    }

    /// The shell's, PipeWire's and WirePlumber's logs, each named: what a failed start
    /// is read from.
    fn logs(&self) -> String {
        ["shell.log", "pipewire.log", "wireplumber.log"]
            .iter()
            .map(|name| {
                let text = std::fs::read_to_string(self.runtime_dir.join(name))
                    .unwrap_or_else(|e| format!("({e})"));
                format!("--- {name} ---\n{text}")
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The desk's environment for a process run as the desk user (the server under test
    /// included: `--platform auto` finds GNOME from it).
    pub fn env(&self) -> Vec<(String, String)> {
        let d = self.runtime_dir.display();
        vec![
            ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
            ("HOME".into(), format!("/home/{USER}")),
            ("XDG_RUNTIME_DIR".into(), d.to_string()),
            ("XDG_CONFIG_HOME".into(), format!("{d}/config")),
            ("XDG_DATA_HOME".into(), format!("{d}/data")),
            ("XDG_CACHE_HOME".into(), format!("{d}/cache")),
            ("XDG_STATE_HOME".into(), format!("{d}/state")),
            ("WAYLAND_DISPLAY".into(), WAYLAND_DISPLAY.into()),
            ("DBUS_SESSION_BUS_ADDRESS".into(), self.bus.clone()),
            ("XDG_SESSION_TYPE".into(), "wayland".into()),
            ("XDG_CURRENT_DESKTOP".into(), "GNOME".into()),
            ("GDK_BACKEND".into(), "wayland".into()),
            ("LANG".into(), "C.UTF-8".into()),
        ]
    }

    /// A command run as the desk user with the desk's environment.
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new("setpriv");
        c.args([
            &format!("--reuid={}", self.uid),
            &format!("--regid={}", self.gid),
            "--init-groups",
            "--",
        ]);
        c.arg(program);
        c.env_clear();
        for (k, v) in self.env() {
            c.env(k, v);
        }
        c.current_dir(&self.runtime_dir);
        c
    }

    /// Starts an application on the desk; it is ended with the desk. Keep it still: an
    /// animated application costs a whole core of software rendering here.
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

    /// A terminal (foot) running `cat > FILE`: what is typed into it lands in the file,
    /// the typing oracle. Its application id is `app_id`.
    pub fn oracle_terminal(&mut self, app_id: &str) -> PathBuf {
        let file = self.path(&format!("{app_id}.typed"));
        let script = format!("exec cat > {}", sh_quote(&file.display().to_string()));
        self.spawn("foot", &["--app-id", app_id, "sh", "-c", &script]);
        file
    }

    /// Polls `cond` until it holds, or panics with `what`.
    pub fn wait_until(&self, what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
        let deadline = Instant::now() + limit;
        while !cond() {
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Polls `cond` until it holds (true) or `limit` passes (false).
    pub fn try_wait(&self, limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
        let deadline = Instant::now() + limit;
        while !cond() {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        true
    }

    /// A path inside the desk's private directory (readable by the desk user).
    pub fn path(&self, name: &str) -> PathBuf {
        self.runtime_dir.join(name)
    }

    /// Every process whose environment names this desk's runtime directory.
    fn desk_processes(&self) -> Vec<u32> {
        let needle = format!("XDG_RUNTIME_DIR={}", self.runtime_dir.display());
        let me = std::process::id();
        let Ok(rd) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        rd.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| *pid != me)
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()))
            })
            .collect()
    }
}

fn signal(sig: &str, target: &str) {
    let _ = Command::new("kill")
        .args([sig, "--", target])
        .stderr(Stdio::null())
        .status();
}

impl Drop for GnomeDesk {
    fn drop(&mut self) {
        for c in &mut self.children {
            signal("-TERM", &format!("-{}", c.id()));
        }
        for c in &mut self.children {
            let _ = c.wait();
        }
        signal("-TERM", &format!("-{}", self.shell.id()));
        for pid in self.desk_processes() {
            signal("-TERM", &pid.to_string());
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if matches!(self.shell.try_wait(), Ok(Some(_))) && self.desk_processes().is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        signal("-KILL", &format!("-{}", self.shell.id()));
        for pid in self.desk_processes() {
            signal("-KILL", &pid.to_string());
        }
        let _ = self.shell.wait();
        crate::temp::remove_runtime_dir(&self.runtime_dir);
    }
}
