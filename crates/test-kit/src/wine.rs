//! A private Wine desk: a Xvfb of its own (1280x1024x24 unless sized) and Windows
//! programs run on it under Wine 8 in the test prefix (`scripts/wine/prefix.sh`, made
//! once per target directory, with the bcryptprimitives stand-in every Rust program
//! needs there and the desk's own `cc-form.exe`).
//!
//! Wine keeps one desktop state per prefix (foreground window, hotkeys, clipboard), so
//! desks in one test process take turns: a desk holds the prefix until it is dropped,
//! and its drop ends every Wine process of the prefix (`wineserver -k`).
//!
//! A desk tells a suite how to start the server (`server`: `wine64
//! computer-control.exe ...` with this desk's environment) and how to look behind it
//! (`xdotool`, an X client of its own: key chords reach Wine's focused window as a
//! person's keys would).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};

/// Debian's wine64 is not on PATH.
pub const WINE64: &str = "/usr/lib/wine/wine64";

static PREFIX_TURN: Mutex<()> = Mutex::new(());

/// One Xvfb and the Wine prefix, held for one test.
pub struct WineDesk {
    /// The X display, e.g. `:7`.
    pub display: String,
    /// The Wine prefix the desk's programs run in.
    pub prefix: PathBuf,
    xvfb: Child,
    _turn: MutexGuard<'static, ()>,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

impl WineDesk {
    /// Makes the prefix if needed (`scripts/wine/prefix.sh`) and starts a private
    /// 1280x1024 Xvfb. Panics with the reason when Wine, mingw-w64 or Xvfb is missing:
    /// scripts/test.sh installs them.
    pub fn start() -> WineDesk {
        WineDesk::start_sized(1280, 1024)
    }

