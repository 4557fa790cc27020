//! `screen.capture`: the screen, a region, one display or one window, as an image sized
//! for a model (or the canvas, or the display's own pixels), with the mapping back to
//! the canvas; an unchanged screen answers without an image.

use cc_protocol::{Description, Risk, ToolError};
use std::sync::Arc;

use cc_desktop::RgbImage;
use cc_protocol::{ErrorCode, PhysicalRect, Rect, StateFlag};

use super::exec::drv;
use crate::changes::{Fingerprint, changed_boxes};
use crate::encode::{data_url, encode_resized};
use crate::frames::Seen;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::def::{Checked, Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef};
use super::describe::Judged;
use super::exec::Exec;
use super::fields::window_id;
use crate::encode::{Fit, Format};
use crate::config::Config;
use crate::spec::{Field, Ty};

/// A canvas rectangle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
pub(crate) struct Region {
    pub x: i64,
    pub y: i64,
    pub width: i64,
    pub height: i64,
}

/// What the image's pixels are measured against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Size {
    /// Canvas units × `scale`, then within `max_edge` and `max_pixels`.
    Model,
    /// Canvas units × `scale` (within `max_edge` and `max_pixels` when given).
    Canvas,
    /// The display's own pixels × `scale` (zoom; within `max_edge` and `max_pixels`
    /// when given).
    Native,
}

