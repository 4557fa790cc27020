//! `pointer.drag`: press at one canvas point or element, move to another in steps,
//! release.

use cc_protocol::{Description, ErrorCode, Risk, ToolError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::def::{Checked, Lands, Nature, Needs, Runs, Spot, Target, TextEntry, Tool, ToolDef};
use super::describe::{self, Judged, places};
use super::element::{self, ElementArg};
use super::exec::{Exec, drv, pointer};
use super::fields::{
    ButtonArg, HOLD_MS, Point, button, frame, held_keys, hold, key_names, landing, modifiers,
    point, relative_to,
};
use super::keyboard_combo::reaches_shell;
use cc_protocol::Key;
use crate::spec::{Field, Ty};

/// Glides in this many moves unless a call says otherwise.
const STEPS: u64 = 24;

#[derive(Debug, Clone, Deserialize, Serialize)]
pub(crate) struct Args {
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<Point>,
    #[serde(skip_serializing_if = "Option::is_none")]
    to: Option<Point>,
    #[serde(skip_serializing_if = "Option::is_none")]
    from_element: Option<ElementArg>,
    #[serde(skip_serializing_if = "Option::is_none")]
    to_element: Option<ElementArg>,
    button: ButtonArg,
    steps: u64,
    hold_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    frame: Option<u64>,
    #[serde(
        default,
        deserialize_with = "held_keys",
        serialize_with = "key_names",
        skip_serializing_if = "Vec::is_empty"
    )]
    modifiers: Vec<Key>,
    #[serde(skip_serializing_if = "Option::is_none")]
    window: Option<u64>,
}

/// One end of the drag, as named: a point or an element (validation ensured one).
fn spot(p: Option<Point>, el: &Option<ElementArg>) -> Option<Spot> {
    match (p, el) {
        (_, Some(el)) => Some(Spot::Centre(el.element())),
        (Some(p), None) => Some(Spot::Point(p.x, p.y)),
        (None, None) => None,
    }
}

/// One end of the drag, found.
struct End {
    /// Where the pointer goes.
    physical: (i32, i32),
    /// The same point on the canvas (clamped), for the answer.
    canvas: (i32, i32),
    /// `{ref, role, name}` of the element, when the end was named by one.
    element: Option<Value>,
}

/// Finds one end: an element's centre, re-checked against the desktop, or a point
/// relative to `origin`.
fn place(
    p: Option<Point>,
    el: &Option<ElementArg>,
    origin: (f64, f64),
    ex: &mut Exec<'_>,
) -> Result<End, ToolError> {
    match (p, el) {
        (_, Some(el)) => {
            let (physical, element) = element::locate(el, ex)?;
            let (cx, cy) = ex.canvas.to_canvas(physical.0, physical.1);
            Ok(End {
                physical,
                canvas: ex.canvas.clamp(f64::from(cx), f64::from(cy)),
                element: Some(element),
            })
        }
        (Some(p), None) => {
            let (x, y) = (origin.0 + p.x, origin.1 + p.y);
            Ok(End {
                physical: ex.canvas.to_physical(x, y),
                canvas: ex.canvas.clamp(x, y),
                element: None,
            })
        }
        (None, None) => Err(ToolError::new(
            ErrorCode::InvalidArguments,
            "each end of a drag needs a point or an element",
        )),
    }
}

impl Args {
    /// A left-button drag between two canvas points with `modifiers` held: a drag as a
    /// vocabulary asks for one.
    pub(crate) fn between(from: (i64, i64), to: (i64, i64), modifiers: Vec<Key>) -> Args {
        Args {
            from: Some(from.into()),
            to: Some(to.into()),
            from_element: None,
            to_element: None,
            button: ButtonArg::Left,
            steps: STEPS,
            hold_ms: HOLD_MS,
            frame: None,
            modifiers,
            window: None,
        }
    }
}

pub(super) struct PointerDrag;

impl Tool for PointerDrag {
    type Args = Args;

    fn escalates(&self, a: &Args) -> bool {
        reaches_shell(&a.modifiers)
    }

    fn describe(&self, a: &Args, judged: &Judged<'_>) -> Description {
        let ends = places(&self.target(a), judged);
        let text = |i: usize| ends.get(i).map_or("?", |p| p.text.as_str());
        // Where it ends, when that is another window than where it starts.
        let end_window = judged.landing.points.get(1).and_then(|p| p.window.as_ref());
        let detail = end_window
            .filter(|w| judged.landing.window.as_ref().is_none_or(|s| s.id != w.id))
            .map(|w| format!("ends in {}", describe::window(w)));
        Description {
            title: format!("Drag from {} to {}", text(0), text(1)),
            detail,
            marks: ends
                .iter()
                .zip(["from", "to"])
                .filter_map(|(p, label)| p.marked(label))
                .collect(),
            ..Default::default()
        }
    }

