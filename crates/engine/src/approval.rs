//! Who approved an action that the gate would otherwise park for a human.
//!
//! Two kinds exist because they differ in what else the gate lets through: an answer to
//! the engine's own pending confirmation (`session.confirm`) *is* the pending action, so
//! it is not `busy`; an operator grant from the governed kernel is a new action, so a
//! confirmation pending for something else still makes it `busy`. Either way only a
//! `confirm` outcome is lifted: deny rules, the emergency stop, standby and a stopping
//! session still refuse it.

/// An approval carried by one action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// `session.confirm` approved this engine confirmation (`cfm-…`). Nobody waits for
    /// the action's response, so its events carry the whole envelope.
    Confirmed(String),
    /// An operator approved it on the operator channel with this governance grant
    /// (`grt-…`), which the governed kernel consumed before calling
    /// [`crate::Engine::run_approved`]. The caller waits for the response.
    Granted(String),
}

impl Approval {
    /// The `(key, id)` this approval adds to `action.started` / `action.finished`.
    pub fn event_field(&self) -> (&'static str, &str) {
        match self {
            Approval::Confirmed(id) => ("request_id", id),
            Approval::Granted(id) => ("grant_id", id),
        }
    }

    /// True for an answer to the engine's own confirmation (no caller waits).
    pub fn is_confirmation(&self) -> bool {
        matches!(self, Approval::Confirmed(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_fields() {
        let c = Approval::Confirmed("cfm-1".into());
        let g = Approval::Granted("grt-1".into());
        assert_eq!(c.event_field(), ("request_id", "cfm-1"));
        assert_eq!(g.event_field(), ("grant_id", "grt-1"));
        assert!(c.is_confirmation());
        assert!(!g.is_confirmation());
    }
}
