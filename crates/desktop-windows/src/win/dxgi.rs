//! DXGI Desktop Duplication: each monitor's desktop image as the GPU composes it,
//! copied into a CPU-readable texture kept between captures (a frame that has not
//! changed since is answered from it). One duplication per monitor of the primary
//! adapter; `capture_path::choose` decides whether all of them together serve.
//!
//! Wine 8 has no Desktop Duplication (`DuplicateOutput` is not implemented), so there
//! the driver reports the GDI path and why; the selection and the pixel logic are
//! unit-tested in `capture_path.rs`.

use cc_protocol::PhysicalRect;
use windows::Win32::Foundation::HMODULE;
use windows::Win32::Graphics::Direct3D::D3D_DRIVER_TYPE_HARDWARE;
use windows::Win32::Graphics::Direct3D11::{
    D3D11_CPU_ACCESS_READ, D3D11_CREATE_DEVICE_BGRA_SUPPORT, D3D11_MAP_READ,
    D3D11_MAPPED_SUBRESOURCE, D3D11_SDK_VERSION, D3D11_TEXTURE2D_DESC, D3D11_USAGE_STAGING,
    D3D11CreateDevice, ID3D11Device, ID3D11DeviceContext, ID3D11Texture2D,
};
use windows::Win32::Graphics::Dxgi::Common::{
    DXGI_FORMAT_B8G8R8A8_UNORM, DXGI_MODE_ROTATION_IDENTITY, DXGI_MODE_ROTATION_UNSPECIFIED,
    DXGI_SAMPLE_DESC,
};
use windows::Win32::Graphics::Dxgi::{
    DXGI_ERROR_WAIT_TIMEOUT, DXGI_OUTDUPL_FRAME_INFO, IDXGIDevice, IDXGIOutput1,
    IDXGIOutputDuplication, IDXGIResource,
};
use windows::core::Interface;

use super::monitors::rect;
use crate::capture_path::bgra_to_rgb;

/// How long one capture waits for a first frame of a monitor before giving up on it.
const FIRST_FRAME_MS: u32 = 500;

/// One monitor's duplication and the last frame read from it.
struct Output {
    rect: PhysicalRect,
    dup: IDXGIOutputDuplication,
    staging: ID3D11Texture2D,
    /// The staging texture holds a frame (a capture before any frame has none).
    has_frame: bool,
}

/// The duplications of every monitor of the primary adapter.
pub struct Duplication {
    context: ID3D11DeviceContext,
    outputs: Vec<Output>,
    /// Kept so the device outlives its duplications and textures.
    _device: ID3D11Device,
}

/// Opens a duplication for each of `monitors` (physical rectangles): the
/// duplication when there is one for every monitor, and one result per monitor saying
/// whether its duplication opened or why not.
pub fn open(monitors: &[PhysicalRect]) -> (Option<Duplication>, Vec<Result<(), String>>) {
    let (device, context) = match device() {
        Ok(d) => d,
        Err(why) => return (None, monitors.iter().map(|_| Err(why.clone())).collect()),
    };
    let mut found: Vec<Result<Output, String>> = monitors
        .iter()
        .map(|_| Err("no output of the primary adapter shows this monitor".to_string()))
        .collect();
    for output in outputs(&device) {
        let Some(at) = monitors.iter().position(|m| *m == output.rect) else {
            continue;
        };
        found[at] = duplicate(&device, output);
    }
    let results: Vec<Result<(), String>> = found
        .iter()
        .map(|r| r.as_ref().map(|_| ()).map_err(Clone::clone))
        .collect();
    let complete = !found.is_empty() && found.iter().all(Result::is_ok);
    let dup = complete.then(|| Duplication {
        context,
        outputs: found.into_iter().filter_map(Result::ok).collect(),
        _device: device,
    });
    (dup, results)
}

fn device() -> Result<(ID3D11Device, ID3D11DeviceContext), String> {
    let mut device = None;
    let mut context = None;
    // SAFETY: out-pointers to `Option`s that live across the call.
    unsafe {
        D3D11CreateDevice(
            None,
            D3D_DRIVER_TYPE_HARDWARE,
            HMODULE::default(),
            D3D11_CREATE_DEVICE_BGRA_SUPPORT,
            None,
            D3D11_SDK_VERSION,
            Some(&mut device),
            None,
            Some(&mut context),
        )
    }
    .map_err(|e| format!("no Direct3D 11 device: {e}"))?;
    match (device, context) {
        (Some(d), Some(c)) => Ok((d, c)),
        _ => Err("Direct3D 11 gave no device".into()),
    }
}

/// An output of the device's adapter, where it sits on the desktop.
struct Found {
    rect: PhysicalRect,
    output: IDXGIOutput1,
    rotated: bool,
}

