//! Bound values: runtime responses that have passed their binding checks.
//!
//! Typed decoding proves shape, not provenance, so a `ControlLease` in hand says nothing
//! about whose lease it is. A [`BoundLease`] does: it can only come out of
//! [`validate_lease`](crate::runtime::binding::validate_lease), which checked it against
//! one fresh envelope. The same holds for [`BoundReservation`], [`BoundReceipt`],
//! [`BoundApproval`] and [`FreshEnvelope`].
//!
//! These types have private fields, no public constructor, no `Default`, no
//! `Deserialize` and no `Clone`: the only way to hold one is to have validated the value
//! inside. [`authorize_execute`](crate::runtime::binding::authorize_execute) accepts only
//! them, so the compiler — not a runtime check — keeps an unvalidated lease away from the
//! mutation path.
//!
//! A bound lease cannot be built outside this crate:
//!
//! ```compile_fail
//! use adk_computer_use::bound::BoundLease;
//! # fn forge(lease: cc_contract::ControlLease) -> BoundLease {
//! BoundLease { lease }
//! # }
//! ```
//!
//! nor copied out of a validated one into a second authority:
//!
//! ```compile_fail
//! # fn copy(bound: &adk_computer_use::bound::BoundLease) {
//! let twin: adk_computer_use::bound::BoundLease = bound.clone();
//! # }
//! ```

use std::fmt;
use std::sync::Arc;

use cc_contract::{
    ActionEnvelope, ApprovalGrant, ControlLease, ExecutionReceipt, PolicyDecision,
    TargetReservation,
};
use time::OffsetDateTime;

use crate::runtime::Clock;

/// Identifies the envelope a value was bound against, so a value bound for one action
/// cannot be presented with another.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct BindingKey {
    pub(crate) action_id: String,
    pub(crate) args_digest: String,
}

impl BindingKey {
    pub(crate) fn of(envelope: &ActionEnvelope) -> Self {
        Self {
            action_id: envelope.action_id.clone(),
            args_digest: envelope.args_digest.clone(),
        }
    }
}

/// An envelope whose timestamps parse, whose validity window is positive, whose digest is
/// well formed and which had not expired when checked.
///
/// It carries the clock it was checked with, so every later binding against it (lease,
/// reservation, receipt, the final authorization) reads the same time source and can
/// recheck expiry at its own moment: an approval wait or a lease acquisition can use up the
/// window after the preview was fresh.
pub struct FreshEnvelope {
    pub(crate) envelope: ActionEnvelope,
    pub(crate) expires_at: OffsetDateTime,
    pub(crate) clock: Arc<dyn Clock>,
}

impl FreshEnvelope {
    /// The envelope as previewed.
    pub fn envelope(&self) -> &ActionEnvelope {
        &self.envelope
    }

    /// Its parsed expiry.
    pub fn expires_at(&self) -> OffsetDateTime {
        self.expires_at
    }

    /// The current time, from the clock the envelope was checked with.
    pub fn now(&self) -> OffsetDateTime {
        self.clock.now()
    }

    /// Gives the envelope back, ending its bound status.
    pub fn into_inner(self) -> ActionEnvelope {
        self.envelope
    }
}

impl fmt::Debug for FreshEnvelope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FreshEnvelope")
            .field("envelope", &self.envelope)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// A lease checked against one envelope: same session, principal, agent and mode; active;
/// budget left; unexpired when checked; the target inside its boundaries.
#[derive(Debug)]
pub struct BoundLease {
    pub(crate) lease: ControlLease,
    pub(crate) expires_at: OffsetDateTime,
    pub(crate) key: BindingKey,
}

impl BoundLease {
    /// The lease as received.
    pub fn lease(&self) -> &ControlLease {
        &self.lease
    }

    /// Gives the lease back (to release it), ending its bound status.
    pub fn into_inner(self) -> ControlLease {
        self.lease
    }
}

/// A reservation checked against one envelope: same session, principal, intent (the
/// action id), group, agent and target scope; active and unexpired when checked.
///
/// Advisory only: it never authorizes a mutation, the lease does.
#[derive(Debug)]
pub struct BoundReservation {
    pub(crate) reservation: TargetReservation,
    pub(crate) expires_at: OffsetDateTime,
    pub(crate) key: BindingKey,
}

