//! The reference graph end to end on a real X11 desktop: a private Xvfb, session bus and
//! openbox (the test kit's X11 desk), gtk3-widget-factory, and
//! `computer-control serve --transport mcp --platform x11` driven by the graph over MCP.
//!
//! Two threads on one entry of the widget factory (the focused combo-box entry, the first
//! `edit` of the window, which is what a `ui_element` postcondition without a label reads
//! back): `ctrl+a` without a postcondition reaches `CommittedUnverified`; typing a text
//! with the text's digest as postcondition reaches `Verified` by the server's independent
//! accessibility read-back.
#![cfg(all(feature = "mcp", feature = "sqlite"))]

use crate::server_bin;
use cc_test_kit::x11 as x11_support;

use std::process::Command;
use std::sync::Arc;

use adk_computer_use::checkpoint::SqliteCheckpointer;
use adk_computer_use::governed::{RuntimeOptions, ToolCaller};
use adk_computer_use::graph::{
    ComputerUseGraph, OutcomeKind, PlanError, PlanInput, PlannedAction, RunOutcome,
};
use adk_computer_use::mcp::ComputerUseMcpRuntime;
use adk_computer_use::runtime::SystemClock;
use cc_contract::{ActionPostcondition, value_digest};
use serde_json::{Map, Value, json};
use server_bin::server_binary;
use x11_support::Desk;

const TEXT: &str = "governed by the graph";

/// The plan of each thread: select all in the focused entry, or type the text over it.
fn plan(window: &Value, input: &PlanInput<'_>) -> Result<PlannedAction, PlanError> {
    let now = time::OffsetDateTime::now_utc();
    let target = input.window_target("linux", window, Some("edit"), now)?;
    let mut arguments = Map::new();
    let (tool, postcondition) = match input.thread_id {
        "x11-select-all" => {
            arguments.insert("keys".into(), json!(["ctrl", "a"]));
            ("keyboard_combo", None)
        }
        "x11-type" => {
            arguments.insert("text".into(), json!(TEXT));
            (
                "keyboard_type",
                Some(ActionPostcondition::UiElement {
                    role: Some("edit".into()),
                    label: None,
                    exists: true,
                    value_digest: Some(value_digest(TEXT)),
                }),
            )
        }
        other => return Err(format!("no plan for thread {other}").into()),
    };
    Ok(PlannedAction {
        target: Some(target),
        postcondition,
        expires_in_ms: Some(120_000),
        ..PlannedAction::new(tool, arguments)
    })
}

/// The desk is started outside any async runtime (its driver runs one of its own).
#[test]
fn the_graph_types_into_gtk3_widget_factory_and_verifies_it() {
    let mut desk = Desk::start();
    {
        let mut driver = desk.driver();
        desk.widget_factory(&mut driver);
    }
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(run_graph(&desk));
}

async fn run_graph(desk: &Desk) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = Command::new(server_binary());
    desk.env(&mut cmd)
        .args([
            "serve",
            "--transport",
            "mcp",
            "--platform",
            "x11",
            "--journal",
        ])
        .arg(dir.path().join("journal.db"))
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env_remove("COMPUTER_CONTROL_PRINCIPAL")
        .env("COMPUTER_CONTROL_LOG", "warn");
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.kill_on_drop(true);
    let runtime = ComputerUseMcpRuntime::spawn(cmd, RuntimeOptions::default())
        .await
        .expect("spawn the server on the X11 desk");

    let windows = runtime
        .caller()
        .call_tool("window_list", Map::new())
        .await
        .expect("window_list");
    let window = windows.structured["windows"]
        .as_array()
        .and_then(|ws| {
            ws.iter().find(|w| {
                w["app_id"]
                    .as_str()
                    .is_some_and(|a| a.to_lowercase().contains("widget-factory"))
            })
        })
        .cloned()
        .expect("the widget factory's window");
    let planner = move |input: &PlanInput<'_>| plan(&window, input);
    let checkpoints = SqliteCheckpointer::open(dir.path().join("graph.db")).expect("checkpoints");
    let graph = ComputerUseGraph::new(runtime, planner, checkpoints, Arc::new(SystemClock));

    let RunOutcome::Completed(selected) = graph.run("x11-select-all").await.expect("runs") else {
        panic!("expected a completion")
    };
    assert_eq!(
        selected.result.outcome,
        OutcomeKind::CommittedUnverified,
        "{selected:?}"
    );
    assert!(selected.committed && !selected.verified);

    let RunOutcome::Completed(typed) = graph.run("x11-type").await.expect("runs") else {
        panic!("expected a completion")
    };
    assert_eq!(typed.result.outcome, OutcomeKind::Verified, "{typed:?}");
    let evidence = typed
        .receipt
        .result
        .as_ref()
        .and_then(|r| r.verification.as_ref())
        .expect("evidence");
    assert_eq!(evidence.observed_digest, Some(value_digest(TEXT)));
    assert_eq!(evidence.method, "accessibility");
    drop(graph);
}
