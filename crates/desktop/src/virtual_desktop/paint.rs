//! Painting the windows, their widgets and the taskbar onto a canvas.

use embedded_graphics::mono_font::MonoFont;
use embedded_graphics::mono_font::iso_8859_1::{FONT_9X15, FONT_9X15_BOLD};
use embedded_graphics::prelude::*;
use embedded_graphics::primitives::{Circle, Polyline, PrimitiveStyle};

use super::canvas::{Area, Canvas, Rgb, rgb};
use super::scene::{Scene, Window};
use super::widgets::{
    self, BORDER, H_OFFSET_MAX, ITEM_COUNT, ROW_H, TITLE_H, VISIBLE_ROWS, WidgetId,
};
use cc_protocol::PhysicalRect;

const FONT: &MonoFont<'static> = &FONT_9X15;
const CW: i64 = 9;
const CH: i64 = 15;

const INK: Rgb = [0x1f, 0x23, 0x28];
const MUTED: Rgb = [0x57, 0x60, 0x6a];
const WHITE: Rgb = [0xff, 0xff, 0xff];
const WINDOW_BG: Rgb = [0xf4, 0xf5, 0xf7];
const WINDOW_EDGE: Rgb = [0x4a, 0x52, 0x5c];
const TITLE_ACTIVE: Rgb = [0x2c, 0x4e, 0x72];
const TITLE_IDLE: Rgb = [0xb9, 0xc2, 0xcc];
const FIELD_EDGE: Rgb = [0x8c, 0x95, 0x9f];
const ACCENT: Rgb = [0x2f, 0x6f, 0xbf];
const SELECTION: Rgb = [0xb6, 0xd4, 0xf5];
const BUTTON: Rgb = [0xe6, 0xe9, 0xed];
const BUTTON_DOWN: Rgb = [0xc4, 0xcc, 0xd6];
const ROW_ALT: Rgb = [0xf2, 0xf5, 0xf8];
const TRACK: Rgb = [0xe3, 0xe7, 0xeb];
const THUMB: Rgb = [0x9a, 0xa4, 0xaf];
const STATUS_BG: Rgb = [0xe4, 0xe8, 0xed];
const TASKBAR: Rgb = [0x1b, 0x25, 0x30];
const TASKBAR_INK: Rgb = [0xe6, 0xed, 0xf3];

fn area(r: PhysicalRect) -> Area {
    Area::new(
        i64::from(r.x),
        i64::from(r.y),
        i64::from(r.width),
        i64::from(r.height),
    )
}

fn text_width(s: &str) -> i64 {
    s.chars().count() as i64 * CW
}

/// Paints every window (bottom first) and the taskbar.
pub(super) fn paint_scene(canvas: &mut Canvas<'_>, scene: &Scene) {
    for (z, w) in scene.windows.iter().enumerate().rev() {
        let mut c = canvas.clipped(area(w.rect));
        if !c.is_empty() {
            paint_window(&mut c, scene, w, z == 0);
        }
    }
    if let Some(bar) = scene.taskbar_rect() {
        paint_taskbar(canvas, scene, area(bar));
    }
}

fn paint_window(c: &mut Canvas<'_>, scene: &Scene, w: &Window, active: bool) {
    let r = area(w.rect);
    c.fill(r, WINDOW_EDGE);
    c.fill(r.inset(i64::from(BORDER)), WINDOW_BG);
    let b = i64::from(BORDER);
    let title = Area::new(r.x0 + b, r.y0 + b, r.x1 - r.x0 - 2 * b, i64::from(TITLE_H));
    let (bar, ink) = if active {
        (TITLE_ACTIVE, WHITE)
    } else {
        (TITLE_IDLE, INK)
    };
    c.fill(title, bar);
    c.clipped(title)
        .text(title.x0 + 10, title.y0 + 7, w.title(), &FONT_9X15_BOLD, ink);
    for &id in widgets::top_level(w.kind) {
        paint_widget(c, scene, w, id);
    }
}

