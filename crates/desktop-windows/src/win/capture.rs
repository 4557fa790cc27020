//! Screen capture: DXGI Desktop Duplication where every monitor has it (`dxgi.rs`, the
//! fast path on a real Windows 8+ desktop), else GDI: one BitBlt of the asked rectangle
//! of the virtual screen into a 32-bit top-down DIB section, with `CAPTUREBLT` so
//! layered windows are in it. A rectangle across monitors, and any capture after the
//! duplication was lost, is read with GDI; Wine has no duplication, so there GDI is the
//! path (and the one tested end to end).

use super::dxgi::Duplication;
use crate::capture_path::{CapturePath, PathChoice, choose, monitor_holding};
use cc_desktop::{DriverError, RgbImage};
use cc_protocol::PhysicalRect;
use windows::Win32::Graphics::Gdi::{
    BI_RGB, BITMAPINFO, BITMAPINFOHEADER, BitBlt, CAPTUREBLT, CreateCompatibleDC, CreateDIBSection,
    DIB_RGB_COLORS, DeleteDC, DeleteObject, GetDC, HGDIOBJ, ReleaseDC, SRCCOPY, SelectObject,
};

/// The capture paths of this desktop: the duplication while it serves, and what
/// opening it found.
pub struct Capturer {
    dup: Option<Duplication>,
    choice: PathChoice,
}

impl Capturer {
    /// Opens Desktop Duplication for these monitors (physical rectangles); GDI when
    /// any of them has none.
    pub fn open(monitors: &[PhysicalRect]) -> Capturer {
        let (dup, opened) = super::dxgi::open(monitors);
        let choice = choose(&opened);
        Capturer {
            dup: dup.filter(|_| choice.path == CapturePath::Dxgi),
            choice,
        }
    }

    /// The path whole-monitor captures take now, and why it is GDI when it is.
    pub fn choice(&self) -> &PathChoice {
        &self.choice
    }

    /// Pixels of `rect` (physical, virtual-screen coordinates).
    pub fn capture(&mut self, rect: PhysicalRect) -> Result<RgbImage, DriverError> {
        if rect.width == 0 || rect.height == 0 {
            return Err(DriverError::Failed(
                "an empty rectangle has no pixels".into(),
            ));
        }
        if let Some(dup) = &mut self.dup
            && let Some(at) = monitor_holding(rect, &dup.monitors())
        {
            match dup.capture(at, rect) {
                Ok(pixels) => {
                    return Ok(RgbImage {
                        width: rect.width,
                        height: rect.height,
                        pixels,
                    });
                }
                Err(why) => {
                    // Spent (a desktop switch, a mode change): try once to reopen,
                    // else GDI serves until the next layout change reopens it.
                    let monitors = dup.monitors();
                    self.dup = None;
                    self.choice = PathChoice {
                        path: CapturePath::Gdi,
                        fallback_reason: Some(format!("Desktop Duplication was lost: {why}")),
                    };
                    let reopened = Capturer::open(&monitors);
                    if reopened.choice.path == CapturePath::Dxgi {
                        *self = reopened;
                    }
                }
            }
        }
        gdi(rect)
    }
}

/// Pixels of `rect` through GDI (physical, virtual-screen coordinates, not empty).
fn gdi(rect: PhysicalRect) -> Result<RgbImage, DriverError> {
    let (w, h) = (rect.width as i32, rect.height as i32);
    // SAFETY: every handle made here is released below on every path; `bits` points
    // into the DIB section, which holds w*h*4 bytes while it is not deleted.
    unsafe {
        let screen = GetDC(None);
        if screen.is_invalid() {
            return Err(DriverError::Failed("GetDC(screen) failed".into()));
        }
        let mem = CreateCompatibleDC(Some(screen));
        let info = BITMAPINFO {
            bmiHeader: BITMAPINFOHEADER {
                biSize: std::mem::size_of::<BITMAPINFOHEADER>() as u32,
                biWidth: w,
                biHeight: -h,
                biPlanes: 1,
                biBitCount: 32,
                biCompression: BI_RGB.0,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut bits: *mut std::ffi::c_void = std::ptr::null_mut();
        let dib = CreateDIBSection(Some(mem), &info, DIB_RGB_COLORS, &mut bits, None, 0);
        let result = match dib {
            Ok(dib) if !bits.is_null() => {
                let old = SelectObject(mem, HGDIOBJ(dib.0));
                let blit = BitBlt(
                    mem,
                    0,
                    0,
                    w,
                    h,
                    Some(screen),
                    rect.x,
                    rect.y,
                    SRCCOPY | CAPTUREBLT,
                );
                let out = match blit {
                    Ok(()) => {
                        let n = rect.width as usize * rect.height as usize;
                        let bgra = std::slice::from_raw_parts(bits as *const u8, n * 4);
                        let mut pixels = Vec::with_capacity(n * 3);
                        for px in bgra.chunks_exact(4) {
                            pixels.extend_from_slice(&[px[2], px[1], px[0]]);
                        }
                        Ok(RgbImage {
                            width: rect.width,
                            height: rect.height,
                            pixels,
                        })
                    }
                    Err(e) => Err(DriverError::Failed(format!("BitBlt: {e}"))),
                };
                SelectObject(mem, old);
                let _ = DeleteObject(HGDIOBJ(dib.0));
                out
            }
            Ok(dib) => {
                let _ = DeleteObject(HGDIOBJ(dib.0));
                Err(DriverError::Failed("CreateDIBSection gave no bits".into()))
            }
            Err(e) => Err(DriverError::Failed(format!("CreateDIBSection: {e}"))),
        };
        let _ = DeleteDC(mem);
        ReleaseDC(None, screen);
        result
    }
}
