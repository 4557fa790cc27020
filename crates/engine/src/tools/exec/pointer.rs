//! Pointer steps the pointer tools share, each pre-emptible.

use cc_desktop::Button;
use cc_protocol::{ErrorCode, Key, ToolError};
use serde_json::{Value, json};

use super::{Exec, drv};

/// Moves to a physical point in `steps` straight-line steps, checking the stop flag.
pub(crate) fn glide(ex: &mut Exec<'_>, to: (i32, i32), steps: u64) -> Result<(), ToolError> {
    let steps = steps.max(1);
    let from = if steps > 1 {
        drv(ex.driver.pointer_position())?
    } else {
        to
    };
    for i in 1..=steps {
        ex.check_stop()?;
        let t = i as f64 / steps as f64;
        let x = from.0 as f64 + (to.0 - from.0) as f64 * t;
        let y = from.1 as f64 + (to.1 - from.1) as f64 * t;
        drv(ex.driver.pointer_move(x.round() as i32, y.round() as i32))?;
    }
    Ok(())
}

/// The canvas origin of coordinates relative to `window` (the canvas's own without
/// one): the window's top-left corner now, or a clear refusal when it is not on screen.
pub(crate) fn origin(ex: &mut Exec<'_>, window: Option<u64>) -> Result<(f64, f64), ToolError> {
    let Some(id) = window else {
        return Ok((0.0, 0.0));
    };
    let w = drv(ex.driver.window_shown(id))?.ok_or_else(|| {
        let msg = format!(
            "window {id} is not on screen (closed or minimized); nothing was done; see window.list"
        );
        ToolError::with_data(
            ErrorCode::InvalidArguments,
            msg.clone(),
            json!({"issues": [{"path": "window", "message": msg}]}),
        )
    })?;
    let [l, t, _, _] = ex.canvas.rect_from_physical(&w.rect);
    Ok((f64::from(l), f64::from(t)))
}

pub(crate) fn position(ex: &mut Exec<'_>) -> Result<Value, ToolError> {
    let (px, py) = drv(ex.driver.pointer_position())?;
    let (x, y) = ex.canvas.to_canvas(px, py);
    let (x, y) = ex.canvas.clamp(x as f64, y as f64);
    Ok(json!({"x": x, "y": y}))
}

/// Presses and releases a button, holding it `hold_ms` (interruptible).
pub(crate) fn press(ex: &mut Exec<'_>, b: Button, hold_ms: u64) -> Result<(), ToolError> {
    ex.check_stop()?;
    drv(ex.driver.button(b, true))?;
    if hold_ms > 0 {
        ex.sleep_ms(hold_ms)?;
    }
    drv(ex.driver.button(b, false))
}

/// Runs `act` with `keys` held: pressed in order before it, released in reverse after
/// it, even when a press or the action fails.
pub(crate) fn holding<'a, T>(
    ex: &mut Exec<'a>,
    keys: &[Key],
    act: impl FnOnce(&mut Exec<'a>) -> Result<T, ToolError>,
) -> Result<T, ToolError> {
    let mut down: Vec<Key> = Vec::with_capacity(keys.len());
    let mut out = Ok(());
    for k in keys {
        out = ex.check_stop().and_then(|_| drv(ex.driver.key(*k, true)));
        if out.is_err() {
            break;
        }
        down.push(*k);
    }
    let result = out.and_then(|_| act(ex));
    let mut released = Ok(());
    for k in down.iter().rev() {
        if let Err(e) = drv(ex.driver.key(*k, false)) {
            released = released.and(Err(e));
        }
    }
    let value = result?;
    released.map(|_| value)
}
