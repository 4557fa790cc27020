//! The governed kernels of a process, for whichever principal a caller is: what every
//! transport of one server shares, so an approval given on one is found on another.
//!
//! GOVERNANCE.md: the principal comes from the host — the configured
//! `governance.principal_id` over stdio, the identity of the HTTP token over HTTP —
//! never from tool arguments. One kernel serves every principal: the kernel of another
//! principal is the host's ([`Governance::for_principal`]: the same engine, clock and
//! journal connection), made the first time that principal calls, and kept.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use cc_contract::ContractError;
use cc_engine::Engine;

use crate::kernel::Governance;
use crate::sessions::Recovery;

/// Who a governed call acts for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The host's configured principal (stdio, and the two HTTP role tokens).
    Host,
    /// The identity an HTTP token was configured with.
    Principal(String),
}

/// Every kernel of the process, keyed by principal.
pub struct Kernels {
    host: Arc<Governance>,
    others: Mutex<HashMap<String, Arc<Governance>>>,
}

impl Kernels {
    /// Opens the journal for the host's principal and recovers what a previous server
    /// left running (paused sessions, revoked leases; nothing is deleted) before any
    /// client can act. Returns what was recovered, for the server's log.
    pub fn open(
        engine: Engine,
        journal: &Path,
        principal: &str,
    ) -> Result<(Kernels, Recovery), ContractError> {
        let host = Governance::open(engine, journal, principal)?;
        let recovery = host.recover()?;
        let kernels = Kernels {
            host: Arc::new(host),
            others: Mutex::new(HashMap::new()),
        };
        Ok((kernels, recovery))
    }

    /// Whether the shared journal takes writes now ([`Governance::probe_journal`]).
    pub fn probe_journal(&self) -> Result<(), ContractError> {
        self.host.probe_journal()
    }

    /// The kernel acting for `caller`.
    pub fn for_caller(&self, caller: &Caller) -> Result<Arc<Governance>, ContractError> {
        let name = match caller {
            Caller::Principal(p) if p != self.host.principal() => p,
            _ => return Ok(self.host.clone()),
        };
        // Poisoning is ignored: the map only ever gains complete entries.
        let mut others = self.others.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(k) = others.get(name) {
            return Ok(k.clone());
        }
        let k = Arc::new(self.host.for_principal(name.clone())?);
        others.insert(name.clone(), k.clone());
        Ok(k)
    }
}
