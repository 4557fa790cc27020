//! The governed tools through the official MCP Python SDK (`mcp` from PyPI, installed
//! by scripts/test.sh), over every MCP endpoint: stdio (`--transport mcp`), Streamable
//! HTTP (`--transport mcp-http`) and `/mcp` under `--transport http`. The script
//! (`tests/mcp_sdk/governed_flow.py`) checks, on each: every tool's input and output
//! schemas and annotations, a capture as an image block (the SDK validates every
//! successful result against its tool's output schema); a `principal_id` argument
//! refused (`invalid_arguments`: the principal is the transport's); then a click with
//! a postcondition to `committed` and `satisfied: true`; its replay (same receipt, performed once); a
//! conflicting reuse of its action id (`action_id_conflict`); a spent budget
//! (`lease_not_active`, reason `budget_exhausted`); an expired lease (`lease_expired`);
//! a session of another principal (`principal_mismatch`; over HTTP the other principal
//! is another token's identity); a high-risk plain action answered as a normal
//! `awaiting_confirmation` result. Every error is checked on the wire: `isError: true`
//! with `{error, message, details}` as structured content and as text.
//!
//! `tests/mcp_sdk/hosts_flow.py` is what a user in a host meets, over stdio with the
//! operator channel beside it: every tool called once (each success validated by the
//! SDK against its output schema; titles, icons and all four hints listed); progress of
//! typing, waits and batches; a cancelled call stopped alone; an action awaiting
//! confirmation announced by a URL-mode elicitation that approves nothing, whether the
//! client has no elicitation, declines or auto-accepts, and decided only on the
//! operator channel; then the decline again over `/mcp` of `--transport http`.

use crate::mcp_http_support;

use std::path::{Path, PathBuf};

use mcp_http_support::{
    AGENT, AGENT_B, AGENT_B_TOKEN, HOST_PRINCIPAL, McpHttpServer, OPERATOR, TempDir, run_to_end,
};

const SCENARIOS: [&str; 9] = [
    "tool_list_and_image",
    "principal_not_an_argument",
    "committed_and_verified",
    "replay",
    "action_id_conflict",
    "budget_exhausted",
    "lease_expired",
    "principal_mismatch",
    "awaiting_confirmation",
];

fn script_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_sdk")
}

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".into())
}

/// The pinned SDK must be importable (scripts/test.sh installs it).
fn require_sdk() {
    let (ok, out, err) = run_to_end(
        &python(),
        &[
            "-c",
            "import importlib.metadata as m; print(m.version('mcp'))",
        ],
        &script_dir(),
    );
    assert!(
        ok && out.trim() == "2.3.0",
        "the MCP Python SDK 2.3.0 is missing (found {out:?}): run scripts/test.sh \
         (python3 -m pip install 'mcp==2.3.0'); {err}"
    );
}

/// Runs the script with `args`; every scenario must pass.
fn run_flow(args: &[&str], context: &str) {
    let script = script_dir().join("governed_flow.py");
    let mut all = vec![script.to_str().expect("a UTF-8 path")];
    all.extend_from_slice(args);
    let (ok, out, err) = run_to_end(&python(), &all, &script_dir());
    assert!(
        ok,
        "{context}: the SDK flow failed\nstdout:\n{out}\nstderr:\n{err}"
    );
    for s in SCENARIOS {
        assert!(
            out.lines().any(|l| l == format!("PASS {s}")),
            "{context}: {s} did not pass\n{out}"
        );
    }
    assert!(out.lines().any(|l| l == "DONE"), "{context}: {out}");
}

const HOST_SCENARIOS: [&str; 10] = [
    "every_tool",
    "progress",
    "cancel",
    "approval_no_callback",
    "approval_decline",
    "vocabulary_decline",
    "governed_decline",
    "approval_accept",
    "approval_unanswered",
    "approval_decline_over_http",
];

#[test]
fn python_sdk_as_a_host_sees_it() {
    require_sdk();
    let dir = TempDir::new();
    let script = script_dir().join("hosts_flow.py");
    let args = [
        script.to_str().expect("a UTF-8 path"),
        env!("CARGO_BIN_EXE_computer-control"),
        dir.0.to_str().expect("a UTF-8 path"),
    ];
    let (ok, out, err) = run_to_end(&python(), &args, &script_dir());
    assert!(ok, "the host flow failed\nstdout:\n{out}\nstderr:\n{err}");
    for s in HOST_SCENARIOS {
        assert!(
            out.lines().any(|l| l == format!("PASS {s}")),
            "{s} did not pass\n{out}"
        );
    }
    assert!(out.lines().any(|l| l == "DONE"), "{out}");
}

#[test]
fn python_sdk_over_stdio() {
    require_sdk();
    let dir = TempDir::new();
    let journal = dir.0.join("journal.db");
    run_flow(
        &[
            "stdio",
            env!("CARGO_BIN_EXE_computer-control"),
            journal.to_str().expect("a UTF-8 path"),
        ],
        "stdio",
    );
}

#[test]
fn python_sdk_over_streamable_http() {
    require_sdk();
    let s = McpHttpServer::start("mcp-http");
    let args = [
        "http",
        &s.mcp_url,
        AGENT,
        HOST_PRINCIPAL,
        AGENT_B_TOKEN,
        AGENT_B,
    ];
    run_flow(&args, "mcp-http");
}

#[test]
fn python_sdk_over_the_http_transport_mcp_route() {
    require_sdk();
    let s = McpHttpServer::start("http");
    // The operator token acts for the host's principal too; agent-b is another one.
    let args = [
        "http",
        &s.mcp_url,
        OPERATOR,
        HOST_PRINCIPAL,
        AGENT_B_TOKEN,
        AGENT_B,
    ];
    run_flow(&args, "http /mcp");
}
