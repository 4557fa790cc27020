//! Screen capture through GDI: one BitBlt of the asked rectangle of the virtual screen
//! into a 32-bit top-down DIB section, with `CAPTUREBLT` so layered windows are in it.
//!
//! DXGI Desktop Duplication is the faster path on a real Windows 8+ desktop with a GPU;
//! it is not built yet, and Wine has none, so GDI is the one path (and the one tested).

use cc_desktop::{DriverError, RgbImage};
use cc_protocol::PhysicalRect;
use windows::Win32::Graphics::Gdi::{
    BI_RGB, BITMAPINFO, BITMAPINFOHEADER, BitBlt, CAPTUREBLT, CreateCompatibleDC, CreateDIBSection,
    DIB_RGB_COLORS, DeleteDC, DeleteObject, GetDC, HGDIOBJ, ReleaseDC, SRCCOPY, SelectObject,
};

/// Which path the last capture took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureMethod {
    /// GDI BitBlt of the screen device context.
    Gdi,
}

/// Pixels of `rect` (physical, virtual-screen coordinates).
pub fn capture(rect: PhysicalRect) -> Result<RgbImage, DriverError> {
    if rect.width == 0 || rect.height == 0 {
        return Err(DriverError::Failed(
            "an empty rectangle has no pixels".into(),
        ));
    }
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
