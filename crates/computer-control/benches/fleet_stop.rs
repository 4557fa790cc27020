//! Stop-all through the fleet plane: three desks (`serve --transport http` on the
//! virtual desktop) each typing a 10 000-character text at 1 ms per character, the
//! plane (`computer-control fleet`) over them, and the operator's `POST
//! /fleet/stop-all`. The clock runs from sending the request until its answer, which
//! the plane gives once every desk has said `stopped` with nothing held (each desk's
//! `system.status` read after its `control.panic {on:true}`); each typing call's own
//! answer is then checked to be `safety_stopped`. The bound is 100 ms at p50.
//!
//! Run: `cargo bench -p computer-control --bench fleet_stop` (prints a markdown
//! table). `BENCH_FLEET_STOP_N` changes the number of trials (100).

// The tests' own helpers, included by path: a benchmark is a crate of its own, and
// they start this package's binary (`CARGO_BIN_EXE_computer-control`).
#[path = "../tests/fleet_support/mod.rs"]
mod fleet_support;
#[path = "../tests/http_support/mod.rs"]
mod http_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use fleet_support::Plane;
use http_support::{AGENT, OPERATOR, Server};
use serde_json::json;

const DESKS: usize = 3;
const T: Duration = Duration::from_secs(30);

fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// One trial: every desk typing, then stop-all; the time to its answer.
async fn trial(
    desks: &[Arc<Server>],
    streams: &mut [http_support::Sse],
    plane: &Plane,
    i: usize,
) -> Duration {
    let mut typing = Vec::new();
    for d in desks {
        let d = d.clone();
        typing.push(tokio::spawn(async move {
            d.call(
                AGENT,
                "tools.call",
                json!({"tool": "keyboard.type",
                       "arguments": {"text": "x".repeat(10_000), "interval_ms": 1}}),
            )
            .await
        }));
    }
    for sse in streams.iter_mut() {
        loop {
            let m = sse.next_event(T).await.expect("events flow");
            let d = m.data.expect("data");
            if d["type"] == "action.started" && d["payload"]["tool"] == "keyboard.type" {
                break;
            }
        }
    }
    // Let them type a while (varied, so the stop lands at any phase of a step).
    tokio::time::sleep(Duration::from_millis(5 + (i % 7) as u64 * 3)).await;
    let sent = Instant::now();
    let (status, out) = plane.send(OPERATOR, "POST", "/fleet/stop-all", None).await;
    let took = sent.elapsed();
    assert_eq!(status, 200, "{out}");
    assert_eq!(out["all_stopped"], true, "{out}");
    for t in typing {
        let answer = t.await.expect("the call's task");
        assert_eq!(answer["error"]["code"], "safety_stopped", "{answer}");
    }
    for d in desks {
        let off = d
            .call(OPERATOR, "control.panic", json!({"on": false}))
            .await;
        assert_eq!(off["result"]["panic"], false, "{off}");
        for (tool, args) in [
            ("keyboard.combo", json!({"keys": ["ctrl", "a"]})),
            ("keyboard.press", json!({"key": "backspace"})),
        ] {
            let r = d
                .call(
                    AGENT,
                    "tools.call",
                    json!({"tool": tool, "arguments": args}),
                )
                .await;
            assert_eq!(r["ok"], true, "{r}");
        }
    }
    took
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let n: usize = std::env::var("BENCH_FLEET_STOP_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let desks: Vec<Arc<Server>> = (0..DESKS)
        .map(|_| {
            Arc::new(Server::start_with(
                Some(http_support::tokens_config()),
                &[],
                &[("COMPUTER_CONTROL_LOG", "error")],
            ))
        })
        .collect();
    let mut streams = Vec::new();
    for d in &desks {
        let started = d.call(AGENT, "session.start", json!({})).await;
        assert_eq!(started["ok"], true, "{started}");
        streams.push(d.events(OPERATOR, None).await);
    }
    let bases: Vec<String> = desks.iter().map(|d| d.base.clone()).collect();
    let plane = Plane::start(&bases);
    let mut took = Vec::with_capacity(n);
    let t = Instant::now();
    for i in 0..n {
        took.push(trial(&desks, &mut streams, &plane, i).await);
    }
    let wall = t.elapsed();
    took.sort();
    let over = took
        .iter()
        .filter(|d| **d > Duration::from_millis(100))
        .count();
    println!("| stop-all, {DESKS} desks typing | n | p50 | p99 | max |");
    println!("|---|---|---|---|---|");
    println!(
        "| → every desk `stopped` with nothing held | {} | {} | {} | {} |",
        took.len(),
        ms(pct(&took, 0.5)),
        ms(pct(&took, 0.99)),
        ms(pct(&took, 1.0))
    );
    println!();
    println!(
        "{n} trials in {:.1} s; {over} over 100 ms.",
        wall.as_secs_f64()
    );
}
