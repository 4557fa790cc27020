//! Governed actions survive a server killed and restarted again and again: 4 agents
//! (the agent token and three `http.agents` principals) over MCP Streamable HTTP type
//! into the virtual desktop's sign-in form with leases, preview, execute and a
//! postcondition read back through the accessibility tree, while `serve --transport
//! mcp-http` is SIGKILLed at a seeded random moment and restarted on the same journal.
//!
//! The virtual desktop lives in the server process, so a restart brings a fresh, empty
//! form. At-most-once is therefore proven per incarnation, and across them:
//! * every action types a token of its own (`A<agent>R<round>N<i>Z`), so the Name field
//!   says which actions acted and how often. Just before each kill the field is read
//!   back: no token appears twice, and every action acknowledged before the read is
//!   there exactly once;
//! * after each restart, before any agent resumes its session, every agent retries each
//!   action of the previous incarnation: an acknowledged one replays exactly its
//!   receipt, any other gets a settled receipt (`committed` or `indeterminate`) or
//!   `session_not_running`. The fresh field is then read back empty: no retry acted;
//! * at the end every action ever sent is retried once more on a last server (nothing
//!   acknowledged is lost: each replays its receipt) and every session's hash chain is
//!   verified independently of the kernel.
//!
//! The bounded run is part of the suite; the 100-restart run is ignored, with its
//! figures in docs/RELIABILITY.md:
//! `cargo test -p computer-control --test integration mcp_http_restarts:: -- --ignored --nocapture`.

use crate::governed_http_support;
use crate::mcp_http_support;

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use governed_http_support::{Agent, agent, assert_chain, find, session_events};
use mcp_http_support::{AGENT, McpHttpServer, OPERATOR, TempDir};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use tokio::sync::{Barrier, watch};

const AGENTS: usize = 4;
const TIMEOUT: Duration = Duration::from_secs(60);

/// Agent `k`'s bearer token: the host's agent token, then `http.agents` tokens.
fn token(k: usize) -> String {
    match k {
        0 => AGENT.to_string(),
        k => format!("restart-agent-{k}-token-0123456789abcdef0123"),
    }
}

fn config() -> Value {
    let agents: Vec<Value> = (1..AGENTS)
        .map(|k| json!({"principal_id": format!("restart-agent-{k}"), "token": token(k)}))
        .collect();
    json!({"http": {"token": AGENT, "operator_token": OPERATOR, "agents": agents},
           // The whole field comes back in the snapshot, not cut with an ellipsis.
           "a11y": {"max_name_len": 4096}})
}

/// One tool call that may meet a dead server: `Err` when no answer came.
async fn try_call(c: &Agent, name: &str, args: &Value) -> Result<(bool, Value), String> {
    let Value::Object(map) = args.clone() else {
        panic!("arguments must be an object")
    };
    let params = CallToolRequestParams::new(name.to_string()).with_arguments(map);
    match tokio::time::timeout(TIMEOUT, c.call_tool(params)).await {
        Ok(Ok(r)) => Ok((
            r.is_error == Some(true),
            r.structured_content.unwrap_or(Value::Null),
        )),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("no answer in time".into()),
    }
}

/// A call that must succeed (the server is not being killed yet).
async fn must(c: &Agent, name: &str, args: Value) -> Value {
    match try_call(c, name, &args).await {
        Ok((false, v)) => v,
        other => panic!("{name}: {other:?}"),
    }
}

/// The form window, as `window_list` shows it.
async fn form(c: &Agent) -> Result<Value, String> {
    let (_, w) = try_call(c, "window_list", &json!({})).await?;
    w["windows"]
        .as_array()
        .and_then(|ws| ws.iter().find(|w| w["app_id"] == "cc-form"))
        .cloned()
        .ok_or_else(|| format!("no form window: {w}"))
}

/// The text of the form's Name field, read back through the accessibility tree.
async fn name_field(c: &Agent) -> Result<String, String> {
    let w = form(c).await?;
    let (_, snap) = try_call(
        c,
        "a11y_snapshot",
        &json!({"window": w["id"], "level": "full"}),
    )
    .await?;
    Ok(find(&snap["tree"], "edit", "Name")
        .ok_or_else(|| format!("no Name field: {snap}"))?["value"]
        .as_str()
        .unwrap_or_default()
        .to_string())
}

