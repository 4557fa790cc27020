//! Capture through `zwlr_screencopy_v1` into shared memory: each output under the
//! asked rectangle copies its part into a memfd buffer, which is resampled from the
//! output's buffer pixels to its layout size (scaled outputs) and placed on the image.
//! Buffers and a frame per output are kept between captures, so a capture of the
//! whole output costs one exchange with the compositor and one pass over the pixels.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;

use cc_desktop::{DriverError, RgbImage};
use cc_protocol::PhysicalRect;
use wayland_client::Proxy as _;
use wayland_client::protocol::{wl_buffer::WlBuffer, wl_shm, wl_shm_pool::WlShmPool};
use wayland_protocols_wlr::screencopy::v1::client::zwlr_screencopy_frame_v1::ZwlrScreencopyFrameV1;

use crate::client::{Client, FrameState};
use crate::outputs::intersect;

/// `wl_shm` formats this driver reads: the little-endian 32-bit RGB families.
const ARGB8888: u32 = 0;
const XRGB8888: u32 = 1;
const ABGR8888: u32 = 0x3432_4241;
const XBGR8888: u32 = 0x3432_4258;

/// One shared-memory buffer, kept while frames keep its shape.
struct Shm {
    file: File,
    pool: WlShmPool,
    buffer: WlBuffer,
    shape: (u32, u32, u32, u32),
}

impl Drop for Shm {
    fn drop(&mut self) {
        self.buffer.destroy();
        self.pool.destroy();
    }
}

/// How much of the shared buffer is read at a time: a band of rows that stays in the
/// cache while it is converted.
const BAND_BYTES: usize = 256 * 1024;

/// `wl_shm` format, width, height, stride of a frame's buffer.
type Shape = (u32, u32, u32, u32);

/// A frame of a whole output created ahead, right after the previous capture of that
/// output: its buffer description has arrived by the next capture, which then only
/// asks for the copy (one exchange with the compositor instead of two). The pixels
/// are those of the output commit after the copy request, so they are never older than
/// the capture. Used only while the output keeps the place, mode and scale it had.
struct Spare {
    frame: ZwlrScreencopyFrameV1,
    out: PhysicalRect,
    mode: (i32, i32),
    scale: i32,
}

/// The capture side: a shared buffer per output (kept while its frames keep their
/// shape), a spare frame per output, and the band of rows read from a buffer (reused).
#[derive(Default)]
pub struct Capture {
    shms: BTreeMap<u32, Shm>,
    spares: BTreeMap<u32, Spare>,
    band: Vec<u8>,
}

fn failed(what: impl std::fmt::Display) -> DriverError {
    DriverError::Failed(format!("screencopy: {what}"))
}

/// Destroys a frame and forgets what its events said.
fn discard(c: &mut Client, frame: &ZwlrScreencopyFrameV1) {
    c.state.frames.remove(&frame.id().protocol_id());
    frame.destroy();
}

