//! Remembering previews for the operator, and listing the pending ones.

use std::collections::HashSet;

use cc_contract::{
    ActionPreview, DataLabel, PolicyVerdict, SensitivityAssessment, TargetEvidence, WindowId,
};
use cc_engine::tools::find;
use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde_json::{Map, Value};

use super::{ApprovalRequest, EVENT_REQUESTED, RequestStatus, TargetSummary};
use crate::error::{GovResult, db};
use crate::grants;
use crate::kernel::{Governance, in_tx};
use crate::preview::Prepared;
use crate::previews::{self, Remembered};
use crate::store::{from_json, get_all, to_json};
use crate::util::{is_past, ts};

/// Decided and expired requests are kept this long after their expiry, then pruned.
const KEEP_AFTER_EXPIRY: time::Duration = time::Duration::hours(1);

/// Writes a request and the preview it stands for.
pub(super) fn save(
    tx: &Transaction<'_>,
    r: &ApprovalRequest,
    preview: &ActionPreview,
) -> GovResult<()> {
    tx.execute(
        "INSERT INTO approval_requests
             (session_id, action_id, action_digest, status, expires_at, preview, data)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT(session_id, action_id) DO UPDATE SET
             action_digest = excluded.action_digest, status = excluded.status,
             expires_at = excluded.expires_at, preview = excluded.preview,
             data = excluded.data",
        params![
            r.session_id,
            r.action_id,
            r.args_digest,
            r.status.as_str(),
            r.expires_at,
            to_json(preview)?,
            to_json(r)?
        ],
    )
    .map_err(db)?;
    Ok(())
}

