//! One tool call, validated and typed once where it enters the engine, then judged,
//! gated, shown, journaled and run from that value: nothing downstream parses its
//! arguments again or looks its tool up by name.

use cc_protocol::{Description, ErrorCode, ToolError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Typed;
use super::args::validate_args;
use super::batch_execute::{MAX_ITEMS, item_issue};
use super::def::Judged;
use super::def::{Runs, Target, ToolDef, typed};
use super::describe;
use super::exec::Exec;
use super::observe::{self, Observe};
use super::table::find;
use crate::config::Config;
use crate::spec::Issue;

/// A validated call: its tool, its normalized arguments (what events, logs and a
/// pending confirmation show, after redaction) and the same arguments typed.
#[derive(Debug, Clone)]
pub struct ToolCall {
    def: &'static ToolDef,
    args: Value,
    typed: Typed,
    /// What to observe after the action (`observe`), typed with the call.
    observe: Option<Box<Observation>>,
}

/// An action's `observe`, typed once with its action: each observation is its tool's
/// own call, judged and gated as that tool when it is taken.
#[derive(Debug, Clone)]
pub(crate) struct Observation {
    /// `screen.capture`'s call, when asked for.
    pub capture: Option<ToolCall>,
    /// `a11y.snapshot`'s call, when asked for.
    pub snapshot: Option<ToolCall>,
    /// How long the screen must be still before observing.
    pub settle_ms: u64,
    /// The longest the settling may take.
    pub settle_timeout_ms: u64,
}

impl Observation {
    /// Types the `observe` member of an acting tool's normalized arguments (its
    /// observations already normalized against their own tools by validation).
    fn of(args: &Value) -> Result<Option<Box<Observation>>, ToolError> {
        let Some(spec) = args.get(observe::ARG).filter(|v| !v.is_null()) else {
            return Ok(None);
        };
        let raw: Observe = typed(spec)?;
        let [(_, capture_tool), (_, snapshot_tool)] = observe::OBSERVERS;
        let sub = |tool: &str, asked: Option<Value>| match asked {
            None => Ok(None),
            Some(a) => match find(tool) {
                Some(def) => ToolCall::typed(def, a).map(Some),
                None => Err(ToolError::new(
                    ErrorCode::UnknownTool,
                    format!("observe: no tool {tool}"),
                )),
            },
        };
        let capture = sub(capture_tool, raw.capture)?;
        let snapshot = sub(snapshot_tool, raw.snapshot)?;
        Ok(Some(Box::new(Observation {
            capture,
            snapshot,
            settle_ms: raw.settle_ms,
            settle_timeout_ms: raw.settle_timeout_ms,
        })))
    }
}

/// A batch's own arguments, its items typed.
#[derive(Debug, Clone)]
pub(crate) struct Batch {
    pub items: Vec<ToolCall>,
    pub continue_on_error: bool,
    pub gap_ms: u64,
}

/// The batch's arguments as validation normalized them (each item's `arguments`
/// already normalized against its own tool).
#[derive(Deserialize)]
struct RawBatch {
    items: Vec<RawItem>,
    continue_on_error: bool,
    gap_ms: u64,
}

#[derive(Deserialize)]
struct RawItem {
    tool: String,
    arguments: Value,
}

impl ToolCall {
    /// Validates `args` (config defaults first) and types them: the one step that
    /// turns a tool's JSON arguments into a call. A `null` means no arguments. The
    /// issues are every problem found, as [`validate_args`] reports them.
    pub(crate) fn parse(
        def: &'static ToolDef,
        args: &Value,
        config: &Value,
    ) -> Result<ToolCall, CallError> {
        let empty;
        let args = if args.is_null() {
            empty = Value::Object(Default::default());
            &empty
        } else {
            args
        };
        let norm = validate_args(def, args, config).map_err(CallError::Invalid)?;
        ToolCall::typed(def, norm).map_err(CallError::Unfit)
    }

    /// The typed call of `def` with `args`, for callers outside the engine: its problems
    /// as the `invalid_arguments` error a caller of `tools.call` would get. `config` is
    /// the effective configuration the defaults come from.
    pub fn new(def: &'static ToolDef, args: &Value, config: &Value) -> Result<ToolCall, ToolError> {
        ToolCall::parse(def, args, config).map_err(ToolError::from)
    }

    /// Types arguments that validation already normalized. Validation shaped them, so
    /// a failure is the engine's own mismatch between a spec and its struct, refused
    /// as `invalid_arguments` (never run with guessed values).
    pub(crate) fn typed(def: &'static ToolDef, args: Value) -> Result<ToolCall, ToolError> {
        let typed = match def.runs {
            Runs::Alone(ops) => ops.parse(&args)?,
            Runs::Items => {
                let raw: RawBatch = typed(&args)?;
                let items = raw
                    .items
                    .into_iter()
                    .map(|it| match find(&it.tool) {
                        Some(d) if !d.is_batch() => ToolCall::typed(d, it.arguments),
                        _ => Err(ToolError::new(
                            ErrorCode::InvalidArguments,
                            format!("no plain tool {:?} in the batch", it.tool),
                        )),
                    })
                    .collect::<Result<_, _>>()?;
                Typed::Batch(Batch {
                    items,
                    continue_on_error: raw.continue_on_error,
                    gap_ms: raw.gap_ms,
                })
            }
        };
        let observe = if def.mutates() && !def.is_batch() {
            Observation::of(&args)?
        } else {
            None
        };
        Ok(ToolCall {
            def,
            args,
            typed,
            observe,
        })
    }

    /// What to observe after it runs, when its caller asked.
    pub(crate) fn observation(&self) -> Option<&Observation> {
        self.observe.as_deref()
    }

    /// The canvas region a capture call names (what an observation waits to be still).
    pub(crate) fn capture_region(&self) -> Option<cc_protocol::Rect> {
        match &self.typed {
            Typed::ScreenCapture(a) => a.region_rect(),
            _ => None,
        }
    }

    /// The tool called.
    pub fn def(&self) -> &'static ToolDef {
        self.def
    }

    /// Its name (`pointer.click`).
    pub fn name(&self) -> &'static str {
        self.def.name
    }

    /// Its normalized arguments (defaults filled), secrets included: redact before
    /// showing them anywhere ([`crate::assess::redact`]).
    pub fn args(&self) -> &Value {
        &self.args
    }

    /// The calls the action consists of: itself, or each item of a batch.
    pub(crate) fn calls(&self) -> &[ToolCall] {
        match &self.typed {
            Typed::Batch(b) => &b.items,
            _ => std::slice::from_ref(self),
        }
    }

    /// The batch's own arguments, for `batch.execute`.
    pub(crate) fn batch(&self) -> Option<&Batch> {
        match &self.typed {
            Typed::Batch(b) => Some(b),
            _ => None,
        }
    }

    /// Whether its arguments raise it to high risk whatever the desktop says.
    pub(crate) fn escalates(&self) -> bool {
        self.typed.escalates()
    }

    /// Whether the operator's configuration vouches for its arguments.
    pub(crate) fn operator_trusts(&self, config: &Config) -> bool {
        self.typed.operator_trusts(config)
    }

    /// Whether it pastes the clipboard at the focus.
    pub(crate) fn pastes(&self) -> bool {
        self.typed.pastes()
    }

    /// Where it lands; `None` for a batch, whose items land each on their own.
    pub fn target(&self) -> Option<Target> {
        self.typed.target()
    }

    /// What it does in the operator's words: its tool's `describe` (a batch's, over its
    /// items described in `judged`), with the element and the window the gate read.
    pub(crate) fn describe(&self, judged: &Judged<'_>) -> Description {
        let mut d = self.typed.describe(judged);
        d.element = judged.landing.element.as_ref().map(describe::element);
        d.window = judged.landing.window.as_ref().map(describe::window);
        d
    }

    /// A batch in the operator's words, its items described in `judged`.
    pub(crate) fn describe_batch(judged: &Judged<'_>) -> Description {
        super::batch_execute::describe(judged)
    }

    /// Runs it (not a batch) on the driver. On any failure, every key and button the
    /// driver holds is released before returning.
    pub(crate) fn run(&self, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        let out = self.typed.run(ex);
        if out.is_err() {
            let _ = ex.driver.release_all();
        }
        out
    }
}

