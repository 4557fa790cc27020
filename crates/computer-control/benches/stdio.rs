//! Benchmark of the stdio round trip and a full-width capture on the virtual
//! desktop, against the release binary, side by side with what a user pays otherwise.
//!
//! Run: `cargo bench -p computer-control --bench stdio` (prints a markdown table;
//! `BENCH_PAUSE_N`, `BENCH_COLD_N` and `BENCH_CAPTURE_N` change the sample counts;
//! `BENCH_BIN` runs another build of the server).

mod bench_client;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bench_client::{Client, fmt, stats};
use cc_desktop::{Driver, VirtualConfig, VirtualDesktop};
use cc_engine::encode::{Format, Pixels, encode};
use cc_protocol::PhysicalRect;
use serde_json::json;

/// A child that echoes each line back (`cat`): a round trip with no work in it.
struct Echo {
    _child: std::process::Child,
    stdin: std::process::ChildStdin,
    out: BufReader<std::process::ChildStdout>,
    line: Vec<u8>,
    buf: String,
}

impl Echo {
    fn start(line: &[u8]) -> Echo {
        let mut child = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("cat");
        let stdin = child.stdin.take().expect("stdin");
        let out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = line.to_vec();
        line.push(b'\n');
        Echo {
            _child: child,
            stdin,
            out,
            line,
            buf: String::new(),
        }
    }

    fn round_trip(&mut self) -> Duration {
        let t = Instant::now();
        self.stdin.write_all(&self.line).expect("write");
        self.stdin.flush().expect("flush");
        self.buf.clear();
        self.out.read_line(&mut self.buf).expect("read");
        t.elapsed()
    }
}

