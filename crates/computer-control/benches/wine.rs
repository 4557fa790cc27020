//! Capture and click on Windows, measured under Wine: the Windows build of the server
//! (`computer-control.exe serve --platform windows`, driven over stdio as a harness
//! drives it) side by side with the same work done by raw Win32 calls in a program of
//! its own (`wine_peer.c`, built here with mingw-w64, timed in-process), on one private
//! 1920×1080 Xvfb (`cc_test_kit::wine::WineDesk`) with Wine's notepad and the desk's
//! form on it.
//!
//! ```text
//! cargo build --release -p computer-control --target x86_64-pc-windows-gnu \
//!     --no-default-features --features windows
//! cargo bench -p computer-control --bench wine
//! ```
//!
//! The client only writes requests and reads answer lines (it parses none), so `cargo
//! test -p computer-control --all-features --bench wine` (a debug client) measures the
//! same, with `COMPUTER_CONTROL_WINDOWS_EXE` at the release server.
//!
//! Prints a markdown table for docs/PERFORMANCE.md. `BENCH_N` changes the sample count
//! per measurement (default 200, taken in five interleaved rounds so the machine's load
//! falls on both sides alike); `COMPUTER_CONTROL_WINDOWS_EXE` points at another build.
//! Under Wine the capture is GDI's (Wine has no Desktop Duplication) and every Win32
//! call is Wine's: the figures say how the server compares with the calls it makes,
//! not how fast either is on Windows.

mod bench_client;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bench_client::{Client, fmt, p50_p90};
use cc_test_kit::wine::WineDesk;
use serde_json::{Value, json};

/// Rounds each measurement is split into, alternating the sides.
const ROUNDS: usize = 5;
/// Where both sides click: the bottom right of the screen, beside the windows.
const CLICK: (i64, i64) = (1800, 1000);

