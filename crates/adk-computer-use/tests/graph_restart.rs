//! Durable checkpoints (GOVERNANCE.md Part B): a process killed with SIGKILL while the
//! graph waits for approval is resumed by a new process, and the action is executed
//! exactly once — also when the kill lands after the effect but before its checkpoint.
//!
//! The test executable re-runs itself as the child (`child_process`, selected by an
//! environment variable; without it that test does nothing). Parent and child share a
//! real SQLite checkpoint file and the fault runtime's journal file, which stands for the
//! server's receipt store: an `execute` under an action id already journaled replays the
//! receipt without acting.

#![cfg(feature = "sqlite")]

use crate::support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use adk_computer_use::checkpoint::SqliteCheckpointer;
use adk_computer_use::graph::{ComputerUseGraph, Node, ResumeInput, RunOutcome};
use adk_computer_use::runtime::ManualClock;
use cc_contract::PolicyVerdict;
use support::{FaultRuntime, click_plan, grant_for, op, planner, postcondition};
use time::{Duration, OffsetDateTime};

const MODE: &str = "GRAPH_RESTART_CHILD";
const DIR: &str = "GRAPH_RESTART_DIR";
const THREAD: &str = "restart-thread";

type Graph = ComputerUseGraph<FaultRuntime, Box<dyn support::PlanFn>>;

/// The graph a process builds: checkpoints and journal in `dir`, the clock at real time.
fn open_graph(dir: &Path) -> Graph {
    open_graph_at(dir, OffsetDateTime::now_utc())
}

/// [`open_graph`] with the clock at `now` (a process started later).
fn open_graph_at(dir: &Path, now: OffsetDateTime) -> Graph {
    let clock = Arc::new(ManualClock::new(now));
    let runtime = FaultRuntime::with_journal(clock.clone(), &dir.join("journal.json"));
    runtime.knobs().verdict = PolicyVerdict::Confirm;
    let checkpoints = SqliteCheckpointer::open(dir.join("checkpoints.db")).expect("open");
    let planner: Box<dyn support::PlanFn> = Box::new(planner(click_plan(Some(postcondition()))));
    ComputerUseGraph::new(runtime, planner, checkpoints, clock)
}

/// The grant an operator issues for the thread's pending preview, read from the
/// checkpoint as a new process would.
fn grant(graph: &Graph) -> ResumeInput {
    let state = graph.state(THREAD).expect("state").expect("checkpointed");
    let preview = state
        .decoded_preview()
        .expect("a preview")
        .expect("decodes");
    ResumeInput::exact_grant(grant_for(
        &preview,
        OffsetDateTime::now_utc() + Duration::minutes(5),
    ))
}

/// Child side: runs until the interrupt (or, resuming, into an effect that hangs), says so
/// on stdout, and waits to be killed. Ignored in the suite, where it would check nothing:
/// the test above runs it with `--ignored`.
#[tokio::test]
#[ignore = "the child half of the restart tests, run by them"]
async fn child_process() {
    let Ok(mode) = std::env::var(MODE) else {
        return;
    };
    let dir = std::env::var(DIR).expect("dir");
    let graph = open_graph(Path::new(&dir));
    match mode.as_str() {
        "until_approval" => {
            let outcome = graph.run(THREAD).await.expect("runs");
            assert!(matches!(outcome, RunOutcome::Interrupted(_)), "{outcome:?}");
            println!("interrupted");
        }
        "resume_and_die_after_effect" => {
            graph.runtime().knobs().hang_after_effect = true;
            // Prints `executed` and hangs inside execute_action.
            let _ = graph.resume(THREAD, grant(&graph)).await;
        }
        "die_while_planning" => {
            // A planner that announces itself and never returns: the kill lands after the
            // observations were checkpointed (as digests) and before any plan.
            let dir = Path::new(&dir);
            let clock = Arc::new(ManualClock::new(OffsetDateTime::now_utc()));
            let runtime = FaultRuntime::with_journal(clock.clone(), &dir.join("journal.json"));
            let checkpoints = SqliteCheckpointer::open(dir.join("checkpoints.db")).expect("open");
            let hanging = |_: &adk_computer_use::graph::PlanInput<'_>| -> Result<
                adk_computer_use::graph::PlannedAction,
                adk_computer_use::graph::PlanError,
            > {
                println!("planning");
                loop {
                    std::thread::park();
                }
            };
            let graph = ComputerUseGraph::new(runtime, hanging, checkpoints, clock);
            let _ = graph.run(THREAD).await;
        }
        other => panic!("unknown child mode {other}"),
    }
    loop {
        std::thread::park();
    }
}

