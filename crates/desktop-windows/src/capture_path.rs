//! Which capture path serves a rectangle, and the pixel conversion both paths share,
//! without a desktop.
//!
//! DXGI Desktop Duplication hands out whole monitors as GPU frames: the fast path on a
//! real Windows 8+ desktop, but one duplication serves one monitor, so a rectangle that
//! crosses monitors (or a system without duplication, such as Wine or a remote session
//! without a GPU) is read with GDI instead. Both paths end in 32-bit BGRA rows that may
//! be wider than the picture (a row pitch), cut and turned into RGB here.

use cc_protocol::PhysicalRect;

/// How the driver reads the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapturePath {
    /// DXGI Desktop Duplication of each monitor (the GPU's frames).
    Dxgi,
    /// GDI BitBlt of the virtual screen's device context.
    Gdi,
}

impl CapturePath {
    /// The name `check` reports.
    pub fn name(self) -> &'static str {
        match self {
            CapturePath::Dxgi => "dxgi",
            CapturePath::Gdi => "gdi",
        }
    }
}

/// What opening Desktop Duplication found: the path every capture starts on, and why
/// it is GDI when it is (the reason `check` shows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathChoice {
    /// The path whole-monitor captures take.
    pub path: CapturePath,
    /// Why Desktop Duplication is not in use, when it is not.
    pub fallback_reason: Option<String>,
}

/// Duplication is used when it opened for every monitor; a monitor without it would
/// make captures there silently slower and differently timed, so then GDI serves all.
/// `opened` is one result per monitor (`Err` says why that monitor has none).
pub fn choose(opened: &[Result<(), String>]) -> PathChoice {
    if opened.is_empty() {
        return PathChoice {
            path: CapturePath::Gdi,
            fallback_reason: Some("Desktop Duplication found no monitor to duplicate".into()),
        };
    }
    match opened.iter().find_map(|r| r.as_ref().err()) {
        None => PathChoice {
            path: CapturePath::Dxgi,
            fallback_reason: None,
        },
        Some(why) => PathChoice {
            path: CapturePath::Gdi,
            fallback_reason: Some(format!("Desktop Duplication is unavailable: {why}")),
        },
    }
}

/// The one monitor (index into `monitors`) that holds all of `rect`, if any: only such
/// a rectangle can be cut from a single duplicated frame.
pub fn monitor_holding(rect: PhysicalRect, monitors: &[PhysicalRect]) -> Option<usize> {
    let right = i64::from(rect.x) + i64::from(rect.width);
    let bottom = i64::from(rect.y) + i64::from(rect.height);
    monitors.iter().position(|m| {
        rect.x >= m.x
            && rect.y >= m.y
            && right <= i64::from(m.x) + i64::from(m.width)
            && bottom <= i64::from(m.y) + i64::from(m.height)
    })
}

/// The RGB pixels of the `width`×`height` area at (`left`, `top`) of a top-down BGRA
/// frame whose rows are `pitch` bytes apart. `None` when the area or the pitch does not
/// fit in `frame` (a frame shorter than its description is never read past).
pub fn bgra_to_rgb(
    frame: &[u8],
    pitch: usize,
    left: usize,
    top: usize,
    width: usize,
    height: usize,
) -> Option<Vec<u8>> {
    let row_bytes = left.checked_add(width)?.checked_mul(4)?;
    if row_bytes > pitch && height > 0 {
        return None;
    }
    if height > 0 {
        let last = top
            .checked_add(height - 1)?
            .checked_mul(pitch)?
            .checked_add(row_bytes)?;
        if last > frame.len() {
            return None;
        }
    }
    let mut out = Vec::with_capacity(width * height * 3);
    for y in top..top + height {
        let start = y * pitch + left * 4;
        for px in frame[start..start + width * 4].chunks_exact(4) {
            out.extend_from_slice(&[px[2], px[1], px[0]]);
        }
    }
    Some(out)
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
    fn duplication_serves_only_when_every_monitor_has_it() {
        let all = choose(&[Ok(()), Ok(())]);
        assert_eq!(all.path, CapturePath::Dxgi);
        assert_eq!(all.fallback_reason, None);
        let one_missing = choose(&[Ok(()), Err("E_NOTIMPL".into())]);
        assert_eq!(one_missing.path, CapturePath::Gdi);
        assert!(
            one_missing
                .fallback_reason
                .as_deref()
                .is_some_and(|w| w.contains("E_NOTIMPL")),
            "{one_missing:?}"
        );
        let none = choose(&[]);
        assert_eq!(none.path, CapturePath::Gdi);
        assert!(none.fallback_reason.is_some());
        assert_eq!(CapturePath::Dxgi.name(), "dxgi");
        assert_eq!(CapturePath::Gdi.name(), "gdi");
    }

    #[test]
    fn a_rectangle_is_cut_from_the_monitor_that_holds_it_all() {
        // A 1920-wide primary and a 2560-wide monitor to its left.
        let monitors = [r(0, 0, 1920, 1080), r(-2560, 0, 2560, 1440)];
        assert_eq!(monitor_holding(r(10, 10, 100, 100), &monitors), Some(0));
        assert_eq!(monitor_holding(r(-2560, 0, 2560, 1440), &monitors), Some(1));
        assert_eq!(monitor_holding(r(0, 0, 1920, 1080), &monitors), Some(0));
        // Across the seam, or past an edge: GDI's.
        assert_eq!(monitor_holding(r(-10, 0, 20, 20), &monitors), None);
        assert_eq!(monitor_holding(r(1900, 1070, 21, 5), &monitors), None);
        assert_eq!(
            monitor_holding(r(i32::MAX, i32::MAX, u32::MAX, 1), &monitors),
            None
        );
    }

    #[test]
    fn bgra_rows_with_a_pitch_become_rgb() {
        // A 3x2 frame, rows padded to 16 bytes; pixel (x, y) is B=x, G=y, R=9.
        let pitch = 16;
        let mut frame = vec![0xEE; pitch * 2];
        for y in 0..2 {
            for x in 0..3 {
                let i = y * pitch + x * 4;
                frame[i..i + 4].copy_from_slice(&[x as u8, y as u8, 9, 255]);
            }
        }
        let all = bgra_to_rgb(&frame, pitch, 0, 0, 3, 2).unwrap();
        assert_eq!(
            all,
            vec![9, 0, 0, 9, 0, 1, 9, 0, 2, 9, 1, 0, 9, 1, 1, 9, 1, 2]
        );
        let cut = bgra_to_rgb(&frame, pitch, 1, 1, 2, 1).unwrap();
        assert_eq!(cut, vec![9, 1, 1, 9, 1, 2]);
        assert_eq!(bgra_to_rgb(&frame, pitch, 0, 0, 0, 0), Some(vec![]));
    }

    #[test]
    fn an_area_outside_the_frame_is_refused_not_read() {
        let frame = vec![0u8; 16 * 2];
        // Wider than the pitch, taller than the frame, past the right edge.
        assert_eq!(bgra_to_rgb(&frame, 16, 0, 0, 5, 1), None);
        assert_eq!(bgra_to_rgb(&frame, 16, 0, 0, 4, 3), None);
        assert_eq!(bgra_to_rgb(&frame, 16, 2, 0, 3, 1), None);
        assert_eq!(bgra_to_rgb(&frame, 16, usize::MAX, 0, 1, 1), None);
        // A frame shorter than its last row.
        assert_eq!(bgra_to_rgb(&frame[..20], 16, 0, 0, 4, 2), None);
    }
}
