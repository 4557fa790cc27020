//! Crash safety of the governed execute pipeline, with the real binary and a real
//! SIGKILL: `serve --transport mcp` is killed (a) after the receipt is `pending` but
//! before the effect, (b) after the effect but before the commit, and (c) at moments
//! picked by a seeded generator while actions are in flight. Each time a new server is
//! started on the same journal and the same actions are retried: none acts again (the
//! typed text on the fresh desktop is read back), a receipt the crash left `pending`
//! comes back `indeterminate`, and the session's hash chain verifies, checked here
//! independently of the kernel.
//!
//! The two exact points use the kernel's test hook `CC_GOVERNANCE_FAILPOINT`
//! (`crates/governance/src/failpoint.rs`): the server announces the point on stderr
//! and blocks there, the test reads the desktop through a plain tool (the engine is not
//! behind the journal connection) and then kills the process.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::Duration;

use cc_contract::{SessionEvent, format_timestamp};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::watch;

use crate::governed_http_support;
use governed_http_support::{assert_chain, call, find, session_events};

const TIMEOUT: Duration = Duration::from_secs(60);

type Client = RunningService<RoleClient, ()>;

/// One server process and its MCP client.
struct Server {
    child: Child,
    client: Client,
    /// The last stderr line that announced a failpoint.
    failpoint: watch::Receiver<Option<String>>,
}

