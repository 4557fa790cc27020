//! Benchmark of the safety layer's costs, against the release binary over stdio.
//!
//! * panic-to-stop latency: a 10 000-character `keyboard.type` (1 ms between
//!   characters) is in flight; the time from writing `control.panic {on:true}` to
//!   reading the interrupted call's `safety_stopped` answer;
//! * the gate's overhead per action: `wait.pause {ms:0}` round trips with 0 rules,
//!   100 rules, and 100 rules of which 10 need the window an action lands in;
//! * in process: `Policy::evaluate` over 100 rules, per call.
//!
//! Run: `cargo bench -p computer-control --bench safety` (prints a markdown table).
//! `BENCH_PANIC_N` and `BENCH_GATE_N` change the sample counts (100 and 2000).

// The tests' own client, included by path: a benchmark is a crate of its own, and the
// client starts this package's binary (`CARGO_BIN_EXE_computer-control`), which only this
// package's targets can name, so it cannot live in the shared test kit.
#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use cc_engine::Landing;
use cc_engine::config::ConfigStack;
use common::Server;
use serde_json::{Value, json};

fn env_n(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

/// 100 rules that never match `wait.pause` but all have to be evaluated: tool globs,
/// argument matchers of every kind, and (`with_windows`) 10 window matchers.
fn hundred_rules(with_windows: bool) -> Value {
    let rules: Vec<Value> = (0..100)
        .map(|i| {
            let m = match i % 5 {
                0 => json!({"tool": format!("keyboard.{i}*")}),
                1 => json!({"tool": "*", "argument": {"name": "text", "matcher": "contains", "value": format!("needle{i}")}}),
                2 => json!({"tool": "*", "argument": {"name": "ms", "matcher": "equals", "value": 100_000 + i}}),
                3 => json!({"tool": "*", "argument": {"name": "text", "matcher": "regex", "value": format!("^x{i}\\d+$")}}),
                _ => json!({"tool": "pointer.*", "argument": {"name": "x", "matcher": "in_region", "value": {"x": i, "y": 0, "width": 1, "height": 1}}}),
            };
            let m = if with_windows && i % 10 == 0 {
                json!({"tool": "*", "window": {"app": format!("no-such-app-{i}")}})
            } else {
                m
            };
            json!({"match": m, "effect": "deny"})
        })
        .collect();
    Value::Array(rules)
}

/// Panic-to-stop latencies, one server, `n` runs.
fn panic_latency(n: usize) -> Vec<Duration> {
    let mut s = Server::start_env(None, &[], &[("COMPUTER_CONTROL_LOG", "error")]);
    s.start_session(json!({}));
    let text = "x".repeat(10_000);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let from = s.events.len();
        let id = s.send(
            "tools.call",
            json!({"tool": "keyboard.type", "arguments": {"text": text, "interval_ms": 1}}),
        );
        s.wait_event_from("action.started", from);
        // Let it type for a while (varied, so the panic lands at any phase of a step).
        std::thread::sleep(Duration::from_millis(20 + (i % 7) as u64 * 3));
        let sent = Instant::now();
        let p = s.send("control.panic", json!({"on": true}));
        let typed = s.response(id);
        out.push(sent.elapsed());
        assert_eq!(
            typed["result"]["error"]["code"], "safety_stopped",
            "{typed}"
        );
        s.response(p);
        let off = s.call("control.panic", json!({"on": false}));
        assert_eq!(off["result"]["state"], "ready", "{off}");
        // Keep the edit short: clear it between runs.
        s.call(
            "tools.call",
            json!({"tool": "keyboard.combo", "arguments": {"keys": ["ctrl", "a"]}}),
        );
        s.call(
            "tools.call",
            json!({"tool": "keyboard.press", "arguments": {"key": "backspace"}}),
        );
        s.events.clear();
        s.lines.clear();
    }
    out
}

/// `wait.pause {ms:0}` round trips, one server per rule set, interleaved sample by
/// sample (rotating which goes first) so the machine's noise hits every set alike.
fn gate_round_trips(rule_sets: &[Value], n: usize) -> Vec<Vec<Duration>> {
    let mut servers: Vec<Server> = rule_sets
        .iter()
        .map(|rules| {
            let mut s = Server::start_env(None, &[], &[("COMPUTER_CONTROL_LOG", "error")]);
            s.start_session(json!({"safety": {"rules": rules}}));
            for _ in 0..50 {
                s.ok("wait.pause", json!({"ms": 0}));
            }
            s
        })
        .collect();
    let k = servers.len();
    let mut out = vec![Vec::with_capacity(n); k];
    for i in 0..n {
        for j in 0..k {
            let which = (i + j) % k;
            let s = &mut servers[which];
            let t = Instant::now();
            let env = s.tool("wait.pause", json!({"ms": 0}));
            out[which].push(t.elapsed());
            assert_eq!(env["ok"], true, "{env}");
            // The client keeps every line; drop them so memory stays flat.
            s.events.clear();
            s.lines.clear();
        }
    }
    for v in &mut out {
        v.sort();
    }
    out
}

/// In process: one `Policy::evaluate` over 100 rules.
fn evaluate_in_process(iterations: usize) -> Duration {
    // Rules compile when their config is validated.
    let mut config = ConfigStack::new();
    config
        .apply(&json!({"safety": {"rules": hundred_rules(true)}}))
        .expect("rules");
    let policy = config.policy();
    let landing = Landing {
        points: vec![(500, 500)],
        windows: vec![("cc-form".into(), "Sign in".into())],
    };
    let args = json!({"text": "hello world", "submit": false, "interval_ms": 0});
    let t = Instant::now();
    let mut hits = 0usize;
    for _ in 0..iterations {
        let v = policy.evaluate(std::hint::black_box("keyboard.type"), &args, &landing);
        hits += usize::from(v.deny.is_some());
    }
    assert_eq!(hits, 0);
    t.elapsed() / iterations as u32
}

fn main() {
    let panic_n = env_n("BENCH_PANIC_N", 100);
    let gate_n = env_n("BENCH_GATE_N", 2000);

    let mut lat = panic_latency(panic_n);
    lat.sort();
    let sets = gate_round_trips(
        &[json!([]), hundred_rules(false), hundred_rules(true)],
        gate_n,
    );
    let (none, hundred, windows) = (&sets[0], &sets[1], &sets[2]);
    let eval = evaluate_in_process(200_000);

    println!("| measurement | n | p50 | p99 | max |");
    println!("|---|---|---|---|---|");
    println!(
        "| panic → interrupted `keyboard.type` answered (stdio) | {panic_n} | {} | {} | {} |",
        ms(pct(&lat, 0.5)),
        ms(pct(&lat, 0.99)),
        ms(pct(&lat, 1.0))
    );
    for (label, v) in [
        ("`wait.pause {ms:0}` round trip, 0 rules", none),
        ("`wait.pause {ms:0}` round trip, 100 rules", hundred),
        (
            "`wait.pause {ms:0}` round trip, 100 rules incl. 10 window matchers",
            windows,
        ),
    ] {
        println!(
            "| {label} | {gate_n} | {} | {} | {} |",
            us(pct(v, 0.5)),
            us(pct(v, 0.99)),
            us(pct(v, 1.0))
        );
    }
    println!(
        "| `Policy::evaluate`, 100 rules, in process (mean) | 200000 | {} | | |",
        us(eval)
    );
    let overhead = pct(hundred, 0.5).as_secs_f64() - pct(none, 0.5).as_secs_f64();
    println!();
    println!(
        "Gate overhead of 100 rules (p50 difference): {:.1} µs per action.",
        overhead * 1e6
    );
}
