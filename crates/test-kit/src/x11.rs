//! A private test desktop per test: Xvfb on a free display (`-displayfd`), a private
//! session bus (whose activation starts the accessibility bus for this display),
//! openbox, and the applications a test launches. Everything is stopped on drop.
//!
//! The tools must be installed (`scripts/test.sh` installs them); without them every
//! test fails with a message saying so, never a silent skip.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use cc_desktop::{Driver, RawNode};
use cc_desktop_x11::{X11Desktop, X11Options};
use cc_protocol::{PhysicalRect, Role};

/// The programs the test desktop needs.
const TOOLS: &[&str] = &[
    "Xvfb",
    "dbus-daemon",
    "openbox",
    "gtk3-widget-factory",
    "xterm",
    "xdotool",
    "wmctrl",
    "import",
    "xrandr",
    "xsetroot",
];

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| {
        std::env::split_paths(&p).any(|d| {
            let f = d.join(tool);
            f.is_file()
        })
    })
}

/// Panics with the install hint when a tool is missing.
pub fn require_tools() {
    let missing: Vec<&str> = TOOLS.iter().copied().filter(|t| !on_path(t)).collect();
    assert!(
        missing.is_empty(),
        "the X11 tests need a test desktop, missing: {}. Install the test desktop (see .ci/run): \
         apt-get install -y --no-install-recommends xvfb xdotool dbus-x11 at-spi2-core \
         gtk-3-examples python3-pyatspi gir1.2-atspi-2.0 openbox xterm imagemagick scrot \
         x11-xserver-utils wmctrl",
        missing.join(", ")
    );
}

/// Where Debian's `qtbase5-examples` installs the Qt5 widget examples.
pub const QT_EXAMPLES: &str = "/usr/lib/x86_64-linux-gnu/qt5/examples/widgets";

/// One private desktop.
pub struct Desk {
    /// Its X display (`:N`).
    pub display: String,
    /// Its session bus's address.
    pub bus: String,
    /// Its private directory (mode 0700), removed with the desk.
    pub runtime_dir: PathBuf,
    children: Vec<Child>,
}

/// Reads the first line a child prints on stdout (with a deadline).
fn first_line(child: &mut Child, what: &str) -> String {
    let out = child.stdout.take().expect("piped stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let mut r = BufReader::new(out);
        let _ = r.read_line(&mut line);
        let _ = tx.send(line);
        // Keep draining so the child never blocks on a full pipe.
        let mut sink = Vec::new();
        let _ = r.read_to_end(&mut sink);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("{what} did not start in 20 s"));
    let line = line.trim().to_string();
    assert!(!line.is_empty(), "{what} printed nothing");
    line
}

impl Desk {
    /// Xvfb 1920x1080x24, a session bus, openbox.
    pub fn start() -> Desk {
        Desk::start_sized(1920, 1080)
    }