/// A governed `keyboard_type` of `text` into the focused Name field, with the field's
/// existence as its postcondition (4 agents type into it at once, so its whole value
/// is not known in advance; the tokens are checked by the read-back instead).
fn type_action(w: &Value, session: &str, lease: &str, action: &str, text: &str) -> Value {
    json!({
        "session_id": session, "action_id": action, "lease_id": lease,
        "tool": "keyboard_type", "arguments": {"text": text}, "mode": "foreground",
        "target": {"platform": "virtual", "appId": "cc-form", "pid": w["pid"],
                   "windowId": w["id"], "bounds": w["rect"], "observationId": "obs-1",
                   "confidence": 1, "capturedAt": governed_http_support::now()},
        "postcondition": {"kind": "ui_element", "role": "edit", "label": "Name", "exists": true},
    })
}

/// One action an agent sent: its arguments, its token, and the receipt it was
/// acknowledged with (if an answer came).
#[derive(Clone)]
struct Sent {
    args: Value,
    token: String,
    ack: Option<Value>,
    /// Acknowledged before the read-back of this incarnation began.
    acked_before_read: bool,
    /// Its token was on the desktop at the read-back: it acted.
    on_desktop: bool,
}

/// One agent across every incarnation.
#[derive(Default)]
struct AgentLog {
    session: Option<String>,
    rounds: Vec<Vec<Sent>>,
    retry_outcomes: BTreeMap<String, usize>,
}

/// What a retried action answered, checked against what was acknowledged.
fn check_retry(s: &Sent, is_error: bool, body: &Value) -> String {
    // A replayed receipt that did not commit answers `{error: <status>, receipt}`: the
    // same receipt as before, never a second attempt.
    if is_error && body.get("receipt").is_some() {
        let receipt = &body["receipt"];
        if let Some(ack) = &s.ack {
            assert_eq!(receipt, ack, "an acknowledged receipt changed");
        }
        let status = receipt["status"].as_str().unwrap_or_default().to_string();
        assert_eq!(body["error"], status.as_str(), "{body}");
        assert_eq!(status, "indeterminate", "{body}");
        return status;
    }
    if is_error {
        assert!(
            !s.on_desktop,
            "{} acted but left no receipt: {body}",
            s.args["action_id"]
        );
        assert!(
            s.ack.is_none(),
            "an acknowledged action was lost: {} → {body}",
            s.args["action_id"]
        );
        assert_eq!(body["error"], "session_not_running", "{body}");
        return "session_not_running".into();
    }
    let receipt = &body["receipt"];
    if let Some(ack) = &s.ack {
        assert_eq!(receipt, ack, "an acknowledged receipt changed");
    }
    let status = receipt["status"].as_str().unwrap_or_default().to_string();
    assert!(
        ["committed", "indeterminate"].contains(&status.as_str()),
        "{receipt}"
    );
    status
}

/// How the agents and the killer of one incarnation keep in step.
#[derive(Clone)]
struct Sync {
    /// Reached twice: once the retries are done, once the field was read back.
    retried: Arc<Barrier>,
    /// Reached once every agent had its first action acknowledged.
    first_ack: Arc<Barrier>,
    /// Set just before the read-back that precedes the kill.
    read_started: watch::Receiver<bool>,
    /// Set once the server is dead.
    killed: watch::Receiver<bool>,
}

/// An agent's part of one incarnation: retry the previous one's actions, wait for
/// the others, resume (or start) its session, take a lease, then preview and execute
/// actions until the server dies.
async fn agent_round(
    base: String,
    k: usize,
    round: usize,
    mut log: AgentLog,
    sync: Sync,
) -> AgentLog {
    let Sync {
        retried,
        first_ack,
        read_started,
        killed,
    } = sync;
    let c = agent(&base, &token(k)).await;
    for s in log.rounds.last().cloned().unwrap_or_default() {
        let (is_error, body) = try_call(&c, "execute_action", &s.args)
            .await
            .expect("the server lives during the retries");
        *log.retry_outcomes
            .entry(check_retry(&s, is_error, &body))
            .or_default() += 1;
    }
    retried.wait().await;
    retried.wait().await; // the observer has read the field back
    let sid =
        match &log.session {
            Some(sid) => {
                must(&c, "resume_session", json!({"session_id": sid})).await;
                sid.clone()
            }
            None => must(&c, "start_session", json!({"objective": "type tokens"})).await["session"]
                ["sessionId"]
                .as_str()
                .expect("sessionId")
                .to_string(),
        };
    log.session = Some(sid.clone());
    let lease = must(
        &c,
        "acquire_control_lease",
        json!({"session_id": sid, "kind": "cooperative", "mode": "foreground",
               "ttl_ms": 300_000, "action_budget": 1000, "app_ids": ["cc-form"]}),
    )
    .await["lease"]["leaseId"]
        .as_str()
        .expect("leaseId")
        .to_string();
    let w = form(&c).await.expect("the form");
    log.rounds.push(Vec::new());
    let mut announced = false;
    for i in 0.. {
        let text = format!("A{k}R{round}N{i}Z");
        let args = type_action(&w, &sid, &lease, &format!("a{k}-r{round}-n{i}"), &text);
        let sent_at = log.rounds.last().map(Vec::len).unwrap_or(0);
        log.rounds.last_mut().expect("this round").push(Sent {
            args: args.clone(),
            token: text,
            ack: None,
            acked_before_read: false,
            on_desktop: false,
        });
        let Ok((is_error, preview)) =
            unless_killed(&killed, try_call(&c, "preview_action", &args)).await
        else {
            break;
        };
        assert!(!is_error, "preview: {preview}");
        assert_eq!(preview["policy"]["decision"], "allow", "{preview}");
        let Ok((is_error, body)) =
            unless_killed(&killed, try_call(&c, "execute_action", &args)).await
        else {
            break;
        };
        let before_read = !*read_started.borrow();
        assert!(!is_error, "execute: {body}");
        let receipt = body["receipt"].clone();
        assert_eq!(receipt["status"], "committed", "{receipt}");
        assert_eq!(
            receipt["result"]["verification"]["satisfied"], true,
            "{receipt}"
        );
        let s = &mut log.rounds.last_mut().expect("this round")[sent_at];
        s.ack = Some(receipt);
        s.acked_before_read = before_read;
        if !announced {
            announced = true;
            first_ack.wait().await;
        }
    }
    if !announced {
        first_ack.wait().await;
    }
    log
}

