//! `wait.for`: wait until something is true on the desktop (an element or a window
//! appears or goes, a title changes, a region changes, the screen is stable), driven
//! by the desktop's events where it has them; pre-emptible like `wait.pause`.

use std::time::Duration;

use cc_protocol::{Description, ErrorCode, Rect, Risk, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::def::{Checked, Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef};
use super::describe::Judged;
use super::exec::Exec;
use super::exec::watch::{self, Cond, Element, WindowMatch};
use super::screen_capture::Region;
use crate::selector::{self, Selector};
use crate::spec::{Field, Ty};

/// What the wait is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Condition {
    Appears,
    Disappears,
    TitleChanges,
    Changes,
    Stable,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Args {
    condition: Condition,
    element: Option<Selector>,
    #[serde(rename = "ref")]
    element_ref: Option<String>,
    window: Option<WindowMatch>,
    region: Option<Region>,
    stable_ms: u64,
    timeout_ms: u64,
}

pub(super) struct WaitFor;

impl Args {
    fn region(&self, ex: &Exec<'_>) -> Rect {
        let s = &ex.canvas.surface;
        match self.region {
            Some(r) => Rect {
                x: r.x.clamp(i32::MIN as i64, i32::MAX as i64) as i32,
                y: r.y.clamp(i32::MIN as i64, i32::MAX as i64) as i32,
                width: r.width.clamp(1, i32::MAX as i64) as i32,
                height: r.height.clamp(1, i32::MAX as i64) as i32,
            },
            None => Rect {
                x: 0,
                y: 0,
                width: s.display_width_px as i32,
                height: s.display_height_px as i32,
            },
        }
    }

    /// The region, refused when it lies wholly outside the canvas.
    fn area(&self, ex: &Exec<'_>) -> Result<Rect, ToolError> {
        let r = self.region(ex);
        let p = ex.canvas.rect_to_physical(&r);
        if p.width == 0 || p.height == 0 {
            let msg = "region lies outside the canvas";
            return Err(ToolError::with_data(
                ErrorCode::InvalidArguments,
                msg,
                json!({"issues": [{"path": "region", "message": msg}]}),
            ));
        }
        Ok(r)
    }

    /// The condition (validation ensured the members it needs are there).
    fn cond(&self, ex: &Exec<'_>) -> Result<Cond, ToolError> {
        let element = || -> Result<Option<Element>, ToolError> {
            if let Some(r) = &self.element_ref {
                return watch::element_by_ref(r, self.element.clone(), ex).map(Some);
            }
            Ok(self.element.clone().map(Element::Select))
        };
        let window = self.window.clone().unwrap_or_default();
        Ok(match self.condition {
            Condition::Appears => match element()? {
                Some(e) => Cond::ElementAppears(e),
                None => Cond::WindowAppears(window),
            },
            Condition::Disappears => match element()? {
                Some(e) => Cond::ElementGone(e),
                None => Cond::WindowGone(window),
            },
            Condition::TitleChanges => Cond::TitleChanges(window),
            Condition::Changes => Cond::RegionChanges(self.area(ex)?),
            Condition::Stable => Cond::Stable(self.area(ex)?, Duration::from_millis(self.stable_ms)),
        })
    }
}

impl Tool for WaitFor {
    type Args = Args;

    fn escalates(&self, _: &Args) -> bool {
        false
    }

    fn describe(&self, a: &Args, _: &Judged<'_>) -> Description {
        let what = match a.condition {
            Condition::Appears => "something to appear",
            Condition::Disappears => "something to disappear",
            Condition::TitleChanges => "a window's title to change",
            Condition::Changes => "the screen to change",
            Condition::Stable => "the screen to be still",
        };
        Description {
            title: format!("Wait for {what} (at most {} ms)", a.timeout_ms),
            ..Default::default()
        }
    }

    fn target(&self, _: &Args) -> Target {
        Target::Focused
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        let cond = a.cond(ex)?;
        let timeout = Duration::from_millis(a.timeout_ms.min(ex.config.runtime.max_wait_ms));
        let w = watch::until_reporting(ex, &cond, timeout)?;
        let name = match a.condition {
            Condition::Appears => "appears",
            Condition::Disappears => "disappears",
            Condition::TitleChanges => "title_changes",
            Condition::Changes => "changes",
            Condition::Stable => "stable",
        };
        if !w.met {
            return Err(watch::timed_out(&format!("wait.for {name}"), &w));
        }
        Ok(json!({
            "met": true,
            "condition": name,
            "waited_ms": w.waited_ms,
            "saw": w.saw,
            "driven_by": w.driven_by,
            "looks": w.looks,
        }))
    }
}

/// What each condition needs: an element (selector or ref) or a window for
/// appears/disappears, a window for title_changes, nothing else for changes/stable.
fn check(c: &mut Checked<'_>) {
    let cond = c
        .out
        .as_ref()
        .and_then(|o| o.get("condition"))
        .or_else(|| c.raw.get("condition"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let (el, r, win, region) = (
        c.given("element"),
        c.given("ref"),
        c.given("window"),
        c.given("region"),
    );
    let only = |c: &mut Checked<'_>, allowed: &[&str], cond: &str| {
        for (k, given) in [("element", el), ("ref", r), ("window", win), ("region", region)] {
            if given && !allowed.contains(&k) {
                c.issue(k, format!("{cond} takes no {k}"));
            }
        }
    };
    match cond.as_deref() {
        Some(k @ ("appears" | "disappears")) => {
            only(c, &["element", "ref", "window"], k);
            // A ref with a selector: that element, matching it.
            if [el || r, win].iter().filter(|g| **g).count() != 1 {
                c.issue(
                    "element",
                    format!("{k} needs an element (selector, ref, or both) or a window"),
                );
            }
        }
        Some("title_changes") => {
            only(c, &["window"], "title_changes");
            if !win {
                c.issue("window", "title_changes needs the window (id, title or app_id)");
            }
        }
        Some(k @ ("changes" | "stable")) => only(c, &["region"], k),
        _ => {}
    }
    let empty_selector = c
        .out
        .as_ref()
        .and_then(|o| o.get("element"))
        .and_then(|s| serde_json::from_value::<Selector>(s.clone()).ok())
        .is_some_and(|s| s.is_empty());
    if empty_selector {
        c.issue("element", "an element needs a role, name, name_contains, text or states");
    }
}

pub(crate) fn def() -> ToolDef {
    let region = Ty::Object(vec![
        Field::req("x", Ty::int(-1_000_000, 1_000_000), "canvas left"),
        Field::req("y", Ty::int(-1_000_000, 1_000_000), "canvas top"),
        Field::req("width", Ty::int(1, 1_000_000), "canvas width"),
        Field::req("height", Ty::int(1, 1_000_000), "canvas height"),
    ]);
    let text = |doc| {
        Ty::Str {
            max_chars: Some(512),
            non_empty: doc,
        }
    };
    let window = Ty::Object(vec![
        Field::opt("id", Ty::int(0, (1i64 << 53) - 1), "a window id of window.list"),
        Field::opt("title", text(false), "the exact title"),
        Field::opt("title_contains", text(true), "part of the title (case ignored)"),
        Field::opt("app_id", text(true), "the application id"),
    ]);
    ToolDef {
        name: "wait.for",
        summary: "Wait until an element or window appears or goes, a title changes, a region changes, or the screen is stable (timeout answers what it last saw).",
        risk: Risk::Benign,
        needs: Needs::Nothing,
        nature: Nature::Waits,
        text: TextEntry::No,
        moves_focus: false,
        lands: Lands::Focused,
        outputs: &[
            ("met", "true (a timeout is the error timeout, with last_seen)"),
            ("condition", "the condition that held"),
            ("waited_ms", "how long it waited"),
            (
                "saw",
                "what it saw: the element(s) with refs, the window(s), the title from/to, the changed box, the quiet time",
            ),
            (
                "driven_by",
                "events (the desktop reported changes) or polling (it looked again at intervals)",
            ),
            ("looks", "how many times it looked at the desktop"),
        ],
        params: Ty::Object(vec![
            Field::req(
                "condition",
                Ty::one_of(&["appears", "disappears", "title_changes", "changes", "stable"]),
                "appears/disappears (an element or a window), title_changes (a window), changes (a region's pixels), stable (no pixel changes for stable_ms)",
            ),
            Field::opt(
                "element",
                selector::spec(),
                "the element, by role, name, text and states (appears/disappears)",
            ),
            Field::opt(
                "ref",
                Ty::Str {
                    max_chars: Some(64),
                    non_empty: true,
                },
                "one element by its ref (appears/disappears); with element, that element matching it (e.g. its states)",
            ),
            Field::opt("window", window, "the window (appears/disappears/title_changes)"),
            Field::opt("region", region, "canvas rectangle (changes/stable; default the whole canvas)"),
            Field::def(
                "stable_ms",
                Ty::int(1, 600_000),
                json!(500),
                "how long nothing may change (stable)",
            ),
            Field::def(
                "timeout_ms",
                Ty::int(0, 600_000),
                json!(10_000),
                "give up after this long (truncated to runtime.max_wait_ms): the error timeout, with what it last saw",
            ),
        ]),
        examples: vec![
            json!({"condition": "appears", "element": {"role": "dialog", "name_contains": "save"}}),
            json!({"condition": "disappears", "ref": "e3f1a09c2b7d4", "timeout_ms": 5000}),
            json!({"condition": "title_changes", "window": {"id": 4194305}}),
            json!({"condition": "changes", "region": {"x": 0, "y": 0, "width": 400, "height": 300}}),
            json!({"condition": "stable", "stable_ms": 300}),
        ],
        check,
        runs: Runs::Alone(&WaitFor),
    }
}
