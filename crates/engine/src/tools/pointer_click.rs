//! `pointer.click`: one, two or three clicks at a canvas point, at an element's centre,
//! or where the pointer is.

use cc_protocol::{Description, Risk, ToolError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef};
use super::describe::{Judged, places, relative};
use super::element;
use super::exec::{Exec, pointer};
use super::fields::{
    At, ButtonArg, HOLD_MS, aim_or_here, button, frame, held_keys, hold, key_names, modifiers,
    point_fields, relative_to,
};
use super::keyboard_combo::reaches_shell;
use cc_protocol::Key;
use crate::spec::{Field, Ty};

#[derive(Debug, Clone, Deserialize, Serialize)]
pub(crate) struct Args {
    #[serde(flatten)]
    at: At,
    button: ButtonArg,
    times: u64,
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
}

impl Args {
    /// `times` clicks of `button` at a canvas point (or where the pointer is, `None`)
    /// with `modifiers` held: a click as a vocabulary asks for one.
    pub(crate) fn new(
        at: Option<(i64, i64)>,
        button: ButtonArg,
        times: u64,
        modifiers: Vec<Key>,
    ) -> Args {
        Args {
            at: At::canvas(at),
            button,
            times,
            hold_ms: HOLD_MS,
            frame: None,
            modifiers,
        }
    }
}

pub(super) struct PointerClick;

impl Tool for PointerClick {
    type Args = Args;

    fn escalates(&self, a: &Args) -> bool {
        reaches_shell(&a.modifiers)
    }

    fn describe(&self, a: &Args, judged: &Judged<'_>) -> Description {
        let target = self.target(a);
        let place = places(&target, judged).swap_remove(0);
        let times = match a.times {
            2 => "Double-click",
            3 => "Triple-click",
            _ => "Click",
        };
        let button = match a.button {
            ButtonArg::Left => String::new(),
            other => format!(" ({} button)", other.name()),
        };
        Description {
            title: format!("{times}{button}{}", place.after("at", "on")),
            detail: relative(&target),
            marks: place.marked("click").into_iter().collect(),
            ..Default::default()
        }
    }

    fn target(&self, a: &Args) -> Target {
        a.at.target()
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        ex.frames.check(a.frame)?;
        let aimed = a.at.go(ex, 1)?;
        let times = a.times.max(1);
        pointer::holding(ex, &a.modifiers, |ex| {
            (0..times).try_for_each(|_| pointer::press(ex, a.button.button(), a.hold_ms))
        })?;
        let mut out =
            json!({"button": a.button.name(), "times": times, "position": pointer::position(ex)?});
        if let Some(element) = aimed {
            out["element"] = element;
        }
        Ok(out)
    }
}

pub(crate) fn def() -> ToolDef {
    let mut params = point_fields(false);
    params.extend([
        button(),
        Field::def(
            "times",
            Ty::int(1, 3),
            json!(1),
            "1 click, 2 double, 3 triple",
        ),
        hold(),
        frame(),
        modifiers(),
        element::field(),
        relative_to(),
    ]);
    ToolDef {
        name: "pointer.click",
        summary: "Click at a canvas point, at an element (by ref or selector), or where the pointer is.",
        risk: Risk::Moderate,
        needs: Needs::Input,
        nature: Nature::Acts,
        text: TextEntry::No,
        moves_focus: true,
        lands: Lands::Pointer,
        outputs: &[
            ("button", "the button clicked"),
            ("times", "clicks"),
            ("position", "where, in canvas coordinates"),
            ("element", "with element: {ref, role, name} of the element clicked"),
        ],
        params: Ty::Object(params),
        examples: vec![
            json!({"x": 640, "y": 400}),
            json!({"x": 10, "y": 10, "button": "right"}),
            json!({"x": 640, "y": 400, "modifiers": ["shift"]}),
            json!({"element": {"selector": {"role": "listitem", "name": "Item 3"}}, "button": "right"}),
            json!({"x": 640, "y": 400, "observe": {"capture": {"scale": 0.5}, "snapshot": {"diff": true}}}),
        ],
        check: aim_or_here,
        runs: Runs::Alone(&PointerClick),
    }
}

