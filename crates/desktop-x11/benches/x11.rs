//! The X11 driver's speed benchmark: ours against what users use today, side by
//! side on ONE private desktop in one run (Xvfb 1920x1080x24 + dbus + openbox +
//! gtk3-widget-factory + an xterm running `cat`).
//!
//! ```text
//! cargo bench -p computer-control-desktop-x11 --bench x11
//! ```
//!
//! Prints a markdown table (p50, p99, theirs, ratio) for docs/PERFORMANCE.md.
//! `CC_BENCH_QUICK=1` runs fewer iterations (a smoke run). The `model` part compares our
//! default (model-sized) image with the npm `computer-use-mcp` server's screenshot of
//! the same screen when `CC_PEER_COMPUTER_USE_MCP` names its installed `dist/main.js`
//! (`npm install computer-use-mcp@1.8.0`).

use cc_test_kit::x11 as x11_support;

mod model_image;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cc_desktop::{Button, Driver};
use cc_desktop_x11::X11Desktop;
use cc_engine::encode::{Fit, Format, Pixels, data_url, encode};
use cc_protocol::PhysicalRect;
use x11_support::{Desk, all};

/// Milliseconds of each sample.
struct Stats {
    samples: Vec<f64>,
}

impl Stats {
    fn new(mut samples: Vec<f64>) -> Stats {
        samples.sort_by(|a, b| a.total_cmp(b));
        Stats { samples }
    }
    fn pct(&self, p: f64) -> f64 {
        let n = self.samples.len();
        if n == 0 {
            return f64::NAN;
        }
        let i = ((p * n as f64).ceil() as usize).clamp(1, n) - 1;
        self.samples[i]
    }
    fn p50(&self) -> f64 {
        self.pct(0.5)
    }
    fn p99(&self) -> f64 {
        self.pct(0.99)
    }
}

fn time_n(n: usize, mut f: impl FnMut()) -> Stats {
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        f();
        v.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Stats::new(v)
}

/// Wall time of a helper process run to completion on the desktop.
fn time_process(desk: &Desk, n: usize, program: &str, args: &[&str]) -> Stats {
    time_n(n, || {
        let st = desk
            .env(&mut Command::new(program))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("run {program}: {e}"));
        assert!(st.success(), "{program} {args:?} failed");
    })
}

fn fmt_ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

struct Row {
    what: String,
    ours: String,
    theirs: String,
    ratio: String,
}

/// One comparison row: ours vs theirs, ratio of p50s (theirs / ours: ×N faster).
fn row(what: &str, ours: &Stats, tool: &str, theirs: &Stats) -> Row {
    Row {
        what: what.to_string(),
        ours: format!("{} / {}", fmt_ms(ours.p50()), fmt_ms(ours.p99())),
        theirs: format!(
            "{}: {} / {}",
            tool,
            fmt_ms(theirs.p50()),
            fmt_ms(theirs.p99())
        ),
        ratio: format!("{:.1}×", theirs.p50() / ours.p50()),
    }
}

/// `CC_BENCH_ONLY=capture,click,type,snapshot` runs only those parts.
fn part(name: &str) -> bool {
    std::env::var("CC_BENCH_ONLY").map_or(true, |v| v.split(',').any(|p| p == name))
}

/// CPU time (user + system) a process has used, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0;
    };
    // Fields after the command name, which is in parentheses and may hold spaces.
    let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
        return 0;
    };
    let f: Vec<&str> = rest.split(' ').collect();
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    n(11) + n(12)
}

/// Waits until the desktop's processes are quiet: together under a quarter of one core
/// over 400 ms (the widget factory's spinner alone keeps them near a tenth), at most
/// 10 s. The part before (xdotool rebinding a keycode for every character it types)
/// leaves the X server and the applications busy for a second or two, and that would
/// be measured as the next part's time. Returns how long it waited.
fn settle(desk: &Desk) -> Duration {
    let t = Instant::now();
    let pids = desk.pids();
    let total = || pids.iter().map(|p| cpu_ticks(*p)).sum::<u64>();
    // Clock ticks per second are 100 on Linux.
    while t.elapsed() < Duration::from_secs(10) {
        let before = total();
        std::thread::sleep(Duration::from_millis(400));
        if (total() - before) < 10 {
            break;
        }
    }
    t.elapsed()
}

