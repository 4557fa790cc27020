//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `tests/mcp_conformance/package.json` with the Node 22 it needs; scripts/test.sh
//! installs both) against `serve --transport mcp-http` and against `/mcp` under
//! `--transport http`.
//!
//! The whole suite runs with `tests/mcp_conformance/expected-failures.yml` as its
//! baseline: the suite fails the run on any failure not listed there and on any listed
//! scenario that passes. Listed, with the reason beside each: the scenarios that call
//! the fixture tools of the suite's reference "everything" server (`test_simple_text`,
//! `test_image_content`, `json_schema_2020_12_tool`, …), and those of capabilities this
//! server does not declare (logging, completion, resources, prompts); and
//! `server-sse-polling`, whose resume check needs the fixture tool `test_reconnection`
//! (its priming-event and retry-field checks are asserted here). Must pass:
//! `server-initialize`, `ping`, `tools-list`, `server-sse-multiple-streams`,
//! `dns-rebinding-protection`.
//!
//! The suite's client cannot send an Authorization header, and every endpoint but
//! `/health` needs one, so `with_token.mjs` is preloaded: it adds the agent token to
//! the suite's requests for the server's origin, and nothing else.

use crate::mcp_http_support;

use std::path::{Path, PathBuf};

use mcp_http_support::{AGENT, McpHttpServer, TempDir};
use serde_json::Value;

const MUST_PASS: [&str; 5] = [
    "server-initialize",
    "ping",
    "tools-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
];

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_conformance")
}

/// The checks of one scenario from the results directory
/// (`server-<scenario>-<timestamp>/checks.json`).
fn checks(out: &Path, scenario: &str) -> Vec<Value> {
    let prefix = format!("server-{scenario}-");
    let dir = std::fs::read_dir(out)
        .expect("the results directory")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix(&prefix))
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        })
        .unwrap_or_else(|| panic!("no results for {scenario} in {}", out.display()));
    let text = std::fs::read_to_string(dir.join("checks.json")).expect("checks.json");
    serde_json::from_str::<Vec<Value>>(&text).expect("checks.json is a list")
}

fn status_of<'a>(checks: &'a [Value], id: &str) -> Option<&'a str> {
    checks
        .iter()
        .find(|c| c["id"] == id)
        .and_then(|c| c["status"].as_str())
}

fn run_suite(transport: &str) {
    let node = suite_dir().join("node_modules/.bin/node");
    let cli = suite_dir().join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        node.exists() && cli.exists(),
        "the conformance suite is missing: run scripts/test.sh (npm install --no-save in {})",
        suite_dir().display()
    );
    let s = McpHttpServer::start(transport);
    let work = TempDir::new();
    let out = work.0.join("results");
    let output = std::process::Command::new(&node)
        .arg("--import")
        .arg(suite_dir().join("with_token.mjs"))
        .arg(&cli)
        .args(["server", "--url", &s.mcp_url, "--suite", "all"])
        .arg("--output-dir")
        .arg(&out)
        .arg("--expected-failures")
        .arg(suite_dir().join("expected-failures.yml"))
        .current_dir(&work.0)
        .env("CC_TOKEN", AGENT)
        .env("CC_MCP_URL", &s.mcp_url)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run the conformance suite");
    let log = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success(),
        "{transport}: the conformance suite failed against the baseline\n{log}\nserver stderr:\n{}",
        s.stderr_text()
    );

    for scenario in MUST_PASS {
        let list = checks(&out, scenario);
        assert!(
            list.iter().any(|c| c["status"] == "SUCCESS"),
            "{transport} {scenario}: {list:?}"
        );
        let bad: Vec<&Value> = list
            .iter()
            .filter(|c| c["status"] == "FAILURE" || c["status"] == "WARNING")
            .collect();
        assert!(bad.is_empty(), "{transport} {scenario}: {bad:?}");
    }
    let polling = checks(&out, "server-sse-polling");
    for id in ["server-sse-priming-event", "server-sse-retry-field"] {
        assert_eq!(
            status_of(&polling, id),
            Some("SUCCESS"),
            "{transport} {id}: {polling:?}"
        );
    }
    assert!(
        !polling.iter().any(|c| c["status"] == "FAILURE"),
        "{transport}: {polling:?}"
    );
}

#[test]
fn conformance_suite_against_mcp_http() {
    run_suite("mcp-http");
}

#[test]
fn conformance_suite_against_the_http_transport_mcp_route() {
    run_suite("http");
}