/// A call built in code as a tool's typed arguments (a vocabulary's translation):
/// the tool follows from the arguments' type, so a misspelt tool or member does not
/// compile. [`ToolCall::built`] checks it against the tool's spec.
#[derive(Debug, Clone)]
pub(crate) struct Built {
    typed: Typed,
    /// The same arguments as a caller would send them (what validation checks and
    /// events show).
    args: Value,
}

impl Built {
    /// The call these typed arguments make.
    pub(crate) fn new<A: Serialize + Into<Typed>>(args: A) -> Built {
        // Plain structs with string keys: serializing them cannot fail; were it to,
        // the null is refused by validation, never run.
        let json = serde_json::to_value(&args).unwrap_or(Value::Null);
        Built {
            typed: args.into(),
            args: json,
        }
    }

    /// The tool it calls.
    #[cfg(test)]
    pub(crate) fn def(&self) -> &'static ToolDef {
        self.typed.def()
    }

    /// Its arguments as a caller would send them.
    #[cfg(test)]
    pub(crate) fn args(&self) -> &Value {
        &self.args
    }
}

impl ToolCall {
    /// A built call, checked by the tool's spec (ranges, the cross-field rules, config
    /// defaults of what it leaves out) like any caller's, and kept with its typed
    /// arguments as built: nothing is deserialized.
    pub(crate) fn built(b: Built, config: &Value) -> Result<ToolCall, CallError> {
        let def = b.typed.def();
        let args = validate_args(def, &b.args, config).map_err(CallError::Invalid)?;
        // A built call asks for no observation (its typed arguments hold none).
        Ok(ToolCall {
            def,
            args,
            typed: b.typed,
            observe: None,
        })
    }

