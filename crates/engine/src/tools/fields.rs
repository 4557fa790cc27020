//! Argument pieces several tools share: their specs and their typed forms.

use cc_desktop::Button;
use cc_protocol::Key;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Value, json};

use cc_protocol::ToolError;

use super::def::{Checked, Spot, Target};
use super::element::{self, ElementArg};
use super::exec::{Exec, pointer};
use crate::spec::{Field, Ty};

/// `x` and `y`, required or optional together.
pub(crate) fn point_fields(required: bool) -> Vec<Field> {
    if required {
        vec![
            Field::req("x", Ty::coord(), "canvas x (clamped into the canvas)"),
            Field::req("y", Ty::coord(), "canvas y (clamped into the canvas)"),
        ]
    } else {
        vec![
            Field::opt(
                "x",
                Ty::coord(),
                "canvas x; with y, or neither (current position)",
            ),
            Field::opt(
                "y",
                Ty::coord(),
                "canvas y; with x, or neither (current position)",
            ),
        ]
    }
}

/// A required point object.
pub(crate) fn point() -> Ty {
    Ty::Object(point_fields(true))
}

/// The frame a point was computed from.
pub(crate) fn frame() -> Field {
    Field::opt(
        "frame",
        Ty::int(0, i64::MAX >> 11),
        "the frame of the capture these coordinates were computed from; fails stale_frame if the layout changed since",
    )
}

/// A pointer button.
pub(crate) fn button() -> Field {
    Field::def(
        "button",
        Ty::one_of(&["left", "middle", "right"]),
        json!("left"),
        "pointer button",
    )
}

/// How long a button stays down unless a call says otherwise.
pub(crate) const HOLD_MS: u64 = 0;

/// How long a button stays down.
pub(crate) fn hold() -> Field {
    Field::def(
        "hold_ms",
        Ty::int(0, 10_000),
        json!(HOLD_MS),
        "how long the button stays down",
    )
}

/// Keys held down for the whole of a pointer action (shift-click, ctrl-scroll).
pub(crate) fn modifiers() -> Field {
    Field::opt(
        "modifiers",
        Ty::KeyCombo,
        "keys held down during the action, pressed in order and released in reverse, e.g. [\"shift\"] or \"ctrl+shift\"",
    )
}

/// `modifiers` after validation (canonical names), as keys; none when absent.
pub(crate) fn held_keys<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Key>, D::Error> {
    Option::<Vec<String>>::deserialize(d)?
        .unwrap_or_default()
        .iter()
        .map(|n| Key::parse(n).map_err(serde::de::Error::custom))
        .collect()
}

/// Keys as their canonical names, the form validation leaves them in.
pub(crate) fn key_names<S: Serializer>(keys: &[Key], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(keys.iter().map(Key::name))
}

/// One key as its canonical name.
pub(crate) fn key_name<S: Serializer>(key: &Key, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&key.name())
}

/// A coordinate as a caller would write it: a whole number without a fraction, so a
/// built call reads as the same call sent over the wire.
pub(crate) fn coordinate<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        s.serialize_i64(*v as i64)
    } else {
        s.serialize_f64(*v)
    }
}

/// [`coordinate`] for an optional one (skipped when absent).
pub(crate) fn opt_coordinate<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => coordinate(v, s),
        None => s.serialize_none(),
    }
}

/// A window id of `window.list`.
pub(crate) fn window_id() -> Ty {
    Ty::int(0, (1i64 << 53) - 1)
}

/// Free text of up to 10 000 characters.
pub(crate) fn text(doc: &'static str) -> Field {
    Field::req(
        "text",
        Ty::Str {
            max_chars: Some(10_000),
            non_empty: false,
        },
        doc,
    )
}

/// The window a pointer tool's coordinates are relative to.
pub(crate) fn relative_to() -> Field {
    Field::opt(
        "window",
        window_id(),
        "a window id of window.list: the coordinates are then relative to the window's top-left corner (canvas units); refused when the window is closed or minimized",
    )
}

/// Where a call at these points lands: absolute, or relative to a window.
pub(crate) fn landing(window: Option<u64>, points: Vec<(f64, f64)>) -> Target {
    match window {
        Some(id) => Target::InWindow(id, points),
        None => Target::Points(points),
    }
}

