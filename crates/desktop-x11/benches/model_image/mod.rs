//! The model-sized capture against the npm `computer-use-mcp` server on the same
//! screen: its own `computer` tool's screenshot (a palette PNG made by sharp from a
//! jimp resize) against our default image, at its dimensions and at ours.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use base64::Engine as _;
use cc_desktop::RgbImage;
use cc_engine::encode::{Encoded, Fit, Format, Pixels, encode, encode_resized, quantize, resize};
use rustix::time::{ClockId, clock_gettime};
use serde_json::{Value, json};

use crate::Stats;
use crate::x11_support::Desk;

/// The peer's answer to one `get_screenshot`.
pub struct PeerShot {
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
    /// Wall time of the call less the second the peer sleeps before every screenshot.
    pub ms: f64,
}

/// Runs `node <main.js>` (the installed `computer-use-mcp`) on the desk over MCP stdio
/// and takes `n` screenshots. `None` (with the reason printed) when it cannot run.
pub fn peer_shots(desk: &Desk, main_js: &str, n: usize) -> Option<Vec<PeerShot>> {
    let mut child = desk
        .env(&mut Command::new("node"))
        .arg(main_js)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| eprintln!("computer-use-mcp: {e}"))
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let mut out = BufReader::new(child.stdout.take()?);
    let mut send = |v: Value| {
        let mut line = v.to_string();
        line.push('\n');
        stdin.write_all(line.as_bytes()).is_ok()
    };
    let mut read = |id: u64| -> Option<Value> {
        let mut line = String::new();
        loop {
            line.clear();
            if out.read_line(&mut line).ok()? == 0 {
                return None;
            }
            let v: Value = serde_json::from_str(&line).ok()?;
            if v["id"] == json!(id) {
                return Some(v);
            }
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "cc-bench", "version": "1"}}}),
    );
    read(1)?;
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut shots = Vec::new();
    for i in 0..n {
        let id = 10 + i as u64;
        let t = Instant::now();
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "computer", "arguments": {"action": "get_screenshot"}}}));
        let v = read(id)?;
        let ms = t.elapsed().as_secs_f64() * 1e3 - 1000.0;
        let content = v["result"]["content"].as_array()?;
        let data = content.iter().find(|c| c["type"] == "image")?["data"].as_str()?;
        let png = base64::engine::general_purpose::STANDARD
            .decode(data)
            .ok()?;
        let (width, height) = (
            u32::from_be_bytes(png.get(16..20)?.try_into().ok()?),
            u32::from_be_bytes(png.get(20..24)?.try_into().ok()?),
        );
        shots.push(PeerShot {
            png,
            width,
            height,
            ms,
        });
    }
    let _ = child.kill();
    let _ = child.wait();
    Some(shots)
}

/// Our default image of a capture at `w`×`h`, as `screen.capture` makes it: resized and
/// encoded in the cheapest format in one pass on two threads.
pub fn ours(img: &Arc<RgbImage>, w: u32, h: u32) -> Encoded {
    encode_resized(img, w, h, false, Format::Auto, 85).expect("encode")
}

/// The same image from the stages one after the other (each split over two threads on
/// its own), to show what the single pass saves.
pub fn by_stages(img: &RgbImage, w: u32, h: u32) -> Encoded {
    let small = resize(img, w, h).expect("resize");
    encode(
        &Pixels {
            width: w,
            height: h,
            gray: false,
            data: &small.pixels,
        },
        Format::Auto,
        85,
    )
    .expect("encode")
}

/// The peer's budget: 1.15 × 2^20 pixels and 1568 px (its `getSizeToApiScale`).
pub const PEER_FIT: Fit = Fit {
    max_edge: 1568,
    max_pixels: 1_205_862,
};

/// One stage of [`ours`] timed: wall time, and CPU time of the calling thread and of all
/// the process's threads (the stage's second core included), which a loaded machine
/// inflates less than wall time.
pub struct Stage {
    pub what: &'static str,
    pub wall: Stats,
    pub thread_cpu: Stats,
    pub all_cpu: Stats,
}

fn cpu_ms(id: ClockId) -> f64 {
    let t = clock_gettime(id);
    t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6
}

fn stage(what: &'static str, n: usize, mut f: impl FnMut()) -> Stage {
    let (mut wall, mut thread_cpu, mut all_cpu) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        let (t, c, p) = (
            Instant::now(),
            cpu_ms(ClockId::ThreadCPUTime),
            cpu_ms(ClockId::ProcessCPUTime),
        );
        f();
        thread_cpu.push(cpu_ms(ClockId::ThreadCPUTime) - c);
        all_cpu.push(cpu_ms(ClockId::ProcessCPUTime) - p);
        wall.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Stage {
        what,
        wall: Stats::new(wall),
        thread_cpu: Stats::new(thread_cpu),
        all_cpu: Stats::new(all_cpu),
    }
}

/// Each stage of [`ours`] at `w`×`h`, `n` times, interleaved by round so that load
/// changes hit every stage alike; the last is the whole.
pub fn stages(img: &Arc<RgbImage>, w: u32, h: u32, n: usize) -> Vec<Stage> {
    let small = resize(img, w, h).expect("resize");
    let px = Pixels {
        width: w,
        height: h,
        gray: false,
        data: &small.pixels,
    };
    let mut rounds: Vec<Vec<Stage>> = Vec::new();
    let per = n.div_ceil(10).max(1);
    for _ in 0..n.div_ceil(per) {
        rounds.push(vec![
            stage("resize", per, || {
                std::hint::black_box(resize(img, w, h).expect("resize"));
            }),
            stage("quantize (histogram, palette, indices)", per, || {
                std::hint::black_box(quantize(&small.pixels));
            }),
            stage(
                "encode: palette check + quantize + deflate + PNG",
                per,
                || {
                    std::hint::black_box(encode(&px, Format::Auto, 85).expect("encode"));
                },
            ),
            stage("whole, stage by stage: resize, then encode", per, || {
                std::hint::black_box(by_stages(img, w, h));
            }),
            stage("whole: the default image (one pass)", per, || {
                std::hint::black_box(ours(img, w, h));
            }),
        ]);
    }
    let merged = |k: usize, f: fn(&Stage) -> &Stats| {
        Stats::new(
            rounds
                .iter()
                .flat_map(|r| f(&r[k]).samples.iter().copied())
                .collect(),
        )
    };
    (0..rounds[0].len())
        .map(|k| Stage {
            what: rounds[0][k].what,
            wall: merged(k, |s| &s.wall),
            thread_cpu: merged(k, |s| &s.thread_cpu),
            all_cpu: merged(k, |s| &s.all_cpu),
        })
        .collect()
}