fn paint_widget(c: &mut Canvas<'_>, scene: &Scene, w: &Window, id: WidgetId) {
    let Some(l) = widgets::local_rect(id, &scene.list) else {
        return;
    };
    let r = area(widgets::to_physical(&w.rect, l));
    let focused = scene.focused() == Some((w.id, id));
    let pressed = scene.pressed == Some((w.id, id));
    let name = scene.widget_name(id);
    match id {
        WidgetId::Name | WidgetId::Password => paint_edit(c, scene, id, r, focused),
        WidgetId::Remember => paint_checkbox(c, r, &name, scene.form.remember, focused, pressed),
        WidgetId::Submit | WidgetId::Clear | WidgetId::Toggle => {
            paint_button(c, r, &name, focused, pressed)
        }
        WidgetId::Status => {
            c.fill(r, STATUS_BG);
            c.fill(Area::new(r.x0, r.y0, r.x1 - r.x0, 1), FIELD_EDGE);
            c.text(r.x0 + 12, r.y0 + 8, &scene.form.status, FONT, INK);
        }
        WidgetId::List => paint_list(c, scene, w, r, focused),
        WidgetId::LayoutLabel | WidgetId::SelectionLabel => {
            c.clipped(r).text(r.x0, r.y0 + 2, &name, FONT, MUTED)
        }
        _ => c.clipped(r).text(r.x0, r.y0 + 2, &name, FONT, INK),
    }
}

fn paint_edit(c: &mut Canvas<'_>, scene: &Scene, id: WidgetId, r: Area, focused: bool) {
    c.fill(r, WHITE);
    if focused {
        c.frame_rect(r, 2, ACCENT);
    } else {
        c.frame_rect(r, 1, FIELD_EDGE);
    }
    let inner = r.inset(6);
    let mut ic = c.clipped(inner);
    let text = scene.edit_text(id).unwrap_or_default();
    let capacity = ((inner.x1 - inner.x0 - 3) / CW).max(0) as usize;
    let count = text.chars().count();
    let shown = count.min(capacity);
    let skip = count - shown;
    let ty = r.y0 + (r.y1 - r.y0 - CH) / 2;
    let x = inner.x0 + 1;
    if scene.form.select_all == Some(id) && count > 0 {
        ic.fill(Area::new(x, ty - 1, shown as i64 * CW, CH + 2), SELECTION);
    }
    if id == WidgetId::Password {
        // One bullet per character; the text itself is never drawn.
        let style = PrimitiveStyle::with_fill(rgb(INK));
        for i in 0..shown as i64 {
            let cx = x + i * CW + 1;
            if let (Ok(px), Ok(py)) = (i32::try_from(cx), i32::try_from(ty + 4)) {
                let _ = Circle::new(Point::new(px, py), 7)
                    .into_styled(style)
                    .draw(&mut ic);
            }
        }
    } else {
        let tail: String = text.chars().skip(skip).collect();
        ic.text(x, ty, &tail, FONT, INK);
    }
    if focused {
        ic.fill(Area::new(x + shown as i64 * CW, ty - 1, 2, CH + 2), INK);
    }
}

fn paint_checkbox(
    c: &mut Canvas<'_>,
    r: Area,
    label: &str,
    on: bool,
    focused: bool,
    pressed: bool,
) {
    let b = Area::new(r.x0, r.y0 + 3, 18, 18);
    let fill = match (on, pressed) {
        (true, _) => ACCENT,
        (false, true) => BUTTON_DOWN,
        (false, false) => WHITE,
    };
    c.fill(b, fill);
    c.frame_rect(b, 1, if on { ACCENT } else { WINDOW_EDGE });
    if on {
        let p = |dx: i64, dy: i64| {
            Point::new(
                i32::try_from(b.x0 + dx).unwrap_or(i32::MAX),
                i32::try_from(b.y0 + dy).unwrap_or(i32::MAX),
            )
        };
        let pts = [p(4, 9), p(8, 13), p(14, 5)];
        let _ = Polyline::new(&pts)
            .into_styled(PrimitiveStyle::with_stroke(rgb(WHITE), 2))
            .draw(c);
    }
    c.clipped(r).text(r.x0 + 26, r.y0 + 5, label, FONT, INK);
    if focused {
        let under = Area::new(r.x0 + 26, r.y1 - 2, text_width(label), 1);
        c.fill(under, ACCENT);
    }
}