    fn target(&self, a: &Args) -> Target {
        if a.from_element.is_none() && a.to_element.is_none() {
            let points = [a.from, a.to].into_iter().flatten().map(|p| (p.x, p.y));
            return landing(a.window, points.collect());
        }
        Target::Aimed {
            window: a.window,
            spots: [
                spot(a.from, &a.from_element),
                spot(a.to, &a.to_element),
            ]
            .into_iter()
            .flatten()
            .collect(),
        }
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        ex.frames.check(a.frame)?;
        let origin = pointer::origin(ex, a.window)?;
        // Both ends are found before anything is pressed: a stale or missing element
        // leaves the desktop as it was.
        let from = place(a.from, &a.from_element, origin, ex)?;
        let to = place(a.to, &a.to_element, origin, ex)?;
        let b = a.button.button();
        pointer::glide(ex, from.physical, 1)?;
        pointer::holding(ex, &a.modifiers, |ex| {
            ex.check_stop()?;
            drv(ex.driver.button(b, true))?;
            let moved = (if a.hold_ms > 0 {
                ex.sleep_ms(a.hold_ms)
            } else {
                Ok(())
            })
            .and_then(|_| pointer::glide(ex, to.physical, a.steps));
            // The button comes up even when the glide was stopped.
            let up = drv(ex.driver.button(b, false));
            moved.and(up)
        })?;
        let (fc, tc) = (from.canvas, to.canvas);
        let mut out = json!({"from": {"x": fc.0, "y": fc.1}, "to": {"x": tc.0, "y": tc.1}});
        if let Some(e) = from.element {
            out["from_element"] = e;
        }
        if let Some(e) = to.element {
            out["to_element"] = e;
        }
        Ok(out)
    }
}

pub(crate) fn def() -> ToolDef {
    ToolDef {
        name: "pointer.drag",
        summary: "Press at one canvas point or element, move to another in steps, release.",
        risk: Risk::Moderate,
        needs: Needs::Input,
        nature: Nature::Acts,
        text: TextEntry::No,
        moves_focus: true,
        lands: Lands::Pointer,
        outputs: &[
            ("from", "start point, in canvas coordinates"),
            ("to", "end point, in canvas coordinates"),
            (
                "from_element",
                "with from_element: {ref, role, name} of the element the drag started at",
            ),
            (
                "to_element",
                "with to_element: {ref, role, name} of the element the drag ended at",
            ),
        ],
        params: Ty::Object(vec![
            Field::opt("from", point(), "start point (or from_element)"),
            Field::opt("to", point(), "end point (or to_element)"),
            element::field_named(
                "from_element",
                "start at the centre of an element instead of from: {ref}, {selector}, or {snapshot_id, node_id}",
            ),
            element::field_named(
                "to_element",
                "end at the centre of an element instead of to: {ref}, {selector}, or {snapshot_id, node_id}",
            ),
            button(),
            Field::def("steps", Ty::int(1, 400), json!(STEPS), "intermediate moves"),
            hold(),
            frame(),
            modifiers(),
            relative_to(),
        ]),
        examples: vec![
            json!({"from": {"x": 100, "y": 100}, "to": {"x": 400, "y": 300}}),
            json!({"from_element": {"selector": {"role": "listitem", "name": "Item 3"}}, "to_element": {"ref": "e3f1a09c2b7d4"}}),
            json!({"from_element": {"ref": "e3f1a09c2b7d4"}, "to": {"x": 400, "y": 300}}),
        ],
        check: ends,
        runs: Runs::Alone(&PointerDrag),
    }
}

/// Each end a point or an element, not both; a window only with a point relative to
/// it.
fn ends(c: &mut Checked<'_>) {
    for (point, el) in [("from", "from_element"), ("to", "to_element")] {
        let aimed = element::check_nested(c, el);
        match (c.given(point), aimed) {
            (true, true) => c.issue(el, format!("give {point} or {el}, not both")),
            (false, false) => c.issue(point, format!("give {point} {{x, y}} or {el}")),
            _ => {}
        }
    }
    if c.given("window") && !c.given("from") && !c.given("to") {
        c.issue(
            "window",
            "a window needs a point (from or to) relative to it",
        );
    }
}
