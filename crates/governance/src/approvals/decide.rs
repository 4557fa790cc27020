//! The operator's decision on a request: approve (an `exact_action` grant with a TTL)
//! or deny. Both refuse what cannot be decided — unknown, not a `confirm`, already
//! decided, expired, changed since the operator saw it — with a distinct error and
//! nothing written.

use cc_contract::{ActionPreview, ApprovalGrant, ContractError, PolicyVerdict, Session};
use rusqlite::{Transaction, params};
use serde::Deserialize;
use serde_json::json;

use super::record::{load, save};
use super::{ApprovalRequest, EVENT_RESOLVED, RequestStatus};
use crate::args::MAX_TTL_MS;
use crate::error::db;
use crate::kernel::Governance;
use crate::store::{append_event, get_all, get_one};
use crate::util::{is_past, ts};

/// Grant lifetime when the operator names none.
pub const DEFAULT_GRANT_TTL_MS: u64 = cc_contract::limits::DEFAULT_TTL_MS;

/// Which request, and how: what the operator channel submits.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalDecision {
    /// The governed session.
    pub session_id: String,
    /// The action previewed in it.
    pub action_id: String,
    /// The `argsDigest` the operator was shown: when given, a request whose digest
    /// differs (the agent re-previewed other arguments under the same action id) is
    /// refused instead of approving what the operator never saw.
    #[serde(default)]
    pub args_digest: Option<String>,
    /// Grant lifetime, 1..=[`MAX_TTL_MS`] ms (default [`DEFAULT_GRANT_TTL_MS`]). Approvals
    /// only.
    #[serde(default)]
    pub ttl_ms: Option<u64>,
    /// Why it was denied (recorded). Denials only.
    #[serde(default)]
    pub reason: Option<String>,
}

/// Why a decision was refused. Each variant is one answer of the operator endpoint.
#[derive(Debug, Clone, PartialEq)]
pub enum ApprovalError {
    /// `ttl_ms` outside 1..=[`MAX_TTL_MS`], or a field that does not apply.
    InvalidRequest(String),
    /// No preview of this action in that session.
    NotFound {
        /// The session named.
        session_id: String,
        /// The action named.
        action_id: String,
    },
    /// The request's digest is not the one the operator saw.
    Changed {
        /// The digest the operator was shown.
        expected: String,
        /// The digest of what the agent previewed last.
        actual: String,
    },
    /// The preview was not a `confirm` decision: there is nothing to approve.
    NotConfirm {
        /// What the preview decided instead.
        decision: PolicyVerdict,
    },
    /// Already approved or denied.
    AlreadyDecided {
        /// How it was decided.
        status: RequestStatus,
    },
    /// The preview envelope expired.
    Expired {
        /// When it expired (wire timestamp).
        expires_at: String,
    },
    /// The kernel refused (the session is not running) or the journal failed.
    Kernel(ContractError),
}

impl ApprovalError {
    /// A stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            ApprovalError::InvalidRequest(_) => "invalid_request",
            ApprovalError::NotFound { .. } => "approval_not_found",
            ApprovalError::Changed { .. } => "approval_changed",
            ApprovalError::NotConfirm { .. } => "not_confirm",
            ApprovalError::AlreadyDecided { .. } => "already_decided",
            ApprovalError::Expired { .. } => "approval_expired",
            ApprovalError::Kernel(e) => e.error.as_str(),
        }
    }

    /// A sentence for the operator.
    pub fn message(&self) -> String {
        match self {
            ApprovalError::InvalidRequest(m) => m.clone(),
            ApprovalError::NotFound {
                session_id,
                action_id,
            } => format!("no preview of action {action_id} in session {session_id}"),
            ApprovalError::Changed { expected, actual } => format!(
                "the action was previewed again with other arguments (argsDigest {actual}, you saw {expected}); review it again"
            ),
            ApprovalError::NotConfirm { decision } => format!(
                "the policy decision of this preview is {}, not confirm: there is nothing to approve",
                decision.as_str()
            ),
            ApprovalError::AlreadyDecided {
                status: RequestStatus::NotRequired,
            } => "an unused grant already covers this action".into(),
            ApprovalError::AlreadyDecided { status } => {
                format!("this request was already {}", status.as_str())
            }
            ApprovalError::Expired { expires_at } => {
                format!("the preview expired at {expires_at}; the agent must preview it again")
            }
            ApprovalError::Kernel(e) => e.message.clone(),
        }
    }
}

