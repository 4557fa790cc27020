//! `serve --transport mcp` driven by a real MCP client (the official SDK over a child
//! process): the plain tools under MCP-safe names (a call that does not validate
//! refused at the edge), and a governed click that reaches a committed, verified
//! receipt.

use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::json;

use crate::governed_http_support;
use governed_http_support::{call, form, ok};

const TIMEOUT: Duration = Duration::from_secs(60);

async fn client(journal: &std::path::Path) -> RunningService<RoleClient, ()> {
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_computer-control")).configure(|c| {
        c.args([
            "serve",
            "--transport",
            "mcp",
            "--platform",
            "virtual",
            "--journal",
        ])
        .arg(journal)
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env_remove("COMPUTER_CONTROL_PRINCIPAL")
        .env("COMPUTER_CONTROL_LOG", "warn");
    });
    let transport = TokioChildProcess::new(cmd).expect("spawn the server");
    tokio::time::timeout(TIMEOUT, ().serve(transport))
        .await
        .expect("initialize in time")
        .expect("initialize")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_serves_plain_and_governed_tools() {
    let dir = tempfile::tempdir().expect("temp dir");
    let c = client(&dir.path().join("journal.db")).await;

    let tools = c.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for expected in [
        "screen_capture",
        "pointer_click",
        "window_list",
        "a11y_snapshot",
        "start_session",
        "preview_action",
        "execute_action",
        "acquire_control_lease",
        "emergency_stop",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    assert!(names.iter().all(|n| !n.contains('.')), "{names:?}");
    let click_tool = tools
        .iter()
        .find(|t| t.name == "pointer_click")
        .expect("pointer_click");
    assert_eq!(click_tool.input_schema.get("type"), Some(&json!("object")));

    // A capture arrives as an MCP image block; the JSON keeps the metadata only.
    let shot = call(&c, "screen_capture", json!({"format": "png"})).await;
    assert_ne!(shot.is_error, Some(true), "{shot:?}");
    let meta = shot.structured_content.as_ref().expect("structured");
    assert!(meta.get("data_url").is_none());
    assert_eq!(meta["format"], "png");
    let image = shot
        .content
        .iter()
        .find_map(|c| c.as_image())
        .expect("an image block");
    assert_eq!(image.mime_type, "image/png");
    assert!(!image.data.is_empty());

    // An action's observed capture is an image block too, after the action's answer.
    let clicked = call(
        &c,
        "pointer_move",
        json!({"x": 5, "y": 5, "observe": {"capture": {"format": "jpeg", "scale": 0.25}}}),
    )
    .await;
    assert_ne!(clicked.is_error, Some(true), "{clicked:?}");
    let meta = clicked.structured_content.as_ref().expect("structured");
    assert!(
        meta["observation"]["capture"].get("data_url").is_none(),
        "{meta}"
    );
    assert_eq!(meta["observation"]["capture"]["width"], 358);
    let image = clicked
        .content
        .iter()
        .find_map(|c| c.as_image())
        .expect("the observed capture's image block");
    assert_eq!(image.mime_type, "image/jpeg");

    // Arguments that do not fit are refused where the MCP edge makes the call: every
    // problem at its path, and the server keeps serving.
    let bad = call(&c, "pointer_click", json!({"x": 5, "times": 9})).await;
    assert_eq!(bad.is_error, Some(true), "{bad:?}");
    let err = bad.structured_content.as_ref().expect("structured error");
    assert_eq!(err["error"], "invalid_arguments", "{err}");
    let paths: Vec<&str> = err["details"]["issues"]
        .as_array()
        .expect("issues")
        .iter()
        .filter_map(|i| i["path"].as_str())
        .collect();
    assert!(paths.contains(&"y") && paths.contains(&"times"), "{err}");

    // A plain tool, through the engine.
    let (form, (x, y)) = form(&c).await;

    // A governed click.
    let session = ok(&c, "start_session", json!({"objective": "submit"})).await;
    let sid = session["session"]["sessionId"]
        .as_str()
        .expect("sessionId")
        .to_string();
    assert_eq!(session["session"]["principalId"], "local-user");
    let lease = ok(
        &c,
        "acquire_control_lease",
        json!({"session_id": sid, "kind": "exclusive", "mode": "foreground",
               "ttl_ms": 60_000, "action_budget": 3}),
    )
    .await;
    let target = json!({
        "platform": "virtual", "appId": "cc-form", "pid": form["pid"], "windowId": form["id"],
        "bounds": form["rect"], "observationId": "obs-1", "confidence": 1,
        "capturedAt": cc_contract::format_timestamp(time_now()),
    });
    let receipt = ok(
        &c,
        "execute_action",
        json!({"session_id": sid, "action_id": "a1", "lease_id": lease["lease"]["leaseId"],
               "tool": "pointer_click", "arguments": {"x": x, "y": y}, "mode": "foreground",
               "target": target,
               "postcondition": {"kind": "ui_element", "role": "statusbar", "label": "Status",
                                 "exists": true,
                                 "valueDigest": cc_contract::value_digest("Submitted: ")}}),
    )
    .await;
    let receipt = &receipt["receipt"];
    assert_eq!(receipt["status"], "committed", "{receipt}");
    assert_eq!(receipt["result"]["verification"]["satisfied"], true);

    let events = ok(&c, "get_session_events", json!({"session_id": sid})).await;
    assert_eq!(events["schema_uri"], "computer://audit/schema");
    let list: Vec<cc_contract::SessionEvent> =
        serde_json::from_value(events["events"].clone()).expect("session events");
    assert_eq!(cc_governance::verify_chain(&list), Ok(()));

    // A contract error: isError with {error, message, details}.
    let missing = call(&c, "get_session", json!({"session_id": "ses-none"})).await;
    assert_eq!(missing.is_error, Some(true));
    let err = missing.structured_content.expect("structured error");
    assert_eq!(err["error"], "session_not_found");
    assert!(err["message"].is_string());

    c.cancel().await.expect("close");
}

fn time_now() -> time::OffsetDateTime {
    time::OffsetDateTime::now_utc()
}