/// The cross-field rule of an optional point: x with y, or neither; a window only
/// with a point.
fn x_with_y(c: &mut Checked<'_>) {
    let (has_x, has_y) = (c.given("x"), c.given("y"));
    if has_x != has_y {
        c.issue(
            if has_x { "y" } else { "x" },
            "x and y go together: give both or neither",
        );
    } else if !has_x && c.given("window") {
        c.issue("window", "a window needs x and y relative to it");
    }
}

/// The cross-field rules of a pointer tool that acts where it is aimed or, aimed
/// nowhere, where the pointer is (`pointer.click`, `pointer.scroll`).
pub(crate) fn aim_or_here(c: &mut Checked<'_>) {
    point_or_element(c, false);
}

/// The cross-field rules of a pointer tool that must be aimed (`pointer.move`).
pub(crate) fn aim(c: &mut Checked<'_>) {
    point_or_element(c, true);
}

/// x with y, or an element instead, or (unless `required`) neither.
fn point_or_element(c: &mut Checked<'_>, required: bool) {
    x_with_y(c);
    let aimed = element::check_nested(c, "element");
    let point = c.given("x") || c.given("y");
    if aimed && point {
        c.issue("element", "aim at an element or at x and y, not both");
    } else if required && !aimed && !point {
        c.issue("x", "give x and y, or an element");
    }
}

/// Where a pointer tool acts, flattened into its arguments: a point (`x` with `y`,
/// maybe relative to a window), the centre of an `element`, or neither (where the
/// pointer is).
#[derive(Debug, Clone, Deserialize, Serialize)]
pub(crate) struct At {
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "opt_coordinate"
    )]
    x: Option<f64>,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "opt_coordinate"
    )]
    y: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    window: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    element: Option<ElementArg>,
}

impl At {
    /// A canvas point, or where the pointer is (`None`): how a vocabulary aims.
    pub fn canvas(point: Option<(i64, i64)>) -> At {
        At {
            x: point.map(|p| p.0 as f64),
            y: point.map(|p| p.1 as f64),
            window: None,
            element: None,
        }
    }

    /// Where a call at this point lands: an element is judged at the centre it resolves
    /// to, like a point.
    pub fn target(&self) -> Target {
        match &self.element {
            Some(el) => Target::Aimed {
                window: None,
                spots: vec![Spot::Centre(el.element())],
            },
            None => landing(self.window, self.x.zip(self.y).into_iter().collect()),
        }
    }

    /// Moves the pointer there in `steps`, if a point or an element was given; answers
    /// `{ref, role, name}` of the element aimed at. A stale, absent or ambiguous
    /// element is refused before the pointer moves.
    pub fn go(&self, ex: &mut Exec<'_>, steps: u64) -> Result<Option<Value>, ToolError> {
        if let Some(el) = &self.element {
            let (to, element) = element::locate(el, ex)?;
            pointer::glide(ex, to, steps)?;
            return Ok(Some(element));
        }
        if let Some((x, y)) = self.x.zip(self.y) {
            let (ox, oy) = pointer::origin(ex, self.window)?;
            let to = ex.canvas.to_physical(ox + x, oy + y);
            pointer::glide(ex, to, steps)?;
        }
        Ok(None)
    }
}

/// A canvas point.
#[derive(Debug, Clone, Copy, Deserialize, Serialize)]
pub(crate) struct Point {
    #[serde(serialize_with = "coordinate")]
    pub x: f64,
    #[serde(serialize_with = "coordinate")]
    pub y: f64,
}

impl From<(i64, i64)> for Point {
    fn from((x, y): (i64, i64)) -> Point {
        Point {
            x: x as f64,
            y: y as f64,
        }
    }
}

/// A pointer button, as the spec names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ButtonArg {
    Left,
    Middle,
    Right,
}

impl ButtonArg {
    pub fn button(self) -> Button {
        match self {
            ButtonArg::Left => Button::Left,
            ButtonArg::Middle => Button::Middle,
            ButtonArg::Right => Button::Right,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ButtonArg::Left => "left",
            ButtonArg::Middle => "middle",
            ButtonArg::Right => "right",
        }
    }
}

/// A key of the vocabulary (validation already normalized its name).
pub(crate) fn key<'de, D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
    let name = String::deserialize(d)?;
    Key::parse(&name).map_err(serde::de::Error::custom)
}