impl From<ContractError> for ApprovalError {
    fn from(e: ContractError) -> Self {
        ApprovalError::Kernel(e)
    }
}

/// What a successful decision produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Decided {
    /// Approved: the grant (also remembered for the action, so the agent may rely on
    /// it without passing its id).
    Approved(Box<ApprovalGrant>),
    /// Denied: the request as recorded.
    Denied(Box<ApprovalRequest>),
}

impl Governance {
    /// The operator approves (`approve`) or denies a pending request. Approval issues a
    /// single-use `exact_action` grant bound to session, principal, `argsDigest` and
    /// `policyDigest`, valid `ttl_ms`; denial is journaled (`approval.denied`). Either
    /// decides every pending preview of the same session and digest, in one
    /// transaction, and is announced on the event bus.
    pub fn decide_approval(
        &self,
        d: &ApprovalDecision,
        approve: bool,
    ) -> Result<Decided, ApprovalError> {
        let ttl_ms = match (approve, d.ttl_ms, &d.reason) {
            (true, _, Some(_)) => {
                return Err(ApprovalError::InvalidRequest(
                    "reason applies to a denial only".into(),
                ));
            }
            (false, Some(_), _) => {
                return Err(ApprovalError::InvalidRequest(
                    "ttl_ms applies to an approval only".into(),
                ));
            }
            (_, Some(t), _) if t == 0 || t > MAX_TTL_MS => {
                return Err(ApprovalError::InvalidRequest(format!(
                    "ttl_ms must be in 1..={MAX_TTL_MS}, got {t}"
                )));
            }
            (_, t, _) => t.unwrap_or(DEFAULT_GRANT_TTL_MS),
        };
        let decided = {
            let mut conn = self.conn();
            let tx = conn.transaction().map_err(db)?;
            let (mut request, preview, principal) = self.decidable(&tx, d)?;
            let at = ts(self.now());
            let decided = if approve {
                let grant = self.issue_grant(&tx, &preview, ttl_ms, &principal)?;
                request.grant_id = Some(grant.grant_id.clone());
                Decided::Approved(Box::new(grant))
            } else {
                request.reason = d.reason.clone();
                append_event(
                    &tx,
                    &request.session_id,
                    Some(&request.action_id),
                    "approval.denied",
                    Some(&principal),
                    json!({"actionDigest": request.args_digest, "reason": request.reason}),
                )?;
                Decided::Denied(Box::new(request.clone()))
            };
            request.status = if approve {
                RequestStatus::Approved
            } else {
                RequestStatus::Denied
            };
            request.resolved_at = Some(at);
            // Every pending preview of the same digest is decided with it.
            let twins: Vec<String> = get_all::<ApprovalRequest>(
                &tx,
                "SELECT data FROM approval_requests
                 WHERE session_id = ?1 AND action_digest = ?2 AND status = 'pending'",
                params![request.session_id, request.args_digest],
            )?
            .into_iter()
            .map(|r| r.action_id)
            .collect();
            for action_id in twins {
                if let Some((mut twin, twin_preview)) = load(&tx, &request.session_id, &action_id)?
                {
                    twin.status = request.status;
                    twin.grant_id = request.grant_id.clone();
                    twin.resolved_at = request.resolved_at.clone();
                    twin.reason = request.reason.clone();
                    save(&tx, &twin, &twin_preview)?;
                }
            }
            save(&tx, &request, &preview)?;
            tx.commit().map_err(db)?;
            let decided = match decided {
                Decided::Denied(_) => Decided::Denied(Box::new(request.clone())),
                approved => approved,
            };
            (decided, request)
        };
        let (decided, request) = decided;
        self.engine.bus().emit(
            EVENT_RESOLVED,
            json!({
                "sessionId": request.session_id,
                "actionId": request.action_id,
                "argsDigest": request.args_digest,
                "status": request.status.as_str(),
                "grantId": request.grant_id,
                "expiresAt": match &decided {
                    Decided::Approved(g) => Some(g.expires_at.clone()),
                    Decided::Denied(_) => None,
                },
            }),
        );
        Ok(decided)
    }