impl Capture {
    /// The pixels of a layout rectangle; parts outside every output stay black.
    pub fn capture(&mut self, c: &mut Client, rect: PhysicalRect) -> Result<RgbImage, DriverError> {
        let Some(manager) = c.screencopy.clone() else {
            return Err(DriverError::Unavailable(
                "the compositor offers no zwlr_screencopy_manager_v1".into(),
            ));
        };
        let mut img = RgbImage::new(rect.width, rect.height);
        let parts: Vec<_> = c
            .state
            .outputs
            .iter()
            .filter_map(|(&gname, o)| {
                let (ox, oy, ow, oh) = o.logical?;
                let out = PhysicalRect {
                    x: ox,
                    y: oy,
                    width: u32::try_from(ow).ok()?,
                    height: u32::try_from(oh).ok()?,
                };
                Some((
                    gname,
                    o.wl.clone(),
                    o.mode,
                    o.scale,
                    out,
                    intersect(rect, out)?,
                ))
            })
            .collect();
        // Spares of outputs that are gone or changed are of no use.
        let stale: Vec<u32> = self
            .spares
            .iter()
            .filter(|(g, s)| {
                !parts.iter().any(|(pg, _, mode, scale, out, _)| {
                    *pg == **g && s.out == *out && s.mode == *mode && s.scale == *scale
                })
            })
            .map(|(g, _)| *g)
            .collect();
        for g in stale {
            if let Some(s) = self.spares.remove(&g) {
                discard(c, &s.frame);
            }
        }
        for (gname, wl, mode, scale, out, part) in parts {
            let whole = part == out;
            let new_frame = |c: &mut Client, part: PhysicalRect| {
                let frame = manager.capture_output_region(
                    0,
                    &wl,
                    part.x - out.x,
                    part.y - out.y,
                    part.width as i32,
                    part.height as i32,
                    &c.qh,
                    (),
                );
                c.state
                    .frames
                    .insert(frame.id().protocol_id(), FrameState::default());
                frame
            };
            let spare = if whole {
                self.spares.remove(&gname)
            } else {
                None
            };
            let copied = match spare {
                Some(s) => match self.copy_frame(c, gname, &s.frame) {
                    Ok(r) => {
                        discard(c, &s.frame);
                        Ok(r)
                    }
                    // The output changed under the spare: once more with a new frame.
                    Err(_) => {
                        discard(c, &s.frame);
                        let frame = new_frame(c, part);
                        let r = self.copy_frame(c, gname, &frame);
                        discard(c, &frame);
                        r
                    }
                },
                None => {
                    let frame = new_frame(c, part);
                    let r = self.copy_frame(c, gname, &frame);
                    discard(c, &frame);
                    r
                }
            };
            let (shape, y_invert) = copied?;
            if whole {
                // Asked now, its description arrives while this frame is converted.
                let frame = new_frame(c, out);
                self.spares.insert(
                    gname,
                    Spare {
                        frame,
                        out,
                        mode,
                        scale,
                    },
                );
                c.flush()?;
            }
            self.place(&mut img, rect, part, gname, shape, y_invert)?;
        }
        Ok(img)
    }

    /// Waits for the frame's buffer description (at once for a spare whose description
    /// arrived), has the compositor copy the frame into the output's shared buffer, and
    /// waits until it has.
    fn copy_frame(
        &mut self,
        c: &mut Client,
        gname: u32,
        frame: &ZwlrScreencopyFrameV1,
    ) -> Result<(Shape, bool), DriverError> {
        let id = frame.id().protocol_id();
        let state = |c: &Client| c.state.frames.get(&id).copied().unwrap_or_default();
        c.flush()?;
        while !state(c).buffers_done && !state(c).failed {
            c.dispatch_blocking()?;
        }
        let f = state(c);
        let Some(shape) = f.shm.filter(|_| !f.failed) else {
            return Err(failed("the compositor offered no shared-memory buffer"));
        };
        let (format, width, height, stride) = shape;
        if ![ARGB8888, XRGB8888, ABGR8888, XBGR8888].contains(&format) {
            return Err(failed(format!("unsupported pixel format {format:#x}")));
        }
        if self.shms.get(&gname).is_none_or(|s| s.shape != shape) {
            self.shms.remove(&gname);
            let size = stride as usize * height as usize;
            let shm = c.shm.as_ref().ok_or_else(|| failed("no wl_shm"))?;
            let fd = rustix::fs::memfd_create("cc-screencopy", rustix::fs::MemfdFlags::CLOEXEC)
                .map_err(failed)?;
            let file = File::from(fd);
            file.set_len(size as u64).map_err(failed)?;
            let fmt = wl_shm::Format::try_from(format).map_err(|_| failed("pixel format"))?;
            let pool = shm.create_pool(file.as_fd(), size as i32, &c.qh, ());
            let buffer = pool.create_buffer(
                0,
                width as i32,
                height as i32,
                stride as i32,
                fmt,
                &c.qh,
                (),
            );
            self.shms.insert(
                gname,
                Shm {
                    file,
                    pool,
                    buffer,
                    shape,
                },
            );
        }
        let shm = self.shms.get(&gname).ok_or_else(|| failed("no buffer"))?;
        frame.copy(&shm.buffer);
        c.flush()?;
        while !state(c).ready && !state(c).failed {
            c.dispatch_blocking()?;
        }
        let f = state(c);
        if f.failed {
            return Err(failed("the compositor could not copy the output"));
        }
        Ok((shape, f.y_invert))
    }

