//! Benchmark: what governance adds to one click on the virtual desktop, in
//! process (no transport), on a real journal file.
//!
//! * plain: `Engine::call_tool("pointer.click")`;
//! * governed: `preview_action` then `execute_action` (lease check, target
//!   revalidation against the window list, receipt begin, the click, receipt commit),
//!   without a postcondition, and with a `window` postcondition (read back from the
//!   window list) and a `ui_element` one (read back from the accessibility tree);
//! * the journal alone: `execute_action` replaying a committed receipt (re-preview and
//!   one indexed read, no effect).
//!
//! The lease is acquired once per series (budget 10 000); each governed click has a
//! fresh action id. Run: `cargo bench -p computer-control-governance --bench governed` (prints a
//! markdown table). `BENCH_N` changes the sample count (500); `BENCH_JOURNAL_DIR`
//! where the journal lives (default: the system temp dir).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use cc_contract::{format_timestamp, value_digest};
use cc_desktop::VirtualDesktop;
use cc_engine::Engine;
use cc_engine::config::ConfigStack;
use cc_governance::Governance;
use serde_json::{Value, json};

// The kernel tests' own helpers, included by path: a benchmark is a crate of its own,
// and nothing outside this package uses them.
#[path = "../tests/support/mod.rs"]
mod support;

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

struct Series {
    name: &'static str,
    samples: Vec<Duration>,
}

impl Series {
    fn p(&self, q: f64) -> Duration {
        let mut s = self.samples.clone();
        s.sort();
        pct(&s, q)
    }
}

struct Bench {
    engine: Engine,
    g: Governance,
    form: Value,
    submit: (i64, i64),
    session: String,
}

impl Bench {
    fn new(dir: &std::path::Path) -> Bench {
        let engine = Engine::new(Box::new(VirtualDesktop::default()), ConfigStack::new());
        assert!(engine.start(&json!({})).ok);
        let g =
            Governance::open(engine.clone(), &dir.join("bench.db"), "local-user").expect("journal");
        let support::Form {
            window: form,
            submit,
        } = support::form(&engine);
        let session = g.call("start_session", &json!({})).unwrap().unwrap()["session"]["sessionId"]
            .as_str()
            .unwrap()
            .to_string();
        Bench {
            engine,
            g,
            form,
            submit,
            session,
        }
    }

    fn lease(&self) -> String {
        self.g
            .call(
                "acquire_control_lease",
                &json!({"session_id": self.session, "kind": "cooperative", "mode": "foreground",
                        "ttl_ms": 300_000, "action_budget": 10_000}),
            )
            .unwrap()
            .unwrap()["lease"]["leaseId"]
            .as_str()
            .unwrap()
            .to_string()
    }

    fn click(&self, lease: &str, id: &str, post: Option<Value>) -> Value {
        let w = &self.form;
        let mut a = json!({
            "session_id": self.session, "action_id": id, "lease_id": lease,
            "tool": "pointer_click", "arguments": {"x": self.submit.0, "y": self.submit.1},
            "mode": "foreground",
            "target": {"platform": "virtual", "appId": "cc-form", "pid": w["pid"],
                       "windowId": w["id"], "bounds": w["rect"], "observationId": "obs",
                       "confidence": 1,
                       "capturedAt": format_timestamp(time::OffsetDateTime::now_utc())},
        });
        if let Some(p) = post {
            a["postcondition"] = p;
        }
        a
    }

    fn plain(&self, n: usize) -> Series {
        let args = json!({"x": self.submit.0, "y": self.submit.1});
        let samples = (0..n)
            .map(|_| {
                let t = Instant::now();
                let env = self.engine.call_tool("pointer.click", &args);
                let d = t.elapsed();
                assert!(env.ok);
                d
            })
            .collect();
        Series {
            name: "plain `pointer.click` (engine)",
            samples,
        }
    }