/// Starts the child in `mode` and waits until it prints `marker`.
fn spawn_until(dir: &Path, mode: &str, marker: &str) -> Child {
    let mut child = Command::new(std::env::current_exe().expect("test executable"))
        .args([
            "--ignored",
            "--exact",
            // This test, by its name in the crate's one test binary.
            "graph_restart::child_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(MODE, mode)
        .env(DIR, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn child");
    let stdout = child.stdout.take().expect("stdout");
    // Lines arrive on a channel so a child that hangs without printing fails the test
    // (after a generous guard against a hung CI run, not a speed limit) instead of
    // blocking it forever.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    loop {
        match rx.recv_timeout(std::time::Duration::from_secs(300)) {
            Ok(line) => {
                let line = line.expect("child stdout");
                // libtest prints `test child_process ... ` on the same line first.
                if line.trim_end().ends_with(marker) {
                    return child;
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                panic!("the child printed nothing for 300 s while we waited for {marker}");
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let status = child.wait().expect("wait");
    panic!("the child ended ({status}) before printing {marker}");
}

/// SIGKILL (what `Child::kill` sends on Unix): no destructor, no flush, no cleanup.
fn sigkill(mut child: Child) {
    child.kill().expect("SIGKILL");
    let status = child.wait().expect("reap");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(9), "{status}");
}

#[tokio::test]
async fn a_process_killed_while_waiting_for_approval_resumes_elsewhere_and_acts_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    sigkill(spawn_until(dir.path(), "until_approval", "interrupted"));

    // A new process (this one) opens the same checkpoint file.
    let graph = open_graph(dir.path());
    let state = graph.state(THREAD).expect("state").expect("checkpointed");
    assert_eq!(state.next, Node::Approval);
    assert!(state.awaiting_approval);
    assert_eq!(graph.runtime().effects(), 0);

    // Asking again is still the interrupt; resuming with the grant acts once.
    assert!(matches!(
        graph.run(THREAD).await,
        Ok(RunOutcome::Interrupted(_))
    ));
    let outcome = graph.resume(THREAD, grant(&graph)).await.expect("resumes");
    let RunOutcome::Completed(done) = outcome else {
        panic!("{outcome:?}")
    };
    assert!(done.verified, "{done:?}");
    assert_eq!(graph.runtime().effects(), 1);
    assert_eq!(graph.runtime().count(op::EXECUTE), 1);

    // And never again, from any process.
    let again = open_graph(dir.path());
    assert!(matches!(
        again.run(THREAD).await,
        Ok(RunOutcome::Completed(_))
    ));
    assert_eq!(again.runtime().effects(), 1);
    assert_eq!(again.runtime().count(op::EXECUTE), 0);
}

#[tokio::test]
async fn a_kill_after_the_effect_but_before_its_checkpoint_replays_the_receipt() {
    let dir = tempfile::tempdir().expect("tempdir");
    sigkill(spawn_until(dir.path(), "until_approval", "interrupted"));
    sigkill(spawn_until(
        dir.path(),
        "resume_and_die_after_effect",
        "executed",
    ));

    // The effect happened; the checkpoint still says "execute next".
    let graph = open_graph(dir.path());
    assert_eq!(graph.runtime().effects(), 1);
    let state = graph.state(THREAD).expect("state").expect("checkpointed");
    assert_eq!(state.next, Node::Execute);
    assert!(state.receipt.is_none());

    // The retried execute uses the same action id: the runtime replays the receipt.
    let outcome = graph.run(THREAD).await.expect("resumes");
    let RunOutcome::Completed(done) = outcome else {
        panic!("{outcome:?}")
    };
    assert!(done.verified, "{done:?}");
    assert_eq!(graph.runtime().count(op::EXECUTE), 1, "execute was retried");
    assert_eq!(graph.runtime().effects(), 1, "but acted only once");
    assert_eq!(
        done.receipt.action_id,
        adk_computer_use::graph::action_id_for(THREAD, Node::Execute)
    );
}

#[tokio::test]
async fn a_kill_after_the_effect_replays_the_receipt_also_once_the_envelope_expired() {
    let dir = tempfile::tempdir().expect("tempdir");
    sigkill(spawn_until(dir.path(), "until_approval", "interrupted"));
    sigkill(spawn_until(
        dir.path(),
        "resume_and_die_after_effect",
        "executed",
    ));

    // Restarted long after the preview's window (60 s) closed.
    let graph = open_graph_at(
        dir.path(),
        OffsetDateTime::now_utc() + Duration::minutes(10),
    );
    let state = graph.state(THREAD).expect("state").expect("checkpointed");
    assert_eq!(state.next, Node::Execute);
    assert!(state.execute_sent, "the call was checkpointed as sent");
    assert!(state.receipt.is_none());

    // The receipt is asked for again, not authorized anew: a replay, no second effect.
    let outcome = graph.run(THREAD).await.expect("resumes");
    let RunOutcome::Completed(done) = outcome else {
        panic!("{outcome:?}")
    };
    assert!(done.verified, "{done:?}");
    assert_eq!(graph.runtime().count(op::REPLAY), 1);
    assert_eq!(
        graph.runtime().count(op::EXECUTE),
        0,
        "nothing authorized anew"
    );
    assert_eq!(graph.runtime().effects(), 1);
}

#[tokio::test]
async fn an_expired_envelope_whose_execute_was_never_sent_is_not_executed() {
    let dir = tempfile::tempdir().expect("tempdir");
    sigkill(spawn_until(dir.path(), "until_approval", "interrupted"));

    // Resumed after the window closed: the envelope is refused before any reservation.
    let graph = open_graph_at(
        dir.path(),
        OffsetDateTime::now_utc() + Duration::minutes(10),
    );
    let input = {
        let state = graph.state(THREAD).expect("state").expect("checkpointed");
        let preview = state
            .decoded_preview()
            .expect("a preview")
            .expect("decodes");
        ResumeInput::exact_grant(grant_for(
            &preview,
            OffsetDateTime::now_utc() + Duration::minutes(20),
        ))
    };
    let failed = graph.resume(THREAD, input).await;
    assert!(failed.is_err(), "{failed:?}");
    let state = graph.state(THREAD).expect("state").expect("checkpointed");
    assert!(!state.execute_sent);
    assert_eq!(graph.runtime().count(op::EXECUTE), 0);
    assert_eq!(graph.runtime().count(op::REPLAY), 0);
    assert_eq!(graph.runtime().effects(), 0);
}

#[tokio::test]
async fn a_thread_restarted_before_planning_observes_again_instead_of_planning_blind() {
    let dir = tempfile::tempdir().expect("tempdir");
    sigkill(spawn_until(dir.path(), "die_while_planning", "planning"));

    // Only digests survived: the checkpoint is after `join`, the planner never returned.
    let graph = open_graph(dir.path());
    let state = graph.state(THREAD).expect("state").expect("checkpointed");
    assert_eq!(state.next, Node::Plan);
    let old_digest = state.visual.as_ref().expect("visual").digest.clone();

    // The new process observes again (its planner insists on the content), then plans.
    let outcome = graph.run(THREAD).await.expect("runs");
    assert!(matches!(outcome, RunOutcome::Interrupted(_)), "{outcome:?}");
    assert_eq!(graph.runtime().count(op::VISUAL), 1);
    assert_eq!(graph.runtime().count(op::SEMANTIC), 1);
    let nodes: Vec<String> = graph
        .checkpoints()
        .history(THREAD)
        .expect("history")
        .into_iter()
        .map(|c| c.node)
        .collect();
    assert_eq!(
        nodes.iter().filter(|n| *n == "observe").count(),
        2,
        "{nodes:?}"
    );
    let state = graph.state(THREAD).expect("state").expect("checkpointed");
    assert_eq!(state.visual.expect("visual").digest, old_digest);
}