fn quick() -> bool {
    std::env::var_os("CC_BENCH_QUICK").is_some()
}

fn iters(full: usize, q: usize) -> usize {
    if quick() { q } else { full }
}

/// `seed` repeated/cut to exactly `n` characters, the last a newline (the terminal
/// hands `cat` whole lines only).
fn text_of(seed: &str, n: usize) -> String {
    let mut s: String = seed.chars().cycle().take(n - 1).collect();
    s.push('\n');
    s
}

/// Bytes in the file `cat` writes, once it stops growing toward `want`.
fn wait_len(path: &std::path::Path, want: u64) -> u64 {
    let start = Instant::now();
    let mut last = 0;
    while start.elapsed() < Duration::from_secs(30) {
        last = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        if last >= want {
            return last;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    last
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

fn main() {
    let t_start = Instant::now();
    let mut desk = Desk::start();
    let mut d = desk.driver();
    let factory = desk.widget_factory(&mut d);
    let typed = desk.path("typed.txt");
    let script = format!("cat > '{}'", typed.display());
    desk.spawn(
        "xterm",
        &[
            "-u8",
            "-geometry",
            "80x20+1100+600",
            "-e",
            "sh",
            "-c",
            &script,
        ],
    );
    let mut xterm = 0;
    desk.wait_until("the xterm window", Duration::from_secs(20), || {
        d.windows().is_ok_and(|ws| {
            ws.iter()
                .find(|w| w.app_id == "XTerm")
                .map(|w| xterm = w.id)
                .is_some()
        })
    });
    std::thread::sleep(Duration::from_millis(500));
    eprintln!(
        "desktop {} ready in {:.1} s",
        desk.display,
        t_start.elapsed().as_secs_f64()
    );
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut settled = Vec::new();

    // --- capture + PNG -------------------------------------------------------------
    if part("capture") {
        settled.push(format!("capture {:.1} s", settle(&desk).as_secs_f64()));
        let full = PhysicalRect {
            x: 0,
            y: 0,
            width: 1920,
            height: 1080,
        };
        let png = |img: &cc_desktop::RgbImage| {
            encode(
                &Pixels {
                    width: img.width,
                    height: img.height,
                    gray: false,
                    data: &img.pixels,
                },
                Format::Png,
                80,
            )
            .expect("png")
        };
        for _ in 0..5 {
            let img = d.capture(full).expect("capture");
            let _ = png(&img);
        }
        let png = |img: &cc_desktop::RgbImage| png(img).bytes;
        let n = iters(60, 10);
        let mut png_len = 0;
        let ours_cap_png = time_n(n, || {
            let img = d.capture(full).expect("capture");
            let out = png(&img);
            png_len = out.len();
            std::fs::write(desk.path("ours.png"), &out).expect("write png");
        });
        let ours_cap = time_n(n, || {
            std::hint::black_box(d.capture(full).expect("capture"));
        });
        let img = d.capture(full).expect("capture");
        let ours_png = time_n(n, || {
            std::hint::black_box(png(&img));
        });
        let bytes = png(&img);
        let ours_b64 = time_n(n, || {
            std::hint::black_box(data_url(Format::Png, &bytes));
        });
        let scrot_path = desk.path("scrot.png");
        let scrot_path = scrot_path.to_str().expect("utf-8 path").to_string();
        let scrot = time_process(&desk, iters(20, 3), "scrot", &["-o", &scrot_path]);
        let import_path = format!("png:{}", desk.path("import.png").display());
        let import = time_process(
            &desk,
            iters(10, 2),
            "import",
            &["-window", "root", &import_path],
        );
        rows.push(row(
            "capture 1920×1080 + PNG to a file",
            &ours_cap_png,
            "`scrot -o f.png`",
            &scrot,
        ));
        rows.push(row(
            "capture 1920×1080 + PNG to a file",
            &ours_cap_png,
            "`import -window root png:f`",
            &import,
        ));
        // The PNG filter choice at fdeflate's fast level (`Compression::Fast` = adaptive).
        let mut filters = Vec::new();
        for (name, filter) in [
            ("adaptive", png::Filter::Adaptive),
            ("up", png::Filter::Up),
            ("sub", png::Filter::Sub),
            ("paeth", png::Filter::Paeth),
            ("none", png::Filter::NoFilter),
        ] {
            let mut size = 0;
            let st = time_n(iters(20, 3), || {
                let mut out = Vec::with_capacity(img.pixels.len() / 4);
                let mut enc = png::Encoder::new(&mut out, img.width, img.height);
                enc.set_color(png::ColorType::Rgb);
                enc.set_depth(png::BitDepth::Eight);
                enc.set_compression(png::Compression::Fast);
                enc.set_filter(filter);
                let mut w = enc.write_header().unwrap();
                w.write_image_data(&img.pixels).unwrap();
                w.finish().unwrap();
                size = out.len();
            });
            filters.push(format!("{name} {} ms {} KB", fmt_ms(st.p50()), size / 1024));
        }
        notes.push(format!(
            "PNG filter at fdeflate's fast level (p50): {}",
            filters.join(", ")
        ));
        notes.push(format!(
            "capture+PNG parts (p50): capture {} ms (method {:?}), PNG fast encode {} ms ({} KB), \
         base64 data URL {} ms",
            fmt_ms(ours_cap.p50()),
            d.last_capture_method(),
            fmt_ms(ours_png.p50()),
            png_len / 1024,
            fmt_ms(ours_b64.p50()),
        ));
    }

    // --- click ---------------------------------------------------------------------
    if part("click") {
        settled.push(format!("click {:.1} s", settle(&desk).as_secs_f64()));
        // An empty spot of the desktop (left click on openbox's root does nothing).
        let (cx, cy) = (1900, 20);
        for _ in 0..20 {
            d.pointer_move(cx, cy).unwrap();
            d.button(Button::Left, true).unwrap();
            d.button(Button::Left, false).unwrap();
        }
        let ours_click = time_n(iters(1000, 50), || {
            d.pointer_move(cx, cy).unwrap();
            d.button(Button::Left, true).unwrap();
            d.button(Button::Left, false).unwrap();
        });
        let xdo_click = time_process(&desk, iters(20, 3), "xdotool", &["click", "1"]);
        let xdo_click0 = time_process(
            &desk,
            iters(50, 5),
            "xdotool",
            &["click", "--delay", "0", "1"],
        );
        rows.push(row(
            "click (move + press + release)",
            &ours_click,
            "`xdotool click 1`",
            &xdo_click,
        ));
        rows.push(row(
            "click (move + press + release)",
            &ours_click,
            "`xdotool click --delay 0 1`",
            &xdo_click0,
        ));
    }

    // --- typing 1 000 characters ----------------------------------------------------
    if part("type") {
        settled.push(format!("type {:.1} s", settle(&desk).as_secs_f64()));
        d.focus_window(xterm).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let ascii = text_of(
            "The quick brown fox jumps over the lazy dog; 0123456789 {[(<ABC>)]} ~!@#$%^&*_+=|?\n",
            1000,
        );
        let mixed = text_of(
            "café Grüße naïve 日本 🎉 déjà vu, über 日本語 🎉 façade\n",
            1000,
        );
        let mut expected: u64 = 0;
        let mut type_runs = |label: &str,
                             text: &str,
                             d: &mut X11Desktop,
                             desk: &Desk,
                             rows: &mut Vec<Row>,
                             notes: &mut Vec<String>| {
            let ours = time_n(iters(5, 2), || {
                for c in text.chars() {
                    d.type_char(c).unwrap();
                }
                // Let spare keycodes go back, as the engine does between actions.
                d.poll_events();
            });
            expected += (text.len() * ours.samples.len()) as u64;
            let got = wait_len(&typed, expected);
            if got != expected {
                let _ = std::fs::copy(&typed, "/tmp/cc-bench-typed.txt");
                let _ = std::fs::write(
                    "/tmp/cc-bench-expected.txt",
                    text.repeat(ours.samples.len()),
                );
            }
            notes.push(format!(
                "{label}: ours typed {got} of {expected} bytes expected so far into `cat` \
             ({})",
                if got == expected { "exact" } else { "MISMATCH" }
            ));
            expected = got;
            std::thread::sleep(Duration::from_millis(300));
            let xdo = time_process(desk, iters(2, 1), "xdotool", &["type", "--", text]);
            let xdo0 = time_process(
                desk,
                iters(3, 1),
                "xdotool",
                &["type", "--delay", "0", "--", text],
            );
            let want = expected + (text.len() * (xdo.samples.len() + xdo0.samples.len())) as u64;
            let got = wait_len(&typed, want);
            notes.push(format!(
                "{label}: xdotool typed {} of {} bytes expected",
                got - expected,
                want - expected
            ));
            expected = got;
            rows.push(row(
                &format!("type 1 000 chars, {label}"),
                &ours,
                "`xdotool type`",
                &xdo,
            ));
            rows.push(row(
                &format!("type 1 000 chars, {label}"),
                &ours,
                "`xdotool type --delay 0`",
                &xdo0,
            ));
        };
        type_runs("ASCII", &ascii, &mut d, &desk, &mut rows, &mut notes);
        type_runs(
            "mixed (é, 日本, 🎉)",
            &mixed,
            &mut d,
            &desk,
            &mut rows,
            &mut notes,
        );
        d.release_all().unwrap();
    }

    // --- accessibility snapshot ----------------------------------------------------
    if part("snapshot") {
        settled.push(format!("snapshot {:.1} s", settle(&desk).as_secs_f64()));
        for _ in 0..3 {
            let _ = d.a11y_tree(Some(factory), 5000).unwrap();
        }
        let mut ours_nodes = 0;
        let ours_snap = time_n(iters(100, 5), || {
            let t = d.a11y_tree(Some(factory), 5000).unwrap();
            ours_nodes = all(&t).len();
        });
        // The first snapshot of a scope has no earlier requests to send ahead: time a
        // fresh driver's first (its bus connection made before the clock starts).
        let mut cold = Vec::new();
        for _ in 0..iters(20, 3) {
            let mut fresh = desk.driver();
            let t = Instant::now();
            let _ = fresh.a11y_tree(Some(factory), 5000).unwrap();
            cold.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let cold = Stats::new(cold);
        notes.push(format!(
            "snapshot, a fresh driver's first (nothing sent ahead), p50 / p99: {} / {} ms",
            fmt_ms(cold.p50()),
            fmt_ms(cold.p99())
        ));
        let wins = time_n(iters(30, 5), || {
            std::hint::black_box(d.windows().unwrap());
        });
        notes.push(format!(
            "snapshot parts (p50): the X window list {} ms",
            fmt_ms(wins.p50())
        ));
        let mut inner = Vec::new();
        let mut py_nodes = String::new();
        let whole = time_n(iters(5, 2), || {
            let out = desk
                .env(&mut Command::new("/usr/bin/python3"))
                .args(["-c", PYATSPI_WALK])
                .stdin(Stdio::null())
                .output()
                .expect("python3");
            assert!(
                out.status.success(),
                "pyatspi walk failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let s = String::from_utf8_lossy(&out.stdout);
            let mut it = s.split_whitespace();
            py_nodes = it.next().unwrap_or("?").to_string();
            inner.push(
                it.next()
                    .and_then(|v| v.parse::<f64>().ok())
                    .unwrap_or(f64::NAN),
            );
        });
        let inner = Stats::new(inner);
        rows.push(row(
            "a11y snapshot of gtk3-widget-factory",
            &ours_snap,
            "pyatspi walk, timed in python",
            &inner,
        ));
        rows.push(row(
            "a11y snapshot of gtk3-widget-factory",
            &ours_snap,
            "pyatspi walk, whole process",
            &whole,
        ));
        notes.push(format!(
            "snapshot: ours {ours_nodes} nodes (showing subtrees, with rectangles and values), \
         the pyatspi walk {py_nodes} nodes (every node: role, name, states, extents)"
        ));
    }

    // --- model-sized image against computer-use-mcp -----------------------------------
    if part("model") {
        settled.push(format!("model {:.1} s", settle(&desk).as_secs_f64()));
        let full = PhysicalRect {
            x: 0,
            y: 0,
            width: 1920,
            height: 1080,
        };
        let img = std::sync::Arc::new(d.capture(full).expect("capture"));
        let (mw, mh) = Fit::MODEL.size(1920, 1080, 1.0);
        let n = iters(100, 10);
        let load = |at: &str| {
            let l = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
            let l: Vec<&str> = l.split_whitespace().take(3).collect();
            format!("load average {at}: {}", l.join(" "))
        };
        let load_before = load("before");
        let stages = model_image::stages(&img, mw, mh, n);
        let default = model_image::ours(&img, mw, mh);
        assert!(
            default == model_image::by_stages(&img, mw, mh),
            "the single pass makes the bytes of the stages"
        );
        let len = default.bytes.len();
        let scrot_path = desk.path("scrot-model.png");
        let scrot_path = scrot_path.to_str().expect("utf-8 path").to_string();
        time_process(&desk, 1, "scrot", &["-o", &scrot_path]);
        let scrot_len = std::fs::metadata(&scrot_path).map_or(0, |m| m.len());
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        notes.push(format!(
            "model-sized default {mw}×{mh} from a 1920×1080 capture, {n} runs, {cores} core(s) \
             available, {load_before}, {}: {len} B (scrot's full-size PNG of the same screen: \
             {scrot_len} B)",
            load("after")
        ));
        for s in &stages {
            notes.push(format!(
                "model-sized {mw}×{mh}, {}: wall p50 {} ms (p99 {}); CPU p50 {:.2} ms on the \
                 calling thread, {:.2} ms on all threads",
                s.what,
                fmt_ms(s.wall.p50()),
                fmt_ms(s.wall.p99()),
                s.thread_cpu.p50(),
                s.all_cpu.p50(),
            ));
        }
        match std::env::var("CC_PEER_COMPUTER_USE_MCP") {
            Ok(main_js) => {
                match model_image::peer_shots(&desk, &main_js, iters(5, 2)) {
                    Some(shots) => {
                        let peer = &shots[shots.len() - 1];
                        let (pw, ph) = model_image::PEER_FIT.size(1920, 1080, 1.0);
                        assert_eq!((pw, ph), (peer.width, peer.height), "the peer's size");
                        let img = std::sync::Arc::new(d.capture(full).expect("capture"));
                        let at_theirs = model_image::ours(&img, pw, ph);
                        let ours_default = model_image::ours(&img, mw, mh);
                        let at_theirs_t = time_n(n, || {
                            std::hint::black_box(model_image::ours(&img, pw, ph));
                        });
                        let theirs = Stats::new(shots.iter().map(|s| s.ms).collect());
                        rows.push(row(
                            &format!("model-sized image {pw}×{ph}: capture already taken → PNG"),
                            &at_theirs_t,
                            "computer-use-mcp `get_screenshot` (less its 1 s sleep)",
                            &theirs,
                        ));
                        notes.push(format!(
                        "same screen, same run: computer-use-mcp {}×{} palette PNG {} B; ours at \
                         its size {} B ({:.2}× theirs, {} colours, {}), ours at our default \
                         {mw}×{mh} {} B ({:.2}×)",
                        peer.width,
                        peer.height,
                        peer.png.len(),
                        at_theirs.bytes.len(),
                        at_theirs.bytes.len() as f64 / peer.png.len() as f64,
                        at_theirs.palette.unwrap_or(0),
                        if at_theirs.lossy { "quantized" } else { "exact palette" },
                        ours_default.bytes.len(),
                        ours_default.bytes.len() as f64 / peer.png.len() as f64,
                    ));
                        std::fs::write(desk.path("peer.png"), &peer.png).expect("write");
                    }
                    None => notes.push("computer-use-mcp did not answer a screenshot".into()),
                }
            }
            Err(_) => notes.push(
                "computer-use-mcp not compared: set CC_PEER_COMPUTER_USE_MCP to its dist/main.js"
                    .into(),
            ),
        }
    }

    // --- report ----------------------------------------------------------------------
    println!();
    println!("| operation | ours p50 / p99 (ms) | theirs p50 / p99 (ms) | ratio (p50) |");
    println!("|---|---|---|---|");
    for r in &rows {
        println!("| {} | {} | {} | {} |", r.what, r.ours, r.theirs, r.ratio);
    }
    println!();
    for n in &notes {
        println!("- {n}");
    }
    println!(
        "- waited for a quiet desktop before each part: {}",
        settled.join(", ")
    );
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "- {} CPUs, load average at the end: {}; whole run {:.0} s",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
        t_start.elapsed().as_secs_f64()
    );
}
