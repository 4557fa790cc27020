//! `execute_action`: the pipeline of GOVERNANCE.md Part A, steps 1–8.
//!
//! The journal lock is held for the whole pipeline, so governed executions are
//! serialized: two actions can never race for one lease's budget or one receipt key.
//! The emergency stop does not need that lock to pre-empt an action (it engages the
//! engine's panic first).

use cc_contract::{
    Blocker, ContractError, ErrorCode, ExecutionMode, ExecutionReceipt, LeaseState, PolicyVerdict,
    ReceiptError, ReceiptResult, ReceiptStatus, Verification,
};
use cc_engine::tools::ToolDef;
use cc_protocol::ErrorCode as EngineCode;
use rusqlite::{Connection, Transaction, params};
use serde_json::{Map, Value, json};

use crate::args::ActionArgs;
use crate::error::{GovResult, fail, fail_with, invalid};
use crate::failpoint::{self, Failpoint};
use crate::grants;
use crate::kernel::{Governance, in_tx, in_tx_keep};
use crate::leases;
use crate::owned_session::{load_owned, require_running};
use crate::preview::Prepared;
use crate::store::{append_event, get_one, save_receipt};
use crate::util::{new_id, ts};

/// What performing the action through the engine came to.
enum Outcome {
    /// The engine ran it and answered this result.
    Done(Map<String, Value>),
    /// The engine refused before touching the desktop.
    NoEffect {
        status: ReceiptStatus,
        code: ErrorCode,
        message: String,
    },
    /// The effect is unknown (timeout, driver failure).
    Unknown(String),
}

/// What `execute_action` answers: `{receipt, replay, output?}` on the wire.
#[derive(Debug, Clone, PartialEq)]
pub struct Executed {
    /// The receipt (committed, rejected, interrupted or indeterminate).
    pub receipt: ExecutionReceipt,
    /// Whether the receipt was replayed from the journal (nothing was performed now).
    pub replay: bool,
    /// The tool's result as performed now (a capture keeps its `data_url`, which the
    /// transport turns into an image block); absent on a replay or without an effect.
    pub output: Option<Map<String, Value>>,
}

impl Executed {
    /// The wire form `{receipt, replay, output?}`.
    pub fn to_json(&self) -> GovResult<Value> {
        let mut m = Map::new();
        m.insert(
            "receipt".into(),
            serde_json::to_value(&self.receipt).map_err(crate::error::storage)?,
        );
        m.insert("replay".into(), json!(self.replay));
        if let Some(output) = &self.output {
            m.insert("output".into(), Value::Object(output.clone()));
        }
        Ok(Value::Object(m))
    }
}

/// A stored receipt, answered again: a committed one as `{receipt, replay: true}`, any
/// other as the error `{error: <status>, receipt}` (upstream's answer: the action did not
/// take effect and is never retried).
fn replayed(stored: ExecutionReceipt) -> GovResult<Executed> {
    let code = match stored.status {
        ReceiptStatus::Committed => {
            return Ok(Executed {
                receipt: stored,
                replay: true,
                output: None,
            });
        }
        ReceiptStatus::Rejected => ErrorCode::Rejected,
        ReceiptStatus::Interrupted => ErrorCode::Interrupted,
        ReceiptStatus::Indeterminate | ReceiptStatus::Pending => ErrorCode::Indeterminate,
    };
    let mut e = fail_with(
        code,
        format!(
            "action {} was already executed and is {}; it is never retried",
            stored.action_id,
            stored.status.as_str()
        ),
        json!({"receiptId": stored.receipt_id}),
    );
    e.receipt = Some(Box::new(stored));
    Err(e)
}

