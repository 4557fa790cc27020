//! `a11y.snapshot`: the accessibility tree (roles, names, states, canvas rects).

use cc_protocol::{Description, ErrorCode, Risk, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::def::{Lands, Nature, Needs, Runs, Target, TextEntry, Tool, ToolDef, no_check};
use super::describe::Judged;
use super::exec::{Exec, drv};
use crate::snapshot::Caps;
use super::fields::window_id;
use crate::spec::{Field, Ty};

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Args {
    pub level: String,
    pub depth: Option<usize>,
    pub max_nodes: Option<usize>,
    pub include_rects: bool,
    pub window: Option<u64>,
    pub diff: bool,
}

pub(super) struct A11ySnapshot;

impl Tool for A11ySnapshot {
    type Args = Args;

    fn escalates(&self, _: &Args) -> bool {
        false
    }

    fn describe(&self, _: &Args, _: &Judged<'_>) -> Description {
        Description {
            title: "Read the accessibility tree".into(),
            ..Default::default()
        }
    }

    fn target(&self, _: &Args) -> Target {
        Target::Focused
    }

    fn run(&self, a: Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
        snapshot(&a, ex)
    }
}

pub(crate) fn def() -> ToolDef {
    ToolDef {
        name: "a11y.snapshot",
        summary: "Snapshot the accessibility tree (roles, names, states, canvas rects).",
        risk: Risk::Benign,
        needs: Needs::Accessibility,
        nature: Nature::Observes,
        text: TextEntry::No,
        moves_focus: false,
        lands: Lands::Focused,
        outputs: &[
            ("snapshot_id", "cite it in a11y.activate and a11y.input"),
            ("generated_at", "RFC 3339"),
            ("node_count", "nodes in the tree"),
            ("truncated", "the tree was cut at a cap"),
            (
                "tree",
                "the accessibility tree (every node has a ref, valid while its element lives)",
            ),
            (
                "diff",
                "with diff: what changed since the previous snapshot, by ref (added, removed, changed), instead of the tree",
            ),
        ],
        params: Ty::Object(vec![
            Field::cfg(
                "level",
                Ty::one_of(&["skeleton", "standard", "full"]),
                "a11y.default_level",
                "detail level",
            ),
            Field::opt("depth", Ty::int(1, 40), "depth cap (overrides the level)"),
            Field::opt(
                "max_nodes",
                Ty::int(1, 10_000),
                "node cap (overrides the level)",
            ),
            Field::cfg(
                "include_rects",
                Ty::Bool,
                "a11y.include_rects",
                "include canvas rects",
            ),
            Field::opt(
                "window",
                window_id(),
                "scope to one window (an id of window.list)",
            ),
            Field::def(
                "diff",
                Ty::Bool,
                json!(false),
                "answer what changed since the previous snapshot instead of the tree (the tree when there is none)",
            ),
        ]),
        examples: vec![json!({}), json!({"level": "full", "window": 4194305})],
        check: no_check,
        runs: Runs::Alone(&A11ySnapshot),
    }
}

fn snapshot(args: &Args, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
    let mut caps = Caps::for_level(&args.level, ex.config.a11y.max_name_len);
    if let Some(d) = args.depth {
        caps.depth = d;
    }
    if let Some(n) = args.max_nodes {
        caps.max_nodes = n;
    }
    caps.include_rects = args.include_rects;
    let window = args.window;
    let cap = ex.config.a11y.hard_walk_cap;
    ex.check_stop()?;
    if let Some(id) = window
        && !drv(ex.driver.windows())?.iter().any(|w| w.id == id)
    {
        let msg = format!("no window with id {id}; call window.list");
        return Err(ToolError::with_data(
            ErrorCode::InvalidArguments,
            msg.clone(),
            json!({"issues": [{"path": "window", "message": msg}]}),
        ));
    }
    let roots = drv(ex.driver.a11y_tree(window, cap))?;
    let walked: usize = roots.iter().map(count).sum();
    let built = ex
        .snapshots
        .build(&roots, window.is_some(), caps, ex.canvas, walked >= cap);
    let mut out = json!({
        "snapshot_id": built.snapshot_id,
        "node_count": built.node_count,
        "truncated": built.truncated,
        "generated_at": crate::clock::rfc3339(std::time::SystemTime::now()),
    });
    // The difference replaces the tree when asked for and there is a snapshot before.
    match (args.diff, built.diff) {
        (true, Some(d)) => out["diff"] = d,
        _ => out["tree"] = json!(built.tree),
    }
    Ok(out)
}

fn count(n: &cc_desktop::RawNode) -> usize {
    1 + n.children.iter().map(count).sum::<usize>()
}
