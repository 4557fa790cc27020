//! `screen.capture`: physical pixels → canvas-sized image → encoded, within the
//! configured area and byte budgets.

use cc_desktop::RgbImage;
use cc_protocol::{ErrorCode, PhysicalRect, Rect, StateFlag, ToolError};
use serde_json::{Value, json};

use super::{Exec, drv};
use crate::encode::{Pixels, data_url, encode, resize, to_gray};
use crate::tools::screen_capture::Args;

fn bad(msg: impl Into<String>, path: &str) -> ToolError {
    let msg = msg.into();
    ToolError::with_data(
        ErrorCode::InvalidArguments,
        msg.clone(),
        json!({"issues": [{"path": path, "message": msg}]}),
    )
}

/// The canvas rectangle to capture.
fn canvas_region(args: &Args, ex: &Exec<'_>) -> Result<Rect, ToolError> {
    let s = &ex.canvas.surface;
    let full = Rect {
        x: 0,
        y: 0,
        width: s.display_width_px as i32,
        height: s.display_height_px as i32,
    };
    if let Some(id) = args.display.as_deref() {
        let d = s.displays.iter().find(|d| d.id == id).ok_or_else(|| {
            let ids: Vec<&str> = s.displays.iter().map(|d| d.id.as_str()).collect();
            bad(
                format!("no display {id:?} (displays: {})", ids.join(", ")),
                "display",
            )
        })?;
        return Ok(d.canvas);
    }
    let Some(r) = args.region else {
        return Ok(full);
    };
    let (x0, y0) = (r.x.max(0), r.y.max(0));
    let x1 = (r.x + r.width).min(full.width as i64);
    let y1 = (r.y + r.height).min(full.height as i64);
    if x1 <= x0 || y1 <= y0 {
        return Err(bad("region lies outside the canvas", "region"));
    }
    Ok(Rect {
        x: x0 as i32,
        y: y0 as i32,
        width: (x1 - x0) as i32,
        height: (y1 - y0) as i32,
    })
}

/// Blacks out password fields in a physical capture of `area`.
fn redact(img: &mut RgbImage, area: &PhysicalRect, ex: &mut Exec<'_>) -> Result<(), ToolError> {
    let roots = drv(ex.driver.a11y_tree(None, ex.config.a11y.hard_walk_cap))?;
    let mut stack: Vec<&cc_desktop::RawNode> = roots.iter().collect();
    while let Some(n) = stack.pop() {
        stack.extend(n.children.iter());
        let (true, Some(r)) = (n.states.contains(&StateFlag::Password), n.rect) else {
            continue;
        };
        let x0 = (r.x - area.x).max(0) as u32;
        let y0 = (r.y - area.y).max(0) as u32;
        let x1 = ((r.x as i64 + r.width as i64 - area.x as i64).max(0) as u32).min(img.width);
        let y1 = ((r.y as i64 + r.height as i64 - area.y as i64).max(0) as u32).min(img.height);
        for y in y0..y1 {
            let row = (y * img.width) as usize * 3;
            img.pixels[row + x0 as usize * 3..row + x1 as usize * 3].fill(0);
        }
    }
    Ok(())
}

pub(crate) fn capture(args: &Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
    let format = args.format;
    let quality = args.quality.clamp(1, 100);
    let grayscale = args.grayscale;
    let mut scale = args.scale.clamp(0.1, 1.0);
    let region = canvas_region(args, ex)?;
    let phys = ex.canvas.rect_to_physical(&region);
    ex.check_stop()?;
    let mut img = drv(ex.driver.capture(phys))?;
    if ex.config.capture.redact_sensitive {
        redact(&mut img, &phys, ex)?;
    }
    let max_area = ex.config.capture.max_area as f64;
    let area = region.width as f64 * region.height as f64 * scale * scale;
    if area > max_area {
        scale *= (max_area / area).sqrt();
    }
    let max_bytes = ex.config.capture.max_bytes as usize;
    for _attempt in 0..6 {
        let mut w = ((region.width as f64 * scale).round() as u32).max(1);
        let mut h = ((region.height as f64 * scale).round() as u32).max(1);
        if w as u64 * h as u64 > ex.config.capture.max_area {
            // Rounding up must not push the image over the area budget.
            w = ((region.width as f64 * scale).floor() as u32).max(1);
            h = ((region.height as f64 * scale).floor() as u32).max(1);
        }
        // Resize only when the size changes; the common full-canvas capture encodes the
        // grabbed frame in place.
        let resized;
        let rgb: &[u8] = if (w, h) == (img.width, img.height) {
            &img.pixels
        } else {
            resized = resize(img.clone(), w, h)
                .map_err(|e| ToolError::new(ErrorCode::DriverFailed, e))?;
            &resized.pixels
        };
        let gray_buf;
        let px = if grayscale {
            gray_buf = to_gray(rgb);
            Pixels {
                width: w,
                height: h,
                gray: true,
                data: &gray_buf,
            }
        } else {
            Pixels {
                width: w,
                height: h,
                gray: false,
                data: rgb,
            }
        };
        let bytes =
            encode(&px, format, quality).map_err(|e| ToolError::new(ErrorCode::DriverFailed, e))?;
        if bytes.len() > max_bytes {
            scale *= ((max_bytes as f64 / bytes.len() as f64).sqrt() * 0.9).min(0.9);
            continue;
        }
        let frame = ex.frames.issue();
        let s = &ex.canvas.surface;
        let url = data_url(format, &bytes);
        let size = bytes.len();
        ex.frames.publish(crate::frames::Shot {
            frame,
            mime: format.mime(),
            bytes: bytes.into(),
            width: w,
            height: h,
            region,
        });
        return Ok(json!({
            "frame": frame,
            "format": format.name(),
            "width": w,
            "height": h,
            "bytes": size,
            "data_url": url,
            "canvas": {"display_width_px": s.display_width_px, "display_height_px": s.display_height_px},
            "region": region,
            "image_scale": w as f64 / region.width as f64,
        }));
    }
    Err(ToolError::new(
        ErrorCode::DriverFailed,
        format!("could not fit the capture into capture.max_bytes ({max_bytes})"),
    ))
}