fn outputs(device: &ID3D11Device) -> Vec<Found> {
    let mut out = Vec::new();
    // SAFETY: COM calls on live objects; each result is owned by its wrapper.
    unsafe {
        let Ok(adapter) = device.cast::<IDXGIDevice>().and_then(|d| d.GetAdapter()) else {
            return out;
        };
        let mut i = 0;
        while let Ok(output) = adapter.EnumOutputs(i) {
            i += 1;
            let Ok(desc) = output.GetDesc() else { continue };
            let Ok(output) = output.cast::<IDXGIOutput1>() else {
                continue;
            };
            if desc.AttachedToDesktop.as_bool() {
                out.push(Found {
                    rect: rect(desc.DesktopCoordinates),
                    output,
                    rotated: desc.Rotation != DXGI_MODE_ROTATION_IDENTITY
                        && desc.Rotation != DXGI_MODE_ROTATION_UNSPECIFIED,
                });
            }
        }
    }
    out
}

fn duplicate(device: &ID3D11Device, found: Found) -> Result<Output, String> {
    if found.rotated {
        // A rotated monitor's frames come unrotated; GDI reads it as shown.
        return Err("the monitor is rotated".into());
    }
    // SAFETY: COM calls on live objects; the description is a plain out-structure.
    unsafe {
        let dup = found
            .output
            .DuplicateOutput(device)
            .map_err(|e| format!("DuplicateOutput: {e}"))?;
        let mode = dup.GetDesc().ModeDesc;
        let desc = D3D11_TEXTURE2D_DESC {
            Width: mode.Width,
            Height: mode.Height,
            MipLevels: 1,
            ArraySize: 1,
            Format: DXGI_FORMAT_B8G8R8A8_UNORM,
            SampleDesc: DXGI_SAMPLE_DESC {
                Count: 1,
                Quality: 0,
            },
            Usage: D3D11_USAGE_STAGING,
            BindFlags: 0,
            CPUAccessFlags: D3D11_CPU_ACCESS_READ.0 as u32,
            MiscFlags: 0,
        };
        let mut staging = None;
        device
            .CreateTexture2D(&desc, None, Some(&mut staging))
            .map_err(|e| format!("a staging texture: {e}"))?;
        let staging = staging.ok_or("Direct3D 11 gave no staging texture")?;
        Ok(Output {
            rect: found.rect,
            dup,
            staging,
            has_frame: false,
        })
    }
}

impl Duplication {
    /// The monitors this duplication covers, in the order `open` was given them.
    pub fn monitors(&self) -> Vec<PhysicalRect> {
        self.outputs.iter().map(|o| o.rect).collect()
    }

    /// RGB pixels of `rect`, which lies inside monitor `at` (see
    /// `capture_path::monitor_holding`). An error means this duplication is spent (the
    /// desktop switched, the mode changed): the caller reads with GDI and reopens.
    pub fn capture(&mut self, at: usize, rect: PhysicalRect) -> Result<Vec<u8>, String> {
        let out = self
            .outputs
            .get_mut(at)
            .ok_or("no such duplicated monitor")?;
        let mut info = DXGI_OUTDUPL_FRAME_INFO::default();
        let mut resource: Option<IDXGIResource> = None;
        let wait = if out.has_frame { 0 } else { FIRST_FRAME_MS };
        // SAFETY: out-pointers that live across the call; a frame acquired here is
        // released below before the next acquire.
        let acquired = unsafe { out.dup.AcquireNextFrame(wait, &mut info, &mut resource) };
        match acquired {
            Ok(()) => {
                // SAFETY: the frame is a texture while it is held; the copy is queued
                // before the frame is released.
                let copied = unsafe {
                    let texture = resource
                        .ok_or("the frame had no desktop image")
                        .and_then(|r| {
                            r.cast::<ID3D11Texture2D>()
                                .map_err(|_| "the frame is not a texture")
                        });
                    let copied = texture.map(|t| self.context.CopyResource(&out.staging, &t));
                    let _ = out.dup.ReleaseFrame();
                    copied
                };
                copied?;
                out.has_frame = true;
            }
            Err(e) if e.code() == DXGI_ERROR_WAIT_TIMEOUT && out.has_frame => {
                // Nothing changed since the last frame: it is still the screen.
            }
            Err(e) => return Err(format!("AcquireNextFrame: {e}")),
        }
        let (left, top) = (
            (rect.x - out.rect.x) as usize,
            (rect.y - out.rect.y) as usize,
        );
        let mut mapped = D3D11_MAPPED_SUBRESOURCE::default();
        // SAFETY: the staging texture is CPU-readable; while mapped, `pData` holds
        // RowPitch * height bytes, read only before the Unmap below.
        unsafe {
            self.context
                .Map(&out.staging, 0, D3D11_MAP_READ, 0, Some(&mut mapped))
                .map_err(|e| format!("Map: {e}"))?;
            if mapped.pData.is_null() {
                self.context.Unmap(&out.staging, 0);
                return Err("Map gave no pixels".into());
            }
            let len = mapped.RowPitch as usize * out.rect.height as usize;
            let frame = std::slice::from_raw_parts(mapped.pData as *const u8, len);
            let pixels = bgra_to_rgb(
                frame,
                mapped.RowPitch as usize,
                left,
                top,
                rect.width as usize,
                rect.height as usize,
            );
            self.context.Unmap(&out.staging, 0);
            pixels.ok_or_else(|| "the area is outside the duplicated frame".into())
        }
    }
}