/// Builds the peer into `dir` with mingw-w64.
fn build_peer(dir: &Path) -> std::path::PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/wine_peer.c");
    let exe = dir.join("wine_peer.exe");
    let out = Command::new("x86_64-w64-mingw32-gcc")
        .args(["-O2", "-s", "-Wall", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-lgdi32")
        .output()
        .expect("run x86_64-w64-mingw32-gcc (gcc-mingw-w64-x86-64)");
    assert!(out.status.success(), "building the peer: {out:?}");
    exe
}

/// `n` samples from the peer (`capture N` or `click N X Y`), each its own timing.
fn peer(desk: &WineDesk, exe: &Path, args: &[&str]) -> Vec<Duration> {
    let out = desk
        .server(exe, args)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .expect("run the peer");
    assert!(out.status.success(), "wine_peer.exe {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| Duration::from_nanos(l.trim().parse().expect("a duration in ns")))
        .collect()
}

/// `n` round trips of one tool call, as the harness sees them: the request written,
/// the whole answer line read (not parsed).
fn ours(c: &mut Client, tool: &str, args: &Value, n: usize) -> Vec<Duration> {
    (0..n)
        .map(|_| {
            let t = Instant::now();
            c.tool_unparsed(tool, args.clone());
            t.elapsed()
        })
        .collect()
}

/// The window ids of `app_id` the server lists, waiting until there is one.
fn wait_for_window(c: &mut Client, app_id: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let list = c.tool("window.list", json!({}));
        let found = list["result"]["windows"]
            .as_array()
            .is_some_and(|ws| ws.iter().any(|w| w["app_id"] == app_id));
        if found {
            return;
        }
        assert!(Instant::now() < deadline, "no {app_id} window: {list}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn row(what: &str, samples: Vec<Duration>, peer: Option<Duration>) -> Duration {
    let (p50, p90) = p50_p90(samples);
    let ratio = peer
        .map(|p| format!("{:.1}×", p50.as_secs_f64() / p.as_secs_f64()))
        .unwrap_or_default();
    println!("| {what} | {} | {} | {ratio} |", fmt(p50), fmt(p90));
    p50
}

fn main() {
    let n: usize = std::env::var("BENCH_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let per_round = n.div_ceil(ROUNDS);
    let exe = WineDesk::windows_exe(env!("CARGO_BIN_EXE_computer-control"));
    let desk = WineDesk::start_sized(1920, 1080);
    let dir = cc_test_kit::TempDir::new();
    let peer_exe = build_peer(dir.path());

    // Something on the screen: the desk's form and Wine's notepad.
    let mut apps: Vec<Child> = [desk.form_exe(), Path::new("notepad").to_path_buf()]
        .iter()
        .map(|app| {
            desk.server(app, &[])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start an application under Wine")
        })
        .collect();
    let mut c = Client::start_command(desk.server(&exe, &["serve", "--platform", "windows"]));
    c.call("session.start", json!({"capture": {"default_width": 1920}}));
    wait_for_window(&mut c, "cc-form.exe");
    wait_for_window(&mut c, "notepad.exe");

    let full_png = json!({"size": "canvas", "format": "png", "if_changed": false});
    let default = json!({"if_changed": false});
    let unchanged = json!({"if_changed": true});
    let click = json!({"x": CLICK.0, "y": CLICK.1});
    let (cx, cy) = (CLICK.0.to_string(), CLICK.1.to_string());
    let count = per_round.to_string();
    // Warm both sides: the server's first capture opens its capture path, the peer's
    // first run loads its DLLs.
    ours(&mut c, "screen.capture", &default, 5);
    ours(&mut c, "pointer.click", &click, 5);
    peer(&desk, &peer_exe, &["capture", "5"]);

    // The same server with the visual indicator off, for what the indicator costs.
    let config = dir.path().join("no-indicator.json");
    std::fs::write(&config, r#"{"safety": {"visual_indicator": false}}"#).expect("config");
    let mut bare = Client::start_command({
        let mut cmd = desk.server(&exe, &["serve", "--platform", "windows", "--config"]);
        cmd.arg(&config);
        cmd
    });
    bare.call("session.start", json!({"capture": {"default_width": 1920}}));
    ours(&mut bare, "pointer.click", &click, 5);

    let mut s: [Vec<Duration>; 9] = Default::default();
    for _ in 0..ROUNDS {
        s[0].extend(peer(&desk, &peer_exe, &["capture", &count]));
        s[1].extend(ours(&mut c, "screen.capture", &full_png, per_round));
        s[2].extend(ours(&mut c, "screen.capture", &default, per_round));
        s[3].extend(ours(&mut c, "screen.capture", &unchanged, per_round));
        s[4].extend(peer(&desk, &peer_exe, &["click", &count, &cx, &cy]));
        s[5].extend(ours(&mut c, "pointer.click", &click, per_round));
        s[6].extend(ours(&mut c, "wait.pause", &json!({"ms": 0}), per_round));
        s[7].extend(ours(&mut c, "pointer.move", &click, per_round));
        s[8].extend(ours(&mut bare, "pointer.click", &click, per_round));
    }
    // What a tool that starts a Windows process per action pays under Wine at least.
    let spawn: Vec<Duration> = (0..10)
        .map(|_| {
            let t = Instant::now();
            peer(&desk, &peer_exe, &["click", "1", &cx, &cy]);
            t.elapsed()
        })
        .collect();
    drop(c);
    drop(bare);

    println!("| measurement (1920×1080, under Wine) | p50 | p90 | vs raw Win32 |");
    println!("|---|---|---|---|");
    let [
        cap,
        full,
        model,
        same,
        pclick,
        oclick,
        pause,
        moved,
        bare_click,
    ] = s;
    let cap50 = row(
        "raw Win32 capture: BitBlt of the virtual screen to memory (in-process)",
        cap,
        None,
    );
    row(
        "server `screen.capture` 1920×1080 PNG over stdio",
        full,
        Some(cap50),
    );
    row(
        "server `screen.capture` default (1430×804, auto format) over stdio",
        model,
        Some(cap50),
    );
    row(
        "server `screen.capture` nothing changed (`unchanged`: grab and compare, no image)",
        same,
        Some(cap50),
    );
    let click50 = row(
        "raw Win32 click: SetCursorPos + SendInput down/up (in-process)",
        pclick,
        None,
    );
    row("server `pointer.click` over stdio", oclick, Some(click50));
    row(
        "server `pointer.click` over stdio, `safety.visual_indicator` off",
        bare_click,
        Some(click50),
    );
    row("server `pointer.move` over stdio", moved, None);
    row(
        "server `wait.pause {ms:0}` over stdio (the round trip)",
        pause,
        None,
    );
    row(
        "a Windows process per click (`wine64 wine_peer.exe click 1`), start to end",
        spawn,
        Some(click50),
    );
    for mut app in apps.drain(..) {
        let _ = app.kill();
        let _ = app.wait();
    }
}