    /// The same with a screen of `width`×`height`.
    pub fn start_sized(width: u32, height: u32) -> Desk {
        require_tools();
        let runtime_dir = crate::temp::private_dir("cc-x11-test");
        let mut xvfb = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                &format!("{width}x{height}x24"),
                "-nolisten",
                "tcp",
                "-noreset",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start Xvfb");
        let display = format!(":{}", first_line(&mut xvfb, "Xvfb"));
        let mut desk = Desk {
            display,
            bus: String::new(),
            runtime_dir,
            children: vec![xvfb],
        };
        // The bus's socket goes in the desk's own directory, removed with the desk:
        // the session config's `tmpdir=/tmp` would leave one file in /tmp per desk
        // (the daemon is killed, so it cannot remove it).
        let address = format!("--address=unix:dir={}", desk.runtime_dir.display());
        let mut dbus = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1", &address])
            .env("DISPLAY", &desk.display)
            .env("XDG_RUNTIME_DIR", &desk.runtime_dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start dbus-daemon");
        desk.bus = first_line(&mut dbus, "dbus-daemon");
        desk.children.push(dbus);
        desk.spawn("openbox", &["--sm-disable"]);
        desk.wait_until(
            "openbox manages the screen",
            Duration::from_secs(10),
            || {
                let mut d2 = X11Desktop::connect(Some(&desk.display)).ok();
                d2.as_mut().is_some_and(|d| d.report().window_manager)
            },
        );
        desk
    }

    /// Sets the desktop's environment on a command.
    pub fn env<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        cmd.env("DISPLAY", &self.display)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus)
            .env("XDG_RUNTIME_DIR", &self.runtime_dir)
            .env("LANG", "C.UTF-8")
            .env("LC_ALL", "C.UTF-8")
            .env_remove("AT_SPI_BUS_ADDRESS")
            .env_remove("NO_AT_BRIDGE")
            .env("GTK_THEME", "Adwaita")
    }

    /// Starts a program on this desktop; it is killed when the desk drops.
    pub fn spawn(&mut self, program: &str, args: &[&str]) -> u32 {
        let child = self
            .env(&mut Command::new(program))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {program}: {e}"));
        let pid = child.id();
        self.children.push(child);
        pid
    }

    /// The processes this desk started (Xvfb, the session bus, openbox, applications).
    pub fn pids(&self) -> Vec<u32> {
        self.children.iter().map(Child::id).collect()
    }

    /// Runs a helper tool to completion on this desktop.
    pub fn run(&self, program: &str, args: &[&str]) -> Output {
        self.env(&mut Command::new(program))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("run {program}: {e}"))
    }

    /// A driver connected to this desktop and its session bus.
    pub fn driver(&self) -> X11Desktop {
        X11Desktop::connect_with(X11Options {
            display: Some(self.display.clone()),
            session_bus: Some(self.bus.clone()),
            ..X11Options::default()
        })
        .expect("connect the X11 driver")
    }

    /// A connection of the test's own to this desk's X server (not the driver's), for
    /// reading back what the server itself says.
    pub fn x_connection(&self) -> (x11rb::rust_connection::RustConnection, usize) {
        x11rb::connect(Some(&self.display)).expect("connect to the desk's X server")
    }

    /// The server's whole keyboard mapping (keysyms of every keycode).
    pub fn keyboard_mapping(&self) -> Vec<u32> {
        use x11rb::connection::Connection as _;
        use x11rb::protocol::xproto::ConnectionExt as _;
        let (conn, _) = self.x_connection();
        let (min, max) = (conn.setup().min_keycode, conn.setup().max_keycode);
        conn.get_keyboard_mapping(min, max - min + 1)
            .unwrap()
            .reply()
            .unwrap()
            .keysyms
    }

    /// How many keys are down, and the pointer-button bits of the modifier mask
    /// (`0x1f00`: buttons 1 to 5), as the X server reports them.
    pub fn inputs_down(&self) -> (u32, u16) {
        use x11rb::connection::Connection as _;
        use x11rb::protocol::xproto::ConnectionExt as _;
        let (conn, screen) = self.x_connection();
        let keys = conn.query_keymap().unwrap().reply().unwrap().keys;
        let root = conn.setup().roots[screen].root;
        let pointer = conn.query_pointer(root).unwrap().reply().unwrap();
        (
            keys.iter().map(|b| b.count_ones()).sum(),
            u16::from(pointer.mask) & 0x1f00,
        )
    }

    /// The pointer's position, as the X server reports it.
    pub fn pointer(&self) -> (i16, i16) {
        use x11rb::connection::Connection as _;
        use x11rb::protocol::xproto::ConnectionExt as _;
        let (conn, screen) = self.x_connection();
        let root = conn.setup().roots[screen].root;
        let p = conn.query_pointer(root).unwrap().reply().unwrap();
        (p.root_x, p.root_y)
    }

    /// Polls `f` every 20 ms until it is true; panics after `timeout`.
    pub fn wait_until(&self, what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if f() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("timed out after {timeout:?} waiting until {what}");
    }

    /// Starts gtk3-widget-factory and waits until its window and its accessibility
    /// tree (with the named checkbox) are there. Returns its window id.
    pub fn widget_factory(&mut self, d: &mut X11Desktop) -> u64 {
        self.spawn("gtk3-widget-factory", &[]);
        let mut id = 0;
        self.wait_until(
            "gtk3-widget-factory is on screen and accessible",
            Duration::from_secs(30),
            || {
                let Ok(ws) = d.windows() else { return false };
                let Some(w) = ws
                    .iter()
                    .find(|w| w.app_id.to_lowercase().contains("widget-factory"))
                else {
                    return false;
                };
                id = w.id;
                d.a11y_tree(Some(w.id), 5000)
                    .ok()
                    .is_some_and(|t| find(&t, Role::Checkbox, None).is_some())
            },
        );
        id
    }

    /// Starts one of Debian's Qt5 widget examples (`qtbase5-examples`, `rel` under
    /// its `widgets/` directory) and returns its pid. The variables that would force
    /// Qt's accessibility bridge on are removed: whether the application exposes its
    /// tree must depend on the accessibility bus the driver enabled, as it does for a
    /// user's applications.
    pub fn spawn_qt_example(&mut self, rel: &str) -> u32 {
        let program = Path::new(QT_EXAMPLES).join(rel);
        assert!(
            program.is_file(),
            "the Qt tests need {}: apt-get install -y --no-install-recommends qtbase5-examples",
            program.display()
        );
        let child = self
            .env(&mut Command::new(&program))
            .env_remove("QT_ACCESSIBILITY")
            .env_remove("QT_LINUX_ACCESSIBILITY_ALWAYS_ON")
            .env("QT_QPA_PLATFORM", "xcb")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", program.display()));
        let pid = child.id();
        self.children.push(child);
        pid
    }

    /// A path in the desk's private directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.runtime_dir.join(name)
    }
}

