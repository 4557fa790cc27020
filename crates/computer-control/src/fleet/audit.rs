//! Journals gathered from every desk over its operator channel (`GET /journal`) and
//! their hash chains verified here, with the journal's own check
//! ([`cc_governance::verify_chain`]): the plane does not take a desk's word that its
//! chain is intact.

use serde_json::{Value, json};

use cc_governance::audit::SessionJournal;

use super::desk::Desk;

/// One session's verdict: `{session_id, principal_id, state, events, verified,
/// first_bad_sequence, head}`.
pub fn verify_session(j: &SessionJournal) -> Value {
    let verdict = cc_governance::verify_chain(&j.events);
    json!({
        "session_id": j.session.session_id,
        "principal_id": j.session.principal_id,
        "state": j.session.state,
        "events": j.events.len(),
        "verified": verdict.is_ok(),
        "first_bad_sequence": verdict.err(),
        "head": j.events.last().and_then(|e| e.integrity.as_ref()).map(|i| i.hash.clone()),
    })
}

/// One desk's journal, verified: `{desk, verified, sessions, error}`.
async fn gather_one(name: String, desk: Desk) -> Value {
    let body = match desk.get("/journal").await {
        Ok(b) => b,
        Err(e) => return json!({"desk": name, "verified": false, "error": e.to_string()}),
    };
    let sessions: Vec<SessionJournal> =
        match serde_json::from_value(body.get("sessions").cloned().unwrap_or(Value::Null)) {
            Ok(s) => s,
            Err(e) => {
                return json!({"desk": name, "verified": false,
                    "error": format!("the desk's journal is not a journal: {e}")});
            }
        };
    let verdicts: Vec<Value> = sessions.iter().map(verify_session).collect();
    let ok = verdicts.iter().all(|v| v["verified"] == json!(true));
    json!({"desk": name, "verified": ok, "sessions": verdicts})
}

/// Every desk's journal, gathered at once: `{all_verified, desks: [...]}`.
pub async fn gather(desks: Vec<(String, Desk)>) -> Value {
    let tasks: Vec<_> = desks
        .into_iter()
        .map(|(n, d)| tokio::spawn(gather_one(n, d)))
        .collect();
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap_or_else(
            |e| json!({"verified": false, "error": format!("the gathering task failed: {e}")}),
        ));
    }
    let all = out.iter().all(|d| d["verified"] == json!(true));
    json!({"all_verified": all, "desks": out})
}
