//! What every tool's `describe` shares: how a point, an element and a window read to a
//! person, and where a pointer call lands, from the gate's landing when it placed the
//! call, else from the call's own target. Imports no tool.

use cc_protocol::{Description, Landing, LandingElement, LandingPoint, LandingWindow, Mark};

use super::def::{ElementTarget, Spot, Target, TextEntry};
use crate::assess::REDACTED;

/// The call as the gate judged it, which is what a tool's `describe` may use beyond its
/// arguments: where the gate placed the call, how much of its text may be shown, and,
/// for a batch, its items described.
#[derive(Debug, Clone, Copy)]
pub struct Judged<'a> {
    /// Where it lands, as far as the gate read it (empty when it did not).
    pub landing: &'a Landing,
    /// How its text is shown.
    pub text: TextView,
    /// A batch's items, each described.
    pub items: &'a [Description],
}

impl Judged<'_> {
    /// `text` as people may see it (see [`TextView`]).
    pub fn text(&self, text: &str) -> String {
        self.text.show(text)
    }

    /// The `i`-th point the gate placed, if it placed one.
    fn point(&self, i: usize) -> Option<&LandingPoint> {
        self.landing.points.get(i)
    }
}

/// How much of a call's text people may see: events, logs, confirmations and the
/// operator's description all show it through this one rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextView {
    /// What the tool writes its text into.
    pub entry: TextEntry,
    /// The text is secret (a password field, a labelled credential, or typed where
    /// the focus may have moved): shown as [`REDACTED`], whatever the tool.
    pub secret: bool,
}

impl TextView {
    /// Secret text is redacted whole; text typed at the focus is shown up to its first
    /// tab or newline (which may move the focus into a password field) and redacted
    /// after it; any other text is shown as it is.
    pub fn show(&self, text: &str) -> String {
        if self.secret {
            return REDACTED.to_string();
        }
        match text.find(['\t', '\n']) {
            Some(i) if self.entry == TextEntry::Focused => format!("{}{REDACTED}", &text[..=i]),
            _ => text.to_string(),
        }
    }
}

/// A canvas point as a person reads it: `(640, 360)`.
pub fn point(x: f64, y: f64) -> String {
    format!("({}, {})", x.round(), y.round())
}

/// An element as a person recognises it: its role and name.
pub fn element(e: &LandingElement) -> String {
    let role = e.role.as_str();
    if e.name.is_empty() {
        role.to_string()
    } else {
        format!("{role} “{}”", e.name)
    }
}

/// A window as a person recognises it: its title and application.
pub fn window(w: &LandingWindow) -> String {
    match (w.title.is_empty(), w.app_id.is_empty()) {
        (false, false) => format!("“{}” ({})", w.title, w.app_id),
        (false, true) => format!("“{}”", w.title),
        (true, false) => w.app_id.clone(),
        (true, true) => format!("window {}", w.id),
    }
}

/// An element as its call names it, for when the gate did not place it.
pub fn named(e: &ElementTarget) -> String {
    match e {
        ElementTarget::Ref(r) => format!("element {r}"),
        ElementTarget::Node {
            snapshot_id,
            node_id,
        } => format!("element #{node_id} of snapshot {snapshot_id}"),
        ElementTarget::Select(s) => {
            let role = s.role.map(|r| r.as_str().to_string());
            let parts: Vec<String> = [
                role,
                s.name.as_ref().map(|n| format!("“{n}”")),
                s.name_contains
                    .as_ref()
                    .map(|n| format!("named like “{n}”")),
                s.text.as_ref().map(|t| format!("with text “{t}”")),
            ]
            .into_iter()
            .flatten()
            .collect();
            if parts.is_empty() {
                "the element the selector finds".into()
            } else {
                parts.join(" ")
            }
        }
    }
}

/// The element an accessibility tool acts on: the one the gate found, else as named.
pub fn acted_on(target: &Target, judged: &Judged<'_>) -> String {
    match (&judged.landing.element, target) {
        (Some(e), _) => element(e),
        (None, Target::Element(e)) => named(e),
        (None, _) => "an element".into(),
    }
}