impl BoundReservation {
    /// The reservation as received.
    pub fn reservation(&self) -> &TargetReservation {
        &self.reservation
    }

    /// Gives the reservation back (to release it), ending its bound status.
    pub fn into_inner(self) -> TargetReservation {
        self.reservation
    }
}

/// A receipt checked against one envelope: same session and action, and an
/// `actionDigest` equal to the envelope's `argsDigest` — the work that was approved.
#[derive(Debug)]
pub struct BoundReceipt {
    pub(crate) receipt: ExecutionReceipt,
}

impl BoundReceipt {
    /// The receipt as received.
    pub fn receipt(&self) -> &ExecutionReceipt {
        &self.receipt
    }

    /// Gives the receipt back, ending its bound status.
    pub fn into_inner(self) -> ExecutionReceipt {
        self.receipt
    }
}

/// The approval given for an action, as resume input to the approval interrupt.
///
/// Not itself authority: it becomes a [`BoundApproval`] only through
/// [`validate_approval`](crate::runtime::binding::validate_approval). Serializable because
/// the graph checkpoints it as resume input between the interrupt and execute.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Approval {
    /// No approval: acceptable only when the policy verdict is `allow`.
    NotRequired,
    /// A grant issued on the operator channel, checked locally (session, principal,
    /// digests, expiry, uses left).
    ExactGrant {
        /// The grant (boxed: it is large and the other variants are small).
        grant: Box<ApprovalGrant>,
    },
    /// The runtime holds the grant for this action; the caller vouches for the digests it
    /// was issued for, which must equal the envelope's and the policy's.
    RuntimeHeld {
        /// The approved `argsDigest`.
        action_digest: String,
        /// The policy that asked for confirmation.
        policy_digest: String,
    },
}

/// An approval checked against one envelope and its policy decision.
#[derive(Debug)]
pub struct BoundApproval {
    pub(crate) approval: Approval,
    pub(crate) policy: PolicyDecision,
    pub(crate) expires_at: Option<OffsetDateTime>,
    pub(crate) key: BindingKey,
}

impl BoundApproval {
    /// The approval as given.
    pub fn approval(&self) -> &Approval {
        &self.approval
    }

    /// The policy decision it was checked against.
    pub fn policy(&self) -> &PolicyDecision {
        &self.policy
    }

    /// The grant id to pass to `execute_action`, when the approval is a grant.
    pub fn grant_id(&self) -> Option<&str> {
        match &self.approval {
            Approval::ExactGrant { grant } => Some(&grant.grant_id),
            Approval::NotRequired | Approval::RuntimeHeld { .. } => None,
        }
    }
}

/// Proof that every input of one mutation was revalidated together, immediately before
/// `execute_action`. The mutation path takes this and nothing else.
///
/// It borrows the bound values it was made from, so it cannot outlive them nor be kept
/// for a later, staler call.
#[derive(Debug)]
pub struct ExecutionAuthorization<'a> {
    pub(crate) envelope: &'a ActionEnvelope,
    pub(crate) lease: &'a ControlLease,
    pub(crate) reservation: Option<&'a TargetReservation>,
    pub(crate) approval: &'a BoundApproval,
    pub(crate) authorized_at: OffsetDateTime,
}

impl<'a> ExecutionAuthorization<'a> {
    /// The envelope to execute, exactly as previewed.
    pub fn envelope(&self) -> &'a ActionEnvelope {
        self.envelope
    }

    /// The lease that authorizes it.
    pub fn lease(&self) -> &'a ControlLease {
        self.lease
    }

    /// The advisory reservation held for its target, if any.
    pub fn reservation(&self) -> Option<&'a TargetReservation> {
        self.reservation
    }

    /// The approval.
    pub fn approval(&self) -> &'a BoundApproval {
        self.approval
    }

    /// When the authorization was made.
    pub fn authorized_at(&self) -> OffsetDateTime {
        self.authorized_at
    }
}
