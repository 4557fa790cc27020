//! Pointer tools: move, click, drag, scroll, each step pre-emptible.

use cc_desktop::{Axis, Button};
use cc_protocol::ToolError;
use serde_json::{Value, json};

use super::{Exec, drv, f64_arg, str_arg, u64_arg};

fn button(args: &Value) -> Button {
    match str_arg(args, "button") {
        "right" => Button::Right,
        "middle" => Button::Middle,
        _ => Button::Left,
    }
}

fn frame(args: &Value) -> Option<u64> {
    args.get("frame").and_then(Value::as_u64)
}

/// Moves to a physical point in `steps` straight-line steps, checking the stop flag.
fn glide(ex: &mut Exec<'_>, to: (i32, i32), steps: u64) -> Result<(), ToolError> {
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

fn position(ex: &mut Exec<'_>) -> Result<Value, ToolError> {
    let (px, py) = drv(ex.driver.pointer_position())?;
    let (x, y) = ex.canvas.from_physical(px, py);
    let (x, y) = ex.canvas.clamp(x as f64, y as f64);
    Ok(json!({"x": x, "y": y}))
}

pub fn move_to(args: &Value, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
    ex.frames.check(frame(args))?;
    let (x, y) = (
        f64_arg(args, "x").unwrap_or(0.0),
        f64_arg(args, "y").unwrap_or(0.0),
    );
    let target = ex.canvas.to_physical(x, y);
    glide(ex, target, u64_arg(args, "steps"))?;
    Ok(json!({"position": position(ex)?}))
}

/// Presses and releases a button, holding it `hold_ms` (interruptible).
fn press(ex: &mut Exec<'_>, b: Button, hold_ms: u64) -> Result<(), ToolError> {
    ex.check_stop()?;
    drv(ex.driver.button(b, true))?;
    if hold_ms > 0 {
        ex.sleep_ms(hold_ms)?;
    }
    drv(ex.driver.button(b, false))
}

pub fn click(args: &Value, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
    ex.frames.check(frame(args))?;
    if let (Some(x), Some(y)) = (f64_arg(args, "x"), f64_arg(args, "y")) {
        let target = ex.canvas.to_physical(x, y);
        glide(ex, target, 1)?;
    }
    let b = button(args);
    let times = u64_arg(args, "times").max(1);
    let hold = u64_arg(args, "hold_ms");
    for _ in 0..times {
        press(ex, b, hold)?;
    }
    Ok(json!({"button": str_arg(args, "button"), "times": times, "position": position(ex)?}))
}

fn point(args: &Value, name: &str) -> (f64, f64) {
    let p = args.get(name).unwrap_or(&Value::Null);
    (
        f64_arg(p, "x").unwrap_or(0.0),
        f64_arg(p, "y").unwrap_or(0.0),
    )
}

pub fn drag(args: &Value, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
    ex.frames.check(frame(args))?;
    let (fx, fy) = point(args, "from");
    let (tx, ty) = point(args, "to");
    let from = ex.canvas.to_physical(fx, fy);
    let to = ex.canvas.to_physical(tx, ty);
    let b = button(args);
    glide(ex, from, 1)?;
    ex.check_stop()?;
    drv(ex.driver.button(b, true))?;
    let hold = u64_arg(args, "hold_ms");
    if hold > 0 {
        ex.sleep_ms(hold)?;
    }
    glide(ex, to, u64_arg(args, "steps"))?;
    drv(ex.driver.button(b, false))?;
    let (fcx, fcy) = ex.canvas.clamp(fx, fy);
    let (tcx, tcy) = ex.canvas.clamp(tx, ty);
    Ok(json!({"from": {"x": fcx, "y": fcy}, "to": {"x": tcx, "y": tcy}}))
}

pub fn scroll(args: &Value, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
    ex.frames.check(frame(args))?;
    if let (Some(x), Some(y)) = (f64_arg(args, "x"), f64_arg(args, "y")) {
        let target = ex.canvas.to_physical(x, y);
        glide(ex, target, 1)?;
    }
    let axis = if str_arg(args, "axis") == "horizontal" {
        Axis::Horizontal
    } else {
        Axis::Vertical
    };
    let amount = args.get("amount").and_then(Value::as_i64).unwrap_or(0);
    for _ in 0..amount.unsigned_abs() {
        ex.check_stop()?;
        drv(ex.driver.scroll(axis, amount > 0))?;
    }
    Ok(json!({"axis": str_arg(args, "axis"), "amount": amount}))
}
