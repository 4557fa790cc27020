//! Frames of the screen cast, read from PipeWire on a thread of their own that keeps
//! every monitor's stream open for the session: Mutter sends a frame when the monitor
//! repaints, the thread copies it into the latest frame of that monitor, and a capture
//! is a copy out of memory (no stream is opened per capture; opening one costs about
//! 0.1 s before its first frame).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cc_desktop::{DriverError, PhysicalDisplay, RgbImage};
use cc_protocol::PhysicalRect;

use crate::libpipewire::{self as pw, Plane, StreamHandler};
use crate::pod::{self, VideoFormat};

/// How long a capture waits for a monitor's first frame.
const FIRST_FRAME: Duration = Duration::from_secs(5);

/// The latest frame of one stream.
#[derive(Debug, Default)]
struct Frame {
    width: u32,
    height: u32,
    stride: usize,
    bgr: bool,
    data: Vec<u8>,
}

#[derive(Default)]
struct Shared {
    frames: Mutex<HashMap<u32, Frame>>,
    /// Nodes whose stream settled on a format: PipeWire linked them to their source.
    linked: Mutex<HashSet<u32>>,
    arrived: Condvar,
    /// Why the PipeWire thread ended, when it did.
    error: Mutex<Option<String>>,
}

/// The PipeWire thread and the latest frame of each node it reads.
pub struct Frames {
    shared: Arc<Shared>,
    quit: Option<pw::Quit>,
    thread: Option<JoinHandle<()>>,
    /// Node per connector.
    nodes: HashMap<String, u32>,
}

/// Whether a pixel format is BGR-ordered (`Some(true)`), RGB-ordered, or not one of the
/// 4-byte formats the reader copies.
fn bgr_order(format: u32) -> Option<bool> {
    match format {
        pod::BGRX | pod::BGRA => Some(true),
        pod::RGBX | pod::RGBA => Some(false),
        _ => None,
    }
}

/// Copies a frame's first plane into the node's latest frame.
fn store(shared: &Shared, node: u32, format: VideoFormat, plane: &Plane<'_>) {
    let Some(bgr) = bgr_order(format.format) else {
        return;
    };
    let (offset, len) = (plane.offset as usize, plane.size as usize);
    let stride = match usize::try_from(plane.stride) {
        Ok(s) if s > 0 => s,
        _ => format.width as usize * 4,
    };
    // A zero-size chunk carries no picture (a cursor-only or empty update).
    if len == 0 {
        return;
    }
    let Some(bytes) = plane.data else { return };
    let Some(src) = bytes.get(offset..offset.saturating_add(len)) else {
        return;
    };
    if src.len() < stride * (format.height as usize).saturating_sub(1) + format.width as usize * 4 {
        return;
    }
    let mut frames = shared.frames.lock().unwrap_or_else(|e| e.into_inner());
    let f = frames.entry(node).or_default();
    f.width = format.width;
    f.height = format.height;
    f.stride = stride;
    f.bgr = bgr;
    f.data.clear();
    f.data.extend_from_slice(src);
    drop(frames);
    shared.arrived.notify_all();
}

/// One stream's callbacks: the format it settled on, and each frame stored.
struct Reader {
    shared: Arc<Shared>,
    node: u32,
    format: Option<VideoFormat>,
}

impl StreamHandler for Reader {
    fn format(&mut self, pod: &[u8]) {
        self.format = pod::video_format(pod);
        self.shared
            .linked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(self.node);
    }

    fn frame(&mut self, plane: &Plane<'_>) {
        if let Some(f) = self.format {
            store(&self.shared, self.node, f, plane);
        }
    }
}

/// Where the PipeWire thread connects: a socket by name (the environment's when
/// `None`), or a connection the desktop portal opened for this session only (its
/// `OpenPipeWireRemote`, which exposes only the streams the user shared).
pub enum Remote {
    /// PipeWire's socket (`$XDG_RUNTIME_DIR/pipewire-0` when `None`).
    Socket(Option<String>),
    /// A connected file descriptor handed over by the portal.
    Fd(std::os::fd::OwnedFd),
}

/// PipeWire's client library, or why it cannot be loaded and what installs it: GNOME
/// and portal capture need it, everything else runs without it.
pub fn library() -> Result<&'static pw::Library, DriverError> {
    pw::library().map_err(|e| DriverError::Unavailable(format!("{e}; {}", pw::INSTALL)))
}

