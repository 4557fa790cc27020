//! Benchmark of the governed path over MCP stdio: the same click on the virtual desktop as a plain
//! tool (`pointer_click`) and governed (`preview_action` + `execute_action`, lease held,
//! target revalidated, receipt journaled), against the release binary with a real
//! journal file. The in-process breakdown is `cargo bench -p computer-control-governance --bench
//! governed`.
//!
//! Run: `cargo bench -p computer-control --bench governed` (prints a markdown table).
//! `BENCH_N` changes the sample count (300); `BENCH_JOURNAL_DIR` where the journal
//! lives (default: the system temp dir).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::json;

// The tests' own MCP agent helpers, included by path: a benchmark is a crate of its own,
// and nothing outside this package uses them.
#[path = "../tests/governed_http_support/mod.rs"]
mod governed_http_support;
use governed_http_support::{form, ok as call};

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let n: usize = std::env::var("BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let base: PathBuf = std::env::var_os("BENCH_JOURNAL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let dir = tempfile::tempdir_in(&base).expect("temp dir");
    let journal = dir.path().join("journal.db");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let cmd =
            tokio::process::Command::new(env!("CARGO_BIN_EXE_computer-control")).configure(|c| {
                c.args(["serve", "--transport", "mcp", "--platform", "virtual"])
                    .arg("--journal")
                    .arg(&journal)
                    .env_remove("COMPUTER_CONTROL_CONFIG")
                    .env_remove("COMPUTER_CONTROL_PRINCIPAL")
                    .env("COMPUTER_CONTROL_LOG", "error");
            });
        let c = ().serve(TokioChildProcess::new(cmd).expect("spawn")).await.expect("init");
        let (form, (x, y)) = form(&c).await;
        let sid = call(&c, "start_session", json!({})).await["session"]["sessionId"].clone();
        let lease = call(
            &c,
            "acquire_control_lease",
            json!({"session_id": sid, "kind": "cooperative", "mode": "foreground",
                   "ttl_ms": 300_000, "action_budget": 10_000}),
        )
        .await["lease"]["leaseId"]
            .clone();
        let governed = |i: usize| {
            json!({"session_id": sid, "action_id": format!("a{i}"), "lease_id": lease,
                   "tool": "pointer_click", "arguments": {"x": x, "y": y}, "mode": "foreground",
                   "target": {"platform": "virtual", "appId": "cc-form", "pid": form["pid"],
                              "windowId": form["id"], "bounds": form["rect"],
                              "observationId": "obs", "confidence": 1,
                              "capturedAt": cc_contract::format_timestamp(
                                  time::OffsetDateTime::now_utc())}})
        };
        // Warm-up.
        for i in 0..30 {
            call(&c, "pointer_click", json!({"x": x, "y": y})).await;
            let a = governed(1_000_000 + i);
            call(&c, "preview_action", a.clone()).await;
            call(&c, "execute_action", a).await;
        }
        let mut plain = Vec::with_capacity(n);
        let mut gov = Vec::with_capacity(n);
        for i in 0..n {
            let t = Instant::now();
            call(&c, "pointer_click", json!({"x": x, "y": y})).await;
            plain.push(t.elapsed());
            let a = governed(i);
            let t = Instant::now();
            call(&c, "preview_action", a.clone()).await;
            let r = call(&c, "execute_action", a).await;
            gov.push(t.elapsed());
            assert_eq!(r["receipt"]["status"], "committed");
        }
        plain.sort();
        gov.sort();
        println!(
            "MCP stdio, journal {} (WAL, synchronous=FULL), n = {n}\n",
            dir.path().display()
        );
        println!("| path | p50 | p95 | p50 overhead vs plain |");
        println!("|---|---|---|---|");
        println!(
            "| plain `pointer_click` | {} | {} | — |",
            ms(pct(&plain, 0.5)),
            ms(pct(&plain, 0.95))
        );
        println!(
            "| governed `preview_action` + `execute_action` | {} | {} | {} |",
            ms(pct(&gov, 0.5)),
            ms(pct(&gov, 0.95)),
            ms(pct(&gov, 0.5).saturating_sub(pct(&plain, 0.5)))
        );
        c.cancel().await.expect("close");
    });
}
