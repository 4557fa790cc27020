//! Where an action lands, as the safety gate judged it (PROTOCOL §5.3): what a person
//! deciding on a confirmation is shown, in `safety.confirmation_requested` and
//! `system.status`. Small and typed: canvas points, an element's role, name and
//! reference, a window's id and title; never the action's arguments.

use serde::{Deserialize, Serialize};

use crate::a11y::Role;

/// Where one action lands; a batch lists its items' in `items`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Landing {
    /// Canvas points it touches, in order (a drag starts at the first and ends at the
    /// last); for an accessibility tool, its element's centre when the element has a
    /// rectangle.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<LandingPoint>,
    /// The element an accessibility tool acts on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element: Option<LandingElement>,
    /// The window it lands in: under its first point (pointer tools), its element's,
    /// the one `window.focus` names, else the focused one (keyboard tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<LandingWindow>,
    /// Each item's landing, in order (a batch).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<Landing>,
}

/// One canvas point an action touches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LandingPoint {
    /// Canvas x.
    pub x: i32,
    /// Canvas y.
    pub y: i32,
    /// Where the pointer is now: the call gave no point.
    #[serde(default, skip_serializing_if = "is_false")]
    pub here: bool,
    /// The element whose centre this is (a pointer tool aimed at an element).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element: Option<LandingElement>,
    /// The topmost window under the point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<LandingWindow>,
}

/// An element, as a person recognises it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LandingElement {
    /// Its role, so a person knows what kind of thing is hit.
    pub role: Role,
    /// Its accessible name, cut to [`LANDING_TEXT_CHARS`].
    pub name: String,
    /// Its element reference (`ref` of `a11y.snapshot`).
    #[serde(rename = "ref")]
    pub element_ref: String,
}

/// A top-level window, as `window.list` names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LandingWindow {
    /// The `id` of `window.list`.
    pub id: u64,
    /// Its title, cut to [`LANDING_TEXT_CHARS`].
    pub title: String,
    /// The application it belongs to, as rules match it.
    pub app_id: String,
}

/// The most characters of a name or title a landing carries (a longer one is cut and
/// ends in `…`), so the event stays small whatever the desktop shows.
pub const LANDING_TEXT_CHARS: usize = 120;

fn is_false(b: &bool) -> bool {
    !*b
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_wire_form_omits_what_is_not_there() {
        let window = LandingWindow {
            id: 7,
            title: "Sign in".into(),
            app_id: "cc-form".into(),
        };
        let l = Landing {
            points: vec![LandingPoint {
                x: 10,
                y: 20,
                here: false,
                element: Some(LandingElement {
                    role: Role::Button,
                    name: "Submit".into(),
                    element_ref: "e1".into(),
                }),
                window: Some(window.clone()),
            }],
            window: Some(window),
            ..Landing::default()
        };
        let wire = json!({
            "points": [{"x": 10, "y": 20,
                        "element": {"role": "button", "name": "Submit", "ref": "e1"},
                        "window": {"id": 7, "title": "Sign in", "app_id": "cc-form"}}],
            "window": {"id": 7, "title": "Sign in", "app_id": "cc-form"}
        });
        assert_eq!(serde_json::to_value(&l).unwrap(), wire);
        assert_eq!(serde_json::from_value::<Landing>(wire).unwrap(), l);
        assert_eq!(serde_json::to_value(Landing::default()).unwrap(), json!({}));
        let here: LandingPoint =
            serde_json::from_value(json!({"x": 1, "y": 2, "here": true})).unwrap();
        assert!(here.here);
    }
}