/// The PipeWire thread's body: one stream per node, run until told to quit.
fn run(
    lib: &'static pw::Library,
    nodes: Vec<u32>,
    remote: Remote,
    shared: Arc<Shared>,
    ready: std::sync::mpsc::Sender<Result<pw::Quit, String>>,
) {
    let result = (|| -> Result<(), String> {
        let main_loop = pw::MainLoop::new(lib)?;
        let context = pw::Context::new(&main_loop)?;
        let core = match remote {
            Remote::Socket(name) => context.connect(name.as_deref()),
            Remote::Fd(fd) => context.connect_fd(fd),
        }?;
        let param = pod::enum_format();
        let mut streams = Vec::new();
        for node in nodes {
            let reader = Reader {
                shared: shared.clone(),
                node,
                format: None,
            };
            streams.push(pw::Stream::connect(
                &core,
                "computer-control",
                &[
                    ("media.type", "Video"),
                    ("media.category", "Capture"),
                    ("media.role", "Screen"),
                ],
                node,
                &param,
                Box::new(reader),
            )?);
        }
        let _ = ready.send(Ok(main_loop.quitter()));
        main_loop.run();
        drop(streams);
        drop(core);
        Ok(())
    })();
    if let Err(e) = result {
        *shared.error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.clone());
        let _ = ready.send(Err(e));
    }
    shared.arrived.notify_all();
}

impl Frames {
    /// Opens a stream per recorded monitor (connector, node), at PipeWire's `socket`
    /// (else the environment's). Public for tests that consume a stream of their own (a
    /// virtual monitor exists only while its stream is read).
    pub fn open(
        recorded: &[(String, u32)],
        socket: Option<&std::path::Path>,
    ) -> Result<Frames, DriverError> {
        let remote = Remote::Socket(socket.map(|p| p.display().to_string()));
        Frames::open_remote(recorded, remote)
    }

    /// Opens a stream per (display id, node) over `remote`.
    pub fn open_remote(recorded: &[(String, u32)], remote: Remote) -> Result<Frames, DriverError> {
        let lib = library()?;
        let shared = Arc::new(Shared::default());
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let nodes: Vec<u32> = recorded.iter().map(|(_, n)| *n).collect();
        let sh = shared.clone();
        let thread = std::thread::Builder::new()
            .name("cc-gnome-pipewire".into())
            .spawn(move || run(lib, nodes, remote, sh, ready_tx))
            .map_err(|e| DriverError::Failed(format!("PipeWire thread: {e}")))?;
        let quit = match ready_rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Ok(quit)) => quit,
            Ok(Err(e)) => {
                let _ = thread.join();
                return Err(DriverError::Unavailable(e));
            }
            Err(_) => {
                return Err(DriverError::Unavailable(
                    "PipeWire: the stream thread did not start".into(),
                ));
            }
        };
        Ok(Frames {
            shared,
            quit: Some(quit),
            thread: Some(thread),
            nodes: recorded.iter().cloned().collect(),
        })
    }

    /// Pixels of `rect` (layout coordinates) from the latest frames of the displays it
    /// covers; waits for a monitor's first frame.
    pub fn capture(
        &self,
        displays: &[PhysicalDisplay],
        rect: PhysicalRect,
    ) -> Result<RgbImage, DriverError> {
        let mut out = RgbImage {
            width: rect.width,
            height: rect.height,
            pixels: vec![0; rect.width as usize * rect.height as usize * 3],
        };
        let deadline = Instant::now() + FIRST_FRAME;
        for d in displays {
            let Some(part) = intersect(rect, d.rect) else {
                continue;
            };
            let node = *self
                .nodes
                .get(&d.id)
                .ok_or_else(|| DriverError::Failed(format!("monitor {} is not recorded", d.id)))?;
            let mut frames = self.shared.frames.lock().unwrap_or_else(|e| e.into_inner());
            while !frames.contains_key(&node) {
                if let Some(e) = self
                    .shared
                    .error
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone()
                {
                    return Err(DriverError::Failed(e));
                }
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    let linked = self
                        .shared
                        .linked
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .contains(&node);
                    return Err(DriverError::Failed(no_frame(&d.id, linked)));
                }
                frames = self
                    .shared
                    .arrived
                    .wait_timeout(frames, left)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            if let Some(f) = frames.get(&node) {
                blit(f, d.rect, part, rect, &mut out);
            }
        }
        Ok(out)
    }
}

/// Why a monitor's first frame did not come: a stream PipeWire never linked to its
/// source (no format was ever agreed) is what a session without a session manager
/// (WirePlumber) gives, and says so; a linked one that sends nothing does not.
fn no_frame(display: &str, linked: bool) -> String {
    let within = FIRST_FRAME.as_secs();
    if linked {
        format!("no frame from the screen cast of {display} within {within}s")
    } else {
        format!(
            "no frame from the screen cast of {display} within {within}s: PipeWire never \
             linked the stream to the shell (is its session manager, WirePlumber, running \
             in this session?)"
        )
    }
}

fn intersect(a: PhysicalRect, b: PhysicalRect) -> Option<PhysicalRect> {
    let x0 = a.x.max(b.x);
    let y0 = a.y.max(b.y);
    let x1 = (a.x + a.width as i32).min(b.x + b.width as i32);
    let y1 = (a.y + a.height as i32).min(b.y + b.height as i32);
    (x1 > x0 && y1 > y0).then(|| PhysicalRect {
        x: x0,
        y: y0,
        width: (x1 - x0) as u32,
        height: (y1 - y0) as u32,
    })
}

