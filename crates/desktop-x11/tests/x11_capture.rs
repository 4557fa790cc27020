//! Capture on a real X server: the pixels equal what ImageMagick's `import` reads from
//! the same display, through shared memory and through core GetImage alike.

use cc_test_kit::x11 as x11_support;

use std::time::{Duration, Instant};

use cc_desktop::Driver;
use cc_desktop_x11::CaptureMethod;
use cc_desktop_x11::{X11Desktop, X11Options};
use cc_protocol::PhysicalRect;
use x11_support::{Desk, parse_ppm};

fn full(w: u32, h: u32) -> PhysicalRect {
    PhysicalRect {
        x: 0,
        y: 0,
        width: w,
        height: h,
    }
}

/// A static, colourful screen: a solid root and an xterm with text (no blinking).
fn paint(desk: &mut Desk) {
    let out = desk.run("xsetroot", &["-solid", "#204080"]);
    assert!(out.status.success(), "xsetroot failed");
    desk.spawn(
        "xterm",
        &[
            "+bc",
            "-geometry",
            "60x12+100+100",
            "-bg",
            "#f0e0c0",
            "-fg",
            "#802020",
            "-e",
            "sh",
            "-c",
            "printf 'capture test \\033[1;32mgreen\\033[0m \\033[7minverse\\033[0m\\n'; exec sleep 600",
        ],
    );
}

fn import_root(desk: &Desk) -> (u32, u32, Vec<u8>) {
    let out = desk.run("import", &["-window", "root", "-depth", "8", "ppm:-"]);
    assert!(
        out.status.success(),
        "import failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    parse_ppm(&out.stdout)
}

#[test]
fn capture_matches_import_through_shm_and_getimage() {
    let mut desk = Desk::start();
    paint(&mut desk);
    let mut shm = desk.driver();
    let mut core = X11Desktop::connect_with(X11Options {
        display: Some(desk.display.clone()),
        session_bus: Some(desk.bus.clone()),
        disable_shm: true,
        ..X11Options::default()
    })
    .expect("second driver");
    // Wait until the xterm has drawn its text (the screen is more than two colours).
    desk.wait_until("the xterm is drawn", Duration::from_secs(20), || {
        let Ok(img) = shm.capture(PhysicalRect {
            x: 100,
            y: 100,
            width: 300,
            height: 100,
        }) else {
            return false;
        };
        let mut colours: Vec<[u8; 3]> = img
            .pixels
            .chunks_exact(3)
            .map(|p| [p[0], p[1], p[2]])
            .collect();
        colours.sort();
        colours.dedup();
        colours.len() > 4
    });
    std::thread::sleep(Duration::from_millis(300));
    let layout = shm.layout().unwrap();
    assert_eq!(layout.displays.len(), 1);
    let screen = layout.displays[0].rect;
    assert_eq!((screen.width, screen.height), (1920, 1080));

    let ours = shm.capture(full(1920, 1080)).unwrap();
    assert_eq!(shm.last_capture_method(), Some(CaptureMethod::Shm));
    let (w, h, theirs) = import_root(&desk);
    assert_eq!((w, h), (ours.width, ours.height));
    let differing = ours
        .pixels
        .chunks_exact(3)
        .zip(theirs.chunks_exact(3))
        .filter(|(a, b)| a != b)
        .count();
    assert_eq!(differing, 0, "pixels differ from import -window root");
    // The background colour where nothing is drawn.
    assert_eq!(ours.get(1900, 1060), Some([0x20, 0x40, 0x80]));

    let by_core = core.capture(full(1920, 1080)).unwrap();
    assert_eq!(core.last_capture_method(), Some(CaptureMethod::GetImage));
    assert_eq!(by_core, ours, "GetImage and SHM agree");

    // A region is the same pixels as the corresponding part of the whole.
    let r = PhysicalRect {
        x: 90,
        y: 95,
        width: 333,
        height: 77,
    };
    let part = shm.capture(r).unwrap();
    assert_eq!((part.width, part.height), (333, 77));
    for (y, x) in [(0, 0), (10, 20), (76, 332), (40, 100)] {
        assert_eq!(
            part.get(x, y),
            ours.get(x + r.x as u32, y + r.y as u32),
            "({x},{y})"
        );
    }
    assert_eq!(core.capture(r).unwrap(), part);

    // Outside the screen is an error, not garbage.
    for bad in [
        PhysicalRect {
            x: -1,
            y: 0,
            width: 10,
            height: 10,
        },
        PhysicalRect {
            x: 1915,
            y: 0,
            width: 10,
            height: 10,
        },
        PhysicalRect {
            x: 0,
            y: 0,
            width: 0,
            height: 10,
        },
    ] {
        assert!(shm.capture(bad).is_err(), "{bad:?}");
    }

    // Timing, for the report (not asserted: CI machines vary).
    let n = 20;
    let t = Instant::now();
    for _ in 0..n {
        shm.capture(full(1920, 1080)).unwrap();
    }
    let shm_ms = t.elapsed().as_secs_f64() * 1000.0 / f64::from(n);
    let t = Instant::now();
    for _ in 0..n {
        core.capture(full(1920, 1080)).unwrap();
    }
    let core_ms = t.elapsed().as_secs_f64() * 1000.0 / f64::from(n);
    eprintln!("capture 1920x1080: shm {shm_ms:.2} ms, GetImage {core_ms:.2} ms");
}
