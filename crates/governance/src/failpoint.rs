//! A crash-test hook, for tests only: it lets a test stop the server at the two points
//! where a crash matters most to the execute pipeline, so the recovery rules (a
//! `pending` receipt comes back `indeterminate`, never retried) are proven with a real
//! SIGKILL rather than by editing the database.
//!
//! Set `CC_GOVERNANCE_FAILPOINT=before_effect` (the pending receipt is committed, the
//! desktop not yet touched) or `after_effect` (the desktop was acted on, the receipt not
//! yet committed) in the **server process's environment**. On reaching that point the
//! executing thread writes `cc-governance failpoint <name> reached` to stderr and then
//! blocks forever, holding the journal connection, until the test kills the process.
//! Nothing a client sends can set it: it is read from the process environment once, and
//! no tool argument or configuration key reaches it. Unset (the default) it costs one
//! load of a cached value.

use std::sync::OnceLock;

/// The environment variable that arms the hook.
pub const FAILPOINT_ENV: &str = "CC_GOVERNANCE_FAILPOINT";

/// The points of the execute pipeline where the hook can stop the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failpoint {
    /// After the `pending` receipt is committed, before the engine is called.
    BeforeEffect,
    /// After the engine answered, before the receipt is finished.
    AfterEffect,
}

impl Failpoint {
    fn name(self) -> &'static str {
        match self {
            Failpoint::BeforeEffect => "before_effect",
            Failpoint::AfterEffect => "after_effect",
        }
    }
}

/// The armed point, read once from the environment (an unknown value arms nothing
/// and is logged).
fn armed() -> Option<Failpoint> {
    static ARMED: OnceLock<Option<Failpoint>> = OnceLock::new();
    *ARMED.get_or_init(|| parse(std::env::var(FAILPOINT_ENV).ok().as_deref()))
}

/// The point a value of the variable names; anything else arms nothing.
fn parse(value: Option<&str>) -> Option<Failpoint> {
    match value? {
        "before_effect" => Some(Failpoint::BeforeEffect),
        "after_effect" => Some(Failpoint::AfterEffect),
        other => {
            tracing::warn!("{FAILPOINT_ENV}={other:?} names no failpoint; ignored");
            None
        }
    }
}

/// Blocks forever when `point` is the armed one (see the module docs); returns at once
/// otherwise.
pub(crate) fn hit(point: Failpoint) {
    if armed() != Some(point) {
        return;
    }
    eprintln!("cc-governance failpoint {} reached", point.name());
    loop {
        std::thread::park();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_two_names_arm_a_point() {
        assert_eq!(parse(Some("before_effect")), Some(Failpoint::BeforeEffect));
        assert_eq!(parse(Some("after_effect")), Some(Failpoint::AfterEffect));
        for inert in [
            None,
            Some(""),
            Some("BEFORE_EFFECT"),
            Some("after_effect "),
            Some("1"),
        ] {
            assert_eq!(parse(inert), None, "{inert:?}");
        }
    }

    #[test]
    fn an_unarmed_point_returns_at_once() {
        // This test process does not set the variable (the crash tests set it on the
        // server process only), so both points are no-ops here.
        if std::env::var_os(FAILPOINT_ENV).is_none() {
            hit(Failpoint::BeforeEffect);
            hit(Failpoint::AfterEffect);
        }
    }
}
