//! The wlroots driver against the tools wlroots users run today, side by side on ONE
//! private headless sway in one run (1920x1080, pixman, a foot terminal running `cat`):
//! capture against `grim`, typing against `wtype`, the driver's click, and an
//! accessibility snapshot of gtk3-widget-factory against a pyatspi walk. The snapshot
//! runs in a child of this benchmark started as the desk's user (the accessibility bus
//! is that user's).
//!
//! ```text
//! cargo bench -p computer-control-desktop-wlroots --bench wlroots
//! ```
//!
//! Prints a markdown table (p50, p99, theirs, ratio) for docs/PERFORMANCE.md.
//! `CC_BENCH_QUICK=1` runs fewer iterations (a smoke run).

use cc_test_kit::sway as wlroots_support;

use std::time::Instant;

use cc_desktop::{Button, Driver, Pace};
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

const PYATSPI_WALK: &str = r#"
import sys, time, pyatspi
t0 = time.perf_counter()
desk = pyatspi.Registry.getDesktop(0)
app = None
for i in range(desk.childCount):
    a = desk.getChildAtIndex(i)
    if a is not None and 'widget' in (a.name or '').lower():
        app = a
        break
if app is None:
    print('no app', file=sys.stderr); sys.exit(2)
n = 0
def walk(o, depth=0):
    global n
    if o is None or depth > 64:
        return
    n += 1
    o.getRole(); o.name; o.getState().getStates()
    try:
        o.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    except NotImplementedError:
        pass
    for i in range(o.childCount):
        walk(o.getChildAtIndex(i), depth + 1)
walk(app)
t1 = time.perf_counter()
print(n, (t1 - t0) * 1000.0)
"#;

fn count(nodes: &[cc_desktop::RawNode]) -> usize {
    nodes.iter().map(|n| 1 + count(&n.children)).sum()
}

/// The snapshot part, run as the desk's user: prints the node count and every sample
/// (ms).
fn snapshot_child(n: usize) {
    let mut d = WlrootsDesktop::connect(None).expect("connect as the desk user");
    let id = d
        .windows()
        .unwrap()
        .into_iter()
        .find(|w| w.app_id.contains("widget-factory"))
        .expect("the widget factory")
        .id;
    let mut nodes = 0;
    for _ in 0..3 {
        nodes = count(&d.a11y_tree(Some(id), 5000).unwrap());
    }
    let s = time_n(n, || {
        std::hint::black_box(d.a11y_tree(Some(id), 5000).unwrap());
    });
    let samples: Vec<String> = s.0.iter().map(|v| format!("{v:.3}")).collect();
    println!("{nodes} {}", samples.join(" "));
    // The part of a snapshot that is not AT-SPI: the window list (sway's `get_tree`
    // over its IPC and the foreign-toplevel state) that binds top-levels to windows.
    let w = time_n(n, || {
        std::hint::black_box(d.windows().unwrap());
    });
    let samples: Vec<String> = w.0.iter().map(|v| format!("{v:.3}")).collect();
    println!("{}", samples.join(" "));
}

