//! A [`ComputerUseRuntime`](crate::runtime::ComputerUseRuntime) over the governed tools of
//! GOVERNANCE.md Part A, whatever serves them: [`GovernedRuntime`] over a [`ToolCaller`].
//!
//! The MCP runtime ([`crate::mcp`]) and the in-process runtime (`local`, a feature) are this
//! one type over two callers, so they send the same snake_case arguments, read the same
//! camelCase results and repeat the same binding checks at their call boundary:
//!
//! * a preview is kept as the exact JSON text the server sent, its envelope must answer
//!   the proposal (ids, mode, evidence, and an `argsDigest` recomputed from the proposal's
//!   arguments) and be fresh;
//! * a lease or reservation is bound to the preview's envelope before it is returned; a
//!   refused one is released, never returned;
//! * `execute_action` refuses an authorization whose envelope differs from the previewed
//!   one in any field (canonical JSON; the first differing field is named), sends exactly
//!   the previewed proposal plus `lease_id` and `approval_grant_id`, and binds the receipt.

mod arguments;
mod caller;
mod envelope_diff;
mod kept;
mod observe;
mod options;
mod proposal_check;
mod reply;
mod runtime_impl;

pub use caller::{ToolCaller, ToolImage, ToolListing, ToolReply};
pub use options::RuntimeOptions;
pub use reply::{INVALID_RESPONSE, tool_error};

use kept::KeptPreviews;

/// The governed runtime over a [`ToolCaller`].
#[derive(Debug)]
pub struct GovernedRuntime<C> {
    caller: C,
    options: RuntimeOptions,
    kept: KeptPreviews,
}

impl<C> GovernedRuntime<C> {
    /// A runtime over `caller`.
    pub fn with_caller(caller: C, options: RuntimeOptions) -> Self {
        Self {
            caller,
            options,
            kept: KeptPreviews::default(),
        }
    }

    /// The caller underneath (to close an MCP connection, or reach the local kernel).
    pub fn caller(&self) -> &C {
        &self.caller
    }

    /// Gives the caller back (to close a connection), forgetting the kept previews.
    pub fn into_caller(self) -> C {
        self.caller
    }

    /// The options the runtime was made with.
    pub fn options(&self) -> &RuntimeOptions {
        &self.options
    }
}
