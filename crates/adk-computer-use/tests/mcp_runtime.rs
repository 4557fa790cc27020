//! `ComputerUseMcpRuntime` against the real `computer-control serve --transport mcp` on its
//! virtual desktop, through the official MCP SDK over a child process. Where the honest
//! server cannot produce the bad answer (a lease of another session, a receipt of other
//! work), the real client is wrapped and one answer rewritten.
#![cfg(feature = "mcp")]

use crate::runtime_support;

use std::sync::Arc;

use adk_computer_use::governed::{GovernedRuntime, RuntimeOptions};
use adk_computer_use::mcp::{McpTimeouts, McpToolClient};
use adk_computer_use::runtime::{ComputerUseRuntime, ManualClock};
use adk_computer_use::{ComputerUseError, ResponseObject};
use runtime_support::scenario;
use runtime_support::{Recording, Rewrite, click_submit, observe_form, serve_command};

async fn client(dir: &tempfile::TempDir) -> McpToolClient {
    McpToolClient::spawn(serve_command(&dir.path().join("journal.db")))
        .await
        .expect("spawn and initialize the server")
}

async fn runtime(dir: &tempfile::TempDir) -> GovernedRuntime<Recording<McpToolClient>> {
    GovernedRuntime::with_caller(Recording::new(client(dir).await), RuntimeOptions::default())
}

async fn rewriting(
    dir: &tempfile::TempDir,
    tool: &'static str,
    rewrite: fn(&mut serde_json::Value),
) -> GovernedRuntime<Recording<McpToolClient>> {
    let rewrite: Rewrite = Box::new(rewrite);
    GovernedRuntime::with_caller(
        Recording::rewriting(client(dir).await, tool, rewrite),
        RuntimeOptions::default(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn governed_click_commits_a_verified_receipt() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rt = runtime(&dir).await;
    let session_id = scenario::governed_click_commits_a_verified_receipt(&rt).await;
    assert!(session_id.starts_with("ses"), "{session_id}");
    rt.into_caller().inner.close().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn altered_envelope_or_proposal_is_refused_before_any_call() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rt = runtime(&dir).await;
    scenario::altered_envelope_is_refused_before_any_call(&rt).await;
    scenario::altered_proposal_is_refused_before_any_call(&rt).await;
    scenario::rewritten_preview_record_is_refused(&rt).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_controls_and_emergency_stop() {
    let dir = tempfile::tempdir().expect("temp dir");
    scenario::session_controls_and_emergency_stop(&runtime(&dir).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_errors_keep_their_contract_code() {
    let dir = tempfile::tempdir().expect("temp dir");
    scenario::runtime_errors_keep_their_code(&runtime(&dir).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lease_of_another_session_is_refused_at_the_boundary() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rt = rewriting(&dir, "acquire_control_lease", scenario::foreign_lease).await;
    scenario::foreign_lease_is_refused_and_released(&rt).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reservation_of_another_intent_is_refused_at_the_boundary() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rt = rewriting(&dir, "reserve_target", scenario::foreign_reservation).await;
    scenario::foreign_reservation_is_refused_and_released(&rt).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receipt_of_other_work_is_refused_at_the_boundary() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rt = rewriting(&dir, "execute_action", scenario::other_digest).await;
    scenario::receipt_of_other_work_is_refused(&rt).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preview_of_another_action_is_refused_when_it_returns() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rt = rewriting(&dir, "preview_action", scenario::other_action).await;
    scenario::preview_of_another_action_is_refused(&rt).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_preview_never_leaves_the_runtime() {
    // The runtime's clock is ten minutes ahead: every preview is already expired.
    let dir = tempfile::tempdir().expect("temp dir");
    let clock = Arc::new(ManualClock::new(
        time::OffsetDateTime::now_utc() + time::Duration::minutes(10),
    ));
    let options = RuntimeOptions {
        clock,
        ..RuntimeOptions::default()
    };
    let rt = GovernedRuntime::with_caller(Recording::new(client(&dir).await), options);
    let session_id = rt.start_session(None).await.expect("session");
    let form = observe_form(rt.caller()).await;
    let err = rt
        .preview_action(&click_submit(&form, &session_id, "act-late"))
        .await
        .expect_err("expired");
    assert!(
        matches!(
            err,
            ComputerUseError::Expired {
                object: ResponseObject::Envelope,
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_is_a_connect_error() {
    let mut cmd = tokio::process::Command::new(runtime_support::server_binary());
    cmd.args(["serve", "--transport", "no-such-transport"]);
    let err = McpToolClient::spawn(cmd).await.expect_err("no MCP server");
    assert!(
        matches!(
            err,
            ComputerUseError::Runtime {
                operation: "connect",
                code: None,
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_initializes_is_a_connect_error() {
    // A process that never speaks MCP: the handshake limit ends the wait.
    let mut cmd = tokio::process::Command::new("sleep");
    cmd.arg("600");
    let timeouts = McpTimeouts {
        initialize: std::time::Duration::from_millis(300),
        call: None,
    };
    let err = McpToolClient::spawn_with(cmd, timeouts)
        .await
        .expect_err("no handshake");
    assert!(
        matches!(&err, ComputerUseError::Runtime { operation: "connect", code: None, message }
            if message.contains("did not initialize")),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_not_answered_in_time_is_a_runtime_error() {
    // A real call that takes longer than the limit: a ten-second pause.
    use adk_computer_use::governed::ToolCaller;
    let dir = tempfile::tempdir().expect("temp dir");
    let timeouts = McpTimeouts {
        call: Some(std::time::Duration::from_millis(200)),
        ..McpTimeouts::default()
    };
    let client = McpToolClient::spawn_with(serve_command(&dir.path().join("journal.db")), timeouts)
        .await
        .expect("initialize");
    let mut args = serde_json::Map::new();
    args.insert("ms".into(), serde_json::json!(10_000));
    let err = client
        .call_tool("wait_pause", args)
        .await
        .expect_err("no answer in time");
    assert!(
        matches!(&err, ComputerUseError::Runtime { operation: "wait_pause", code: None, message }
            if message.contains("no answer")),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_entry_preview_binds_with_its_sensitivity() {
    let dir = tempfile::tempdir().expect("temp dir");
    scenario::text_entry_preview_binds_with_its_sensitivity(&runtime(&dir).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_envelope_replays_only_an_execute_already_sent() {
    let dir = tempfile::tempdir().expect("temp dir");
    scenario::an_expired_envelope_replays_only_an_execute_already_sent(&runtime(&dir).await).await;
}
