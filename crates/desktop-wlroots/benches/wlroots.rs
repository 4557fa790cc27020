//! The wlroots driver against the tools wlroots users run today, side by side on ONE
//! private headless sway in one run (1920x1080, pixman, a foot terminal running `cat`):
//! capture against `grim`, typing against `wtype`, and the driver's click.
//!
//! ```text
//! cargo bench -p cc-desktop-wlroots --bench wlroots
//! ```
//!
//! Prints a markdown table (p50, p99, theirs, ratio) for docs/PERFORMANCE.md.
//! `CC_BENCH_QUICK=1` runs fewer iterations (a smoke run).

#[path = "../tests/wlroots_support/mod.rs"]
mod wlroots_support;

use std::time::Instant;

use cc_desktop::{Button, Driver};
use cc_desktop_wlroots::{WlrootsDesktop, WlrootsOptions};
use cc_protocol::PhysicalRect;
use wlroots_support::Desk;

struct Stats(Vec<f64>);

impl Stats {
    fn pct(&self, p: f64) -> f64 {
        let mut v = self.0.clone();
        v.sort_by(|a, b| a.total_cmp(b));
        let i = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
        v[i]
    }
}

fn time_n(n: usize, mut f: impl FnMut()) -> Stats {
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

fn row(what: &str, ours: &Stats, theirs: Option<(&str, &Stats)>) {
    match theirs {
        Some((name, t)) => println!(
            "| {what} | {:.2} | {:.2} | {name} {:.2} | {:.1}× |",
            ours.pct(0.5),
            ours.pct(0.99),
            t.pct(0.5),
            t.pct(0.5) / ours.pct(0.5)
        ),
        None => println!(
            "| {what} | {:.2} | {:.2} | — | — |",
            ours.pct(0.5),
            ours.pct(0.99)
        ),
    }
}

fn main() {
    let quick = std::env::var_os("CC_BENCH_QUICK").is_some();
    let n = if quick { 5 } else { 50 };
    let mut desk = Desk::start();
    desk.spawn(
        "foot",
        &["--app-id", "cc-bench", "sh", "-c", "cat > /dev/null"],
    );
    desk.wait_view("cc-bench");
    let mut d = WlrootsDesktop::connect_with(WlrootsOptions {
        display: Some(desk.path("wayland-1").display().to_string()),
        swaysock: Some(desk.swaysock.clone()),
        session_bus: Some("unix:path=/nonexistent".into()),
    })
    .expect("connect");
    let full = PhysicalRect {
        x: 0,
        y: 0,
        width: 1920,
        height: 1080,
    };
    let run = |prog: &str, args: &[&str]| {
        let out = desk.command(prog).args(args).output().expect(prog);
        assert!(out.status.success(), "{prog}: {out:?}");
    };

    println!("| operation | ours p50 ms | ours p99 ms | theirs p50 ms | ratio |");
    println!("|---|---|---|---|---|");
    d.capture(full).unwrap();
    let ours = time_n(n, || {
        d.capture(full).unwrap();
    });
    let grim = time_n(n, || run("grim", &["-t", "ppm", "/dev/null"]));
    row(
        "capture 1920×1080 (RGB in memory)",
        &ours,
        Some(("grim -t ppm", &grim)),
    );

    let ascii: String = "abcdefghij".repeat(10);
    let ours = time_n(n, || {
        for c in ascii.chars() {
            d.type_char(c).unwrap();
        }
    });
    let wtype = time_n(n, || run("wtype", &[&ascii]));
    row("type 100 ASCII characters", &ours, Some(("wtype", &wtype)));

    let uni: String = "é世✓ü".repeat(25);
    let ours = time_n(n, || {
        for c in uni.chars() {
            d.type_char(c).unwrap();
        }
        d.release_all().unwrap();
    });
    let wtype = time_n(n, || run("wtype", &[&uni]));
    row(
        "type 100 non-ASCII characters",
        &ours,
        Some(("wtype", &wtype)),
    );

    let ours = time_n(n, || {
        d.pointer_move(960, 540).unwrap();
        d.button(Button::Left, true).unwrap();
        d.button(Button::Left, false).unwrap();
    });
    row("click (move, press, release)", &ours, None);
}