fn main() {
    // `cargo bench` passes `--bench`; any other argument is ignored.
    let n_pause: usize = std::env::var("BENCH_PAUSE_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let n_cold: usize = std::env::var("BENCH_COLD_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let n_capture: usize = std::env::var("BENCH_CAPTURE_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);

    let mut c = Client::start();
    // The operator's 1920 canvas: the full-size PNG below is the whole 1080p screen,
    // and the default capture still the model-sized 1430×804.
    let r = c.call("session.start", json!({"capture": {"default_width": 1920}}));
    assert_eq!(r["result"]["ok"], json!(true), "{r}");

    // wait.pause {ms:0}: the full path (stdio, JSON-RPC, validation, gate, worker).
    for _ in 0..1000 {
        c.call(
            "tools.call",
            json!({"tool": "wait.pause", "arguments": {"ms": 0}}),
        );
    }
    // The floor any stdio server pays on this machine: the same request line through
    // `cat`, which only copies it back. Measured in alternating blocks with the server,
    // so both see the same machine (on an idle virtual machine the scheduler sometimes
    // keeps the two processes on one CPU and sometimes not, which changes both).
    let request = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools.call",
        "params": {"tool": "wait.pause", "arguments": {"ms": 0}}}))
    .expect("json");
    let mut cat = Echo::start(&request);
    let mut pause = Vec::with_capacity(n_pause);
    let mut floor = Vec::with_capacity(n_pause);
    const BLOCK: usize = 500;
    while pause.len() < n_pause {
        for _ in 0..BLOCK.min(n_pause - pause.len()) {
            let t = Instant::now();
            let r = c.call(
                "tools.call",
                json!({"tool": "wait.pause", "arguments": {"ms": 0}}),
            );
            pause.push(t.elapsed());
            debug_assert_eq!(r["result"]["ok"], json!(true));
            floor.push(cat.round_trip());
        }
    }
    let (pause50, pause99) = stats(pause);
    let (floor50, floor99) = stats(floor);

    // As an agent calls: after a pause to think, when every CPU has gone idle.
    let mut cold = Vec::new();
    let mut cold_floor = Vec::new();
    for _ in 0..n_cold {
        std::thread::sleep(Duration::from_millis(20));
        let t = Instant::now();
        c.call(
            "tools.call",
            json!({"tool": "wait.pause", "arguments": {"ms": 0}}),
        );
        cold.push(t.elapsed());
        std::thread::sleep(Duration::from_millis(20));
        cold_floor.push(cat.round_trip());
    }
    let (cold50, cold99) = stats(cold);
    let (cold_floor50, _) = stats(cold_floor);

    // What a CLI tool per action costs at the very least: one process spawn.
    let mut spawn = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        let _ = Command::new("/bin/true").status();
        spawn.push(t.elapsed());
    }
    let (spawn50, _) = stats(spawn);

    // screen.capture, 1920-wide PNG, round trip including base64 and JSON.
    let canvas_png = json!({"size": "canvas", "format": "png", "if_changed": false});
    for _ in 0..10 {
        c.call(
            "tools.call",
            json!({"tool": "screen.capture", "arguments": canvas_png}),
        );
    }
    let mut cap = Vec::with_capacity(n_capture);
    let mut server_ms = Vec::with_capacity(n_capture);
    let mut bytes = 0;
    for i in 0..n_capture {
        // Change the desktop every other frame so both cached and fresh renders count.
        if i % 2 == 0 {
            c.call(
                "tools.call",
                json!({"tool": "pointer.click", "arguments": {"x": 250, "y": 278}}),
            );
        }
        let t = Instant::now();
        let r = c.call(
            "tools.call",
            json!({"tool": "screen.capture", "arguments": canvas_png}),
        );
        cap.push(t.elapsed());
        bytes = r["result"]["result"]["bytes"].as_u64().unwrap_or(0);
        server_ms.push(Duration::from_millis(
            r["result"]["meta"]["duration_ms"].as_u64().unwrap_or(0),
        ));
        assert_eq!(r["result"]["result"]["width"], json!(1920));
    }
    let (cap50, cap99) = stats(cap);

    // The default capture (sized for models, the cheapest format), sent every time,
    // and the same capture when nothing changed (answered without an image).
    let mut model = Vec::with_capacity(n_capture);
    let mut model_bytes = 0;
    for i in 0..n_capture {
        if i % 2 == 0 {
            c.call(
                "tools.call",
                json!({"tool": "pointer.click", "arguments": {"x": 250, "y": 278}}),
            );
        }
        let t = Instant::now();
        let r = c.call(
            "tools.call",
            json!({"tool": "screen.capture", "arguments": {"if_changed": false}}),
        );
        model.push(t.elapsed());
        model_bytes = r["result"]["result"]["bytes"].as_u64().unwrap_or(0);
        assert_eq!(r["result"]["result"]["width"], json!(1430));
    }
    let (model50, model99) = stats(model);
    let mut same = Vec::with_capacity(n_capture);
    for _ in 0..n_capture {
        let t = Instant::now();
        let r = c.call(
            "tools.call",
            json!({"tool": "screen.capture", "arguments": {"if_changed": true}}),
        );
        same.push(t.elapsed());
        assert_eq!(r["result"]["result"]["unchanged"], json!(true));
    }
    let (same50, same99) = stats(same);

    // In-process stages of the same capture, for where the time goes.
    let mut d = VirtualDesktop::new(VirtualConfig::default());
    let full = PhysicalRect {
        x: 0,
        y: 0,
        width: 1920,
        height: 1080,
    };
    let mut grab = Vec::new();
    let mut png_t = Vec::new();
    for _ in 0..50 {
        let t = Instant::now();
        let img = d.capture(full).expect("capture");
        grab.push(t.elapsed());
        let px = Pixels {
            width: img.width,
            height: img.height,
            gray: false,
            data: &img.pixels,
        };
        let t = Instant::now();
        let _ = encode(&px, Format::Png, 85).expect("png");
        png_t.push(t.elapsed());
    }
    let (grab50, _) = stats(grab);
    let (png50, _) = stats(png_t);

    println!("| measurement | p50 | p99 | note |");
    println!("|---|---|---|---|");
    println!(
        "| `tools.call wait.pause {{ms:0}}` over stdio ({n_pause} calls) | {} | {} | target ≤ 50 µs p50 |",
        fmt(pause50),
        fmt(pause99)
    );
    println!(
        "| the same line through `cat`, interleaved: the machine's floor for any stdio round trip | {} | {} | ours is the floor + {} |",
        fmt(floor50),
        fmt(floor99),
        fmt(pause50.saturating_sub(floor50))
    );
    println!(
        "| the same call 20 ms after the last answer, as an agent calls ({n_cold} calls) | {} | {} | `cat` the same way: {} |",
        fmt(cold50),
        fmt(cold99),
        fmt(cold_floor50)
    );
    println!(
        "| process spawn floor (`/bin/true`), what any CLI-per-action tool pays | {} | | {:.0}× our round trip |",
        fmt(spawn50),
        spawn50.as_secs_f64() / pause50.as_secs_f64()
    );
    println!(
        "| `screen.capture` 1920×1080 PNG over stdio ({n_capture} calls, {bytes} B) | {} | {} | target < 10 ms p50 |",
        fmt(cap50),
        fmt(cap99)
    );
    println!(
        "| `screen.capture` default (1430×804, auto format) over stdio ({n_capture} calls, {model_bytes} B) | {} | {} | |",
        fmt(model50),
        fmt(model99)
    );
    println!(
        "| `screen.capture` default, nothing changed (`unchanged`, no image) | {} | {} | |",
        fmt(same50),
        fmt(same99)
    );
    println!(
        "| — of which: virtual desktop grab (in-process) | {} | | |",
        fmt(grab50)
    );
    println!(
        "| — of which: PNG encode, fast compression (in-process) | {} | | |",
        fmt(png50)
    );
}