/// What a receipt keeps of a tool's result: everything but a capture's pixels (those go
/// to the caller once, as an image, and never into the journal) and what a revealing
/// tool read (the clipboard's text: its length only; a replay answers that).
fn kept(def: &ToolDef, output: &Map<String, Value>) -> Map<String, Value> {
    let mut m = output.clone();
    m.shift_remove("data_url");
    match cc_engine::redact_result(def, &Value::Object(m)) {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn load_receipt(
    conn: &Connection,
    session_id: &str,
    action_id: &str,
) -> GovResult<Option<ExecutionReceipt>> {
    get_one(
        conn,
        "SELECT data FROM receipts WHERE session_id = ?1 AND action_id = ?2",
        params![session_id, action_id],
    )
}

/// The error a blocker turns into at execute time.
fn blocker_error(b: Blocker) -> ContractError {
    let code = match b {
        Blocker::ShadowMutation => ErrorCode::ShadowMutation,
        Blocker::ForegroundRequired => ErrorCode::ForegroundRequired,
        Blocker::InputAttributionUnavailable => ErrorCode::InputAttributionUnavailable,
        Blocker::PolicyDenied => ErrorCode::PolicyDenied,
        // No target evidence: there is nothing to revalidate, so the action cannot be
        // bound to what the agent saw.
        Blocker::TargetEvidenceRequired => ErrorCode::StaleTarget,
        Blocker::PostconditionUnavailable => ErrorCode::PostconditionUnavailable,
        Blocker::ApprovalRequired => ErrorCode::ApprovalRequired,
    };
    fail_with(
        code,
        format!("the preview is blocked: {}", b.as_str()),
        json!({"blocker": b.as_str()}),
    )
}

impl Governance {
    /// `execute_action`: answers the receipt (committed, rejected, interrupted or
    /// indeterminate) with the tool's output, the replayed receipt of a known action id,
    /// or a contract error when nothing was attempted (a replayed receipt that did not
    /// commit is one too, carrying it).
    pub fn execute_action(&self, a: &ActionArgs) -> GovResult<Executed> {
        let action_id = a
            .action_id
            .clone()
            .ok_or_else(|| invalid("execute_action needs action_id"))?;
        // A shadow action observes: it can change nothing, so it needs no lease (one
        // passed with it is not used, and no budget is spent).
        let shadow = a.mode == ExecutionMode::Shadow;
        let lease_id = match (&a.lease_id, shadow) {
            (_, true) => None,
            (Some(l), false) => Some(l.clone()),
            (None, false) => return Err(invalid("execute_action needs lease_id")),
        };
        let mut conn = self.conn();
        let session = load_owned(&conn, &a.session_id, &self.principal)?;
        // 1. Re-preview from the same arguments: the digest is recomputed, never taken
        //    from the client.
        let mut prepared = self.prepare(&conn, a)?;
        let digest = prepared.preview.envelope.args_digest.clone();
        // 3 (looked up first, so a replay has no effect at all — not even a grant or
        //    budget consumption). It also comes before the expiry of step 1: a replay
        //    performs nothing, so the freshness of what the agent saw no longer matters,
        //    and a client retrying after a lost answer must get its receipt back, not
        //    `stale_target` for an action that did happen.
        if let Some(stored) = load_receipt(&conn, &a.session_id, &action_id)? {
            if stored.action_digest != digest {
                return Err(fail_with(
                    ErrorCode::ActionIdConflict,
                    format!("action {action_id} was already used for other arguments"),
                    json!({"receiptId": stored.receipt_id}),
                ));
            }
            if stored.status == ReceiptStatus::Pending {
                return Err(fail_with(
                    ErrorCode::Indeterminate,
                    "a previous attempt of this action never finished; it is not retried",
                    json!({"receiptId": stored.receipt_id}),
                ));
            }
            return replayed(stored);
        }
        require_running(&session)?;
        // 1. The envelope the agent was shown must still be valid (checked before any
        //    blocker: an expired preview is re-previewed, which shows the blocker anew).
        self.check_not_expired(&conn, &a.session_id, &action_id, &digest)?;
        if let Some(b) = prepared.preview.blocker {
            let mut error = blocker_error(b);
            if b == Blocker::ApprovalRequired {
                // The agent may execute without previewing: the operator still sees
                // what waits for approval, and the agent learns where it stands.
                if let Some(r) = self.ask_operator(&mut conn, &mut prepared) {
                    error
                        .details
                        .insert("approvalStatus".into(), json!(r.status));
                    if let Some(reason) = r.reason {
                        error.details.insert("reason".into(), json!(reason));
                    }
                }
            }
            return Err(error);
        }
        let Some(lease_id) = lease_id else {
            if let Some(t) = &a.target {
                self.revalidate(t)?;
            }
            return self.observe_in_shadow(&mut conn, a, &prepared, &action_id);
        };
        // 4. The lease, checked before the desktop is read (its refusals — expiry, a
        //    boundary escape — are committed with their events).
        in_tx_keep(&mut conn, |tx| {
            Ok(leases::check_for_action(
                tx,
                &lease_id,
                &a.session_id,
                &self.principal,
                a.mode,
                a.target.as_ref(),
                self.now(),
            )?
            .map(drop))
        })?;
        // 5. Target revalidation (reads the desktop before anything is written).
        if let Some(t) = &a.target {
            self.revalidate(t)?;
        }
        // 2, 6 (bookkeeping) and 3 (receipt begin) in one transaction. The lease is
        // checked again inside it: the journal lock was held all along, but time passed.
        let (mut lease, receipt, grant_id) = in_tx_keep(&mut conn, |tx| {
            self.begin(tx, a, &prepared, &action_id, &lease_id)
        })?;
        failpoint::hit(Failpoint::BeforeEffect);
        // 6. Perform through the engine: its gate still applies, and a panic pre-empts it.
        let outcome = self.perform(&prepared, grant_id.as_deref());
        failpoint::hit(Failpoint::AfterEffect);
        // 7, 8.
        in_tx(&mut conn, |tx| {
            self.finish(tx, receipt, &mut lease, outcome, a, prepared.def)
        })
    }

    /// A shadow action: performed through the engine like any other (the gate applies,
    /// and the preview already refused anything that mutates with `shadow_mutation`),
    /// with no lease, its receipt and an `action.observed` event written in one
    /// transaction afterwards (an observation has no effect a crash could leave half-done).
    fn observe_in_shadow(
        &self,
        conn: &mut Connection,
        a: &ActionArgs,
        prepared: &Prepared,
        action_id: &str,
    ) -> GovResult<Executed> {
        let envelope = &prepared.preview.envelope;
        // An observation a rule makes `confirm` still needs its grant, used up before it
        // runs and handed to the engine as the person's approval.
        let grant_id = in_tx_keep(conn, |tx| self.take_grant(tx, a, prepared, action_id))?;
        let outcome = self.perform(prepared, grant_id.as_deref());
        let at = ts(self.now());
        let mut receipt = ExecutionReceipt {
            receipt_id: new_id("rcp"),
            session_id: a.session_id.clone(),
            action_id: action_id.to_string(),
            action_digest: envelope.args_digest.clone(),
            attempt: a.attempt.unwrap_or(1),
            status: ReceiptStatus::Committed,
            created_at: at.clone(),
            updated_at: at,
            result: None,
            error: None,
        };
        let output = match outcome {
            Outcome::Done(output) => {
                receipt.result = Some(ReceiptResult {
                    tool_result: kept(prepared.def, &output),
                    verification: None,
                });
                Some(output)
            }
            Outcome::NoEffect {
                status,
                code,
                message,
            } => {
                receipt.status = status;
                receipt.error = Some(ReceiptError {
                    code: code.as_str().into(),
                    message,
                });
                None
            }
            // Reading failed: nothing was observed, and an observation changes nothing.
            Outcome::Unknown(message) => {
                receipt.status = ReceiptStatus::Rejected;
                receipt.error = Some(ReceiptError {
                    code: ErrorCode::ExecutionFailed.as_str().into(),
                    message,
                });
                None
            }
        };
        in_tx(conn, |tx| {
            save_receipt(tx, &receipt)?;
            let event = match receipt.status {
                ReceiptStatus::Committed => "action.observed".to_string(),
                other => format!("action.{}", other.as_str()),
            };
            append_event(
                tx,
                &receipt.session_id,
                Some(action_id),
                &event,
                Some(&self.principal),
                json!({"receiptId": receipt.receipt_id, "status": receipt.status.as_str(),
                       "tool": envelope.tool, "operation": envelope.operation,
                       "mode": ExecutionMode::Shadow.as_str(), "grantId": grant_id,
                       "error": receipt.error.as_ref().map(|e| e.code.clone())}),
            )
        })?;
        Ok(Executed {
            receipt,
            replay: false,
            output,
        })
    }

    /// Step 1's expiry: the re-preview above is always fresh, so the envelope that can
    /// have expired is the one the journal keeps from the agent's own preview of this
    /// action with the same digest ([`crate::previews`]; a restart forgets none). An
    /// action never previewed has no such envelope, and its re-preview is the envelope.
    /// A preview of other arguments under the same id is not this envelope either.
    /// Refused with nothing written.
    fn check_not_expired(
        &self,
        conn: &Connection,
        session_id: &str,
        action_id: &str,
        digest: &str,
    ) -> GovResult<()> {
        let Some(seen) = self.remembered_preview(conn, session_id, action_id)? else {
            return Ok(());
        };
        if seen.envelope.args_digest != digest || seen.expires > self.now() {
            return Ok(());
        }
        let e = &seen.envelope;
        Err(fail_with(
            ErrorCode::StaleTarget,
            format!(
                "the preview of action {action_id} expired at {}; preview it again, then execute",
                e.expires_at
            ),
            json!({"reason": "preview_expired", "actionId": action_id,
                   "argsDigest": digest, "proposedAt": e.proposed_at,
                   "expiredAt": e.expires_at}),
        ))
    }

    fn begin(
        &self,
        tx: &Transaction<'_>,
        a: &ActionArgs,
        prepared: &Prepared,
        action_id: &str,
        lease_id: &str,
    ) -> GovResult<GovResult<(cc_contract::ControlLease, ExecutionReceipt, Option<String>)>> {
        let envelope = &prepared.preview.envelope;
        // 4. The lease.
        let mut lease = match leases::check_for_action(
            tx,
            lease_id,
            &a.session_id,
            &self.principal,
            a.mode,
            a.target.as_ref(),
            self.now(),
        )? {
            Ok(l) => l,
            Err(e) => return Ok(Err(e)),
        };
        // 2. A confirm decision consumes a matching grant.
        let grant_id = match self.take_grant(tx, a, prepared, action_id)? {
            Ok(g) => g,
            Err(e) => return Ok(Err(e)),
        };
        // 6. One budget unit, then the pending receipt and `action.started`.
        leases::consume(tx, &mut lease)?;
        let at = ts(self.now());
        let receipt = ExecutionReceipt {
            receipt_id: new_id("rcp"),
            session_id: a.session_id.clone(),
            action_id: action_id.to_string(),
            action_digest: envelope.args_digest.clone(),
            attempt: a.attempt.unwrap_or(1),
            status: ReceiptStatus::Pending,
            created_at: at.clone(),
            updated_at: at,
            result: None,
            error: None,
        };
        save_receipt(tx, &receipt)?;
        append_event(
            tx,
            &a.session_id,
            Some(action_id),
            "action.started",
            Some(&self.principal),
            json!({"actionId": action_id, "leaseId": lease.lease_id,
                   "actionDigest": envelope.args_digest, "tool": envelope.tool,
                   "mode": envelope.requested_mode.as_str(), "grantId": grant_id}),
        )?;
        Ok(Ok((lease, receipt, grant_id)))
    }

    /// Step 2: a `confirm` decision runs only on an operator's grant for exactly these
    /// arguments, used up here so it covers one action; any other decision needs none.
    fn take_grant(
        &self,
        tx: &Transaction<'_>,
        a: &ActionArgs,
        prepared: &Prepared,
        action_id: &str,
    ) -> GovResult<GovResult<Option<String>>> {
        if prepared.preview.policy.decision != PolicyVerdict::Confirm {
            return Ok(Ok(None));
        }
        let Some(grant) = grants::find_usable(
            tx,
            &prepared.preview.envelope,
            &prepared.preview.policy.policy_digest,
            a.approval_grant_id.as_deref(),
            self.now(),
        )?
        else {
            return Ok(Err(fail(
                ErrorCode::ApprovalRequired,
                "this action needs an operator's approval",
            )));
        };
        let id = grant.grant_id.clone();
        grants::consume(tx, grant, action_id)?;
        Ok(Ok(Some(id)))
    }

    /// Performs the action through the engine. With a consumed operator grant (a
    /// `confirm` decision) the engine is told a human approved it, so its gate does not
    /// ask again; deny rules, the panic and standby still apply there.
    fn perform(&self, prepared: &Prepared, grant_id: Option<&str>) -> Outcome {
        self.ensure_engine_session();
        let call = prepared.call.clone();
        let env = match grant_id {
            Some(g) => self.engine.run_approved(call, g),
            None => self.engine.run(call),
        };
        if env.ok {
            let result = match env.result {
                Some(Value::Object(m)) => m,
                Some(other) => Map::from_iter([("value".to_string(), other)]),
                None => Map::new(),
            };
            if result.get("status").and_then(Value::as_str) == Some("awaiting_confirmation") {
                // The engine's gate wants a confirmation the preview did not predict
                // (the desktop raised the risk, e.g. a password field took the focus),
                // so no grant covers it: deny it there, so the action cannot run later
                // outside this receipt.
                if let Some(id) = result.get("request_id") {
                    let _ = self
                        .engine
                        .confirm(&json!({"request_id": id, "approve": false}));
                }
                return Outcome::NoEffect {
                    status: ReceiptStatus::Rejected,
                    code: ErrorCode::ApprovalRequired,
                    message: "the engine's safety gate requires its own confirmation".into(),
                };
            }
            return Outcome::Done(prepared.resolved.output(result));
        }
        let (code, message) = env
            .error
            .map(|e| (e.code, e.message))
            .unwrap_or((EngineCode::DriverFailed, "no answer".into()));
        match code {
            EngineCode::SafetyStopped => Outcome::NoEffect {
                status: ReceiptStatus::Interrupted,
                code: ErrorCode::Interrupted,
                message,
            },
            EngineCode::PolicyDenied => Outcome::NoEffect {
                status: ReceiptStatus::Rejected,
                code: ErrorCode::PolicyDenied,
                message,
            },
            EngineCode::Timeout | EngineCode::DriverFailed | EngineCode::BackendUnavailable => {
                Outcome::Unknown(message)
            }
            _ => Outcome::NoEffect {
                status: ReceiptStatus::Rejected,
                code: ErrorCode::ExecutionFailed,
                message,
            },
        }
    }

    fn finish(
        &self,
        tx: &Transaction<'_>,
        mut receipt: ExecutionReceipt,
        lease: &mut cc_contract::ControlLease,
        outcome: Outcome,
        a: &ActionArgs,
        def: &ToolDef,
    ) -> GovResult<Executed> {
        receipt.updated_at = ts(self.now());
        let mut output = None;
        // The read-back's verdict, journaled as `action.verified` before the outcome.
        let mut verified_event = None;
        let (event, payload) = match outcome {
            Outcome::NoEffect {
                status,
                code,
                message,
            } => {
                receipt.status = status;
                receipt.error = Some(ReceiptError {
                    code: code.as_str().into(),
                    message,
                });
                (
                    format!("action.{}", status.as_str()),
                    json!({"error": code.as_str()}),
                )
            }
            Outcome::Unknown(message) => {
                self.indeterminate(tx, &mut receipt, lease, message, None)?
            }
            Outcome::Done(result) => {
                let tool_result = kept(def, &result);
                output = Some(result);
                // 7. Independent read-back of the postcondition.
                let verification: Option<GovResult<Verification>> = a
                    .postcondition
                    .as_ref()
                    .map(|p| self.verify(p, a.target.as_ref()));
                if let Some(Ok(v)) = &verification {
                    verified_event = Some(json!({"verified": v.satisfied,
                        "satisfied": v.satisfied, "observedDigest": v.observed_digest,
                        "method": v.method}));
                }
                match verification {
                    Some(Err(e)) => self.indeterminate(
                        tx,
                        &mut receipt,
                        lease,
                        format!("the postcondition could not be read back: {}", e.message),
                        Some(tool_result),
                    )?,
                    Some(Ok(v)) if !v.satisfied => {
                        let message = "the postcondition does not hold after the action".into();
                        // The evidence stays in the receipt: the client sees why.
                        receipt.result = Some(ReceiptResult {
                            tool_result,
                            verification: Some(v),
                        });
                        self.indeterminate(tx, &mut receipt, lease, message, None)?
                    }
                    verified => {
                        let verification = verified.and_then(Result::ok);
                        receipt.status = ReceiptStatus::Committed;
                        receipt.result = Some(ReceiptResult {
                            tool_result,
                            verification: verification.clone(),
                        });
                        (
                            "action.committed".to_string(),
                            json!({"verification": verification, "leaseId": lease.lease_id}),
                        )
                    }
                }
            }
        };
        save_receipt(tx, &receipt)?;
        if let Some(mut verified) = verified_event {
            verified["receiptId"] = json!(receipt.receipt_id);
            append_event(
                tx,
                &receipt.session_id,
                Some(&receipt.action_id),
                "action.verified",
                Some(&self.principal),
                verified,
            )?;
        }
        let mut payload = payload;
        payload["receiptId"] = json!(receipt.receipt_id);
        payload["status"] = json!(receipt.status.as_str());
        append_event(
            tx,
            &receipt.session_id,
            Some(&receipt.action_id),
            &event,
            Some(&self.principal),
            payload,
        )?;
        // A lease whose budget is spent authorizes nothing more: it is revoked, so it no
        // longer holds the desktop against the next lease (upstream semantics).
        if lease.state == LeaseState::Active && lease.actions_used >= lease.action_budget {
            leases::revoke(tx, lease, leases::BUDGET_EXHAUSTED)?;
        }
        Ok(Executed {
            receipt,
            replay: false,
            output,
        })
    }

    /// A failure after the effect: receipt `indeterminate`, lease revoked
    /// (`action_indeterminate`).
    fn indeterminate(
        &self,
        tx: &Transaction<'_>,
        receipt: &mut ExecutionReceipt,
        lease: &mut cc_contract::ControlLease,
        message: String,
        tool_result: Option<Map<String, Value>>,
    ) -> GovResult<(String, Value)> {
        receipt.status = ReceiptStatus::Indeterminate;
        receipt.error = Some(ReceiptError {
            code: ErrorCode::Indeterminate.as_str().into(),
            message,
        });
        if let Some(tool_result) = tool_result {
            receipt.result = Some(ReceiptResult {
                tool_result,
                verification: None,
            });
        }
        leases::revoke(tx, lease, "action_indeterminate")?;
        Ok((
            "action.indeterminate".to_string(),
            json!({"leaseId": lease.lease_id, "leaseRevoked": "action_indeterminate"}),
        ))
    }
}