impl Server {
    async fn start(journal: &Path, failpoint: Option<&str>) -> Server {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_computer-control"));
        cmd.args(["serve", "--transport", "mcp", "--platform", "virtual"])
            .arg("--journal")
            .arg(journal)
            .env_remove("COMPUTER_CONTROL_CONFIG")
            .env_remove("COMPUTER_CONTROL_PRINCIPAL")
            .env_remove("COMPUTER_CONTROL_JOURNAL")
            .env("COMPUTER_CONTROL_LOG", "error")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        match failpoint {
            Some(p) => cmd.env(cc_governance::FAILPOINT_ENV, p),
            None => cmd.env_remove(cc_governance::FAILPOINT_ENV),
        };
        let mut child = cmd.spawn().expect("spawn the server");
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take().expect("stdin");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = watch::channel(None);
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if line.contains("failpoint") {
                    let _ = tx.send(Some(line));
                }
            }
        });
        let client = tokio::time::timeout(TIMEOUT, ().serve((stdout, stdin)))
            .await
            .expect("initialize in time")
            .expect("initialize");
        Server {
            child,
            client,
            failpoint: rx,
        }
    }

    /// Waits until the server announces that it blocks at `point`.
    async fn reached(&mut self, point: &str) {
        let want = format!("failpoint {point} reached");
        tokio::time::timeout(
            TIMEOUT,
            self.failpoint
                .wait_for(|l| l.as_deref().is_some_and(|l| l.contains(&want))),
        )
        .await
        .expect("the failpoint is reached in time")
        .expect("stderr stays open");
    }

    /// SIGKILL, and proof that the process died of it.
    async fn kill(mut self) {
        self.child.start_kill().expect("send SIGKILL");
        let status = tokio::time::timeout(TIMEOUT, self.child.wait())
            .await
            .expect("the server dies in time")
            .expect("wait");
        assert_eq!(status.signal(), Some(9), "{status:?}");
        drop(self.client);
    }

    async fn call(&self, name: &str, args: Value) -> CallToolResult {
        call(&self.client, name, args).await
    }

    async fn ok(&self, name: &str, args: Value) -> Value {
        let r = self.call(name, args).await;
        assert_ne!(r.is_error, Some(true), "{name}: {r:?}");
        r.structured_content.expect("structured content")
    }

    async fn refused(&self, name: &str, args: Value) -> Value {
        let r = self.call(name, args).await;
        assert_eq!(r.is_error, Some(true), "{name}: {r:?}");
        r.structured_content.expect("structured content")
    }

    /// The text of the form's Name field, read back through the accessibility tree.
    async fn name_field(&self) -> String {
        let form = self.form().await;
        let snap = self
            .ok(
                "a11y_snapshot",
                json!({"window": form["id"], "level": "full"}),
            )
            .await;
        find(&snap["tree"], "edit", "Name").expect("the Name field")["value"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    async fn form(&self) -> Value {
        let windows = self.ok("window_list", json!({})).await;
        windows["windows"]
            .as_array()
            .expect("windows")
            .iter()
            .find(|w| w["app_id"] == "cc-form")
            .expect("the form window")
            .clone()
    }

    /// A running session with an exclusive lease: `(session, lease)`.
    async fn session_and_lease(&self, session: Option<&str>) -> (String, String) {
        let sid = match session {
            Some(s) => {
                self.ok("resume_session", json!({"session_id": s})).await;
                s.to_string()
            }
            None => self
                .ok("start_session", json!({"objective": "crash test"}))
                .await["session"]["sessionId"]
                .as_str()
                .expect("sessionId")
                .to_string(),
        };
        let lease = self
            .ok(
                "acquire_control_lease",
                json!({"session_id": sid, "kind": "exclusive", "mode": "foreground",
                       "ttl_ms": 300_000, "action_budget": 100}),
            )
            .await["lease"]["leaseId"]
            .as_str()
            .expect("leaseId")
            .to_string();
        (sid, lease)
    }

    /// Every event of the session, page by page.
    async fn events(&self, session: &str) -> Vec<SessionEvent> {
        session_events(&self.client, session).await
    }
}

/// A governed `keyboard.type` of one "x" into the focused Name field: each effect adds
/// exactly one "x", so the field's text counts the effects.
fn type_x(form: &Value, session: &str, lease: &str, action: &str) -> Value {
    json!({
        "session_id": session, "action_id": action, "lease_id": lease,
        "tool": "keyboard_type", "arguments": {"text": "x"}, "mode": "foreground",
        "target": {"platform": "virtual", "appId": "cc-form", "pid": form["pid"],
                   "windowId": form["id"], "bounds": form["rect"], "observationId": "obs-1",
                   "confidence": 1,
                   "capturedAt": format_timestamp(time::OffsetDateTime::now_utc())},
    })
}

/// Kills the server at `point` during one governed action, restarts it on the same
/// journal and retries the action. `effect_before_kill` is what the desktop must show
/// while the server is blocked at the point.
async fn crash_at(point: &str, effect_before_kill: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let journal = dir.path().join("journal.db");
    let mut server = Server::start(&journal, Some(point)).await;
    assert_eq!(server.name_field().await, "");
    let form = server.form().await;
    let (sid, lease) = server.session_and_lease(None).await;
    let action = type_x(&form, &sid, &lease, "a1");

    // The execute blocks at the failpoint; its answer never comes.
    let client = server.client.peer().clone();
    let in_flight = action.clone();
    let pending = tokio::spawn(async move {
        let Value::Object(args) = in_flight else {
            unreachable!()
        };
        client
            .call_tool(CallToolRequestParams::new("execute_action").with_arguments(args))
            .await
    });
    server.reached(point).await;
    // The engine is not behind the journal connection: the desktop can be read.
    assert_eq!(server.name_field().await, effect_before_kill, "at {point}");
    server.kill().await;
    assert!(
        pending.await.expect("the task ends").is_err(),
        "no answer from a killed server"
    );

    // A new server on the same journal; no failpoint.
    let server = Server::start(&journal, None).await;
    let session = server.ok("get_session", json!({"session_id": sid})).await;
    assert_eq!(session["session"]["state"], "paused_by_policy");
    assert_eq!(session["session"]["recovered"], true);
    // The same action, retried: the receipt comes back indeterminate and nothing acts
    // (a replayed receipt that did not commit answers `{error: <status>, receipt}`).
    let retry = server.refused("execute_action", action.clone()).await;
    assert_eq!(retry["error"], "indeterminate", "{retry}");
    let receipt = &retry["receipt"];
    assert_eq!(receipt["status"], "indeterminate", "{receipt}");
    assert_eq!(receipt["error"]["code"], "indeterminate");
    assert_eq!(receipt["actionId"], "a1");
    // Retried once more, after resuming with a fresh lease: still the same receipt.
    let (_, lease2) = server.session_and_lease(Some(&sid)).await;
    let mut again = action.clone();
    again["lease_id"] = json!(lease2);
    let replay = server.refused("execute_action", again).await;
    assert_eq!(replay["receipt"], *receipt);
    assert_eq!(
        server.name_field().await,
        "",
        "the retries did not act on the desktop"
    );
    // A new action acts exactly once. The desktop is a new one (its windows belong to
    // the new process), so the agent looks again first.
    let form = server.form().await;
    let fresh = server
        .ok("execute_action", type_x(&form, &sid, &lease2, "a2"))
        .await;
    assert_eq!(fresh["receipt"]["status"], "committed", "{fresh}");
    assert_eq!(server.name_field().await, "x");

    let events = server.events(&sid).await;
    assert_chain(&events);
    let of = |action: &str, kind: &str| {
        events
            .iter()
            .filter(|e| e.action_id.as_deref() == Some(action) && e.event_type == kind)
            .count()
    };
    assert_eq!(of("a1", "action.started"), 1);
    assert_eq!(of("a1", "action.indeterminate"), 1);
    assert_eq!(of("a1", "action.committed"), 0);
    assert_eq!(of("a2", "action.committed"), 1);
    assert!(events.iter().any(|e| e.event_type == "session.recovered"));
    server.client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_after_pending_before_the_effect_never_acts() {
    crash_at("before_effect", "").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_after_the_effect_before_the_commit_never_acts_twice() {
    crash_at("after_effect", "x").await;
}

/// A small deterministic generator (SplitMix64), so a failing round can be replayed
/// from the printed seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_at_random_moments_leaves_no_pending_receipt_and_a_valid_chain() {
    let seed = 0x5EED_0006;
    eprintln!("seed {seed:#x}");
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().expect("temp dir");
    let journal = dir.path().join("journal.db");
    let mut session: Option<String> = None;
    let mut sent: Vec<Value> = Vec::new();
    for round in 0..6 {
        let server = Server::start(&journal, None).await;
        // Every action sent so far, retried on the new server: a receipt is replayed
        // (never pending: recovery settled it) or none was written (the session is
        // paused since the restart, so a new action is refused) — nothing acts.
        for action in &sent {
            let r = server.call("execute_action", action.clone()).await;
            let body = r.structured_content.clone().expect("structured");
            if r.is_error == Some(true) && body.get("receipt").is_some() {
                // A replayed receipt that did not commit: its status is the error.
                assert_eq!(body["error"], "indeterminate", "round {round}: {body}");
                assert_eq!(body["receipt"]["status"], "indeterminate");
            } else if r.is_error == Some(true) {
                assert_eq!(
                    body["error"], "session_not_running",
                    "round {round}: {body}"
                );
            } else {
                let status = body["receipt"]["status"].as_str().unwrap_or_default();
                assert!(
                    ["committed", "indeterminate"].contains(&status),
                    "round {round}: {body}"
                );
            }
        }
        assert_eq!(
            server.name_field().await,
            "",
            "round {round}: a retry acted"
        );
        if let Some(s) = &session {
            assert_chain(&server.events(s).await);
        }
        let form = server.form().await;
        let (sid, lease) = server.session_and_lease(session.as_deref()).await;
        session = Some(sid.clone());
        let actions: Vec<Value> = (0..4)
            .map(|i| type_x(&form, &sid, &lease, &format!("r{round}-{i}")))
            .collect();
        sent.extend(actions.iter().cloned());
        let client = server.client.peer().clone();
        let burst = tokio::spawn(async move {
            for a in actions {
                let Value::Object(args) = a else {
                    unreachable!()
                };
                let call = CallToolRequestParams::new("execute_action").with_arguments(args);
                if client.call_tool(call).await.is_err() {
                    return;
                }
            }
        });
        let delay = rng.below(20);
        eprintln!("round {round}: SIGKILL after {delay} ms");
        tokio::time::sleep(Duration::from_millis(delay)).await;
        server.kill().await;
        let _ = burst.await;
    }
    let server = Server::start(&journal, None).await;
    let mut tally = std::collections::BTreeMap::<String, usize>::new();
    for action in &sent {
        let r = server.call("execute_action", action.clone()).await;
        let body = r.structured_content.clone().expect("structured");
        let outcome = match r.is_error {
            Some(true) => body["error"].as_str().unwrap_or_default().to_string(),
            _ => body["receipt"]["status"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        };
        *tally.entry(outcome).or_default() += 1;
    }
    eprintln!("outcomes of {} actions: {tally:?}", sent.len());
    assert!(
        tally
            .keys()
            .all(|k| ["committed", "indeterminate", "session_not_running"].contains(&k.as_str())),
        "{tally:?}"
    );
    let sid = session.expect("a session");
    let events = server.events(&sid).await;
    assert_chain(&events);
    // Every action that started was settled: committed, or indeterminate by recovery.
    for e in events.iter().filter(|e| e.event_type == "action.started") {
        let id = e.action_id.as_deref();
        assert!(
            events.iter().any(|s| s.action_id.as_deref() == id
                && (s.event_type == "action.committed" || s.event_type == "action.indeterminate")),
            "action {id:?} started and was never settled"
        );
    }
    server.client.cancel().await.expect("close");
}