impl Drop for Desk {
    fn drop(&mut self) {
        // Applications first, the X server last.
        for c in self.children.iter_mut().rev() {
            let _ = c.kill();
            let _ = c.wait();
        }
        crate::temp::remove_runtime_dir(&self.runtime_dir);
    }
}

/// Depth-first search for a node by role (and name, if given).
pub fn find<'a>(nodes: &'a [RawNode], role: Role, name: Option<&str>) -> Option<&'a RawNode> {
    for n in nodes {
        if n.role == role && name.is_none_or(|want| n.name == want) {
            return Some(n);
        }
        if let Some(hit) = find(&n.children, role, name) {
            return Some(hit);
        }
    }
    None
}

/// True when `inner` lies entirely within `outer`.
pub fn contains(outer: PhysicalRect, inner: PhysicalRect) -> bool {
    inner.x >= outer.x
        && inner.y >= outer.y
        && i64::from(inner.x) + i64::from(inner.width)
            <= i64::from(outer.x) + i64::from(outer.width)
        && i64::from(inner.y) + i64::from(inner.height)
            <= i64::from(outer.y) + i64::from(outer.height)
}

/// Every node, depth first.
pub fn all(nodes: &[RawNode]) -> Vec<&RawNode> {
    let mut out = Vec::new();
    fn go<'a>(ns: &'a [RawNode], out: &mut Vec<&'a RawNode>) {
        for n in ns {
            out.push(n);
            go(&n.children, out);
        }
    }
    go(nodes, &mut out);
    out
}

/// Reads a binary PPM (P6, maxval 255) as produced by `import ... ppm:-`.
pub fn parse_ppm(data: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut fields = Vec::new();
    let mut i = 0;
    while fields.len() < 4 {
        while i < data.len() && data[i].is_ascii_whitespace() {
            i += 1;
        }
        if data.get(i) == Some(&b'#') {
            while i < data.len() && data[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let start = i;
        while i < data.len() && !data[i].is_ascii_whitespace() {
            i += 1;
        }
        fields.push(String::from_utf8_lossy(&data[start..i]).into_owned());
    }
    assert_eq!(fields[0], "P6", "not a binary PPM");
    assert_eq!(fields[3], "255", "not 8-bit");
    let w: u32 = fields[1].parse().expect("width");
    let h: u32 = fields[2].parse().expect("height");
    let pixels = data[i + 1..].to_vec();
    assert_eq!(pixels.len(), (w * h * 3) as usize, "PPM size");
    (w, h, pixels)
}

/// True when `p` exists and holds exactly `want`.
pub fn file_is(p: &Path, want: &str) -> bool {
    std::fs::read_to_string(p).is_ok_and(|s| s == want)
}
