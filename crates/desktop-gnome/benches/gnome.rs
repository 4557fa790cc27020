//! The GNOME driver beside the shell's own screenshot, on ONE private headless GNOME
//! desk in one run (`cc_test_kit::gnome`: gnome-shell, a 1920×1080 virtual monitor,
//! software rendering): a capture of the whole monitor from the kept PipeWire stream
//! against `org.gnome.Shell.Screenshot` writing a PNG (what gnome-screenshot calls; the
//! shell answers only allow-listed bus names, so this benchmark owns gnome-screenshot's
//! name, `org.gnome.Screenshot`, on the desk's private bus), and the driver's input
//! calls (a pointer motion, a key tap).
//!
//! ```text
//! cargo bench -p computer-control-desktop-gnome --bench gnome
//! ```
//!
//! Prints a markdown table (median, p90) for docs/PERFORMANCE.md. `CC_BENCH_QUICK=1`
//! runs fewer iterations (a smoke run).

use std::time::Instant;

use cc_desktop::Driver;
use cc_protocol::{Key, PhysicalRect};
use cc_test_kit::gnome::GnomeDesk;

struct Stats(Vec<f64>);

impl Stats {
    fn pct(&self, p: f64) -> f64 {
        let mut v = self.0.clone();
        v.sort_by(|a, b| a.total_cmp(b));
        let i = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
        v[i]
    }
}

/// Milliseconds of `n` runs of `f`, after one unmeasured run.
fn time_n(n: usize, mut f: impl FnMut()) -> Stats {
    f();
    Stats(
        (0..n)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect(),
    )
}

fn row(what: &str, s: &Stats) {
    println!("| {what} | {:.1} ms | {:.1} ms |", s.pct(0.5), s.pct(0.9));
}

fn main() {
    let quick = std::env::var_os("CC_BENCH_QUICK").is_some();
    let n = if quick { 5 } else { 30 };
    let desk = GnomeDesk::start();
    let mut d = desk.driver();
    let screen = PhysicalRect {
        x: 0,
        y: 0,
        width: 1920,
        height: 1080,
    };

    let capture = time_n(n, || {
        let img = d.capture(screen).expect("capture");
        assert_eq!((img.width, img.height), (1920, 1080));
    });
    let mut x = 100;
    let motion = time_n(n, || {
        x = if x == 100 { 200 } else { 100 };
        d.pointer_move(x, 300).expect("pointer_move");
    });
    let shift = Key::parse("shift").expect("shift");
    let key = time_n(n, || {
        d.key(shift, true).expect("press");
        d.key(shift, false).expect("release");
    });

    // The shell's own screenshot, called as gnome-screenshot calls it.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let shot = desk.path("bench-shot.png");
    let shell = rt.block_on(async {
        let conn = zbus::connection::Builder::address(desk.bus.as_str())
            .expect("the desk's bus address")
            .name("org.gnome.Screenshot")
            .expect("a well-known name")
            .build()
            .await
            .expect("the desk's bus");
        let proxy = zbus::Proxy::new(
            &conn,
            "org.gnome.Shell.Screenshot",
            "/org/gnome/Shell/Screenshot",
            "org.gnome.Shell.Screenshot",
        )
        .await
        .expect("the shell's screenshot");
        (conn, proxy)
    });
    let path = shot.display().to_string();
    let mut refused = None;
    let screenshot = time_n(n, || {
        let r: zbus::Result<(bool, String)> =
            rt.block_on(shell.1.call("Screenshot", &(false, false, path.as_str())));
        match r {
            Ok((true, _)) => {}
            Ok((false, _)) => refused = Some("the shell answered false".to_string()),
            Err(e) => refused = Some(e.to_string()),
        }
    });

    println!("| what | median | p90 |");
    println!("|---|---|---|");
    row(
        "driver `capture`, whole 1920×1080 monitor (kept PipeWire stream, to RGB)",
        &capture,
    );
    match &refused {
        None => row(
            "`org.gnome.Shell.Screenshot` of the whole screen to a PNG file",
            &screenshot,
        ),
        Some(why) => println!("| `org.gnome.Shell.Screenshot` | refused: {why} | |"),
    }
    row(
        "driver `pointer_move` (`NotifyPointerMotionAbsolute`, answered)",
        &motion,
    );
    row("driver key press and release (two calls, answered)", &key);
    drop(d);
    drop(shell);
}