/// One place a pointer call touches, as a person reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Place {
    /// What the place is.
    pub kind: PlaceKind,
    /// `(640, 360)`, `button “OK” at (640, 360)`, `where the pointer is`.
    pub text: String,
    /// Where to mark it on the canvas, when it can be placed there.
    pub mark: Option<(i32, i32)>,
}

/// What kind of place a pointer call touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaceKind {
    /// A canvas point.
    Point,
    /// An element's centre.
    Element,
    /// Where the pointer is.
    Here,
}

impl Place {
    /// The place after a verb: `Click at (1, 2)`, `Click on button “OK” at …`,
    /// `Click where the pointer is`; `at` and `on` are the words before a point and an
    /// element.
    pub fn after(&self, at: &str, on: &str) -> String {
        let text = &self.text;
        match self.kind {
            PlaceKind::Here => format!(" {text}"),
            PlaceKind::Element => format!(" {on} {text}"),
            PlaceKind::Point => format!(" {at} {text}"),
        }
    }

    /// Its mark, labelled, if it has one.
    pub fn marked(&self, label: &str) -> Option<Mark> {
        self.mark.map(|(x, y)| Mark {
            x,
            y,
            label: label.into(),
        })
    }
}

/// The places a pointer call touches, in order (a drag's start, then its end): each
/// point the gate placed (its element's centre, or the pointer's own position), else
/// what the call's target says.
pub fn places(target: &Target, judged: &Judged<'_>) -> Vec<Place> {
    let asked: Vec<Asked> = match target {
        Target::Points(p) if p.is_empty() => vec![Asked::Here],
        Target::Points(p) => p.iter().map(|&(x, y)| Asked::Point(x, y, None)).collect(),
        Target::InWindow(id, p) => p
            .iter()
            .map(|&(x, y)| Asked::Point(x, y, Some(*id)))
            .collect(),
        Target::Aimed { window, spots } => spots
            .iter()
            .map(|s| match s {
                Spot::Point(x, y) => Asked::Point(*x, *y, *window),
                Spot::Centre(e) => Asked::Element(e),
            })
            .collect(),
        Target::Focused | Target::Window(_) | Target::Element(_) => Vec::new(),
    };
    asked
        .into_iter()
        .enumerate()
        .map(|(i, a)| match judged.point(i) {
            Some(lp) => placed(lp),
            None => a.place(),
        })
        .collect()
}

/// Where the call's points are given relative to a window: `given as (30, 60)
/// relative to window 7`.
pub fn relative(target: &Target) -> Option<String> {
    match target {
        Target::InWindow(id, p) => p
            .first()
            .map(|&(x, y)| format!("given as {} relative to window {id}", point(x, y))),
        _ => None,
    }
}

/// A place the gate put on the canvas.
fn placed(lp: &LandingPoint) -> Place {
    let at = point(f64::from(lp.x), f64::from(lp.y));
    let (kind, text) = match (&lp.element, lp.here) {
        (Some(e), _) => (PlaceKind::Element, format!("{} at {at}", element(e))),
        (None, true) => (PlaceKind::Here, format!("where the pointer is, at {at}")),
        (None, false) => (PlaceKind::Point, at),
    };
    Place {
        kind,
        text,
        mark: Some((lp.x, lp.y)),
    }
}

/// A place as the call asks for it.
enum Asked<'a> {
    Here,
    Point(f64, f64, Option<u64>),
    Element(&'a ElementTarget),
}

impl Asked<'_> {
    fn place(self) -> Place {
        match self {
            Asked::Here => Place {
                kind: PlaceKind::Here,
                text: "where the pointer is".into(),
                mark: None,
            },
            // A point relative to a window cannot be placed without the window.
            Asked::Point(x, y, Some(id)) => Place {
                kind: PlaceKind::Point,
                text: format!("{} in window {id}", point(x, y)),
                mark: None,
            },
            Asked::Point(x, y, None) => Place {
                kind: PlaceKind::Point,
                text: point(x, y),
                mark: Some((x.round() as i32, y.round() as i32)),
            },
            Asked::Element(e) => Place {
                kind: PlaceKind::Element,
                text: named(e),
                mark: None,
            },
        }
    }
}

/// A count with its noun: `1 character`, `3 characters`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Text in a title, quoted and cut to 80 characters.
pub fn quoted(text: &str) -> String {
    const MAX: usize = 80;
    if text.chars().count() > MAX {
        let cut: String = text.chars().take(MAX - 1).collect();
        format!("“{cut}…”")
    } else {
        format!("“{text}”")
    }
}

