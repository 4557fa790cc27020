//! What a preview inspects: the action itself, or every item of a `batch.execute`.
//!
//! A batch is judged by its items, never by the batch tool alone (whose own risk is
//! benign): each item is resolved to its plain tool, and policy, risk and action class are then taken over all items, the most
//! restrictive deciding — the same merge the engine's gate applies to a batch
//! (`cc_engine::worker::batch`), so the preview predicts what the gate will do.

use cc_engine::rules::Landing;
use cc_engine::tools::ToolDef;
use serde_json::{Value, json};

use crate::error::{GovResult, invalid};
use crate::kernel::Governance;
use crate::policy::resolve_tool;

/// The batch tool, whose items are inspected one by one.
pub(crate) const BATCH: &str = "batch.execute";

/// One concrete action to judge: a plain tool, its arguments and where it lands.
pub(crate) struct Item {
    pub def: &'static ToolDef,
    pub args: Value,
    pub landing: Landing,
    /// It writes into a field assessed sensitive, or writes credential-labelled text
    /// ([`crate::sensitivity::writes_secret`]): high risk, as the gate rates typing
    /// into a focused password field.
    pub writes_secret: bool,
}

impl Governance {
    /// The items to judge: `[the action]`, or each item of a batch. The arguments were
    /// validated against the batch tool's spec before (`validate_args`), which already
    /// refuses, naming the item's path, an item that names no plain tool, nests a batch,
    /// or whose arguments do not fit its tool; what remains here cannot fail on valid
    /// arguments, but a tool that does not resolve is still refused rather than judged
    /// by the batch's name.
    pub(crate) fn inspect(&self, def: &'static ToolDef, args: &Value) -> GovResult<Vec<Item>> {
        if def.name != BATCH {
            return Ok(vec![Item {
                def,
                landing: self.landing(def, args),
                args: args.clone(),
                writes_secret: false,
            }]);
        }
        let items = args.get("items").and_then(Value::as_array);
        let mut out = Vec::new();
        for (i, item) in items.into_iter().flatten().enumerate() {
            let name = item.get("tool").and_then(Value::as_str).unwrap_or_default();
            let item_def = resolve_tool(name)
                .ok_or_else(|| invalid(format!("batch item {i}: no plain tool {name:?}")))?;
            let item_args = item.get("arguments").cloned().unwrap_or_else(|| json!({}));
            out.push(Item {
                def: item_def,
                landing: self.landing(item_def, &item_args),
                args: item_args,
                writes_secret: false,
            });
        }
        Ok(out)
    }
}