    /// `batch.execute` over built calls, stopping at the first failure, with `gap_ms`
    /// between items: each item checked as [`ToolCall::built`] does, every problem
    /// reported at its item's path as a caller sending the same items would see it,
    /// and the batch's arguments what that caller would see normalized.
    pub(crate) fn batch_of(
        built: Vec<Built>,
        gap_ms: u64,
        config: &Value,
    ) -> Result<ToolCall, CallError> {
        let mut issues = Vec::new();
        let mut items = Vec::with_capacity(built.len());
        for (i, b) in built.into_iter().enumerate() {
            match ToolCall::built(b, config) {
                Ok(c) => items.push(c),
                Err(CallError::Invalid(sub)) => {
                    issues.extend(sub.into_iter().map(|s| item_issue(i, s)));
                }
                Err(e) => return Err(e),
            }
        }
        // Worded as the spec's own list check words it.
        let count = match items.len() {
            0 => Some("needs at least 1 item(s)".to_string()),
            n if n > MAX_ITEMS => Some(format!("at most {MAX_ITEMS} items allowed")),
            _ => None,
        };
        if let Some(message) = count {
            issues.push(Issue {
                path: "items".into(),
                message,
            });
        }
        if !issues.is_empty() {
            return Err(CallError::Invalid(issues));
        }
        let shown: Vec<Value> = items
            .iter()
            .map(|c| json!({"tool": c.name(), "arguments": c.args}))
            .collect();
        let typed = Typed::Batch(Batch {
            items,
            continue_on_error: false,
            gap_ms,
        });
        Ok(ToolCall {
            def: typed.def(),
            args: json!({"items": shown, "continue_on_error": false, "gap_ms": gap_ms}),
            typed,
            observe: None,
        })
    }
}

/// Why arguments did not make a call.
#[derive(Debug)]
pub(crate) enum CallError {
    /// They do not validate: every problem found.
    Invalid(Vec<Issue>),
    /// They validate but do not fit the tool's typed arguments (the engine's own
    /// mismatch).
    Unfit(ToolError),
}

