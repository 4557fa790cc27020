//! The monitor layout in physical pixels, with each monitor's DPI.

use cc_desktop::{DriverError, Layout, PhysicalDisplay};
use cc_protocol::PhysicalRect;
use windows::Win32::Foundation::{LPARAM, RECT};
use windows::Win32::Graphics::Gdi::{
    EnumDisplayMonitors, GetMonitorInfoW, HDC, HMONITOR, MONITORINFO, MONITORINFOEXW,
};
use windows::Win32::UI::HiDpi::{
    DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE, DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2,
    DPI_AWARENESS_PER_MONITOR_AWARE, GetAwarenessFromDpiAwarenessContext, GetDpiForMonitor,
    GetThreadDpiAwarenessContext, MDT_EFFECTIVE_DPI, SetProcessDpiAwarenessContext,
};
use windows::core::BOOL;

use crate::dpi::Monitor;

/// Declares the process per-monitor DPI aware (v2, else v1: both make every coordinate
/// physical; Wine 8 knows only v1), or finds it already is (a host declared it).
/// `false` when it is not (too old a Windows, or a host declared another awareness);
/// the coordinates are then logical and `dpi` converts them.
pub fn declare_dpi_awareness() -> bool {
    // SAFETY: process-wide settings with constant contexts, and a query of this
    // thread's context; no pointers.
    unsafe {
        SetProcessDpiAwarenessContext(DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2).is_ok()
            || SetProcessDpiAwarenessContext(DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE).is_ok()
            || GetAwarenessFromDpiAwarenessContext(GetThreadDpiAwarenessContext())
                == DPI_AWARENESS_PER_MONITOR_AWARE
    }
}

pub fn rect(r: RECT) -> PhysicalRect {
    PhysicalRect {
        x: r.left,
        y: r.top,
        width: (r.right - r.left).max(0) as u32,
        height: (r.bottom - r.top).max(0) as u32,
    }
}

unsafe extern "system" fn collect(m: HMONITOR, _: HDC, _: *mut RECT, data: LPARAM) -> BOOL {
    // SAFETY: `data` is the `&mut Vec` `read` passed, alive for the enumeration.
    let list = unsafe { &mut *(data.0 as *mut Vec<HMONITOR>) };
    list.push(m);
    true.into()
}

/// Every monitor, the primary first flagged, with its name and DPI.
pub fn read() -> Result<Vec<(PhysicalDisplay, Monitor)>, DriverError> {
    let mut handles: Vec<HMONITOR> = Vec::new();
    // SAFETY: the callback only pushes into `handles`, which outlives the call.
    let ok = unsafe {
        EnumDisplayMonitors(
            None,
            None,
            Some(collect),
            LPARAM(&mut handles as *mut _ as isize),
        )
    };
    if !ok.as_bool() {
        return Err(DriverError::Failed("EnumDisplayMonitors failed".into()));
    }
    let mut out = Vec::new();
    for (i, h) in handles.into_iter().enumerate() {
        let mut info = MONITORINFOEXW::default();
        info.monitorInfo.cbSize = std::mem::size_of::<MONITORINFOEXW>() as u32;
        // SAFETY: `info` is a MONITORINFOEXW with its size set, as the call requires.
        let ok = unsafe { GetMonitorInfoW(h, &mut info as *mut _ as *mut MONITORINFO) };
        if !ok.as_bool() {
            continue;
        }
        let (mut dx, mut dy) = (0u32, 0u32);
        // SAFETY: out-pointers to locals.
        let dpi = unsafe { GetDpiForMonitor(h, MDT_EFFECTIVE_DPI, &mut dx, &mut dy) }
            .map(|_| dx)
            .unwrap_or(crate::dpi::BASE_DPI);
        let r = rect(info.monitorInfo.rcMonitor);
        let name = super::from_wide(&info.szDevice);
        let primary = info.monitorInfo.dwFlags & 1 != 0;
        out.push((
            PhysicalDisplay {
                id: format!("monitor-{}", i + 1),
                name: if name.is_empty() {
                    format!("DISPLAY{}", i + 1)
                } else {
                    name
                },
                rect: r,
                primary,
            },
            Monitor { rect: r, dpi },
        ));
    }
    if out.is_empty() {
        return Err(DriverError::Failed("the system reports no monitor".into()));
    }
    Ok(out)
}

/// The layout with a generation that changes when the monitors do.
#[derive(Default)]
pub struct Monitors {
    last: Vec<(PhysicalDisplay, Monitor)>,
    generation: u64,
}

impl Monitors {
    /// Reads the monitors; `true` in the second member when they changed since.
    pub fn refresh(&mut self) -> Result<(Layout, bool), DriverError> {
        let now = read()?;
        let changed = now != self.last;
        if changed {
            if !self.last.is_empty() {
                self.generation += 1;
            }
            self.last = now;
        }
        Ok((
            Layout {
                displays: self.last.iter().map(|(d, _)| d.clone()).collect(),
                generation: self.generation,
            },
            changed && self.generation > 0,
        ))
    }

    pub fn monitors(&self) -> Vec<Monitor> {
        self.last.iter().map(|(_, m)| *m).collect()
    }
}
