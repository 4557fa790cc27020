//! `pointer.scroll`: notches on one axis, at a canvas point, at an element's centre, or
//! where the pointer is.

use cc_desktop::Axis;
use cc_protocol::{Description, Risk, ToolError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef};
use super::describe::{Judged, count, places, relative};
use super::exec::{Exec, drv};
use super::exec::pointer;
use super::element;
use super::fields::{
    At, aim_or_here, frame, held_keys, key_names, modifiers, point_fields, relative_to,
};
use super::keyboard_combo::reaches_shell;
use cc_protocol::Key;
use crate::spec::{Field, Ty};

/// The scroll axis, as the spec names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum AxisArg {
    Vertical,
    Horizontal,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub(crate) struct Args {
    axis: AxisArg,
    amount: i64,
    #[serde(flatten)]
    at: At,
    #[serde(skip_serializing_if = "Option::is_none")]
    frame: Option<u64>,
    #[serde(
        default,
        deserialize_with = "held_keys",
        serialize_with = "key_names",
        skip_serializing_if = "Vec::is_empty"
    )]
    modifiers: Vec<Key>,
}

impl Args {
    /// `amount` notches on `axis` (positive is up or right) at a canvas point, or
    /// where the pointer is, with `modifiers` held: a scroll as a vocabulary asks for
    /// one.
    pub(crate) fn new(
        axis: AxisArg,
        amount: i64,
        at: Option<(i64, i64)>,
        modifiers: Vec<Key>,
    ) -> Args {
        Args {
            axis,
            amount,
            at: At::canvas(at),
            frame: None,
            modifiers,
        }
    }
}

pub(super) struct PointerScroll;

impl Tool for PointerScroll {
    type Args = Args;

    fn escalates(&self, a: &Args) -> bool {
        reaches_shell(&a.modifiers)
    }

    fn describe(&self, a: &Args, judged: &Judged<'_>) -> Description {
        let target = self.target(a);
        let place = places(&target, judged).swap_remove(0);
        let way = match (a.axis, a.amount >= 0) {
            (AxisArg::Vertical, true) => "up",
            (AxisArg::Vertical, false) => "down",
            (AxisArg::Horizontal, true) => "right",
            (AxisArg::Horizontal, false) => "left",
        };
        let notches = count(a.amount.unsigned_abs() as usize, "notch", "notches");
        Description {
            title: format!("Scroll {way} {notches}{}", place.after("at", "over")),
            detail: relative(&target),
            marks: place.marked("scroll").into_iter().collect(),
            ..Default::default()
        }
    }

    fn target(&self, a: &Args) -> Target {
        a.at.target()
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        ex.frames.check(a.frame)?;
        let aimed = a.at.go(ex, 1)?;
        let (axis, name) = match a.axis {
            AxisArg::Vertical => (Axis::Vertical, "vertical"),
            AxisArg::Horizontal => (Axis::Horizontal, "horizontal"),
        };
        pointer::holding(ex, &a.modifiers, |ex| {
            (0..a.amount.unsigned_abs()).try_for_each(|_| {
                ex.check_stop()?;
                drv(ex.driver.scroll(axis, a.amount > 0))
            })
        })?;
        let mut out = json!({"axis": name, "amount": a.amount});
        if let Some(element) = aimed {
            out["element"] = element;
        }
        Ok(out)
    }
}

pub(crate) fn def() -> ToolDef {
    let mut params = vec![
        Field::def(
            "axis",
            Ty::one_of(&["vertical", "horizontal"]),
            json!("vertical"),
            "scroll axis",
        ),
        Field::req(
            "amount",
            Ty::int(-100, 100),
            "notches; positive is up or right",
        ),
    ];
    params.extend(point_fields(false));
    params.extend([frame(), modifiers(), element::field(), relative_to()]);
    ToolDef {
        name: "pointer.scroll",
        summary: "Scroll by notches, at a canvas point, at an element (by ref or selector), or where the pointer is.",
        risk: Risk::Moderate,
        needs: Needs::Input,
        nature: Nature::Acts,
        text: TextEntry::No,
        moves_focus: false,
        lands: Lands::Pointer,
        outputs: &[
            ("axis", "vertical or horizontal"),
            ("amount", "notches"),
            ("element", "with element: {ref, role, name} of the element scrolled at"),
        ],
        params: Ty::Object(params),
        examples: vec![
            json!({"amount": -3}),
            json!({"axis": "horizontal", "amount": 2, "x": 500, "y": 300}),
            json!({"amount": -5, "element": {"selector": {"role": "list"}}}),
        ],
        check: aim_or_here,
        runs: Runs::Alone(&PointerScroll),
    }
}
