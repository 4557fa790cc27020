//! `screen.capture`: physical pixels → an image sized for a model, the canvas or the
//! display → encoded, within the configured area and byte budgets; or no image at all
//! when the agent already has these pixels.

use std::sync::Arc;

use cc_desktop::RgbImage;
use cc_protocol::{ErrorCode, PhysicalRect, Rect, StateFlag, ToolError};
use serde_json::{Value, json};

use super::{Exec, drv};
use crate::changes::changed_boxes;
use crate::encode::{data_url, encode_resized};
use crate::frames::Seen;
use crate::tools::screen_capture::{Args, Size};

fn bad(msg: impl Into<String>, path: &str) -> ToolError {
    let msg = msg.into();
    ToolError::with_data(
        ErrorCode::InvalidArguments,
        msg.clone(),
        json!({"issues": [{"path": path, "message": msg}]}),
    )
}

/// The canvas rectangle to capture and the physical one it covers.
fn area(args: &Args, ex: &mut Exec<'_>) -> Result<(Rect, PhysicalRect), ToolError> {
    let s = &ex.canvas.surface;
    let full = Rect {
        x: 0,
        y: 0,
        width: s.display_width_px as i32,
        height: s.display_height_px as i32,
    };
    if let Some(id) = args.window {
        return window_area(id, ex);
    }
    let region = if let Some(id) = args.display.as_deref() {
        let d = s.displays.iter().find(|d| d.id == id).ok_or_else(|| {
            let ids: Vec<&str> = s.displays.iter().map(|d| d.id.as_str()).collect();
            bad(
                format!("no display {id:?} (displays: {})", ids.join(", ")),
                "display",
            )
        })?;
        d.canvas
    } else if let Some(r) = args.region {
        clip(r.x, r.y, r.width, r.height, &full)
            .ok_or_else(|| bad("region lies outside the canvas", "region"))?
    } else {
        full
    };
    Ok((region, ex.canvas.rect_to_physical(&region)))
}

/// `x, y, width, height` clipped to `full`, `None` when nothing is left.
fn clip(x: i64, y: i64, width: i64, height: i64, full: &Rect) -> Option<Rect> {
    let (x0, y0) = (x.max(full.x as i64), y.max(full.y as i64));
    let x1 = (x + width).min(full.x as i64 + full.width as i64);
    let y1 = (y + height).min(full.y as i64 + full.height as i64);
    (x1 > x0 && y1 > y0).then(|| Rect {
        x: x0 as i32,
        y: y0 as i32,
        width: (x1 - x0) as i32,
        height: (y1 - y0) as i32,
    })
}

/// A window's rectangle as it is on screen now, read from the screen's pixels (the
/// window is not raised: what covers it shows).
fn window_area(id: u64, ex: &mut Exec<'_>) -> Result<(Rect, PhysicalRect), ToolError> {
    let w = drv(ex.driver.window_shown(id))?.ok_or_else(|| {
        bad(
            format!("window {id} is not on screen (closed or minimized); see window.list"),
            "window",
        )
    })?;
    let s = &ex.canvas.surface;
    let p = &s.physical;
    let clipped = clip(
        w.rect.x as i64,
        w.rect.y as i64,
        w.rect.width as i64,
        w.rect.height as i64,
        &Rect {
            x: p.x,
            y: p.y,
            width: p.width as i32,
            height: p.height as i32,
        },
    )
    .ok_or_else(|| bad(format!("window {id} lies outside every display"), "window"))?;
    let phys = PhysicalRect {
        x: clipped.x,
        y: clipped.y,
        width: clipped.width as u32,
        height: clipped.height as u32,
    };
    let [l, t, r, b] = ex.canvas.rect_from_physical(&phys);
    let region = Rect {
        x: l,
        y: t,
        width: (r - l).max(1),
        height: (b - t).max(1),
    };
    Ok((region, phys))
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
        let x0 = ((r.x - area.x).max(0) as u32).min(img.width);
        let y0 = ((r.y - area.y).max(0) as u32).min(img.height);
        let x1 = ((r.x as i64 + r.width as i64 - area.x as i64).max(0) as u32).min(img.width);
        let y1 = ((r.y as i64 + r.height as i64 - area.y as i64).max(0) as u32).min(img.height);
        for y in y0..y1 {
            let row = (y * img.width) as usize * 3;
            img.pixels[row + x0 as usize * 3..row + x1.max(x0) as usize * 3].fill(0);
        }
    }
    Ok(())
}

/// The image size before the byte budget: the size basis × `scale`, within the fit
/// and `capture.max_area`.
fn image_size(args: &Args, region: &Rect, phys: &PhysicalRect, max_area: u64) -> (u32, u32) {
    let (bw, bh) = match args.size {
        Size::Model | Size::Canvas => (region.width.max(1) as u32, region.height.max(1) as u32),
        Size::Native => (phys.width.max(1), phys.height.max(1)),
    };
    let (w, h) = args.fit().size(bw, bh, args.scale.clamp(0.1, 1.0));
    let budget = crate::encode::Fit {
        max_edge: 0,
        max_pixels: max_area,
    };
    budget.size(w, h, 1.0)
}

