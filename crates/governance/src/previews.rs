//! The envelopes previewed last, by `(sessionId, actionId)`, kept in memory so that
//! execute can refuse an expired one (GOVERNANCE.md Part A, execute step 1: "an expired
//! envelope is `stale_target`").
//!
//! Why in memory: execute re-previews from its own arguments, so the envelope it
//! builds is always fresh; only a record of the preview the agent actually saw can
//! expire. Writing that record to the journal would cost one `fsync` per preview
//! (`synchronous=FULL`), a third of the disk cost of a governed click, for a record
//! whose loss is harmless. So every preview is remembered here, and only a `confirm`
//! preview (what the operator must see) is also written to the journal
//! (`approval_requests`), where execute finds it after a restart. An `allow` preview is
//! forgotten by a restart, or when this bounded map evicts it; execute then behaves as
//! for an action that was never previewed: its own re-preview is the envelope.
//!
//! Each preview of the same key replaces the entry (digest, `proposedAt`,
//! `expiresAt`): previewing again after expiry is how an agent renews its envelope.

use std::collections::HashMap;

use cc_contract::PolicyVerdict;
use time::OffsetDateTime;

/// At most this many previews are remembered. Expired ones are dropped first; beyond
/// that the one expiring soonest goes (a forgotten preview only loses the expiry check,
/// never correctness of the receipt).
const CAPACITY: usize = 4096;

/// One remembered preview envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Remembered {
    pub args_digest: String,
    /// The policy decision it showed (the operator channel answers `not_confirm` for
    /// an action previewed only as `allow` or `deny`).
    pub decision: PolicyVerdict,
    pub proposed_at: String,
    pub expires_at: String,
    /// `expires_at` parsed, for comparisons and eviction.
    pub expires: OffsetDateTime,
}

/// The bounded map; shared (behind a mutex) by the kernels of every principal of one
/// journal, since session ids are unique across them.
#[derive(Debug, Default)]
pub(crate) struct Previews {
    map: HashMap<(String, String), Remembered>,
}

impl Previews {
    /// Remembers the latest preview of `(session, action)`, replacing any earlier one.
    pub fn remember(
        &mut self,
        session_id: &str,
        action_id: &str,
        r: Remembered,
        now: OffsetDateTime,
    ) {
        let key = (session_id.to_string(), action_id.to_string());
        if !self.map.contains_key(&key) && self.map.len() >= CAPACITY {
            self.map.retain(|_, v| v.expires > now);
            if self.map.len() >= CAPACITY
                && let Some(soonest) = self
                    .map
                    .iter()
                    .min_by_key(|(_, v)| v.expires)
                    .map(|(k, _)| k.clone())
            {
                self.map.remove(&soonest);
            }
        }
        self.map.insert(key, r);
    }

    /// The latest preview of `(session, action)`, if still remembered.
    pub fn get(&self, session_id: &str, action_id: &str) -> Option<&Remembered> {
        self.map
            .get(&(session_id.to_string(), action_id.to_string()))
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> OffsetDateTime {
        OffsetDateTime::UNIX_EPOCH + time::Duration::seconds(secs)
    }

    fn entry(digest: &str, expires: i64) -> Remembered {
        Remembered {
            args_digest: digest.into(),
            decision: PolicyVerdict::Allow,
            proposed_at: String::new(),
            expires_at: String::new(),
            expires: at(expires),
        }
    }

    #[test]
    fn a_new_preview_of_the_same_action_replaces_the_old_one() {
        let mut p = Previews::default();
        p.remember("s", "a", entry("d1", 10), at(0));
        p.remember("s", "a", entry("d2", 20), at(15));
        assert_eq!(p.get("s", "a"), Some(&entry("d2", 20)));
        assert_eq!(p.len(), 1);
        assert_eq!(p.get("s", "b"), None);
        assert_eq!(p.get("t", "a"), None);
    }

    #[test]
    fn the_map_is_bounded_dropping_expired_entries_then_the_soonest() {
        let mut p = Previews::default();
        for i in 0..CAPACITY {
            // Half expire at 5, half at 100 + i.
            let expires = if i % 2 == 0 { 5 } else { 100 + i as i64 };
            p.remember("s", &i.to_string(), entry("d", expires), at(0));
        }
        assert_eq!(p.len(), CAPACITY);
        // Full, nothing expired yet: the soonest-expiring entry makes room.
        p.remember("s", "new", entry("d", 1_000_000), at(0));
        assert_eq!(p.len(), CAPACITY);
        assert!(p.get("s", "new").is_some());
        // Full again at time 10: every entry expired by then goes at once.
        p.remember("s", "later", entry("d", 1_000_000), at(10));
        // (2048 at 100 + i, "new" and "later".)
        assert_eq!(p.len(), CAPACITY / 2 + 2);
        assert!(p.get("s", "1").is_some(), "an unexpired entry stays");
        // Replacing an existing key never evicts.
        p.remember("s", "1", entry("d", 2_000_000), at(10));
        assert_eq!(p.len(), CAPACITY / 2 + 2);
    }
}
