//! The published upstream client (`adk-computer-use` 2.3.0, unmodified) against the real
//! `computer-control` server on its virtual desktop.
//!
//! * upstream's reference graph completes `allowed` → `committed` → `Verified` twice in
//!   one session (a click into the sign-in form's Name field, then typing into it), and
//!   upstream's `ComputerUseEvaluator` finds no violation in our session events;
//! * the approval route: the graph interrupts, a person approves on the operator
//!   channel, upstream's own `ApprovalGrant` decodes the grant, the graph resumes with
//!   the grant id and commits once;
//! * the runtime-held approval: after the person approves, the client previews again
//!   (the same envelope, now executable) and resumes with `runtimeApproved`;
//! * follow-ups, pause with a reason, session deletion and pruning as upstream's runtime
//!   calls them;
//! * the same over Streamable HTTP with a bearer token (and a wrong token refused).

use std::sync::Arc;

use adk_computer_use::{
    ApprovalGrant, ApprovalGrantScope, ComputerUseEvaluator, ComputerUseRuntime, ScopeAuthorizer,
    build_reference_graph_with_checkpointer,
};
use adk_eval::ToolUse;
use adk_graph::{ExecutionConfig, GraphError, MemoryCheckpointer, State};
use serde_json::{Value, json};
use upstream_adk_interop::{
    AGENT_TOKEN, NEEDS_APPROVAL, PRINCIPAL, Runtime, Server, Window, centre_of, proposal,
    sign_in_window, value_digest,
};

fn authorizer() -> Arc<ScopeAuthorizer> {
    Arc::new(ScopeAuthorizer::from_verified_identity(
        PRINCIPAL,
        None,
        ["computer:plan", "computer:execute:foreground"],
    ))
}

/// Runs upstream's reference graph once over `runtime` for `proposed`, on a thread.
async fn run_graph(runtime: Runtime, proposed: Value, thread: &str) -> Result<State, GraphError> {
    let graph = build_reference_graph_with_checkpointer(
        Arc::new(runtime),
        authorizer(),
        Some(Arc::new(MemoryCheckpointer::new())),
    )
    .expect("the reference graph compiles");
    let mut input = State::new();
    input.insert("proposed_action".into(), proposed);
    graph.invoke(input, ExecutionConfig::new(thread)).await
}

/// The graph's end state says committed and `Verified` (`result.status: completed`).
fn assert_verified(state: &State, what: &str) {
    assert_eq!(
        state.get("route"),
        Some(&json!("allowed")),
        "{what}: {state:?}"
    );
    assert_eq!(
        state.get("committed"),
        Some(&json!(true)),
        "{what}: {state:?}"
    );
    assert_eq!(
        state.get("verified"),
        Some(&json!(true)),
        "{what}: {state:?}"
    );
    assert_eq!(state["result"]["status"], "completed", "{what}: {state:?}");
    assert_eq!(state["receipt"]["status"], "committed", "{what}: {state:?}");
}

/// Clicks into the sign-in form's Name field through upstream's reference graph (its
/// own lease, verified by read-back), so that typing lands there next.
async fn click_into_name(server: &Server, session_id: &str, window: &Window, click: &str) {
    let bootstrap = server.bootstrap(session_id);
    let (x, y) = centre_of(&bootstrap, window, "edit", "Name").await;
    let state = run_graph(
        server.runtime(session_id, "pointer_click", window),
        proposal(
            click,
            "pointer_click",
            json!({"x": x, "y": y}),
            window,
            json!({"kind": "ui_element", "role": "edit", "label": "Name", "exists": true}),
        ),
        click,
    )
    .await
    .expect("the click runs through the reference graph");
    assert_verified(&state, "click");
}

/// Click into Name, then type `text` into it: two actions of one session, each through
/// upstream's reference graph, each its own lease (the first one's budget of 1 is spent,
/// and the server revokes it). Returns the two action ids.
async fn click_then_type(
    server: &Server,
    session_id: &str,
    window: &Window,
    text: &str,
) -> [String; 2] {
    let click = format!("{session_id}-click");
    click_into_name(server, session_id, window, &click).await;

    let typing = format!("{session_id}-type");
    let state = run_graph(
        server.runtime(session_id, "keyboard_type", window),
        proposal(
            &typing,
            "keyboard_type",
            json!({"text": text}),
            window,
            json!({"kind": "ui_element", "role": "edit", "label": "Name", "exists": true,
                   "value_digest": value_digest(text)}),
        ),
        &typing,
    )
    .await
    .expect("typing runs through the reference graph, with a lease of its own");
    assert_verified(&state, "type");
    [click, typing]
}

