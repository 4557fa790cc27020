//! One tool call, validated and typed once where it enters the engine, then judged,
//! gated, shown, journaled and run from that value: nothing downstream parses its
//! arguments again or looks its tool up by name.

use cc_protocol::{ErrorCode, ToolError};
use serde::Deserialize;
use serde_json::Value;

use super::Typed;
use super::args::validate_args;
use super::def::{Runs, Target, ToolDef, typed};
use super::exec::Exec;
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

    /// [`ToolCall::parse`] for callers outside the engine, its problems as the
    /// `invalid_arguments` error a caller of `tools.call` would get. `config` is the
    /// effective configuration the defaults come from.
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
        Ok(ToolCall { def, args, typed })
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