/// The request of `(session, action)` and its preview.
pub(super) fn load(
    conn: &Connection,
    session_id: &str,
    action_id: &str,
) -> GovResult<Option<(ApprovalRequest, ActionPreview)>> {
    // Cached: every preview and every execute looks its action up here.
    let row: Option<(String, String)> = conn
        .prepare_cached(
            "SELECT data, preview FROM approval_requests WHERE session_id = ?1 AND action_id = ?2",
        )
        .and_then(|mut stmt| {
            stmt.query_row(params![session_id, action_id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()
        })
        .map_err(db)?;
    row.map(|(d, p)| Ok((from_json(&d)?, from_json(&p)?)))
        .transpose()
}

/// Whether text shown to the operator is secret beyond what the engine judged: the
/// caller labelled the data as anything but public or unknown, or the target is a
/// password field (by its role, or as the preview assessed it from the desktop:
/// `sensitive_field`).
fn labelled_secret(
    labels: &[DataLabel],
    target: Option<&TargetEvidence>,
    sensitive_field: bool,
) -> bool {
    let labelled_secret = labels
        .iter()
        .any(|l| !matches!(l, DataLabel::Public | DataLabel::Unknown));
    let password_target = target
        .and_then(|t| t.role.as_deref())
        .is_some_and(|r| r.to_ascii_lowercase().contains("password"));
    labelled_secret || password_target || sensitive_field
}

/// Text shown to the operator is redacted as the engine redacts its events, and
/// wholly when it is secret ([`labelled_secret`]).
fn shown_arguments(tool: &str, args: &Map<String, Value>, secret: bool) -> Value {
    let args = Value::Object(args.clone());
    let mut shown = match find(tool) {
        Some(def) => cc_engine::redact(def, &args, secret),
        // A tool the engine no longer knows: its text is shown to nobody.
        None => {
            let mut shown = args;
            if let Some(t) = shown.get_mut("text") {
                *t = Value::String(cc_engine::REDACTED.into());
            }
            shown
        }
    };
    // `batch.execute`: every item's text, since the focus may move between items.
    if let Some(Value::Array(items)) = shown.get_mut("items") {
        for item in items {
            if let Some(Value::String(t)) =
                item.get_mut("arguments").and_then(|a| a.get_mut("text"))
            {
                *t = cc_engine::REDACTED.into();
            }
        }
    }
    shown
}

impl Governance {
    /// Remembers a preview (step of `preview_action`, and of an execute refused with
    /// `approval_required`) and settles its envelope: the same action previewed again
    /// with the same arguments and decision while its envelope is valid keeps that
    /// envelope (its `proposedAt` and `expiresAt` too); anything else is recorded as the
    /// action's new envelope ([`crate::previews`]). Answers the operator's request when
    /// it is newly pending (not when the same action is previewed again while it waits),
    /// for [`Governance::announce_request`] once the journal lock is released.
    ///
    /// The operator's request is journaled for a `confirm` preview, and for any preview
    /// of an action that already has one: an agent that re-previews a pending action
    /// with other arguments must change what the operator would approve (the operator
    /// then gets `approval_changed`), even when the new arguments need no approval.
    pub(crate) fn remember_preview(
        &self,
        conn: &mut Connection,
        p: &mut Prepared,
    ) -> GovResult<Option<ApprovalRequest>> {
        let e = &p.preview.envelope;
        let decision = p.preview.policy.decision;
        match previews::load(conn, &e.session_id, &e.action_id)? {
            Some(seen) if seen.decision == decision && seen.answers(e, self.now()) => {
                p.preview.envelope = seen.envelope;
            }
            seen => {
                tracing::debug!(
                    action = %e.action_id,
                    previous = ?seen.as_ref().map(|r| (&r.decision, &r.envelope)),
                    decision = ?decision,
                    envelope = ?e,
                    "a new envelope for the action"
                );
                previews::save(conn, e, decision)?
            }
        }
        self.record_preview(conn, p)
    }

    /// The journal side of [`Governance::remember_preview`].
    fn record_preview(
        &self,
        conn: &mut Connection,
        p: &Prepared,
    ) -> GovResult<Option<ApprovalRequest>> {
        let preview = &p.preview;
        let e = &preview.envelope;
        let confirm = preview.policy.decision == PolicyVerdict::Confirm;
        let pending = confirm && preview.policy.grant_id.is_none();
        let stored = load(conn, &e.session_id, &e.action_id)?.map(|(old, _)| old);
        if !confirm && stored.is_none() {
            return Ok(None);
        }
        // What this action was last previewed as (same id and digest): its decision
        // stands, and a request already waiting is neither re-read nor re-announced.
        // Its envelope (expiry included) is still replaced by this one.
        let previous = stored.filter(|old| old.args_digest == e.args_digest);
        let target = match &previous {
            Some(old) if old.target.is_some() => old.target.clone(),
            _ => e.target.as_ref().map(|t| self.target_summary(t, pending)),
        };
        let at = self.now();
        let secret = labelled_secret(
            &e.data_labels,
            e.target.as_ref(),
            e.target_sensitivity
                .as_ref()
                .is_some_and(|s| s.assessment == SensitivityAssessment::Sensitive),
        );
        let mut request = ApprovalRequest {
            session_id: e.session_id.clone(),
            principal_id: e.principal_id.clone(),
            action_id: e.action_id.clone(),
            status: if pending {
                RequestStatus::Pending
            } else {
                RequestStatus::NotRequired
            },
            decision: preview.policy.decision,
            tool: e.tool.clone(),
            operation: e.operation.clone(),
            action_class: e.action_class,
            mode: e.requested_mode,
            target,
            arguments: shown_arguments(&e.tool, &p.arguments, secret),
            // A batch's every text, since the focus may move between its items.
            description: p.assessed.description_redacted(secret || p.def.is_batch()),
            data_labels: e.data_labels.clone(),
            args_digest: e.args_digest.clone(),
            policy_digest: preview.policy.policy_digest.clone(),
            reasons: preview.policy.reasons.clone(),
            requested_at: ts(at),
            expires_at: e.expires_at.clone(),
            grant_id: None,
            resolved_at: None,
            reason: None,
        };
        in_tx(conn, |tx| {
            tx.execute(
                "DELETE FROM approval_requests WHERE expires_at < ?1",
                params![ts(at - KEEP_AFTER_EXPIRY)],
            )
            .map_err(db)?;
            // The same action with the same digest, already decided: the decision
            // stands (asking again takes a new action id).
            if let Some(old) = &previous
                && matches!(old.status, RequestStatus::Approved | RequestStatus::Denied)
            {
                request.status = old.status;
                request.grant_id = old.grant_id.clone();
                request.resolved_at = old.resolved_at.clone();
                request.reason = old.reason.clone();
            }
            save(tx, &request, preview)
        })?;
        let already_waiting = previous.is_some_and(|old| {
            old.status == RequestStatus::Pending && !is_past(&old.expires_at, at)
        });
        Ok((request.status == RequestStatus::Pending && !already_waiting).then_some(request))
    }

    /// The envelope `(session, action)` was last previewed as, from the journal (so a
    /// restart forgets nothing). `None` when the action was never previewed.
    pub(crate) fn remembered_preview(
        &self,
        conn: &Connection,
        session_id: &str,
        action_id: &str,
    ) -> GovResult<Option<Remembered>> {
        previews::load(conn, session_id, action_id)
    }

    /// [`Governance::remember_preview`] and [`Governance::announce_request`] for an
    /// execute refused with `approval_required`; answers the request as stored (pending
    /// or denied). The refusal stands whatever happens here, so a journal failure is
    /// only logged.
    pub(crate) fn ask_operator(
        &self,
        conn: &mut Connection,
        p: &mut Prepared,
    ) -> Option<ApprovalRequest> {
        match self.remember_preview(conn, p) {
            Ok(Some(request)) => self.announce_request(&request),
            Ok(None) => {}
            Err(e) => {
                tracing::error!("cannot record the approval request: {}", e.message);
                return None;
            }
        }
        let e = &p.preview.envelope;
        load(conn, &e.session_id, &e.action_id)
            .ok()
            .flatten()
            .map(|(r, _)| r)
    }

    /// Tells the event bus (the console) that a request waits; the event carries the
    /// arguments and the description in their bounded form (`GET /approvals` has them
    /// whole).
    pub(crate) fn announce_request(&self, request: &ApprovalRequest) {
        if let Ok(mut payload) = serde_json::to_value(request) {
            for member in ["arguments", "description"] {
                if let Some(a) = payload.get_mut(member) {
                    *a = cc_engine::bounded(a);
                }
            }
            self.engine.bus().emit(EVENT_REQUESTED, payload);
        }
    }

    fn target_summary(&self, t: &TargetEvidence, read_title: bool) -> TargetSummary {
        let window_title = match (&t.window_id, read_title) {
            (Some(id), true) => self.window_list().ok().and_then(|list| {
                list.iter()
                    .find(|w| {
                        w["id"]
                            .as_u64()
                            .is_some_and(|n| id.same_window(&WindowId::Number(n)))
                    })
                    .and_then(|w| w["title"].as_str().map(str::to_string))
            }),
            _ => None,
        };
        TargetSummary {
            app_id: t.app_id.clone(),
            window_id: t.window_id.clone(),
            window_title,
            role: t.role.clone(),
            bounds: t.bounds,
        }
    }

    /// The requests waiting for the operator, newest first: `confirm` previews of
    /// running sessions — of every principal of this journal: the operator supervises
    /// them all — unexpired, undecided and not covered by a usable grant, one per
    /// session and `argsDigest`.
    pub fn pending_approvals(&self) -> GovResult<Vec<ApprovalRequest>> {
        let conn = self.conn();
        let at = self.now();
        let rows: Vec<String> = {
            let mut stmt = conn
                .prepare(
                    "SELECT preview FROM approval_requests WHERE status = 'pending'
                     ORDER BY rowid DESC",
                )
                .map_err(db)?;
            let rows = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(db)?;
            rows.collect::<Result<_, _>>().map_err(db)?
        };
        let running: HashSet<String> =
            get_all::<cc_contract::Session>(&conn, "SELECT data FROM sessions", [])?
                .into_iter()
                .filter(|s| s.state == cc_contract::SessionState::Running)
                .map(|s| s.session_id)
                .collect();
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for text in rows {
            let preview: ActionPreview = from_json(&text)?;
            let e = &preview.envelope;
            if is_past(&e.expires_at, at)
                || !running.contains(&e.session_id)
                || !seen.insert((e.session_id.clone(), e.args_digest.clone()))
                || grants::find_usable(&conn, e, &preview.policy.policy_digest, None, at)?.is_some()
            {
                continue;
            }
            if let Some((request, _)) = load(&conn, &e.session_id, &e.action_id)? {
                out.push(request);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn secret_text_is_redacted() {
        let a = args(json!({"text": "hunter2"}));
        assert_eq!(
            shown_arguments("keyboard.type", &a, labelled_secret(&[], None, false))["text"],
            "hunter2"
        );
        assert_eq!(
            shown_arguments(
                "keyboard.type",
                &a,
                labelled_secret(&[DataLabel::Unknown], None, false)
            )["text"],
            "hunter2"
        );
        for label in [
            DataLabel::Credential,
            DataLabel::Payment,
            DataLabel::Health,
            DataLabel::Private,
        ] {
            assert_eq!(
                shown_arguments("keyboard.type", &a, labelled_secret(&[label], None, false))["text"],
                cc_engine::REDACTED
            );
        }
        let t: TargetEvidence = serde_json::from_value(json!({
            "platform": "virtual", "appId": "cc-form", "role": "password_text",
            "observationId": "o", "confidence": 1, "capturedAt": "2026-11-29T10:00:00.000Z"
        }))
        .unwrap();
        assert_eq!(
            shown_arguments("a11y.input", &a, labelled_secret(&[], Some(&t), false))["text"],
            cc_engine::REDACTED
        );
        // A field the preview assessed sensitive from the desktop, whatever its role.
        assert_eq!(
            shown_arguments("keyboard.type", &a, labelled_secret(&[], None, true))["text"],
            cc_engine::REDACTED
        );
        // The engine's rule: after a tab the focus may be in a password field.
        let tabbed = args(json!({"text": "alice\thunter2"}));
        assert_eq!(
            shown_arguments("keyboard.type", &tabbed, labelled_secret(&[], None, false))["text"],
            "alice\t[redacted]"
        );
        let batch =
            args(json!({"items": [{"tool": "keyboard.type", "arguments": {"text": "hunter2"}}]}));
        assert_eq!(
            shown_arguments("batch.execute", &batch, labelled_secret(&[], None, false))["items"][0]
                ["arguments"]["text"],
            cc_engine::REDACTED
        );
    }
}