/// Upstream's evaluator over our session events: no violation, the expected trajectory.
async fn assert_evaluation_passes(server: &Server, session_id: &str, actions: &[(String, &str)]) {
    let events = server.events(session_id).await;
    let expected: Vec<ToolUse> = actions
        .iter()
        .map(|(id, tool)| {
            ToolUse::new(tool).with_args(json!({"actionId": id, "mode": "foreground"}))
        })
        .collect();
    let evaluation = ComputerUseEvaluator::default().evaluate(&expected, &events);
    assert!(
        evaluation.violations.is_empty(),
        "violations {:?} in {events:#?}",
        evaluation.violations
    );
    assert!(evaluation.passed, "{evaluation:?}");
    assert_eq!(evaluation.mutations, actions.len());
    assert_eq!(evaluation.committed, actions.len());
    let verified = events
        .iter()
        .filter(|e| e.event_type == "action.verified")
        .count();
    assert_eq!(verified, actions.len());
}

async fn reference_graph_twice_in_one_session(server: &Server) {
    let session_id = server
        .start_session("sign in through upstream's graph")
        .await;
    let window = sign_in_window(&server.bootstrap(&session_id)).await;
    assert_eq!(window.bundle_id, "cc-form");
    let [click, typing] = click_then_type(server, &session_id, &window, "Ada").await;
    assert_evaluation_passes(
        server,
        &session_id,
        &[(click, "pointer.click"), (typing, "keyboard.type")],
    )
    .await;
    // The first lease was spent and revoked, so the second could be taken.
    let events = server.events(&session_id).await;
    let revoked: Vec<&Value> = events
        .iter()
        .filter(|e| e.event_type == "lease.revoked")
        .map(|e| &e.payload)
        .collect();
    assert_eq!(revoked.len(), 2, "{revoked:?}");
    assert!(
        revoked
            .iter()
            .all(|p| p["reason"] == "action_budget_exhausted")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_reference_graph_signs_in_twice_over_stdio() {
    let server = Server::stdio().await;
    reference_graph_twice_in_one_session(&server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_reference_graph_signs_in_twice_over_mcp_http_with_a_bearer_token() {
    let server = Server::http(AGENT_TOKEN)
        .await
        .expect("the agent token connects");
    reference_graph_twice_in_one_session(&server).await;
    follow_ups_deletion_and_pruning(&server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_bearer_token_is_refused_over_mcp_http() {
    let refused = Server::http("not-the-token").await;
    assert!(refused.is_err(), "a wrong token must not reach /mcp");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_graph_waits_for_a_person_then_commits_once() {
    let server = Server::stdio().await;
    let session_id = server
        .start_session("an approval through upstream's graph")
        .await;
    let bootstrap = server.bootstrap(&session_id);
    let window = sign_in_window(&bootstrap).await;
    let click = "approval-click".to_string();
    click_into_name(&server, &session_id, &window, &click).await;

    // Typing the guarded text: the server's policy decides `confirm`.
    let action_id = "approval-type".to_string();
    let graph = build_reference_graph_with_checkpointer(
        Arc::new(server.runtime(&session_id, "keyboard_type", &window)),
        authorizer(),
        Some(Arc::new(MemoryCheckpointer::new())),
    )
    .expect("graph");
    let mut input = State::new();
    input.insert(
        "proposed_action".into(),
        proposal(
            &action_id,
            "keyboard_type",
            json!({"text": NEEDS_APPROVAL}),
            &window,
            json!({"kind": "ui_element", "role": "edit", "label": "Name", "exists": true,
                   "value_digest": value_digest(NEEDS_APPROVAL)}),
        ),
    );
    let interrupted = match graph
        .invoke(input, ExecutionConfig::new("approval-thread"))
        .await
    {
        Err(GraphError::Interrupted(i)) => i,
        other => panic!("the graph must wait for a person: {other:?}"),
    };
    assert_eq!(interrupted.state.get("route"), Some(&json!("approval")));
    assert!(
        !interrupted.state.contains_key("lease"),
        "no lease before approval"
    );
    let preview = interrupted.state["preview"].clone();
    assert_eq!(preview["blocker"], "approval_required", "{preview}");
    let action_digest = preview["envelope"]["argsDigest"]
        .as_str()
        .expect("digest")
        .to_string();
    let policy_digest = preview["policy"]["policyDigest"]
        .as_str()
        .expect("policy")
        .to_string();

    // A person approves on the operator channel; upstream decodes the grant.
    let grant = server
        .approve(&session_id, &action_id, &action_digest)
        .await;
    let decoded: ApprovalGrant =
        serde_json::from_value(grant.clone()).expect("upstream's ApprovalGrant decodes our grant");
    assert_eq!(decoded.scope(), ApprovalGrantScope::ExactAction);
    assert_eq!(decoded.scope_digest(), action_digest);
    assert_eq!(decoded.remaining_uses(), 1);

    // As upstream's examples wait: for `action.approved` in the session's events.
    let approved = server
        .events(&session_id)
        .await
        .into_iter()
        .find(|e| e.event_type == "action.approved")
        .expect("action.approved is journaled");
    assert_eq!(approved.action_id.as_deref(), Some(action_id.as_str()));

    // Resume with the grant id bound to the interrupted digests.
    let mut resume = State::new();
    resume.insert(
        "approval".into(),
        json!({"actionDigest": action_digest, "policyDigest": policy_digest,
               "grantId": decoded.grant_id()}),
    );
    let state = graph
        .invoke(
            resume,
            ExecutionConfig::new("approval-thread").with_resume_from(&interrupted.checkpoint_id),
        )
        .await
        .expect("the approved action resumes");
    assert_eq!(state.get("committed"), Some(&json!(true)), "{state:?}");
    assert_eq!(state.get("verified"), Some(&json!(true)), "{state:?}");

    let events = server.events(&session_id).await;
    let started = events
        .iter()
        .filter(|e| e.event_type == "action.started" && e.action_id.as_deref() == Some(&action_id))
        .count();
    assert_eq!(started, 1, "committed once");
    assert_evaluation_passes(
        &server,
        &session_id,
        &[(click, "pointer.click"), (action_id, "keyboard.type")],
    )
    .await;
}

/// Upstream's runtime-held approval, as its examples run it: the graph interrupts, a
/// person approves on the operator channel, the client previews the same action again
/// (the server answers the same envelope, now executable), and the graph resumes with
/// `runtimeApproved` and no grant id; the server's remembered grant authorizes the one
/// execution.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_runtime_held_approval_re_previews_then_commits_once() {
    let server = Server::stdio().await;
    let session_id = server.start_session("a runtime-held approval").await;
    let bootstrap = server.bootstrap(&session_id);
    let window = sign_in_window(&bootstrap).await;
    let click = "held-click".to_string();
    click_into_name(&server, &session_id, &window, &click).await;

    let action_id = "held-type".to_string();
    let proposed = proposal(
        &action_id,
        "keyboard_type",
        json!({"text": NEEDS_APPROVAL}),
        &window,
        json!({"kind": "ui_element", "role": "edit", "label": "Name", "exists": true,
               "value_digest": value_digest(NEEDS_APPROVAL)}),
    );
    // One runtime for the graph and the re-preview: it keeps the proposal it previewed.
    let runtime = Arc::new(server.runtime(&session_id, "keyboard_type", &window));
    let graph = build_reference_graph_with_checkpointer(
        runtime.clone(),
        authorizer(),
        Some(Arc::new(MemoryCheckpointer::new())),
    )
    .expect("graph");
    let mut input = State::new();
    input.insert("proposed_action".into(), proposed.clone());
    let interrupted = match graph
        .invoke(input, ExecutionConfig::new("held-thread"))
        .await
    {
        Err(GraphError::Interrupted(i)) => i,
        other => panic!("the graph must wait for a person: {other:?}"),
    };
    let preview = interrupted.state["preview"].clone();
    assert_eq!(preview["blocker"], "approval_required", "{preview}");
    let action_digest = preview["envelope"]["argsDigest"]
        .as_str()
        .expect("digest")
        .to_string();
    let policy_digest = preview["policy"]["policyDigest"]
        .as_str()
        .expect("policy")
        .to_string();

    server
        .approve(&session_id, &action_id, &action_digest)
        .await;
    // Upstream's examples re-preview once the approval is journaled: the same envelope
    // (same `proposedAt` and `expiresAt`), now executable under the remembered grant.
    let approved = runtime
        .preview_action(proposed)
        .await
        .expect("the re-preview");
    assert!(approved.executable, "{approved:?}");
    let approved = serde_json::to_value(&approved).expect("encodes");
    assert_eq!(approved["envelope"], preview["envelope"]);
    assert!(approved["policy"]["grantId"].is_string(), "{approved}");

    let mut resume = State::new();
    resume.insert(
        "approval".into(),
        json!({"actionDigest": action_digest, "policyDigest": policy_digest,
               "runtimeApproved": true}),
    );
    let state = graph
        .invoke(
            resume,
            ExecutionConfig::new("held-thread").with_resume_from(&interrupted.checkpoint_id),
        )
        .await
        .expect("the runtime-held approval resumes");
    assert_eq!(state.get("committed"), Some(&json!(true)), "{state:?}");
    assert_eq!(state.get("verified"), Some(&json!(true)), "{state:?}");
    assert_eq!(state["receipt"]["actionId"], action_id.as_str());

    let events = server.events(&session_id).await;
    let count = |kind: &str| {
        events
            .iter()
            .filter(|e| e.event_type == kind && e.action_id.as_deref() == Some(&action_id))
            .count()
    };
    assert_eq!(count("action.started"), 1, "committed once");
    assert_eq!(
        count("approval.consumed"),
        1,
        "the remembered grant was used"
    );
}

async fn follow_ups_deletion_and_pruning(server: &Server) {
    let session_id = server.start_session("steered").await;
    let runtime = server.bootstrap(&session_id);
    let first = runtime
        .submit_follow_up("use the revised name")
        .await
        .expect("submit_follow_up");
    assert_eq!(first.sequence, 1);
    assert_eq!(first.principal_id, PRINCIPAL);
    runtime
        .submit_follow_up("then submit")
        .await
        .expect("second follow-up");
    let page = runtime.get_follow_ups(0, 1).await.expect("get_follow_ups");
    assert_eq!(page.follow_ups.len(), 1);
    assert_eq!(page.follow_ups[0].instruction, "use the revised name");
    let rest = runtime
        .get_follow_ups(page.next_sequence, 100)
        .await
        .expect("the next page");
    assert_eq!(rest.follow_ups.len(), 1);
    assert_eq!(rest.follow_ups[0].instruction, "then submit");
    assert!(
        runtime.get_follow_ups(0, 0).await.is_err(),
        "limit 0 is refused"
    );

    // Pause with a reason (journaled), then stop; a live session cannot be deleted.
    runtime
        .pause_session(&session_id, "the operator looks first")
        .await
        .expect("pause_session");
    let paused = server
        .events(&session_id)
        .await
        .into_iter()
        .find(|e| e.event_type == "session.paused")
        .expect("session.paused");
    assert_eq!(paused.payload["reason"], "the operator looks first");
    assert!(
        runtime.delete_terminal_session().await.is_err(),
        "a live session stays"
    );
    runtime
        .stop_session(&session_id, "done")
        .await
        .expect("stop_session");
    let deletion = runtime
        .delete_terminal_session()
        .await
        .expect("delete_session");
    assert!(deletion.deleted);
    assert_eq!(deletion.session_id, session_id);
    assert!(deletion.deleted_events > 0);
    let gone = server
        .toolset
        .call_tool_value(
            "get_session",
            upstream_adk_interop::map(json!({"session_id": session_id})),
        )
        .await;
    assert!(gone.is_err(), "the deleted session is gone");

    // Pruning: two stopped sessions go, a running one stays.
    let mut stopped = Vec::new();
    for objective in ["old 1", "old 2"] {
        let id = server.start_session(objective).await;
        server
            .bootstrap(&id)
            .stop_session(&id, "old")
            .await
            .expect("stop");
        stopped.push(id);
    }
    let live = server.start_session("still running").await;
    let later = time::OffsetDateTime::now_utc() + time::Duration::seconds(5);
    let cutoff = later
        .format(&time::format_description::well_known::Rfc3339)
        .expect("format");
    let pruned = server
        .bootstrap(&live)
        .prune_terminal_sessions(&cutoff, 10)
        .await
        .expect("prune_sessions");
    let mut ids: Vec<String> = pruned.iter().map(|d| d.session_id.clone()).collect();
    ids.sort();
    stopped.sort();
    assert_eq!(ids, stopped);
    let alive = server
        .call("get_session", json!({"session_id": live}))
        .await;
    assert_eq!(alive["session"]["state"], "running");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follow_ups_deletion_and_pruning_over_stdio() {
    let server = Server::stdio().await;
    follow_ups_deletion_and_pruning(&server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shadow_snapshot_returns_the_screen_as_an_image() {
    let server = Server::stdio().await;
    let session_id = server.start_session("look").await;
    let runtime = server.bootstrap(&session_id);
    let visual = runtime.observe_visual().await.expect("observe_visual");
    let body = upstream_adk_interop::output(visual.clone());
    assert_eq!(body["receipt"]["status"], "committed", "{body}");
    assert_eq!(body["replay"], false);
    assert!(
        body["output"].get("data_url").is_none(),
        "pixels travel as an image block"
    );
    // adk-tool hands image blocks over beside the structured output, as inline data.
    let mime = visual["inline_data"][0]["mime_type"]
        .as_str()
        .unwrap_or_default();
    assert!(mime.starts_with("image/"), "an image block, not {mime:?}");
    // And a capability read works for the same names upstream uses.
    runtime
        .discover_capabilities()
        .await
        .expect("get_execution_capabilities");
}

/// Where upstream's binding and ours read the same answer differently, upstream's side:
/// its `validate_*` accept what the contract refuses, or refuse what it accepts. Our side
/// is tested in `crates/adk-computer-use/src/runtime/binding/` (the contract's rules).
mod binding_differences {
    use adk_computer_use::runtime::binding::{validate_lease, validate_receipt};
    use adk_computer_use::{ActionEnvelope, ControlLease, ExecutionReceipt};
    use serde_json::json;

    fn envelope() -> ActionEnvelope {
        let now = time::OffsetDateTime::now_utc();
        let later = now + time::Duration::minutes(1);
        let f = |t: time::OffsetDateTime| {
            t.format(&time::format_description::well_known::Rfc3339)
                .expect("format")
        };
        serde_json::from_value(json!({
            "actionId": "a1", "sessionId": "s1", "principalId": "p1", "tool": "pointer.click",
            "operation": "pointer.click", "actionClass": "navigate", "requestedMode": "foreground",
            "target": {"platform": "linux", "appId": "cc-form", "windowId": 42,
                       "observationId": "o1", "confidence": 1.0, "capturedAt": f(now)},
            "dataLabels": [], "reversible": true, "externalSideEffect": false,
            "proposedAt": f(now), "expiresAt": f(later),
            "argsDigest": "a".repeat(64)
        }))
        .expect("an upstream envelope")
    }

    /// The contract: window ids compare after normalisation (`42` is `"42"`). Upstream
    /// compares raw JSON, so it refuses a lease bounded to the same window as text.
    #[test]
    fn upstream_refuses_a_window_id_the_contract_admits() {
        let e = envelope();
        let mut lease: ControlLease = serde_json::from_value(json!({
            "leaseId": "l1", "revision": 1, "sessionId": "s1", "principalId": "p1",
            "kind": "exclusive", "executionMode": "foreground", "state": "active",
            "expiresAt": e.expires_at, "actionBudget": 1, "actionsUsed": 0,
            "boundaries": {"appIds": ["cc-form"], "windowIds": ["42"], "displayIds": []}
        }))
        .expect("an upstream lease");
        assert!(
            validate_lease(&lease, &e).is_err(),
            "upstream: \"42\" is not 42"
        );
        lease.boundaries.window_ids = vec![json!(42)];
        assert!(validate_lease(&lease, &e).is_ok());
    }

    /// The contract: an empty expected digest is a mismatch, never "unavailable".
    /// Upstream accepts any receipt against an empty expected digest.
    #[test]
    fn upstream_accepts_a_receipt_against_an_empty_digest() {
        let e = envelope();
        let receipt: ExecutionReceipt = serde_json::from_value(json!({
            "receiptId": "r1", "sessionId": "s1", "actionId": "a1",
            "actionDigest": "b".repeat(64), "attempt": 1, "status": "committed"
        }))
        .expect("an upstream receipt");
        assert!(
            validate_receipt(&receipt, &e, "").is_ok(),
            "upstream skips the digest"
        );
        assert!(validate_receipt(&receipt, &e, &e.args_digest).is_err());
    }
}
