//! Capture through `zwlr_screencopy_v1` into shared memory: each output under the
//! asked rectangle copies its part into a memfd buffer, which is resampled from the
//! output's buffer pixels to its layout size (scaled outputs) and placed on the image.

use std::fs::File;
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;

use cc_desktop::{DriverError, RgbImage};
use cc_protocol::PhysicalRect;
use wayland_client::protocol::{wl_buffer::WlBuffer, wl_shm, wl_shm_pool::WlShmPool};

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

/// The capture side: its buffer and a scratch copy of it.
#[derive(Default)]
pub struct Capture {
    shm: Option<Shm>,
    scratch: Vec<u8>,
}

fn failed(what: impl std::fmt::Display) -> DriverError {
    DriverError::Failed(format!("screencopy: {what}"))
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
            .values()
            .filter_map(|o| {
                let (ox, oy, ow, oh) = o.logical?;
                let out = PhysicalRect {
                    x: ox,
                    y: oy,
                    width: u32::try_from(ow).ok()?,
                    height: u32::try_from(oh).ok()?,
                };
                Some((o.wl.clone(), out, intersect(rect, out)?))
            })
            .collect();
        for (wl, out, part) in parts {
            c.state.frame = FrameState::default();
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
            let r = self.copy_frame(c, &frame);
            frame.destroy();
            let shape = r?;
            self.place(&mut img, rect, part, shape, c.state.frame.y_invert)?;
        }
        Ok(img)
    }

    /// Waits for the frame's buffer description, copies it into shared memory and
    /// reads it back into `scratch`.
    fn copy_frame(
        &mut self,
        c: &mut Client,
        frame: &wayland_protocols_wlr::screencopy::v1::client::zwlr_screencopy_frame_v1::ZwlrScreencopyFrameV1,
    ) -> Result<(u32, u32, u32, u32), DriverError> {
        c.flush()?;
        while !c.state.frame.buffers_done && !c.state.frame.failed {
            c.dispatch_blocking()?;
        }
        let Some(shape) = c.state.frame.shm.filter(|_| !c.state.frame.failed) else {
            return Err(failed("the compositor offered no shared-memory buffer"));
        };
        let (format, width, height, stride) = shape;
        if ![ARGB8888, XRGB8888, ABGR8888, XBGR8888].contains(&format) {
            return Err(failed(format!("unsupported pixel format {format:#x}")));
        }
        let size = stride as usize * height as usize;
        if self.shm.as_ref().is_none_or(|s| s.shape != shape) {
            self.shm = None;
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
            self.shm = Some(Shm {
                file,
                pool,
                buffer,
                shape,
            });
        }
        let shm = self.shm.as_ref().ok_or_else(|| failed("no buffer"))?;
        frame.copy(&shm.buffer);
        c.flush()?;
        while !c.state.frame.ready && !c.state.frame.failed {
            c.dispatch_blocking()?;
        }
        if c.state.frame.failed {
            return Err(failed("the compositor could not copy the output"));
        }
        self.scratch.resize(size, 0);
        shm.file
            .read_exact_at(&mut self.scratch, 0)
            .map_err(failed)?;
        Ok(shape)
    }

    /// Resamples the copied buffer (`shape`) onto `part` of the image (nearest pixel).
    fn place(
        &self,
        img: &mut RgbImage,
        rect: PhysicalRect,
        part: PhysicalRect,
        (format, bw, bh, stride): (u32, u32, u32, u32),
        y_invert: bool,
    ) -> Result<(), DriverError> {
        let bgr = matches!(format, ARGB8888 | XRGB8888);
        let (pw, ph) = (part.width as usize, part.height as usize);
        let (bw, bh, stride) = (bw as usize, bh as usize, stride as usize);
        if bw == 0 || bh == 0 || self.scratch.len() < stride * bh {
            return Err(failed("empty buffer"));
        }
        let ox = (part.x - rect.x) as usize;
        let oy = (part.y - rect.y) as usize;
        let iw = img.width as usize;
        for y in 0..ph {
            let mut sy = if ph == bh { y } else { y * bh / ph };
            if y_invert {
                sy = bh - 1 - sy;
            }
            let src = &self.scratch[sy * stride..sy * stride + bw * 4];
            let row = (oy + y) * iw * 3;
            let dst = &mut img.pixels[row + ox * 3..row + (ox + pw) * 3];
            if pw == bw {
                for (d, s) in dst.chunks_exact_mut(3).zip(src.chunks_exact(4)) {
                    if bgr {
                        d.copy_from_slice(&[s[2], s[1], s[0]]);
                    } else {
                        d.copy_from_slice(&s[..3]);
                    }
                }
            } else {
                for (x, d) in dst.chunks_exact_mut(3).enumerate() {
                    let sx = x * bw / pw;
                    let s = &src[sx * 4..sx * 4 + 4];
                    if bgr {
                        d.copy_from_slice(&[s[2], s[1], s[0]]);
                    } else {
                        d.copy_from_slice(&s[..3]);
                    }
                }
            }
        }
        Ok(())
    }

    /// Lets go of the shared-memory buffer.
    pub fn close(&mut self) {
        self.shm = None;
    }
}