    /// The request named by `d`, if it can be decided now, and the principal owning
    /// its session (the operator supervises every principal of this server; the grant
    /// is issued to the session's own principal).
    fn decidable(
        &self,
        tx: &Transaction<'_>,
        d: &ApprovalDecision,
    ) -> Result<(ApprovalRequest, ActionPreview, String), ApprovalError> {
        let not_found = || ApprovalError::NotFound {
            session_id: d.session_id.clone(),
            action_id: d.action_id.clone(),
        };
        let session: Session = get_one(
            tx,
            "SELECT data FROM sessions WHERE session_id = ?1",
            params![d.session_id],
        )?
        .ok_or_else(not_found)?;
        let Some((request, preview)) = load(tx, &d.session_id, &d.action_id)? else {
            // Previewed, but never as something the operator must see.
            let remembered = crate::previews::load(tx, &d.session_id, &d.action_id)?;
            return Err(match remembered {
                Some(r) => ApprovalError::NotConfirm {
                    decision: r.decision,
                },
                None => not_found(),
            });
        };
        if let Some(seen) = &d.args_digest
            && *seen != request.args_digest
        {
            return Err(ApprovalError::Changed {
                expected: seen.clone(),
                actual: request.args_digest,
            });
        }
        if request.decision != PolicyVerdict::Confirm {
            return Err(ApprovalError::NotConfirm {
                decision: request.decision,
            });
        }
        if request.status != RequestStatus::Pending {
            return Err(ApprovalError::AlreadyDecided {
                status: request.status,
            });
        }
        if is_past(&request.expires_at, self.now()) {
            return Err(ApprovalError::Expired {
                expires_at: request.expires_at,
            });
        }
        Ok((request, preview, session.principal_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_messages_are_distinct_and_clear() {
        let errors = [
            ApprovalError::InvalidRequest("ttl_ms must be in 1..=300000, got 0".into()),
            ApprovalError::NotFound {
                session_id: "ses-1".into(),
                action_id: "a1".into(),
            },
            ApprovalError::Changed {
                expected: "aa".into(),
                actual: "bb".into(),
            },
            ApprovalError::NotConfirm {
                decision: PolicyVerdict::Allow,
            },
            ApprovalError::AlreadyDecided {
                status: RequestStatus::Approved,
            },
            ApprovalError::AlreadyDecided {
                status: RequestStatus::NotRequired,
            },
            ApprovalError::Expired {
                expires_at: "2026-11-29T10:00:00.000Z".into(),
            },
        ];
        let codes: Vec<&str> = errors.iter().map(ApprovalError::code).collect();
        assert_eq!(
            codes,
            [
                "invalid_request",
                "approval_not_found",
                "approval_changed",
                "not_confirm",
                "already_decided",
                "already_decided",
                "approval_expired"
            ]
        );
        assert!(errors[1].message().contains("a1") && errors[1].message().contains("ses-1"));
        assert!(errors[2].message().contains("bb"));
        assert!(errors[3].message().contains("allow"));
        assert!(errors[4].message().contains("approved"));
        assert!(errors[5].message().contains("grant already covers"));
        assert!(errors[6].message().contains("2026-11-29T10:00:00.000Z"));
    }

    #[test]
    fn a_decision_refuses_unknown_fields() {
        let bad = serde_json::json!({"session_id": "s", "action_id": "a", "approve": true});
        assert!(serde_json::from_value::<ApprovalDecision>(bad).is_err());
    }
}
