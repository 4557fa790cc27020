//! What `/health` checks before it says a desk can serve: the display server answers,
//! the driver (through the engine) answers, and the governance journal takes writes.
//! A supervisor (a Kubernetes readiness or liveness probe) reads the status code; a
//! person reads which of the three is not ready and why.
//!
//! Each probe has a time limit, so a wedged part makes the desk unready instead of
//! holding the probe open. The probes read only: nothing is drawn, typed or written.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use cc_engine::Engine;
use cc_governance::Kernels;

/// How long one probe may take before its part counts as not ready.
const LIMIT: Duration = Duration::from_secs(2);

/// One part's readiness, as `/health` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Probe {
    pub ready: bool,
    /// What was checked, or why it is not ready.
    pub detail: String,
}

impl Probe {
    fn ready(detail: impl Into<String>) -> Probe {
        Probe {
            ready: true,
            detail: detail.into(),
        }
    }

    fn not(detail: impl Into<String>) -> Probe {
        Probe {
            ready: false,
            detail: detail.into(),
        }
    }
}

/// Asks the driver crate of `platform` whether its display server accepts a
/// connection now ([`cc_desktop::Platform::reach`]); the virtual desktop lives in the
/// process and is always there.
pub async fn display(platform: &'static str) -> Probe {
    let Some(reach) = crate::platform::DRIVERS
        .iter()
        .find(|p| p.name == platform)
        .map(|p| p.reach)
    else {
        return Probe::ready("virtual desktop (in process)");
    };
    match tokio::time::timeout(LIMIT, tokio::task::spawn_blocking(reach)).await {
        Ok(Ok(Ok(what))) => Probe::ready(what),
        Ok(Ok(Err(why))) => Probe::not(why),
        Ok(Err(_)) => Probe::not("the display probe failed"),
        Err(_) => Probe::not(format!(
            "the display server did not accept within {} s",
            LIMIT.as_secs()
        )),
    }
}

/// The engine answers `system.status` (it takes the lock the driver's worker
/// shares) within the limit: a wedged driver call makes the desk unready.
pub async fn driver(engine: &Engine) -> Probe {
    let platform = engine.platform();
    let engine = engine.clone();
    let status = tokio::task::spawn_blocking(move || engine.status().ok);
    match tokio::time::timeout(LIMIT, status).await {
        Ok(Ok(true)) => Probe::ready(format!("{platform} driver answers")),
        Ok(Ok(false)) => Probe::not(format!("the {platform} driver reported an error")),
        Ok(Err(_)) => Probe::not("the driver probe failed"),
        Err(_) => Probe::not(format!(
            "the {platform} driver did not answer within {} s",
            LIMIT.as_secs()
        )),
    }
}

/// The journal takes a write transaction (rolled back at once) within the limit.
pub async fn journal(kernels: &Arc<Kernels>) -> Probe {
    let kernels = kernels.clone();
    let probe = tokio::task::spawn_blocking(move || kernels.probe_journal());
    match tokio::time::timeout(LIMIT, probe).await {
        Ok(Ok(Ok(()))) => Probe::ready("takes writes"),
        Ok(Ok(Err(e))) => Probe::not(e.message),
        Ok(Err(_)) => Probe::not("the journal probe failed"),
        Err(_) => Probe::not(format!(
            "no write transaction within {} s (another process holds the journal?)",
            LIMIT.as_secs()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_virtual_desktop_is_always_reachable() {
        let p = display("virtual").await;
        assert!(p.ready, "{p:?}");
        assert_eq!(p.detail, "virtual desktop (in process)");
    }
}
