//! Act and observe in one call against the same two calls, side by side in one run:
//! a click followed by a capture (or a snapshot) as two `tools.call`s, and the click
//! with `observe` asking for the same capture (or snapshot). On the virtual desktop,
//! then on a private X11 desk with gtk3-widget-factory.
//!
//! ```text
//! cargo bench -p computer-control --bench act_observe
//! ```
//!
//! Prints a markdown table for docs/PERFORMANCE.md. `BENCH_N` changes the sample count
//! (default 200 per variant); `CC_BENCH_NO_X11=1` skips the X11 desk.

mod bench_client;
use cc_test_kit::x11 as x11_support;

use std::process::Command;
use std::time::{Duration, Instant};

use bench_client::{Client, fmt, stats};
use serde_json::{Value, json};

/// One variant: what it sends per iteration, timed as the harness sees it.
struct Variant {
    name: &'static str,
    calls: Vec<(&'static str, Value)>,
}

fn measure(c: &mut Client, variants: &[Variant], n: usize) -> Vec<(Vec<Duration>, usize)> {
    let mut out: Vec<(Vec<Duration>, usize)> = variants.iter().map(|_| (Vec::new(), 0)).collect();
    // Interleaved: every iteration runs every variant, so load affects them alike.
    for i in 0..n + 10 {
        for (v, slot) in variants.iter().zip(out.iter_mut()) {
            let t = Instant::now();
            let mut bytes = 0;
            for (tool, args) in &v.calls {
                let env = c.tool(tool, args.clone());
                bytes += env.to_string().len();
            }
            if i >= 10 {
                slot.0.push(t.elapsed());
                slot.1 = bytes;
            }
        }
    }
    out
}

fn report(desk: &str, variants: &[Variant], results: Vec<(Vec<Duration>, usize)>) {
    let mut p50s = Vec::new();
    for (v, (samples, bytes)) in variants.iter().zip(results) {
        let (p50, p99) = stats(samples);
        p50s.push(p50);
        println!(
            "| {desk} | {} | {} | {} | {} | {:.1} kB |",
            v.name,
            v.calls.len(),
            fmt(p50),
            fmt(p99),
            bytes as f64 / 1000.0
        );
    }
    for pair in p50s.chunks(2) {
        if let [two, one] = pair {
            println!(
                "| {desk} | saving of one call | | {} ({:.0} %) | | |",
                fmt(two.saturating_sub(*one)),
                100.0 * (1.0 - one.as_secs_f64() / two.as_secs_f64())
            );
        }
    }
}

/// The four variants around a click at `(x, y)`: capture and snapshot, each as two
/// calls and as one. `settle_ms` is the one call's settling (0: none, as two calls
/// have none either).
fn variants(x: i64, y: i64, capture: Value, snapshot: Value, settle_ms: u64) -> Vec<Variant> {
    let click = json!({"x": x, "y": y});
    let observed = |what: &str, args: &Value| {
        let mut a = click.clone();
        a["observe"] = json!({what: args, "settle_ms": settle_ms});
        a
    };
    let with_capture = observed("capture", &capture);
    let with_snapshot = observed("snapshot", &snapshot);
    vec![
        Variant {
            name: "click, then screen.capture",
            calls: vec![
                ("pointer.click", click.clone()),
                ("screen.capture", capture),
            ],
        },
        Variant {
            name: "click with observe.capture",
            calls: vec![("pointer.click", with_capture)],
        },
        Variant {
            name: "click, then a11y.snapshot",
            calls: vec![("pointer.click", click), ("a11y.snapshot", snapshot)],
        },
        Variant {
            name: "click with observe.snapshot",
            calls: vec![("pointer.click", with_snapshot)],
        },
    ]
}

fn main() {
    let n: usize = std::env::var("BENCH_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    println!("| desktop | variant | calls | p50 | p99 | answer size |");
    println!("|---|---|---|---|---|---|");

    // The virtual desktop: the checkbox of the sign-in form, toggled every click (at
    // its place on the operator's 1920 canvas, the screen's own pixels).
    let mut c = Client::start();
    c.call("session.start", json!({"capture": {"default_width": 1920}}));
    let vs = variants(
        250,
        278,
        json!({"scale": 0.5}),
        json!({"level": "standard"}),
        100,
    );
    let r = measure(&mut c, &vs, n);
    report("virtual", &vs, r);
    drop(c);

    if std::env::var_os("CC_BENCH_NO_X11").is_some() {
        return;
    }
    // X11: gtk3-widget-factory's first checkbox, its region captured; the settling
    // is off (two calls do not settle either) — with it, the answer waits until
    // the region has been still for settle_ms, which is the point of settling.
    let mut desk = x11_support::Desk::start();
    {
        let mut d = desk.driver();
        desk.widget_factory(&mut d);
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_computer-control"));
    desk.env(&mut cmd);
    cmd.args(["serve", "--platform", "x11"]);
    let mut c = Client::start_command(cmd);
    c.call("session.start", json!({}));
    let snap = c.tool("a11y.snapshot", json!({"level": "full"}));
    let cb = find(&snap["result"]["tree"], "checkbox").expect("a checkbox");
    let r: Vec<i64> = cb["rect"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    let (x, y) = ((r[0] + r[2]) / 2, (r[1] + r[3]) / 2);
    let region = json!({"x": r[0] - 8, "y": r[1] - 8, "width": r[2] - r[0] + 16, "height": r[3] - r[1] + 16});
    let window = cb_window(&snap["result"]["tree"]);
    let vs = variants(
        x,
        y,
        json!({"region": region}),
        json!({"level": "standard", "window": window}),
        0,
    );
    let r = measure(&mut c, &vs, n / 2);
    report("X11", &vs, r);
}

fn find<'a>(n: &'a Value, role: &str) -> Option<&'a Value> {
    if n["role"] == role
        && n["states"]
            .as_array()
            .is_some_and(|s| s.iter().any(|x| x == "visible"))
    {
        return Some(n);
    }
    n["children"].as_array()?.iter().find_map(|c| find(c, role))
}

fn cb_window(tree: &Value) -> Value {
    tree["children"]
        .as_array()
        .and_then(|w| w.iter().find(|w| find(w, "checkbox").is_some()))
        .map(|w| w["window_id"].clone())
        .unwrap_or(Value::Null)
}
