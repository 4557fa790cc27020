//! `LocalRuntime`: the same scenarios as `mcp_runtime.rs`, against the governed kernel and
//! engine in this process on the virtual desktop (no process boundary).
#![cfg(feature = "local")]

use crate::runtime_support;

use adk_computer_use::ComputerUseError;
use adk_computer_use::governed::{GovernedRuntime, RuntimeOptions};
use adk_computer_use::local::{LocalRuntime, LocalToolClient};
use runtime_support::scenario;
use runtime_support::{Recording, Rewrite};

fn client(dir: &tempfile::TempDir) -> LocalToolClient {
    LocalRuntime::on_virtual_desktop(
        &dir.path().join("journal.db"),
        "local-user",
        RuntimeOptions::default(),
    )
    .expect("open the kernel")
    .into_caller()
}

fn runtime(dir: &tempfile::TempDir) -> GovernedRuntime<Recording<LocalToolClient>> {
    GovernedRuntime::with_caller(Recording::new(client(dir)), RuntimeOptions::default())
}

fn rewriting(
    dir: &tempfile::TempDir,
    tool: &'static str,
    rewrite: fn(&mut serde_json::Value),
) -> GovernedRuntime<Recording<LocalToolClient>> {
    let rewrite: Rewrite = Box::new(rewrite);
    GovernedRuntime::with_caller(
        Recording::rewriting(client(dir), tool, rewrite),
        RuntimeOptions::default(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn governed_click_commits_a_verified_receipt() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rt = runtime(&dir);
    let session_id = scenario::governed_click_commits_a_verified_receipt(&rt).await;
    // The kernel journaled it: the session's hash chain verifies.
    let kernel = rt.caller().inner.governance();
    let events = kernel
        .call(
            "get_session_events",
            &serde_json::json!({"session_id": session_id}),
        )
        .expect("a governed tool")
        .expect("events");
    let list: Vec<cc_contract::SessionEvent> =
        serde_json::from_value(events["events"].clone()).expect("session events");
    assert!(
        list.iter().any(|e| e.event_type == "action.committed"),
        "{list:?}"
    );
    assert_eq!(cc_governance::verify_chain(&list), Ok(()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn altered_envelope_or_proposal_is_refused_before_any_call() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rt = runtime(&dir);
    scenario::altered_envelope_is_refused_before_any_call(&rt).await;
    scenario::altered_proposal_is_refused_before_any_call(&rt).await;
    scenario::rewritten_preview_record_is_refused(&rt).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_errors_keep_their_contract_code() {
    let dir = tempfile::tempdir().expect("temp dir");
    scenario::runtime_errors_keep_their_code(&runtime(&dir)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_answers_are_refused_at_the_boundary() {
    let dir = tempfile::tempdir().expect("temp dir");
    scenario::foreign_lease_is_refused_and_released(&rewriting(
        &dir,
        "acquire_control_lease",
        scenario::foreign_lease,
    ))
    .await;
    let dir = tempfile::tempdir().expect("temp dir");
    scenario::foreign_reservation_is_refused_and_released(&rewriting(
        &dir,
        "reserve_target",
        scenario::foreign_reservation,
    ))
    .await;
    let dir = tempfile::tempdir().expect("temp dir");
    scenario::receipt_of_other_work_is_refused(&rewriting(
        &dir,
        "execute_action",
        scenario::other_digest,
    ))
    .await;
    let dir = tempfile::tempdir().expect("temp dir");
    scenario::preview_of_another_action_is_refused(&rewriting(
        &dir,
        "preview_action",
        scenario::other_action,
    ))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_controls_and_emergency_stop() {
    let dir = tempfile::tempdir().expect("temp dir");
    scenario::session_controls_and_emergency_stop(&runtime(&dir)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misreported_answers_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rt = rewriting(
        &dir,
        "release_control_lease",
        scenario::other_lease_released,
    );
    scenario::misreported_release_is_refused(&rt, "leaseId").await;

    let dir = tempfile::tempdir().expect("temp dir");
    let rt = rewriting(&dir, "release_control_lease", scenario::lease_still_active);
    scenario::misreported_release_is_refused(&rt, "state").await;

    let dir = tempfile::tempdir().expect("temp dir");
    let rt = rewriting(
        &dir,
        "release_target_reservation",
        scenario::other_reservation_released,
    );
    scenario::misreported_reservation_release_is_refused(&rt).await;

    let dir = tempfile::tempdir().expect("temp dir");
    let rt = rewriting(&dir, "start_session", scenario::no_session);
    scenario::misreported_session_is_refused(&rt, "start_session").await;

    let dir = tempfile::tempdir().expect("temp dir");
    let rt = rewriting(&dir, "pause_session", scenario::other_session);
    scenario::misreported_session_is_refused(&rt, "pause_session").await;

    let dir = tempfile::tempdir().expect("temp dir");
    let rt = rewriting(
        &dir,
        "acquire_control_lease",
        scenario::foreign_unknown_lease,
    );
    scenario::refused_lease_with_failed_release_keeps_both(&rt).await;

    let dir = tempfile::tempdir().expect("temp dir");
    let rt = rewriting(&dir, "acquire_control_lease", scenario::bogus_state);
    scenario::undecodable_grant_is_refused_and_released(&rt, "acquire_control_lease").await;

    let dir = tempfile::tempdir().expect("temp dir");
    let rt = rewriting(&dir, "reserve_target", scenario::bogus_state);
    scenario::undecodable_grant_is_refused_and_released(&rt, "reserve_target").await;

    let dir = tempfile::tempdir().expect("temp dir");
    let rt = rewriting(&dir, "emergency_stop", scenario::not_stopped);
    scenario::unperformed_emergency_stop_is_refused(&rt).await;
}

#[test]
fn a_journal_that_cannot_open_is_an_open_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A directory is not a database file.
    let err = LocalRuntime::on_virtual_desktop(dir.path(), "local-user", RuntimeOptions::default())
        .expect_err("not a journal");
    assert!(
        matches!(
            err,
            ComputerUseError::Runtime {
                operation: "open",
                ..
            }
        ),
        "{err:?}"
    );
    // Nothing is left beside it: no lock file of a journal that never opened.
    let mut lock_file = dir.path().as_os_str().to_owned();
    lock_file.push(".lock");
    assert!(!std::path::Path::new(&lock_file).exists());
    let err =
        LocalRuntime::on_virtual_desktop(&dir.path().join("j.db"), "", RuntimeOptions::default())
            .expect_err("no principal");
    assert!(
        matches!(&err, ComputerUseError::Runtime { code: Some(c), .. } if c == "invalid_arguments"),
        "{err:?}"
    );
}

/// A plain tool's arguments that do not fit are refused where the in-process caller makes
/// the engine's call, with the engine's code, before any session starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_call_that_does_not_validate_is_refused_with_its_code() {
    use adk_computer_use::governed::ToolCaller;
    let dir = tempfile::tempdir().expect("temp dir");
    let c = client(&dir);
    let args = serde_json::Map::from_iter([("x".to_string(), serde_json::json!(5))]);
    let err = c
        .call_tool("pointer_click", args)
        .await
        .expect_err("y is missing");
    assert!(
        matches!(&err, ComputerUseError::Runtime { code: Some(c), .. } if c == "invalid_arguments"),
        "{err:?}"
    );
    let fine = serde_json::Map::new();
    assert!(
        c.call_tool("pointer_position", fine).await.is_ok(),
        "the caller still serves"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_entry_preview_binds_with_its_sensitivity() {
    let dir = tempfile::tempdir().expect("temp dir");
    scenario::text_entry_preview_binds_with_its_sensitivity(&runtime(&dir)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_envelope_replays_only_an_execute_already_sent() {
    let dir = tempfile::tempdir().expect("temp dir");
    scenario::an_expired_envelope_replays_only_an_execute_already_sent(&runtime(&dir)).await;
}