impl Size {
    pub fn name(self) -> &'static str {
        match self {
            Size::Model => "model",
            Size::Canvas => "canvas",
            Size::Native => "native",
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub(crate) struct Args {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<Region>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
    #[serde(deserialize_with = "format", serialize_with = "format_name")]
    pub format: Format,
    pub quality: u8,
    pub size: Size,
    pub scale: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_edge: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_pixels: Option<u64>,
    pub grayscale: bool,
    pub if_changed: bool,
    pub changes: bool,
}

impl Args {
    /// The canvas rectangle it asks for, when it names one that a [`Rect`] holds.
    pub(crate) fn region_rect(&self) -> Option<Rect> {
        let r = self.region?;
        let n = |v: i64| i32::try_from(v).ok();
        Some(Rect {
            x: n(r.x)?,
            y: n(r.y)?,
            width: n(r.width)?,
            height: n(r.height)?,
        })
    }

    /// A capture of `region` (the whole screen when `None`) at `size` × `scale`
    /// within `fit`, always with an image (a vocabulary's screenshot has no
    /// "unchanged" answer); format, quality and grayscale as the session's config
    /// says, as they would be for a caller who names none.
    pub(crate) fn image(
        config: &Config,
        region: Option<Region>,
        size: Size,
        scale: f64,
        fit: Option<Fit>,
    ) -> Args {
        let c = &config.capture;
        Args {
            region,
            display: None,
            window: None,
            // The config's format validated against the same names when it was set.
            format: Format::parse(&c.default_format).unwrap_or(Format::Auto),
            quality: c.default_quality,
            size,
            scale,
            max_edge: fit.map(|f| f.max_edge),
            max_pixels: fit.map(|f| f.max_pixels),
            grayscale: c.grayscale,
            if_changed: false,
            changes: false,
        }
    }

    /// The limits the image must fit in: those given, else the model's for `size:
    /// model` and none for the full sizes (so a zoom can be native yet bounded).
    pub fn fit(&self) -> Fit {
        let default = match self.size {
            Size::Model => Fit::MODEL,
            Size::Canvas | Size::Native => Fit::NONE,
        };
        Fit {
            max_edge: self.max_edge.unwrap_or(default.max_edge),
            max_pixels: self.max_pixels.unwrap_or(default.max_pixels),
        }
    }
}

fn format_name<S: serde::Serializer>(f: &Format, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(f.name())
}

fn format<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Format, D::Error> {
    let name = String::deserialize(d)?;
    Format::parse(&name).ok_or_else(|| serde::de::Error::custom(format!("no format {name:?}")))
}

pub(super) struct ScreenCapture;

impl Tool for ScreenCapture {
    type Args = Args;

    fn escalates(&self, _: &Args) -> bool {
        false
    }

    fn describe(&self, a: &Args, _: &Judged<'_>) -> Description {
        let part = match (&a.region, a.window) {
            (Some(_), _) => " (a region)",
            (None, Some(_)) => " (a window)",
            (None, None) => "",
        };
        Description {
            title: format!("Capture the screen{part}"),
            ..Default::default()
        }
    }

    fn target(&self, _: &Args) -> Target {
        Target::Focused
    }

    fn run(&self, args: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        capture(&args, ex)
    }
}

fn one_area(c: &mut Checked<'_>) {
    let given: Vec<&str> = ["region", "display", "window"]
        .into_iter()
        .filter(|k| c.given(k))
        .collect();
    if given.len() > 1 {
        c.issue(
            given[1],
            "give at most one of region, display and window",
        );
    }
}

pub(crate) fn def() -> ToolDef {
    let region = Ty::Object(vec![
        Field::req("x", Ty::int(-1_000_000, 1_000_000), "canvas left"),
        Field::req("y", Ty::int(-1_000_000, 1_000_000), "canvas top"),
        Field::req("width", Ty::int(1, 1_000_000), "canvas width"),
        Field::req("height", Ty::int(1, 1_000_000), "canvas height"),
    ]);
    ToolDef {
        name: "screen.capture",
        summary: "Capture the screen (or a region, one display or one window) as an image sized for a model, with its mapping to the canvas.",
        risk: Risk::Benign,
        needs: Needs::Capture,
        nature: Nature::Observes,
        text: TextEntry::No,
        moves_focus: false,
        lands: Lands::Focused,
        outputs: &[
            (
                "format",
                "png, jpeg or webp (the pixels are the image content block)",
            ),
            ("width", "image width in pixels"),
            ("height", "image height in pixels"),
            ("bytes", "encoded size"),
            (
                "frame",
                "frame number to cite in actions computed from this capture",
            ),
            (
                "canvas",
                "{display_width_px, display_height_px, physical, scale}: the canvas the image covers and its factor to physical pixels",
            ),
            ("region", "the captured canvas region"),
            ("image_scale", "image pixels per canvas unit"),
            (
                "to_canvas",
                "{offset_x, offset_y, scale_x, scale_y}: image pixel (u, v) is canvas point (offset_x + u × scale_x, offset_y + v × scale_y)",
            ),
            ("size", "model, canvas or native: what the image size was measured against"),
            ("palette", "colours of a palette PNG"),
            ("lossy", "whether pixels were changed beyond resizing (a quantized palette or JPEG)"),
            ("window", "the captured window's id"),
            (
                "unchanged",
                "true: the pixels equal those of `frame`, which the agent already has; no image is sent",
            ),
            (
                "changes",
                "{since_frame, boxes}: canvas rectangles that changed since the last capture received (with changes: true)",
            ),
        ],
        params: Ty::Object(vec![
            Field::opt("region", region, "canvas rectangle to capture"),
            Field::opt(
                "display",
                Ty::Str {
                    max_chars: Some(64),
                    non_empty: true,
                },
                "a display id from surface.displays",
            ),
            Field::opt(
                "window",
                window_id(),
                "a window id of window.list: its rectangle, not raised (what covers it shows)",
            ),
            Field::cfg(
                "format",
                Ty::one_of(&["auto", "png", "jpeg", "webp"]),
                "capture.default_format",
                "image format; auto: a palette PNG for screen content, JPEG for photographic content",
            ),
            Field::cfg(
                "quality",
                Ty::int(1, 100),
                "capture.default_quality",
                "JPEG quality",
            ),
            Field::def(
                "size",
                Ty::one_of(&["model", "canvas", "native"]),
                json!("model"),
                "model: canvas size within max_edge and max_pixels; canvas: canvas size; native: the display's own pixels (zoom); any of them within max_edge and max_pixels when given",
            ),
            Field::def(
                "scale",
                Ty::num(0.1, 1.0),
                json!(1.0),
                "image size relative to the size chosen by `size`",
            ),
            Field::opt(
                "max_edge",
                Ty::int(16, 16384),
                "longest image side in pixels, aspect kept; when not given: 1568 for size model, no limit for canvas and native",
            ),
            Field::opt(
                "max_pixels",
                Ty::int(1024, 1 << 40),
                "most image pixels, aspect kept; when not given: 1 150 000 for size model, no limit for canvas and native",
            ),
            Field::cfg(
                "grayscale",
                Ty::Bool,
                "capture.grayscale",
                "grayscale image",
            ),
            Field::def(
                "if_changed",
                Ty::Bool,
                json!(false),
                "answer `unchanged` without an image when the pixels equal the last capture the agent received with the same arguments",
            ),
            Field::def(
                "changes",
                Ty::Bool,
                json!(false),
                "add the canvas boxes that changed since the last capture received of the same area",
            ),
        ]),
        examples: vec![
            json!({}),
            json!({"region": {"x": 0, "y": 0, "width": 800, "height": 600}, "format": "jpeg", "quality": 70}),
            json!({"region": {"x": 100, "y": 100, "width": 400, "height": 300}, "size": "native"}),
            json!({"size": "native", "max_edge": 1568, "max_pixels": 1_150_000}),
            json!({"window": 2, "changes": true}),
            json!({"if_changed": true}),
            json!({"size": "canvas", "format": "png"}),
        ],
        check: one_area,
        runs: Runs::Alone(&ScreenCapture),
    }
}

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
fn changes(ex: &Exec<'_>, phys: &PhysicalRect, region: &Rect, now: &Fingerprint) -> Value {
    let Some(seen) = ex.frames.seen().filter(|s| s.area == *phys) else {
        return json!({"since_frame": null, "boxes": [region]});
    };
    let boxes: Vec<Value> = changed_boxes(&seen.fingerprint, now, phys)
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

fn capture(args: &Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
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
    // What is remembered of this capture for the next `if_changed` and `changes`.
    let print = Fingerprint::of(&img);
    if args.if_changed
        && let Some(seen) = ex.frames.seen()
        && seen.key == key
        && seen.fingerprint == print
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
    let changed = args.changes.then(|| changes(ex, &phys, &region, &print));
    // Shared with the encoder's second core.
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
            fingerprint: print.clone(),
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
