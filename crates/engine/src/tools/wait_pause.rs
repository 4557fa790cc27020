//! `wait.pause`: let time pass (an animation, a page load), pre-emptibly.

use cc_protocol::{Description, Risk, ToolError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef, no_check};
use super::describe::Judged;
use super::exec::Exec;
use crate::spec::{Field, Ty};

#[derive(Debug, Clone, Deserialize, Serialize)]
pub(crate) struct Args {
    ms: u64,
}

impl Args {
    /// A pause of `ms` milliseconds.
    pub(crate) fn new(ms: u64) -> Args {
        Args { ms }
    }
}

pub(super) struct WaitPause;

impl Tool for WaitPause {
    type Args = Args;

    fn escalates(&self, _: &Args) -> bool {
        false
    }

    fn describe(&self, a: &Args, _: &Judged<'_>) -> Description {
        Description {
            title: format!("Wait {} ms", a.ms),
            ..Default::default()
        }
    }

    fn target(&self, _: &Args) -> Target {
        Target::Focused
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        let ms = a.ms.min(ex.config.runtime.max_wait_ms);
        if ms > 0 {
            ex.sleep_ms(ms)?;
        }
        Ok(json!({ "waited_ms": ms }))
    }
}

pub(crate) fn def() -> ToolDef {
    ToolDef {
        name: "wait.pause",
        summary: "Wait, e.g. for an animation to finish.",
        risk: Risk::Benign,
        needs: Needs::Nothing,
        nature: Nature::Waits,
        text: TextEntry::No,
        moves_focus: false,
        lands: Lands::Focused,
        outputs: &[("waited_ms", "time waited")],
        params: Ty::Object(vec![Field::req(
            "ms",
            Ty::int(0, 600_000),
            "milliseconds (truncated to runtime.max_wait_ms)",
        )]),
        examples: vec![json!({"ms": 500})],
        check: no_check,
        runs: Runs::Alone(&WaitPause),
    }
}
