//! Window tools.

use cc_protocol::{ErrorCode, Rect, ToolError};
use serde_json::{Value, json};

use super::{Exec, drv, u64_arg};

pub fn list(ex: &mut Exec<'_>) -> Result<Value, ToolError> {
    let windows = drv(ex.driver.windows())?;
    let items: Vec<Value> = windows
        .iter()
        .map(|w| {
            let [l, t, r, b] = ex.canvas.rect_from_physical(&w.rect);
            let rect = Rect {
                x: l,
                y: t,
                width: r - l,
                height: b - t,
            };
            let display = ex
                .canvas
                .display_at(l + (r - l) / 2, t + (b - t) / 2)
                .map(|d| d.id.clone());
            json!({
                "id": w.id,
                "app_id": w.app_id,
                "pid": w.pid,
                "title": w.title,
                "rect": rect,
                "display": display,
                "focused": w.focused,
            })
        })
        .collect();
    Ok(json!({"windows": items}))
}

pub fn focus(args: &Value, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
    let id = u64_arg(args, "id");
    let exists = drv(ex.driver.windows())?.iter().any(|w| w.id == id);
    if !exists {
        return Err(ToolError::with_data(
            ErrorCode::InvalidArguments,
            format!("no window with id {id}; call window.list"),
            json!({"issues": [{"path": "id", "message": "no such window"}]}),
        ));
    }
    drv(ex.driver.focus_window(id))?;
    Ok(json!({"id": id}))
}