/// `{since_frame, boxes}` against the last capture the agent received of `phys`.
fn changes(ex: &Exec<'_>, phys: &PhysicalRect, region: &Rect, now: &RgbImage) -> Value {
    let Some(seen) = ex.frames.seen().filter(|s| s.area == *phys) else {
        return json!({"since_frame": null, "boxes": [region]});
    };
    let boxes: Vec<Value> = changed_boxes(&seen.pixels, now, phys)
        .iter()
        .map(|r| {
            let [l, t, r, b] = ex.canvas.rect_from_physical(r);
            json!({"x": l, "y": t, "width": r - l, "height": b - t})
        })
        .collect();
    json!({"since_frame": seen.frame, "boxes": boxes})
}

/// `canvas point = offset + image pixel × scale`, per axis.
fn to_canvas(region: &Rect, w: u32, h: u32) -> Value {
    json!({
        "offset_x": region.x,
        "offset_y": region.y,
        "scale_x": region.width as f64 / w as f64,
        "scale_y": region.height as f64 / h as f64,
    })
}

pub(crate) fn capture(args: &Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
    let quality = args.quality.clamp(1, 100);
    let (region, phys) = area(args, ex)?;
    ex.check_stop()?;
    let mut img = drv(ex.driver.capture(phys))?;
    if ex.config.capture.redact_sensitive {
        redact(&mut img, &phys, ex)?;
    }
    let (mut w, mut h) = image_size(args, &region, &phys, ex.config.capture.max_area);
    let key = format!(
        "{phys:?} {w}x{h} {} {quality} {} {}",
        args.format.name(),
        args.grayscale,
        args.size.name()
    );
    // The whole mapping, as the original plugin sent it: a point read off the image
    // is a canvas point (`to_canvas`), and a canvas point a physical one (`scale`).
    let surface = &ex.canvas.surface;
    let canvas = json!({
        "display_width_px": surface.display_width_px,
        "display_height_px": surface.display_height_px,
        "physical": surface.physical,
        "scale": surface.scale,
    });
    if args.if_changed
        && let Some(seen) = ex.frames.seen()
        && seen.key == key
        && *seen.pixels == img
    {
        let mut out = json!({
            "unchanged": true,
            "frame": seen.frame,
            "message": format!("unchanged since frame {}", seen.frame),
            "width": w,
            "height": h,
            "canvas": canvas,
            "region": region,
            "size": args.size.name(),
            "image_scale": w as f64 / region.width as f64,
            "to_canvas": to_canvas(&region, w, h),
        });
        if args.changes {
            out["changes"] = json!({"since_frame": seen.frame, "boxes": []});
        }
        return Ok(out);
    }
    let changed = args.changes.then(|| changes(ex, &phys, &region, &img));
    // Shared with the encoder's second core, then kept as the frame last seen.
    let img = Arc::new(img);
    let max_bytes = ex.config.capture.max_bytes as usize;
    for _attempt in 0..6 {
        let enc = encode_resized(&img, w, h, args.grayscale, args.format, quality)
            .map_err(|e| ToolError::new(ErrorCode::DriverFailed, e))?;
        if enc.bytes.len() > max_bytes {
            let f = ((max_bytes as f64 / enc.bytes.len() as f64).sqrt() * 0.9).min(0.9);
            w = ((w as f64 * f) as u32).max(1);
            h = ((h as f64 * f) as u32).max(1);
            continue;
        }
        let frame = ex.frames.issue();
        let url = data_url(enc.format, &enc.bytes);
        let size = enc.bytes.len();
        ex.frames.publish(crate::frames::Shot {
            frame,
            mime: enc.format.mime(),
            bytes: enc.bytes.into(),
            width: w,
            height: h,
            region,
        });
        ex.frames.saw(Seen {
            frame,
            key,
            area: phys,
            pixels: img,
        });
        let mut out = json!({
            "frame": frame,
            "format": enc.format.name(),
            "width": w,
            "height": h,
            "bytes": size,
            "data_url": url,
            "canvas": canvas,
            "region": region,
            "size": args.size.name(),
            "image_scale": w as f64 / region.width as f64,
            "to_canvas": to_canvas(&region, w, h),
            "lossy": enc.lossy,
        });
        if let Some(n) = enc.palette {
            out["palette"] = json!(n);
        }
        if let Some(id) = args.window {
            out["window"] = json!(id);
        }
        if let Some(c) = changed {
            out["changes"] = c;
        }
        return Ok(out);
    }
    Err(ToolError::new(
        ErrorCode::DriverFailed,
        format!("could not fit the capture into capture.max_bytes ({max_bytes})"),
    ))
}