/// Copies `part` (layout coordinates, inside display `disp`) from frame `f` into `out`,
/// which shows `rect`. A frame of another size than its display (a scaled monitor) is
/// sampled at the nearest pixel.
fn blit(f: &Frame, disp: PhysicalRect, part: PhysicalRect, rect: PhysicalRect, out: &mut RgbImage) {
    if f.width == 0 || f.height == 0 {
        return;
    }
    let (ri, gi, bi) = if f.bgr { (2, 1, 0) } else { (0, 1, 2) };
    let same = f.width == disp.width && f.height == disp.height;
    for row in 0..part.height {
        let ly = part.y + row as i32;
        let fy = ((ly - disp.y) as u64 * u64::from(f.height) / u64::from(disp.height)) as usize;
        let src_row = fy * f.stride;
        let dst_row = (ly - rect.y) as usize * rect.width as usize * 3;
        let lx0 = part.x - disp.x;
        if same {
            let start = src_row + lx0 as usize * 4;
            let Some(src) = f.data.get(start..start + part.width as usize * 4) else {
                continue;
            };
            let d0 = dst_row + (part.x - rect.x) as usize * 3;
            let dst = &mut out.pixels[d0..d0 + part.width as usize * 3];
            for (s, d) in src.chunks_exact(4).zip(dst.chunks_exact_mut(3)) {
                d[0] = s[ri];
                d[1] = s[gi];
                d[2] = s[bi];
            }
            continue;
        }
        for col in 0..part.width {
            let lx = lx0 + col as i32;
            let fx = (lx as u64 * u64::from(f.width) / u64::from(disp.width)) as usize;
            let s = src_row + fx * 4;
            let Some(px) = f.data.get(s..s + 4) else {
                continue;
            };
            let d = dst_row + (part.x - rect.x + col as i32) as usize * 3;
            out.pixels[d] = px[ri];
            out.pixels[d + 1] = px[gi];
            out.pixels[d + 2] = px[bi];
        }
    }
}

impl Drop for Frames {
    /// Quits the PipeWire loop (closing the streams) and joins its thread.
    fn drop(&mut self) {
        if let Some(q) = self.quit.take() {
            q.quit();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(x: i32, y: i32, width: u32, height: u32) -> PhysicalRect {
        PhysicalRect {
            x,
            y,
            width,
            height,
        }
    }

    #[test]
    fn a_missing_frame_says_whether_the_stream_was_ever_linked() {
        let unlinked = no_frame("Meta-0", false);
        assert!(unlinked.starts_with("no frame from the screen cast of Meta-0 within 5s"));
        assert!(unlinked.contains("WirePlumber"), "{unlinked}");
        let linked = no_frame("Meta-0", true);
        assert!(!linked.contains("WirePlumber"), "{linked}");
    }

    #[test]
    fn a_capture_takes_each_display_part_from_its_frame() {
        // Two 2×1 displays side by side; frames in BGRx with a padded stride.
        let left = Frame {
            width: 2,
            height: 1,
            stride: 12,
            bgr: true,
            data: vec![1, 2, 3, 0, 4, 5, 6, 0, 9, 9, 9, 9],
        };
        let right = Frame {
            width: 2,
            height: 1,
            stride: 8,
            bgr: false,
            data: vec![10, 11, 12, 0, 13, 14, 15, 0],
        };
        let rect = r(1, 0, 2, 1);
        let mut out = RgbImage {
            width: 2,
            height: 1,
            pixels: vec![0; 6],
        };
        blit(
            &left,
            r(0, 0, 2, 1),
            intersect(rect, r(0, 0, 2, 1)).unwrap(),
            rect,
            &mut out,
        );
        blit(
            &right,
            r(2, 0, 2, 1),
            intersect(rect, r(2, 0, 2, 1)).unwrap(),
            rect,
            &mut out,
        );
        assert_eq!(out.pixels, vec![6, 5, 4, 10, 11, 12]);
        assert_eq!(intersect(r(0, 0, 2, 2), r(5, 5, 1, 1)), None);
    }

    #[test]
    fn a_frame_of_another_size_is_sampled() {
        // A 2×2 frame shown as a 4×4 display: each pixel covers 2×2.
        let f = Frame {
            width: 2,
            height: 2,
            stride: 8,
            bgr: false,
            data: vec![1, 1, 1, 0, 2, 2, 2, 0, 3, 3, 3, 0, 4, 4, 4, 0],
        };
        let rect = r(0, 0, 4, 4);
        let mut out = RgbImage {
            width: 4,
            height: 4,
            pixels: vec![0; 48],
        };
        blit(&f, rect, rect, rect, &mut out);
        let at = |x: usize, y: usize| out.pixels[(y * 4 + x) * 3];
        assert_eq!((at(0, 0), at(3, 0), at(0, 3), at(3, 3)), (1, 2, 3, 4));
    }
}
