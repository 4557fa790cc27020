//! Approval grants. Approval is never a model tool: the operator channel (console or
//! operator HTTP) calls [`Governance::approve_preview`] for a `confirm` preview, which
//! issues an `exact_action` grant bound to session, principal, `actionDigest` and
//! `policyDigest`. Execute consumes it (by id, or found by digest).

use cc_contract::{
    ActionEnvelope, ActionPreview, ApprovalGrant, ErrorCode, GrantScope, PolicyVerdict,
};
use rusqlite::{Connection, Transaction, params};
use serde_json::json;

use crate::args::check_ttl;
use crate::error::{GovResult, db, fail};
use crate::kernel::Governance;
use crate::owned_session::{load_owned, require_running};
use crate::store::{append_event, get_all, to_json};
use crate::util::{is_past, new_id, ts, ts_after};

fn save(tx: &Transaction<'_>, g: &ApprovalGrant) -> GovResult<()> {
    tx.execute(
        "INSERT INTO grants (grant_id, session_id, action_digest, data) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT(grant_id) DO UPDATE SET data = excluded.data",
        params![g.grant_id, g.session_id, g.action_digest, to_json(g)?],
    )
    .map_err(db)?;
    Ok(())
}

/// A grant that authorizes this envelope under this policy: same principal, session,
/// action digest and policy digest, unexpired, with a use left. When the client names
/// a grant, only that one is considered.
pub(crate) fn find_usable(
    conn: &Connection,
    envelope: &ActionEnvelope,
    policy_digest: &str,
    grant_id: Option<&str>,
    at: time::OffsetDateTime,
) -> GovResult<Option<ApprovalGrant>> {
    let grants: Vec<ApprovalGrant> = get_all(
        conn,
        "SELECT data FROM grants WHERE session_id = ?1 AND action_digest = ?2",
        params![envelope.session_id, envelope.args_digest],
    )?;
    Ok(grants.into_iter().find(|g| {
        grant_id.is_none_or(|id| id == g.grant_id)
            && g.principal_id == envelope.principal_id
            && g.policy_digest == policy_digest
            && g.remaining_uses > 0
            && !is_past(&g.expires_at, at)
    }))
}

/// Consumes one use of a grant for `action_id`, with its event.
pub(crate) fn consume(
    tx: &Transaction<'_>,
    mut g: ApprovalGrant,
    action_id: &str,
) -> GovResult<()> {
    g.remaining_uses = g.remaining_uses.saturating_sub(1);
    g.consumed_by_action_ids.push(action_id.to_string());
    save(tx, &g)?;
    append_event(
        tx,
        &g.session_id,
        Some(action_id),
        "approval.consumed",
        Some(&g.principal_id),
        json!({"grantId": g.grant_id, "remainingUses": g.remaining_uses}),
    )?;
    Ok(())
}

impl Governance {
    /// Operator channel: approves a `confirm` preview with a single-use `exact_action`
    /// grant valid for `ttl_ms`. Not exposed as an MCP tool.
    pub fn approve_preview(
        &self,
        preview: &ActionPreview,
        ttl_ms: u64,
    ) -> GovResult<ApprovalGrant> {
        self.with_tx(|tx| self.issue_grant(tx, preview, ttl_ms, &self.principal))
    }

    /// Issues the grant of [`Governance::approve_preview`] inside the caller's
    /// transaction (the operator's approval of a pending request marks the request in
    /// the same transaction), for the principal owning the session.
    pub(crate) fn issue_grant(
        &self,
        tx: &Transaction<'_>,
        preview: &ActionPreview,
        ttl_ms: u64,
        principal: &str,
    ) -> GovResult<ApprovalGrant> {
        check_ttl("ttl_ms", ttl_ms)?;
        if preview.policy.decision != PolicyVerdict::Confirm {
            return Err(fail(
                ErrorCode::InvalidArguments,
                "only a confirm decision is approved",
            ));
        }
        let e = &preview.envelope;
        {
            let session = load_owned(tx, &e.session_id, principal)?;
            require_running(&session)?;
            let at = self.now();
            // An `exact_action` grant is scoped to exactly one action: its scope digest
            // is that action's digest (the contract's rule, checked by every client).
            let scope_digest = e.args_digest.clone();
            let grant = ApprovalGrant {
                grant_id: new_id("grt"),
                scope: GrantScope::ExactAction,
                principal_id: principal.to_string(),
                session_id: e.session_id.clone(),
                action_digest: e.args_digest.clone(),
                scope_digest,
                policy_digest: preview.policy.policy_digest.clone(),
                tool: e.tool.clone(),
                operation: e.operation.clone(),
                action_class: e.action_class,
                mode: e.requested_mode,
                issued_at: ts(at),
                expires_at: ts_after(at, ttl_ms),
                remaining_uses: 1,
                consumed_by_action_ids: Vec::new(),
            };
            save(tx, &grant)?;
            append_event(
                tx,
                &grant.session_id,
                Some(&e.action_id),
                "action.approved",
                Some(principal),
                json!({"grantId": grant.grant_id, "actionDigest": grant.action_digest,
                       "policyDigest": grant.policy_digest, "scope": grant.scope.as_str(),
                       "expiresAt": grant.expires_at}),
            )?;
            Ok(grant)
        }
    }
}