    /// [`WineDesk::start`] with a screen of `width` x `height` (Wine's one monitor).
    ///
    /// The Xvfb's keymap is set without the X server's own key sequences
    /// (`setxkbmap -option srvrkeys:none`, kept by `-noreset`: an X server resets its
    /// keymap when its last client leaves): the default binds Ctrl+Alt+F1..F12 to
    /// switching screens and swallows the press, so the emergency chord (Ctrl+Alt+F12)
    /// pressed from the X side would never reach Wine's hotkeys.
    pub fn start_sized(width: u32, height: u32) -> WineDesk {
        let turn = PREFIX_TURN.lock().unwrap_or_else(|p| p.into_inner());
        let out = Command::new(repo_root().join("scripts/wine/prefix.sh"))
            .output()
            .expect("run scripts/wine/prefix.sh");
        assert!(
            out.status.success(),
            "scripts/wine/prefix.sh failed (are wine64 and gcc-mingw-w64-x86-64 installed?): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let prefix = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        let mut xvfb = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                &format!("{width}x{height}x24"),
                "-nolisten",
                "tcp",
                // The keymap set below outlives its last client.
                "-noreset",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start Xvfb");
        let mut line = String::new();
        let stdout = xvfb.stdout.take().expect("Xvfb's stdout");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("Xvfb's display number");
        let n: u32 = line
            .trim()
            .parse()
            .expect("Xvfb printed its display number");
        let desk = WineDesk {
            display: format!(":{n}"),
            prefix,
            xvfb,
            _turn: turn,
        };
        let out = Command::new("setxkbmap")
            .args(["-option", "srvrkeys:none"])
            .env("DISPLAY", &desk.display)
            .output()
            .expect("run setxkbmap (x11-xkb-utils)");
        assert!(out.status.success(), "setxkbmap: {out:?}");
        desk
    }

    /// Switches the desk's one monitor to `width` x `height` (at most the size the desk
    /// started with: a Xvfb cannot grow its screen) through the X server's RandR, as a
    /// person changing the resolution would: a mode of that size is added to the
    /// Xvfb's one output, then set. Wine 8 reads its monitors from RandR's outputs and
    /// CRTCs, so its programs see the new monitor rectangle (and get
    /// `WM_DISPLAYCHANGE`). This is the only monitor change a Xvfb can show Wine: it
    /// has one output, so no second monitor, and Wine 8 ignores RandR 1.5's monitors
    /// (`xrandr --setmonitor`, how the X11 desk splits its screen). Panics when xrandr
    /// refuses.
    pub fn set_mode(&self, width: u32, height: u32) {
        let xrandr = |args: &[&str]| -> String {
            let out = Command::new("xrandr")
                .args(args)
                .env("DISPLAY", &self.display)
                .output()
                .expect("run xrandr (x11-xserver-utils)");
            assert!(out.status.success(), "xrandr {args:?}: {out:?}");
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let now = xrandr(&[]);
        let output = now
            .lines()
            .find(|l| l.contains(" connected"))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or_else(|| panic!("xrandr lists no connected output: {now}"))
            .to_string();
        let name = format!("cc-{width}x{height}");
        if !now
            .lines()
            .any(|l| l.split_whitespace().next() == Some(&name))
        {
            // A mode line's timings mean nothing to a Xvfb; its size is what counts.
            let (w, h) = (width, height);
            let clock = format!("{:.2}", 60.0 * f64::from(w + 24) * f64::from(h + 3) / 1e6);
            let timings = [w, w + 8, w + 16, w + 24, h, h + 1, h + 2, h + 3].map(|v| v.to_string());
            let mut args = vec!["--newmode", &name, &clock];
            args.extend(timings.iter().map(String::as_str));
            xrandr(&args);
            xrandr(&["--addmode", &output, &name]);
        }
        xrandr(&["--output", &output, "--mode", &name]);
    }

    /// The desk's own Windows program (`scripts/wine/cc-form.c`, built into the prefix
    /// by `prefix.sh`): a form with named checkboxes and a password edit, and the
    /// probes a suite reads the desk with from another Windows process.
    pub fn form_exe(&self) -> PathBuf {
        self.prefix.join("drive_c/cc-test/cc-form.exe")
    }

    /// Runs `cc-form.exe <args>` on this desk to its end and returns its standard
    /// output; panics when it fails.
    pub fn form(&self, args: &[&str]) -> String {
        let out = self
            .server(&self.form_exe(), args)
            .stdin(Stdio::null())
            .output()
            .expect("run cc-form.exe");
        assert!(out.status.success(), "cc-form.exe {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The Wine environment of this desk on `cmd`.
    pub fn env(&self, cmd: &mut Command) {
        cmd.env("DISPLAY", &self.display)
            .env("WINEPREFIX", &self.prefix)
            .env("WINEDEBUG", "-all")
            .env("WINEDLLOVERRIDES", "mscoree,mshtml=;winedbg.exe=d")
            .env_remove("WAYLAND_DISPLAY");
    }

    /// `wine64 <exe> <args>` on this desk: how a suite starts the Windows server
    /// (`computer-control.exe serve --platform windows`) or any Windows program.
    pub fn server(&self, exe: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(WINE64);
        self.env(&mut cmd);
        cmd.arg(exe).args(args);
        cmd
    }

    /// `xdotool` on this desk's X display: input as a person's, from outside Wine.
    pub fn xdotool(&self, args: &[&str]) -> Output {
        Command::new("xdotool")
            .args(args)
            .env("DISPLAY", &self.display)
            .output()
            .expect("run xdotool")
    }

    /// The server built for Windows: `$COMPUTER_CONTROL_WINDOWS_EXE`, else
    /// `<target>/x86_64-pc-windows-gnu/<profile>/computer-control.exe` beside `linux_bin`
    /// (the `CARGO_BIN_EXE_*` of the Linux build, `<target>/<profile>/...`), so a test
    /// runs the debug build and a benchmark the release build. Panics with the build
    /// command when it is missing.
    pub fn windows_exe(linux_bin: &str) -> PathBuf {
        if let Some(p) = std::env::var_os("COMPUTER_CONTROL_WINDOWS_EXE") {
            return PathBuf::from(p);
        }
        let profile_dir = Path::new(linux_bin)
            .parent()
            .expect("the binary's profile directory");
        let profile = profile_dir
            .file_name()
            .and_then(|p| p.to_str())
            .unwrap_or("debug");
        let target = profile_dir.parent().expect("the binary's target directory");
        let exe = target.join(format!(
            "x86_64-pc-windows-gnu/{profile}/computer-control.exe"
        ));
        let release = if profile == "release" {
            " --release"
        } else {
            ""
        };
        assert!(
            exe.is_file(),
            "{} is missing: cargo build{release} -p computer-control --target x86_64-pc-windows-gnu --no-default-features --features windows",
            exe.display()
        );
        exe
    }
}

impl Drop for WineDesk {
    fn drop(&mut self) {
        let _ = Command::new("/usr/lib/wine/wineserver")
            .arg("-k")
            .env("WINEPREFIX", &self.prefix)
            .status();
        let _ = self.xvfb.kill();
        let _ = self.xvfb.wait();
    }
}