    /// Resamples the copied buffer (`shape`) onto `part` of the image (nearest pixel).
    /// The buffer is read in bands of rows into a small reused buffer and each band is
    /// converted while it is still in the cache: one pass over the 8 MB of a 1080p
    /// frame instead of a read into a frame-sized copy and a second pass over that.
    fn place(
        &mut self,
        img: &mut RgbImage,
        rect: PhysicalRect,
        part: PhysicalRect,
        gname: u32,
        (format, bw, bh, stride): Shape,
        y_invert: bool,
    ) -> Result<(), DriverError> {
        let bgr = matches!(format, ARGB8888 | XRGB8888);
        let (pw, ph) = (part.width as usize, part.height as usize);
        let (bw, bh, stride) = (bw as usize, bh as usize, stride as usize);
        if bw == 0 || bh == 0 || stride < bw * 4 {
            return Err(failed("empty buffer"));
        }
        let shm = self.shms.get(&gname).ok_or_else(|| failed("no buffer"))?;
        let band_rows = (BAND_BYTES / stride).clamp(1, bh);
        self.band.resize(band_rows * stride, 0);
        // The buffer rows now in `band`: [first, first + rows).
        let mut loaded: Option<(usize, usize)> = None;
        let ox = (part.x - rect.x) as usize;
        let oy = (part.y - rect.y) as usize;
        let iw = img.width as usize;
        let cols: Vec<usize> = if pw == bw {
            Vec::new()
        } else {
            (0..pw).map(|x| x * bw / pw).collect()
        };
        for y in 0..ph {
            let mut sy = if ph == bh { y } else { y * bh / ph };
            if y_invert {
                sy = bh - 1 - sy;
            }
            let first = match loaded {
                Some((first, rows)) if (first..first + rows).contains(&sy) => first,
                _ => {
                    // Read forward from the row needed (backward when the frame is
                    // upside down), so the next rows come from the same band.
                    let first = if y_invert {
                        (sy + 1).saturating_sub(band_rows)
                    } else {
                        sy.min(bh - band_rows)
                    };
                    let bytes = &mut self.band[..band_rows * stride];
                    shm.file
                        .read_exact_at(bytes, (first * stride) as u64)
                        .map_err(failed)?;
                    loaded = Some((first, band_rows));
                    first
                }
            };
            let at = (sy - first) * stride;
            let src = &self.band[at..at + bw * 4];
            let row = (oy + y) * iw * 3;
            let dst = &mut img.pixels[row + ox * 3..row + (ox + pw) * 3];
            match (cols.is_empty(), bgr) {
                (true, true) => bgrx_to_rgb(src, dst),
                (true, false) => rgbx_to_rgb(src, dst),
                (false, _) => {
                    let (r, b) = if bgr { (2, 0) } else { (0, 2) };
                    for (d, &sx) in dst.chunks_exact_mut(3).zip(&cols) {
                        let s = &src[sx * 4..sx * 4 + 4];
                        d.copy_from_slice(&[s[r], s[1], s[b]]);
                    }
                }
            }
        }
        Ok(())
    }

    /// Lets go of the spare frames and the shared-memory buffers.
    pub fn close(&mut self, c: &mut Client) {
        for (_, s) in std::mem::take(&mut self.spares) {
            discard(c, &s.frame);
        }
        self.shms.clear();
    }
}

/// One row of `[B, G, R, x]` pixels (`wl_shm` ARGB/XRGB8888, little-endian) as RGB.
fn bgrx_to_rgb(src: &[u8], dst: &mut [u8]) {
    for (d, s) in dst.chunks_exact_mut(3).zip(src.chunks_exact(4)) {
        d.copy_from_slice(&[s[2], s[1], s[0]]);
    }
}

/// One row of `[R, G, B, x]` pixels (ABGR/XBGR8888) as RGB.
fn rgbx_to_rgb(src: &[u8], dst: &mut [u8]) {
    for (d, s) in dst.chunks_exact_mut(3).zip(src.chunks_exact(4)) {
        d.copy_from_slice(&s[..3]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_convert_from_both_byte_orders() {
        let src = [1, 2, 3, 255, 4, 5, 6, 0];
        let mut d = [0u8; 6];
        bgrx_to_rgb(&src, &mut d);
        assert_eq!(d, [3, 2, 1, 6, 5, 4]);
        rgbx_to_rgb(&src, &mut d);
        assert_eq!(d, [1, 2, 3, 4, 5, 6]);
    }
}
