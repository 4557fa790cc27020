//! The virtual desktop's full-screen capture: from its cached framebuffer when nothing
//! changed, and after a change that repaints part of it. A figure for the capture path
//! every virtual-desktop test and benchmark stands on.
//!
//! ```text
//! cargo bench -p computer-control-desktop --bench virtual_capture
//! ```

use std::time::{Duration, Instant};

use cc_desktop::{Driver, VirtualDesktop};
use cc_protocol::PhysicalRect;

fn p50(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut d = VirtualDesktop::default();
    let full = PhysicalRect {
        x: 0,
        y: 0,
        width: 1920,
        height: 1080,
    };
    d.capture(full)?;
    let n = 200;
    let mut clean = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        d.capture(full)?;
        clean.push(t.elapsed());
    }
    let mut dirty = Vec::with_capacity(n);
    for i in 0..n {
        d.type_char(if i % 2 == 0 { 'x' } else { 'y' })?;
        let t = Instant::now();
        d.capture(full)?;
        dirty.push(t.elapsed());
    }
    println!("| virtual desktop, 1920×1080 capture | p50 |");
    println!("|---|---|");
    println!("| nothing changed | {:?} |", p50(clean));
    println!("| after a typed character | {:?} |", p50(dirty));
    Ok(())
}