    /// The whole governed path, and its two calls separately.
    fn governed(
        &self,
        name: &'static str,
        tag: &str,
        n: usize,
        post: Option<Value>,
    ) -> (Series, Series, Series) {
        let lease = self.lease();
        let mut total = Vec::with_capacity(n);
        let mut previews = Vec::with_capacity(n);
        let mut executes = Vec::with_capacity(n);
        for i in 0..n {
            let a = self.click(&lease, &format!("{tag}-{i}"), post.clone());
            let t = Instant::now();
            let p = self.g.call("preview_action", &a).unwrap().unwrap();
            let between = Instant::now();
            assert_eq!(p["executable"], true);
            let r = self.g.call("execute_action", &a).unwrap().unwrap();
            let end = Instant::now();
            assert_eq!(r["receipt"]["status"], "committed");
            total.push(end - t);
            previews.push(between - t);
            executes.push(end - between);
        }
        self.release(&lease);
        (
            Series {
                name,
                samples: total,
            },
            Series {
                name: "… of which `preview_action`",
                samples: previews,
            },
            Series {
                name: "… of which `execute_action`",
                samples: executes,
            },
        )
    }

    /// An engine read the pipeline makes (revalidation, read-backs).
    fn read(&self, name: &'static str, tool: &str, args: Value, n: usize) -> Series {
        let samples = (0..n)
            .map(|_| {
                let t = Instant::now();
                let env = self.engine.call_tool(tool, &args);
                let d = t.elapsed();
                assert!(env.ok);
                d
            })
            .collect();
        Series { name, samples }
    }

    fn replay(&self, n: usize) -> Series {
        let lease = self.lease();
        let a = self.click(&lease, "replayed", None);
        self.g.call("execute_action", &a).unwrap().unwrap();
        let samples = (0..n)
            .map(|_| {
                let t = Instant::now();
                let r = self.g.call("execute_action", &a).unwrap().unwrap();
                let d = t.elapsed();
                assert_eq!(r["receipt"]["status"], "committed");
                d
            })
            .collect();
        self.release(&lease);
        Series {
            name: "`execute_action` replay (no effect)",
            samples,
        }
    }

    fn release(&self, lease: &str) {
        self.g
            .call(
                "release_control_lease",
                &json!({"session_id": self.session, "lease_id": lease}),
            )
            .unwrap()
            .unwrap();
    }
}

fn main() {
    let n: usize = std::env::var("BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let base: PathBuf = std::env::var_os("BENCH_JOURNAL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let dir = tempfile::tempdir_in(&base).expect("temp dir");
    let b = Bench::new(dir.path());
    // Warm up the driver, the journal and the caches.
    b.plain(50);
    let _ = b.governed("warm-up", "w", 50, None);

    let plain = b.plain(n);
    let window = json!({"kind": "window", "windowId": b.form["id"], "exists": true});
    let status = json!({"kind": "ui_element", "role": "statusbar", "label": "Status",
                        "exists": true, "valueDigest": value_digest("Submitted: ")});
    let (g, g_preview, g_execute) = b.governed("governed: preview + execute", "g", n, None);
    let (gw, _, _) = b.governed("governed + `window` postcondition", "gw", n, Some(window));
    let (gu, _, _) = b.governed(
        "governed + `ui_element` postcondition",
        "gu",
        n,
        Some(status),
    );
    let form_id = b.form["id"].clone();
    let series = [
        g,
        g_preview,
        g_execute,
        gw,
        gu,
        b.replay(n),
        b.read(
            "engine `window.list` (revalidation)",
            "window.list",
            json!({}),
            n,
        ),
        b.read(
            "engine `a11y.snapshot` full (ui_element read-back)",
            "a11y.snapshot",
            json!({"window": form_id, "level": "full", "include_rects": false}),
            n,
        ),
    ];
    println!(
        "journal: {} (WAL, synchronous=FULL), n = {n}\n",
        dir.path().display()
    );
    println!("| path | p50 | p95 | p50 overhead vs plain |");
    println!("|---|---|---|---|");
    let p50 = plain.p(0.5);
    println!(
        "| {} | {} | {} | — |",
        plain.name,
        ms(p50),
        ms(plain.p(0.95))
    );
    for s in &series {
        let over = s.p(0.5).saturating_sub(p50);
        println!(
            "| {} | {} | {} | {} |",
            s.name,
            ms(s.p(0.5)),
            ms(s.p(0.95)),
            ms(over)
        );
    }
}