impl From<CallError> for ToolError {
    fn from(e: CallError) -> ToolError {
        match e {
            CallError::Invalid(issues) => crate::spec::invalid_args(issues),
            CallError::Unfit(e) => e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::defaults;
    use serde_json::json;

    fn call(tool: &str, args: Value) -> ToolCall {
        ToolCall::parse(find(tool).unwrap(), &args, &defaults()).unwrap()
    }

    /// A batch is typed item by item once, each item its own call.
    #[test]
    fn a_batch_is_typed_item_by_item() {
        let b = call(
            "batch.execute",
            json!({"items": [
                {"tool": "pointer.click", "arguments": {"x": 1, "y": 2}},
                {"tool": "keyboard.combo", "arguments": {"keys": ["ctrl", "alt", "t"]}}
            ]}),
        );
        let names: Vec<_> = b.calls().iter().map(ToolCall::name).collect();
        assert_eq!(names, ["pointer.click", "keyboard.combo"]);
        assert_eq!(b.target(), None);
        assert!(!b.escalates() && b.calls()[1].escalates());
        assert_eq!(b.batch().map(|b| b.gap_ms), Some(150));
        let one = call("pointer.click", json!(null));
        assert_eq!(one.calls().len(), 1);
        assert_eq!(one.target(), Some(Target::Points(Vec::new())));
    }

    /// An action's `observe` is typed with it, each observation its own tool's call
    /// with that tool's defaults: nothing is parsed when the observation is taken.
    #[test]
    fn an_observation_is_typed_with_its_action() {
        let click = call(
            "pointer.click",
            json!({"x": 1, "y": 2, "observe": {
                "capture": {"region": {"x": 5, "y": 6, "width": 7, "height": 8}},
                "settle_ms": 0
            }}),
        );
        let obs = click.observation().expect("observe was given");
        let capture = obs.capture.as_ref().expect("a capture was asked for");
        assert_eq!(capture.name(), "screen.capture");
        assert_eq!(capture.args()["scale"], 1.0, "screen.capture's defaults");
        let rect = capture.capture_region().unwrap();
        assert_eq!((rect.x, rect.y, rect.width, rect.height), (5, 6, 7, 8));
        assert!(obs.snapshot.is_none());
        assert_eq!((obs.settle_ms, obs.settle_timeout_ms), (0, 2_000));
        assert!(call("pointer.click", json!({})).observation().is_none());
    }

    /// A built call is checked like a caller's and keeps its typed arguments: its
    /// events show what a caller sending the same JSON would see normalized.
    #[test]
    fn a_built_batch_reads_as_the_same_batch_sent() {
        use super::super::fields::ButtonArg;
        use super::super::{keyboard_type, pointer_click};
        let click = pointer_click::Args::new(Some((3, 4)), ButtonArg::Right, 2, Vec::new());
        let items = vec![
            Built::new(click),
            Built::new(keyboard_type::Args::new("hi", true)),
        ];
        let built = ToolCall::batch_of(items, 150, &defaults()).unwrap();
        let sent = call(
            "batch.execute",
            json!({"items": [
                {"tool": "pointer.click", "arguments": {"x": 3, "y": 4, "button": "right", "times": 2}},
                {"tool": "keyboard.type", "arguments": {"text": "hi", "submit": true}}
            ]}),
        );
        assert_eq!(built.args(), sent.args());
        let names: Vec<_> = built.calls().iter().map(ToolCall::name).collect();
        assert_eq!(names, ["pointer.click", "keyboard.type"]);
        assert_eq!(built.calls()[0].target(), sent.calls()[0].target());
    }

    /// A built call the spec refuses is refused at its item's path, every problem at
    /// once, and a batch of no or too many items as the spec's list check words it.
    #[test]
    fn a_built_call_out_of_range_is_refused_at_its_item() {
        use super::super::pointer_scroll::{self, AxisArg};
        use super::super::wait_pause;
        let scroll = |n| {
            Built::new(pointer_scroll::Args::new(
                AxisArg::Vertical,
                n,
                None,
                vec![],
            ))
        };
        let items = vec![
            Built::new(wait_pause::Args::new(1)),
            scroll(500),
            scroll(-500),
        ];
        let Err(CallError::Invalid(issues)) = ToolCall::batch_of(items, 0, &defaults()) else {
            panic!("an amount of 500 notches is refused");
        };
        let paths: Vec<_> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            ["items[1].arguments.amount", "items[2].arguments.amount"]
        );
        let Err(CallError::Invalid(issues)) = ToolCall::batch_of(Vec::new(), 0, &defaults()) else {
            panic!("an empty batch is refused");
        };
        assert_eq!(issues[0].path, "items");
        let many = (0..101)
            .map(|_| Built::new(wait_pause::Args::new(0)))
            .collect();
        let Err(CallError::Invalid(issues)) = ToolCall::batch_of(many, 0, &defaults()) else {
            panic!("101 items are refused");
        };
        assert_eq!(issues[0].message, "at most 100 items allowed");
    }

    /// Arguments that validated but do not fit (never reachable from the wire) are
    /// refused as `invalid_arguments`, never typed with guessed values; a batch naming
    /// a tool it may not hold is refused the same way.
    #[test]
    fn arguments_that_do_not_fit_are_refused() {
        let press = find("keyboard.press").unwrap();
        let e = ToolCall::typed(press, json!({"key": "nokey"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArguments);
        let batch = find("batch.execute").unwrap();
        let e = ToolCall::typed(
            batch,
            json!({"items": [{"tool": "batch.execute", "arguments": {}}], "continue_on_error": false, "gap_ms": 0}),
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArguments);
        assert!(matches!(
            ToolCall::parse(press, &json!({"key": 5}), &defaults()),
            Err(CallError::Invalid(_))
        ));
    }
}