fn paint_button(c: &mut Canvas<'_>, r: Area, label: &str, focused: bool, pressed: bool) {
    c.fill(r, if pressed { BUTTON_DOWN } else { BUTTON });
    if focused {
        c.frame_rect(r, 2, ACCENT);
    } else {
        c.frame_rect(r, 1, WINDOW_EDGE);
    }
    let tx = r.x0 + (r.x1 - r.x0 - text_width(label)) / 2;
    let ty = r.y0 + (r.y1 - r.y0 - CH) / 2;
    c.clipped(r.inset(2)).text(tx, ty, label, FONT, INK);
}

fn paint_list(c: &mut Canvas<'_>, scene: &Scene, w: &Window, r: Area, focused: bool) {
    let rows = area(widgets::to_physical(&w.rect, widgets::rows_area()));
    c.fill(r, WHITE);
    let list = &scene.list;
    {
        let mut rc = c.clipped(rows);
        for row in 0..VISIBLE_ROWS {
            let i = list.first_row + row;
            if i >= ITEM_COUNT {
                break;
            }
            let y = rows.y0 + row as i64 * i64::from(ROW_H);
            let band = Area::new(rows.x0, y, rows.x1 - rows.x0, i64::from(ROW_H));
            let selected = list.selected == Some(i);
            let (bg, ink) = match (selected, i % 2 == 1) {
                (true, _) => (ACCENT, WHITE),
                (false, true) => (ROW_ALT, INK),
                (false, false) => (WHITE, INK),
            };
            rc.fill(band, bg);
            let tx = rows.x0 + 12 - i64::from(list.h_offset);
            let label = scene.widget_name(WidgetId::Item(i));
            rc.text(tx, y + (i64::from(ROW_H) - CH) / 2, &label, FONT, ink);
        }
    }
    // Scrollbars: a track and a thumb sized by the visible share.
    let vs = area(widgets::to_physical(
        &w.rect,
        local(WidgetId::VScroll, scene),
    ));
    let hs = area(widgets::to_physical(
        &w.rect,
        local(WidgetId::HScroll, scene),
    ));
    c.fill(vs, TRACK);
    c.fill(hs, TRACK);
    let vh = vs.y1 - vs.y0;
    let thumb_h = vh * VISIBLE_ROWS as i64 / ITEM_COUNT as i64;
    let max_first = (ITEM_COUNT - VISIBLE_ROWS) as i64;
    let ty = vs.y0 + (vh - thumb_h) * list.first_row as i64 / max_first;
    c.fill(
        Area::new(vs.x0 + 3, ty + 2, vs.x1 - vs.x0 - 6, thumb_h - 4),
        THUMB,
    );
    let hw = hs.x1 - hs.x0;
    let content = hw + i64::from(H_OFFSET_MAX);
    let thumb_w = hw * hw / content;
    let tx = hs.x0 + (hw - thumb_w) * i64::from(list.h_offset) / i64::from(H_OFFSET_MAX);
    c.fill(
        Area::new(tx + 2, hs.y0 + 3, thumb_w - 4, hs.y1 - hs.y0 - 6),
        THUMB,
    );
    if focused {
        c.frame_rect(r, 2, ACCENT);
    } else {
        c.frame_rect(r, 1, FIELD_EDGE);
    }
}

fn local(id: WidgetId, scene: &Scene) -> widgets::Local {
    widgets::local_rect(id, &scene.list).unwrap_or(widgets::Local {
        x: 0,
        y: 0,
        w: 0,
        h: 0,
    })
}

fn paint_taskbar(c: &mut Canvas<'_>, scene: &Scene, bar: Area) {
    c.fill(bar, TASKBAR);
    c.fill(Area::new(bar.x0, bar.y0, bar.x1 - bar.x0, 1), ACCENT);
    let ty = bar.y0 + (bar.y1 - bar.y0 - CH) / 2;
    let title = scene.windows.first().map(|w| w.title()).unwrap_or("");
    let mut tc = c.clipped(bar);
    tc.text(
        bar.x0 + 14,
        ty,
        &format!("Active: {title}"),
        &FONT_9X15_BOLD,
        TASKBAR_INK,
    );
    if !scene.note.is_empty() {
        let x = bar.x1 - 14 - text_width(&scene.note);
        tc.text(x, ty, &scene.note, FONT, TASKBAR_INK);
    }
}
