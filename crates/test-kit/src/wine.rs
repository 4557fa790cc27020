//! A private Wine desk: a Xvfb of its own (1280x1024x24) and Windows programs run on
//! it under Wine 8 in the test prefix (`scripts/wine/prefix.sh`, made once per target
//! directory, with the bcryptprimitives stand-in every Rust program needs there).
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
    /// Makes the prefix if needed (`scripts/wine/prefix.sh`) and starts a private Xvfb.
    /// Panics with the reason when Wine, mingw-w64 or Xvfb is missing: scripts/test.sh
    /// installs them.
    pub fn start() -> WineDesk {
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
                "1280x1024x24",
                "-nolisten",
                "tcp",
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
        WineDesk {
            display: format!(":{n}"),
            prefix,
            xvfb,
            _turn: turn,
        }
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
    /// `<target>/x86_64-pc-windows-gnu/debug/computer-control.exe` beside `linux_bin`
    /// (the `CARGO_BIN_EXE_*` of the Linux build). Panics with the build command when
    /// it is missing.
    pub fn windows_exe(linux_bin: &str) -> PathBuf {
        if let Some(p) = std::env::var_os("COMPUTER_CONTROL_WINDOWS_EXE") {
            return PathBuf::from(p);
        }
        let target = Path::new(linux_bin)
            .parent()
            .and_then(Path::parent)
            .expect("the binary's target directory");
        let exe = target.join("x86_64-pc-windows-gnu/debug/computer-control.exe");
        assert!(
            exe.is_file(),
            "{} is missing: cargo build -p computer-control --target x86_64-pc-windows-gnu --no-default-features --features windows",
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