/// A key as a person reads it on a keyboard: `Win`, `Ctrl`, `R`, `F5`.
pub fn key_label(name: &str) -> String {
    let mut c = name.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The mark of the element an accessibility tool acts on: its centre, where the gate
/// found it.
pub fn centre_mark(judged: &Judged<'_>, label: &str) -> Vec<Mark> {
    judged
        .point(0)
        .map(|p| Mark {
            x: p.x,
            y: p.y,
            label: label.into(),
        })
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::defaults;
    use crate::tools::{ToolCall, find};
    use cc_protocol::Role;
    use serde_json::{Value, json};

    fn describe(tool: &str, args: Value, landing: &Landing) -> Description {
        let call = ToolCall::parse(find(tool).unwrap(), &args, &defaults()).unwrap();
        let text = TextView {
            entry: call.def().text,
            secret: false,
        };
        call.describe(&Judged {
            landing,
            text,
            items: &[],
        })
    }

    /// A pointer call reads from its arguments until the gate places it; then from the
    /// landing: the element at the point, the window it lands in, the point marked.
    #[test]
    fn a_click_reads_as_placed_else_as_asked() {
        let none = Landing::default();
        let d = describe("pointer.click", json!({"x": 640, "y": 360}), &none);
        assert_eq!(d.title, "Click at (640, 360)");
        let mark = Mark {
            x: 640,
            y: 360,
            label: "click".into(),
        };
        assert_eq!(d.marks, [mark]);
        let rel = json!({"x": 30, "y": 60, "window": 7, "button": "right"});
        let d = describe("pointer.click", rel, &none);
        assert_eq!(d.title, "Click (right button) at (30, 60) in window 7");
        assert_eq!(
            d.detail.as_deref(),
            Some("given as (30, 60) relative to window 7")
        );
        assert!(d.marks.is_empty(), "not placed without the window");
        assert_eq!(
            describe("pointer.click", json!({"element": {"ref": "e3"}}), &none).title,
            "Click on element e3"
        );
        assert_eq!(
            describe("pointer.click", json!({}), &none).title,
            "Click where the pointer is"
        );
        let placed = Landing {
            points: vec![LandingPoint {
                x: 100,
                y: 200,
                here: false,
                element: Some(LandingElement {
                    role: Role::Button,
                    name: "OK".into(),
                    element_ref: "e3".into(),
                }),
                window: None,
            }],
            window: Some(LandingWindow {
                id: 7,
                title: "Sign in".into(),
                app_id: "cc-form".into(),
            }),
            ..Default::default()
        };
        let twice = json!({"element": {"ref": "e3"}, "times": 2});
        let d = describe("pointer.click", twice, &placed);
        assert_eq!(d.title, "Double-click on button “OK” at (100, 200)");
        assert_eq!(d.window.as_deref(), Some("“Sign in” (cc-form)"));
        assert_eq!(d.marks.len(), 1);
    }

    /// Keys are named as a keyboard shows them, and a well-known combination says what
    /// it usually does.
    #[test]
    fn a_combo_names_its_keys_and_its_usual_effect() {
        let d = describe(
            "keyboard.combo",
            json!({"keys": "win+r"}),
            &Landing::default(),
        );
        assert_eq!(d.title, "Press Win + R");
        assert_eq!(d.keys, ["win", "r"]);
        assert!(d.effect.is_some_and(|e| e.contains("Run dialog")));
        let plain = describe(
            "keyboard.combo",
            json!({"keys": "ctrl+c"}),
            &Landing::default(),
        );
        assert_eq!(plain.effect, None);
    }

    /// A long text is cut in the title, whole in `text`.
    #[test]
    fn a_long_text_is_whole_beside_its_cut_title() {
        let long = "x".repeat(100);
        let d = describe(
            "keyboard.type",
            json!({ "text": long }),
            &Landing::default(),
        );
        assert_eq!(d.text.as_deref(), Some(long.as_str()));
        assert_eq!(d.title.chars().count(), "Type “”".chars().count() + 80);
        assert!(d.title.ends_with("…”"));
    }
}
