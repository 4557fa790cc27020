//! The emergency stop through the real server over HTTP: an action is in flight (a
//! 10 000-character `keyboard.type` at 1 ms per character, or a `pointer.click`
//! holding its button for 10 s, alternately), the operator sends `control.panic
//! {on:true}` to `/rpc`, and the clock runs until both the action's answer says
//! `safety_stopped` and `system.status.held` is empty (every key and button up).
//! The bound is 50 ms.
//!
//! Run: `cargo bench -p computer-control --bench panic_http` (prints a markdown
//! table). `BENCH_PANIC_HTTP_N` changes the number of trials (1000).

// The tests' own client, included by path: a benchmark is a crate of its own, and the
// client starts this package's binary (`CARGO_BIN_EXE_computer-control`), which only this
// package's targets can name, so it cannot live in the shared test kit.
#[path = "../tests/http_support/mod.rs"]
mod http_support;

use std::time::{Duration, Instant};

use http_support::{AGENT, OPERATOR, Server};
use serde_json::{Value, json};

/// A point on the bare desktop, outside every window.
const DESKTOP: (i64, i64) = (1500, 950);
const T: Duration = Duration::from_secs(30);

fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

async fn held(s: &Server) -> Value {
    s.call(AGENT, "system.status", json!({})).await["result"]["held"].clone()
}

/// One trial's figures: to the interrupted answer, and to nothing held as well.
struct Trial {
    answered: Duration,
    released: Duration,
}

async fn trial(s: &std::sync::Arc<Server>, sse: &mut http_support::Sse, i: usize) -> Trial {
    let typing = i.is_multiple_of(2);
    let (tool, args) = if typing {
        (
            "keyboard.type",
            json!({"text": "x".repeat(10_000), "interval_ms": 1}),
        )
    } else {
        (
            "pointer.click",
            json!({"x": DESKTOP.0, "y": DESKTOP.1, "hold_ms": 10_000}),
        )
    };
    let server = s.clone();
    let in_flight = tokio::spawn(async move {
        server
            .call(
                AGENT,
                "tools.call",
                json!({"tool": tool, "arguments": args}),
            )
            .await
    });
    // In flight: its start announced, and for the click the button down.
    loop {
        let m = sse.next_event(T).await.expect("events flow");
        let d = m.data.expect("data");
        if d["type"] == "action.started" && d["payload"]["tool"] == tool {
            break;
        }
    }
    if typing {
        // Let it type a while (varied, so the stop lands at any phase of a step).
        tokio::time::sleep(Duration::from_millis(5 + (i % 7) as u64 * 3)).await;
    } else {
        let deadline = Instant::now() + T;
        while held(s).await["buttons"] != json!(["left"]) {
            assert!(Instant::now() < deadline, "the button never showed as held");
        }
    }
    let sent = Instant::now();
    let p = s.call(OPERATOR, "control.panic", json!({"on": true})).await;
    assert_eq!(p["result"]["panic"], true, "{p}");
    let answer = in_flight.await.expect("the call's task");
    let answered = sent.elapsed();
    assert_eq!(answer["error"]["code"], "safety_stopped", "{answer}");
    let deadline = Instant::now() + T;
    while held(s).await != json!({"keys": [], "buttons": []}) {
        assert!(Instant::now() < deadline, "something stayed held");
    }
    let released = sent.elapsed();
    let off = s
        .call(OPERATOR, "control.panic", json!({"on": false}))
        .await;
    assert_eq!(
        off["result"],
        json!({"panic": false, "state": "ready"}),
        "{off}"
    );
    if typing {
        // Keep the edit short: clear it between runs.
        for (tool, args) in [
            ("keyboard.combo", json!({"keys": ["ctrl", "a"]})),
            ("keyboard.press", json!({"key": "backspace"})),
        ] {
            let r = s
                .call(
                    AGENT,
                    "tools.call",
                    json!({"tool": tool, "arguments": args}),
                )
                .await;
            assert_eq!(r["ok"], true, "{r}");
        }
    }
    Trial { answered, released }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let n: usize = std::env::var("BENCH_PANIC_HTTP_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let s = std::sync::Arc::new(Server::start_with(
        Some(http_support::tokens_config()),
        &[],
        &[("COMPUTER_CONTROL_LOG", "error")],
    ));
    let started = s.call(AGENT, "session.start", json!({})).await;
    assert_eq!(started["ok"], true, "{started}");
    let mut sse = s.events(OPERATOR, None).await;
    let mut answered = Vec::with_capacity(n);
    let mut released = Vec::with_capacity(n);
    let (mut typing, mut clicking) = (Vec::new(), Vec::new());
    let t = Instant::now();
    for i in 0..n {
        let r = trial(&s, &mut sse, i).await;
        answered.push(r.answered);
        released.push(r.released);
        if i.is_multiple_of(2) {
            typing.push(r.released);
        } else {
            clicking.push(r.released);
        }
    }
    let wall = t.elapsed();
    for v in [&mut answered, &mut released, &mut typing, &mut clicking] {
        v.sort();
    }
    let over = released
        .iter()
        .filter(|d| **d > Duration::from_millis(50))
        .count();
    println!("| `control.panic` over HTTP, action in flight | n | p50 | p99 | max |");
    println!("|---|---|---|---|---|");
    for (label, v) in [
        ("→ the action's `safety_stopped` answer", &answered),
        ("→ that answer and `system.status.held` empty", &released),
        ("  of which a `keyboard.type` in flight", &typing),
        ("  of which a `pointer.click` holding its button", &clicking),
    ] {
        println!(
            "| {label} | {} | {} | {} | {} |",
            v.len(),
            ms(pct(v, 0.5)),
            ms(pct(v, 0.99)),
            ms(pct(v, 1.0))
        );
    }
    println!();
    println!(
        "{n} trials in {:.1} s; {over} over the 50 ms bound.",
        wall.as_secs_f64()
    );
}
