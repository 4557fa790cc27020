//! [`LocalRuntime`]: the governed runtime over the in-process kernel (`cc-governance` over
//! `cc-engine`), behind the `local` feature.
//!
//! It is [`GovernedRuntime`] over [`LocalToolClient`]: the same tool names, snake_case
//! arguments, camelCase results and boundary checks as [`crate::mcp`], so a graph behaves
//! the same against it as against `computer-control` over MCP — without a process to
//! spawn, for hosts that embed the engine.

mod caller;

use std::path::Path;

use cc_engine::Engine;
use cc_governance::Governance;
use serde_json::json;

pub use caller::LocalToolClient;

use crate::error::ComputerUseError;
use crate::governed::{GovernedRuntime, RuntimeOptions};
use crate::runtime::RuntimeResult;

/// The in-process runtime.
pub type LocalRuntime = GovernedRuntime<LocalToolClient>;

impl GovernedRuntime<LocalToolClient> {
    /// Opens the journal at `journal` for `principal_id` over `engine`, as
    /// `computer-control serve` does: sessions a previous process left running are paused
    /// and their leases revoked before anything can act, and the engine session is
    /// started.
    pub fn open(
        engine: Engine,
        journal: &Path,
        principal_id: &str,
        options: RuntimeOptions,
    ) -> RuntimeResult<Self> {
        let governance =
            Governance::open(engine.clone(), journal, principal_id).map_err(|e| open_error(&e))?;
        governance.recover().map_err(|e| open_error(&e))?;
        let started = engine.start(&json!({}));
        if let (false, Some(error)) = (started.ok, started.error) {
            // A session already running is fine: the host may have started it.
            if error.code != cc_protocol::ErrorCode::AlreadyStarted {
                return Err(ComputerUseError::Runtime {
                    operation: "open",
                    code: serde_json::to_value(error.code)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string)),
                    message: error.message,
                });
            }
        }
        Ok(Self::with_caller(LocalToolClient::new(governance), options))
    }

    /// [`Self::open`] on the built-in virtual desktop (deterministic, no display needed).
    pub fn on_virtual_desktop(
        journal: &Path,
        principal_id: &str,
        options: RuntimeOptions,
    ) -> RuntimeResult<Self> {
        let engine = Engine::new(
            Box::new(cc_desktop::VirtualDesktop::default()),
            cc_engine::config::ConfigStack::new(),
        );
        Self::open(engine, journal, principal_id, options)
    }
}

fn open_error(e: &cc_contract::ContractError) -> ComputerUseError {
    ComputerUseError::Runtime {
        operation: "open",
        code: Some(e.error.as_str().to_string()),
        message: e.message.clone(),
    }
}