fn main() {
    let quick = std::env::var_os("CC_BENCH_QUICK").is_some();
    let n = if quick { 5 } else { 50 };
    if std::env::var_os("CC_BENCH_SNAPSHOT_CHILD").is_some() {
        return snapshot_child(n);
    }
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
    // Back to back, every capture waits for the output's next frame (the copy happens
    // at the commit after the request, and the previous capture's commit leaves a frame
    // pending for one refresh period: 16.7 ms at 60 Hz). A capture after a pause does
    // not: the same, with the output idle for 50 ms (not timed) before each sample.
    let spaced = |d: &mut WlrootsDesktop| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        let t = Instant::now();
        d.capture(full).unwrap();
        t.elapsed().as_secs_f64() * 1e3
    };
    let ours = Stats((0..n).map(|_| spaced(&mut d)).collect());
    let grim = Stats(
        (0..n)
            .map(|_| {
                std::thread::sleep(std::time::Duration::from_millis(50));
                let t = Instant::now();
                run("grim", &["-t", "ppm", "/dev/null"]);
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect(),
    );
    row(
        "capture 1920×1080, output idle before each",
        &ours,
        Some(("grim -t ppm, same pause", &grim)),
    );

    // Typing as `keyboard.type` does it: the text announced, then one character at a
    // time; each sample ends with `release_all` (which uploads the plain layout again, as
    // a pause in typing does). A sample starts once the compositor has handled the
    // previous one (`sync`, not timed): what is timed is handing the keys over, not
    // the compositor's backlog of keymaps from earlier samples. A pause of 20 ms (not
    // timed) stands for the agent's turn between two texts: it refills the typing pace's
    // budget, which sustained typing spends (the next row measures that).
    let type_text = |d: &mut WlrootsDesktop, text: &str| {
        d.sync().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let t = Instant::now();
        d.prepare_typing(text, Pace::BackToBack).unwrap();
        for c in text.chars() {
            d.type_char(c).unwrap();
        }
        d.release_all().unwrap();
        t.elapsed().as_secs_f64() * 1e3
    };
    let ascii: String = "abcdefghij".repeat(10);
    let ours = Stats((0..n).map(|_| type_text(&mut d, &ascii)).collect());
    let wtype = time_n(n, || run("wtype", &[&ascii]));
    row("type 100 ASCII characters", &ours, Some(("wtype", &wtype)));

    // Sustained typing: a text far past the pace's burst, handed over at its rate.
    let long: String = "abcdefghij".repeat(200);
    let ours = Stats(
        (0..n.min(10))
            .map(|_| {
                std::thread::sleep(std::time::Duration::from_millis(300));
                type_text(&mut d, &long)
            })
            .collect(),
    );
    row("type 2 000 ASCII characters (paced)", &ours, None);

    let uni: String = "é世✓ü".repeat(25);
    let ours = Stats((0..n).map(|_| type_text(&mut d, &uni)).collect());
    let wtype = time_n(n, || run("wtype", &[&uni]));
    row(
        "type 100 non-ASCII characters",
        &ours,
        Some(("wtype", &wtype)),
    );
    // The same back to back, never waiting for the compositor: the compositor's
    // throughput (two keymaps compiled per sample) and, sustained, the typing pace.
    let ours = time_n(n, || {
        d.prepare_typing(&uni, Pace::BackToBack).unwrap();
        for c in uni.chars() {
            d.type_char(c).unwrap();
        }
        d.release_all().unwrap();
    });
    row("type 100 non-ASCII characters, back to back", &ours, None);

    let ours = time_n(n, || {
        d.pointer_move(960, 540).unwrap();
        d.button(Button::Left, true).unwrap();
        d.button(Button::Left, false).unwrap();
    });
    row("click (move, press, release)", &ours, None);

    desk.spawn("gtk3-widget-factory", &[]);
    desk.wait_view("widget-factory");
    std::thread::sleep(std::time::Duration::from_secs(2));
    let exe = std::env::current_exe().expect("this benchmark's path");
    let out = desk
        .command(&exe.display().to_string())
        .env("CC_BENCH_SNAPSHOT_CHILD", "1")
        .envs(std::env::var_os("CC_BENCH_QUICK").map(|v| ("CC_BENCH_QUICK", v)))
        .output()
        .expect("the snapshot child");
    assert!(out.status.success(), "snapshot child: {out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let mut it = lines.next().unwrap_or_default().split_whitespace();
    let ours_nodes = it.next().unwrap_or("?").to_string();
    let ours = Stats(it.filter_map(|v| v.parse().ok()).collect());
    let list = Stats(
        lines
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|v| v.parse().ok())
            .collect(),
    );
    let mut py_nodes = String::new();
    let mut inner = Vec::new();
    let whole = time_n(if quick { 2 } else { 5 }, || {
        let out = desk
            .command("/usr/bin/python3")
            .args(["-c", PYATSPI_WALK])
            .output()
            .expect("python3");
        assert!(out.status.success(), "pyatspi walk: {out:?}");
        let s = String::from_utf8_lossy(&out.stdout);
        let mut it = s.split_whitespace();
        py_nodes = it.next().unwrap_or("?").to_string();
        inner.push(it.next().and_then(|v| v.parse().ok()).unwrap_or(f64::NAN));
    });
    let inner = Stats(inner);
    row(
        "a11y snapshot of gtk3-widget-factory",
        &ours,
        Some(("pyatspi walk (in python)", &inner)),
    );
    row(
        "a11y snapshot of gtk3-widget-factory",
        &ours,
        Some(("pyatspi walk (whole process)", &whole)),
    );
    row("window list (part of every snapshot)", &list, None);
    println!(
        "\nnodes: ours {ours_nodes} (showing subtrees, with rectangles and values), \
         the pyatspi walk {py_nodes} (every node: role, name, states, extents)"
    );
}
