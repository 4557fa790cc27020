//! `pointer.drag`: press at one canvas point, move to another in steps, release.

use cc_protocol::{Risk, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef, no_check};
use super::exec::{Exec, drv, pointer};
use super::fields::{
    ButtonArg, Point, button, frame, held_keys, hold, landing, modifiers, point, relative_to,
};
use super::keyboard_combo::reaches_shell;
use cc_protocol::Key;
use crate::spec::{Field, Ty};

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    from: Point,
    to: Point,
    button: ButtonArg,
    steps: u64,
    hold_ms: u64,
    frame: Option<u64>,
    #[serde(default, deserialize_with = "held_keys")]
    modifiers: Vec<Key>,
    window: Option<u64>,
}

struct PointerDrag;

impl Tool for PointerDrag {
    type Args = Args;

    fn escalates(&self, a: &Args) -> bool {
        reaches_shell(&a.modifiers)
    }

    fn target(&self, a: &Args) -> Target {
        landing(a.window, vec![(a.from.x, a.from.y), (a.to.x, a.to.y)])
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        ex.frames.check(a.frame)?;
        let (ox, oy) = pointer::origin(ex, a.window)?;
        let (fx, fy, tx, ty) = (ox + a.from.x, oy + a.from.y, ox + a.to.x, oy + a.to.y);
        let from = ex.canvas.to_physical(fx, fy);
        let to = ex.canvas.to_physical(tx, ty);
        let b = a.button.button();
        pointer::glide(ex, from, 1)?;
        pointer::holding(ex, &a.modifiers, |ex| {
            ex.check_stop()?;
            drv(ex.driver.button(b, true))?;
            let moved = (if a.hold_ms > 0 {
                ex.sleep_ms(a.hold_ms)
            } else {
                Ok(())
            })
            .and_then(|_| pointer::glide(ex, to, a.steps));
            // The button comes up even when the glide was stopped.
            let up = drv(ex.driver.button(b, false));
            moved.and(up)
        })?;
        let (fcx, fcy) = ex.canvas.clamp(fx, fy);
        let (tcx, tcy) = ex.canvas.clamp(tx, ty);
        Ok(json!({"from": {"x": fcx, "y": fcy}, "to": {"x": tcx, "y": tcy}}))
    }
}

pub(crate) fn def() -> ToolDef {
    ToolDef {
        name: "pointer.drag",
        summary: "Press at one canvas point, move to another in steps, release.",
        risk: Risk::Moderate,
        needs: Needs::Input,
        nature: Nature::Acts,
        text: TextEntry::No,
        moves_focus: true,
        lands: Lands::Pointer,
        outputs: &[("from", "start point"), ("to", "end point")],
        params: Ty::Object(vec![
            Field::req("from", point(), "start point"),
            Field::req("to", point(), "end point"),
            button(),
            Field::def("steps", Ty::int(1, 400), json!(24), "intermediate moves"),
            hold(),
            frame(),
            modifiers(),
            relative_to(),
        ]),
        examples: vec![json!({"from": {"x": 100, "y": 100}, "to": {"x": 400, "y": 300}})],
        check: no_check,
        runs: Runs::Alone(&PointerDrag),
    }
}