/// A call's answer, or `Err` once the server was killed: the client would otherwise
/// wait out its timeout for an answer that cannot come.
async fn unless_killed(
    killed: &watch::Receiver<bool>,
    call: impl std::future::Future<Output = Result<(bool, Value), String>>,
) -> Result<(bool, Value), String> {
    let mut killed = killed.clone();
    tokio::select! {
        r = call => r,
        _ = killed.wait_for(|k| *k) => Err("the server was killed".into()),
    }
}

/// A barrier the agents must reach in time: a failed agent stops the run instead of
/// leaving it waiting.
async fn in_time<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(TIMEOUT, f)
        .await
        .expect("every agent reached the barrier in time (see an agent's panic above)")
}

/// SplitMix64: a failing run replays from its printed seed.
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

/// The figures of a run.
struct Report {
    restarts: usize,
    sent: usize,
    acked: usize,
    retries: BTreeMap<String, usize>,
    final_retry: BTreeMap<String, usize>,
    chain_events: usize,
    wall: Duration,
}

async fn run(restarts: usize, seed: u64) -> Report {
    eprintln!("seed {seed:#x}");
    let mut rng = Rng(seed);
    let dir = Arc::new(TempDir::new());
    let config = config();
    let mut logs: Vec<AgentLog> = (0..AGENTS).map(|_| AgentLog::default()).collect();
    let t = Instant::now();
    for round in 0..restarts {
        let mut server = McpHttpServer::start_in("mcp-http", dir.clone(), &config);
        let observer = agent(&server.base, OPERATOR).await;
        let retried = Arc::new(Barrier::new(AGENTS + 1));
        let first_ack = Arc::new(Barrier::new(AGENTS + 1));
        let (read_tx, read_rx) = watch::channel(false);
        let (killed_tx, killed_rx) = watch::channel(false);
        let tasks: Vec<_> = std::mem::take(&mut logs)
            .into_iter()
            .enumerate()
            .map(|(k, log)| {
                tokio::spawn(agent_round(
                    server.base.clone(),
                    k,
                    round,
                    log,
                    Sync {
                        retried: retried.clone(),
                        first_ack: first_ack.clone(),
                        read_started: read_rx.clone(),
                        killed: killed_rx.clone(),
                    },
                ))
            })
            .collect();
        in_time(retried.wait()).await;
        // No retry acted on the fresh desktop.
        assert_eq!(
            name_field(&observer).await.expect("read back"),
            "",
            "round {round}: a retry acted"
        );
        in_time(retried.wait()).await;
        in_time(first_ack.wait()).await;
        // A moment later, at a seeded point of the agents' work: read back, kill.
        tokio::time::sleep(Duration::from_millis(rng.below(40))).await;
        read_tx.send_replace(true);
        let field = name_field(&observer)
            .await
            .expect("read back before the kill");
        let status = server.sigkill();
        assert_eq!(status.signal(), Some(9), "{status:?}");
        killed_tx.send_replace(true);
        for task in tasks {
            logs.push(task.await.expect("an agent's round"));
        }
        // At most once: complete tokens are distinct and were sent this round; each
        // one acknowledged before the read is there once. The last piece (no `Z`) may
        // be an action cut off in the middle by the read.
        let complete: Vec<&str> = field.split('Z').collect();
        let (tail, done) = complete.split_last().expect("split has a piece");
        let mut count: BTreeMap<String, usize> = BTreeMap::new();
        for t in done {
            *count.entry(format!("{t}Z")).or_default() += 1;
        }
        let sent: Vec<&Sent> = logs
            .iter()
            .flat_map(|l| l.rounds.last().into_iter().flatten())
            .collect();
        for (tok, n) in &count {
            assert_eq!(*n, 1, "round {round}: {tok} acted {n} times in {field:?}");
            assert!(
                sent.iter().any(|s| &s.token == tok),
                "round {round}: {tok} was not sent this round"
            );
        }
        assert!(
            tail.is_empty() || sent.iter().any(|s| s.token.starts_with(tail)),
            "round {round}: {tail:?}"
        );
        for s in sent.iter().filter(|s| s.acked_before_read) {
            assert_eq!(
                count.get(&s.token),
                Some(&1),
                "round {round}: acknowledged {} is not on the desktop: {field:?}",
                s.token
            );
        }
        let (n_sent, n_acked) = (sent.len(), sent.iter().filter(|s| s.ack.is_some()).count());
        for log in &mut logs {
            for s in log.rounds.last_mut().into_iter().flatten() {
                s.on_desktop = count.contains_key(&s.token);
            }
        }
        drop(observer);
        eprintln!(
            "round {round}: {n_sent} actions sent, {n_acked} acknowledged, {} on the desktop at the kill",
            count.len()
        );
    }

    // A last server: every action ever sent is retried, every chain verified.
    let server = McpHttpServer::start_in("mcp-http", dir.clone(), &config);
    let mut final_retry = BTreeMap::<String, usize>::new();
    let mut chain_events = 0;
    for (k, log) in logs.iter().enumerate() {
        let c = agent(&server.base, &token(k)).await;
        for s in log.rounds.iter().flatten() {
            let (is_error, body) = try_call(&c, "execute_action", &s.args)
                .await
                .expect("the last server answers");
            *final_retry
                .entry(check_retry(s, is_error, &body))
                .or_default() += 1;
        }
        let sid = log.session.as_deref().expect("a session");
        let events = session_events(&c, sid).await;
        assert_chain(&events);
        chain_events += events.len();
        // Every action that started was settled: committed, or indeterminate.
        for e in events.iter().filter(|e| e.event_type == "action.started") {
            let id = e.action_id.as_deref();
            assert!(
                events.iter().any(|s| s.action_id.as_deref() == id
                    && (s.event_type == "action.committed"
                        || s.event_type == "action.indeterminate")),
                "action {id:?} started and was never settled"
            );
        }
        // An action is committed at most once in the journal.
        let mut committed = BTreeMap::<&str, usize>::new();
        for e in events.iter().filter(|e| e.event_type == "action.committed") {
            *committed
                .entry(e.action_id.as_deref().unwrap_or_default())
                .or_default() += 1;
        }
        assert!(committed.values().all(|n| *n == 1), "{committed:?}");
    }
    assert_eq!(
        name_field(&agent(&server.base, OPERATOR).await)
            .await
            .expect("read back"),
        "",
        "the final retries did not act"
    );
    let mut retries = BTreeMap::new();
    for l in &logs {
        for (k, v) in &l.retry_outcomes {
            *retries.entry(k.clone()).or_default() += v;
        }
    }
    let all: Vec<&Sent> = logs
        .iter()
        .flat_map(|l| l.rounds.iter().flatten())
        .collect();
    Report {
        restarts,
        sent: all.len(),
        acked: all.iter().filter(|s| s.ack.is_some()).count(),
        retries,
        final_retry,
        chain_events,
        wall: t.elapsed(),
    }
}

fn print(r: &Report) {
    eprintln!(
        "{} SIGKILLs and restarts in {:.1} s: {} governed actions sent by {AGENTS} agents, {} \
         acknowledged; retries after each restart: {:?}; final retry of all: {:?}; \
         {} journal events in verified chains",
        r.restarts,
        r.wall.as_secs_f64(),
        r.sent,
        r.acked,
        r.retries,
        r.final_retry,
        r.chain_events,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_agents_survive_six_sigkills_acting_at_most_once() {
    let r = run(6, 0x5EED_0012).await;
    print(&r);
    assert!(r.acked >= 6 * AGENTS, "every agent acted in every round");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "100 restarts (minutes); figures in docs/RELIABILITY.md"]
async fn four_agents_survive_a_hundred_sigkills_acting_at_most_once() {
    let r = run(100, 0x5EED_0100).await;
    print(&r);
    assert!(r.acked >= 100 * AGENTS, "every agent acted in every round");
}
