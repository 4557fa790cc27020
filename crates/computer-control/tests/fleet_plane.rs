//! The fleet plane (`computer-control fleet`) over real desks: several `serve
//! --transport http` servers on the virtual desktop (and one on a private Xvfb whose X
//! server is gone), the plane as its own process, an agent on each desk over MCP (the
//! official SDK) or JSON-RPC, and chromium (playwright-core, `tests/browser/
//! fleet_test.js`) for the console. What is checked: every desk's health, state,
//! approvals and recent actions on one page; governed actions approved from the fleet
//! console; stop-all in the middle of typing on every desk (nothing held, the typing
//! answered `safety_stopped`); journals gathered and their chains verified, a tampered
//! one found; the plane's sign-in like a desk console's; an agent's token reaching
//! nothing on the plane or another desk.

use crate::governed_http_support;
use crate::http_support;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::fleet_support::Plane;
use governed_http_support::{agent, click, confirm_clicks_config, form, now, ok, refused, session};
use http_support::{OPERATOR, Server, TempDir, client};
use serde_json::{Value, json};

/// An agent token of its own per desk: one desk's agent token is no token elsewhere.
fn agent_token(i: usize) -> String {
    format!("agent-token-of-desk-{i}-0123456789abcdef0123456789")
}

fn desk_config(i: usize) -> Value {
    confirm_clicks_config(json!({"http": {"token": agent_token(i), "operator_token": OPERATOR}}))
}

/// `n` desks on the virtual desktop, each with its own agent token.
fn desks(n: usize) -> Vec<Server> {
    (0..n)
        .map(|i| Server::start_with(Some(desk_config(i)), &[], &[]))
        .collect()
}

fn desk<'a>(fleet: &'a Value, base: &str) -> &'a Value {
    let name = base.trim_start_matches("http://");
    fleet["desks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("no desk {name} in {fleet:#}"))
}

/// A closed port of loopback: a desk that is not there.
fn closed_port() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("http://127.0.0.1:{port}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_console_shows_every_desk_and_decides_for_any() {
    let ds = desks(2);
    let missing = closed_port();
    let mut bases: Vec<String> = ds.iter().map(|d| d.base.clone()).collect();
    bases.push(missing.clone());
    let plane = Plane::start(&bases);

    // An agent on each desk previews a governed click: it waits for the operator.
    let mut agents = Vec::new();
    for (i, d) in ds.iter().enumerate() {
        let a = agent(&d.base, &agent_token(i)).await;
        let (sid, lid) = session(&a).await;
        let (window, submit) = form(&a).await;
        let gov = click(&window, submit, &sid, &lid, "g1", 0, &now());
        let p = ok(&a, "preview_action", gov.clone()).await;
        assert_eq!(p["blocker"], "approval_required", "{p}");
        agents.push((a, sid, gov));
    }
    let f = plane
        .until("both approvals and the missing desk", |f| {
            ds.iter().all(|d| {
                desk(f, &d.base)["approvals"]
                    .as_array()
                    .is_some_and(|a| a.len() == 1)
            }) && desk(f, &missing)["error"].is_string()
        })
        .await;
    for d in &ds {
        let v = desk(&f, &d.base);
        assert_eq!(
            (v["reachable"].clone(), v["healthy"].clone()),
            (json!(true), json!(true))
        );
        assert_eq!(v["health"]["journal"]["ready"], true);
        assert_eq!(v["approvals"][0]["tool"], "pointer.click");
        assert!(
            v["recent"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["type"] == "session.started"),
            "the trail comes from the desk's events: {v:#}"
        );
    }
    let m = desk(&f, &missing);
    assert_eq!(
        (m["reachable"].clone(), m["healthy"].clone()),
        (json!(false), json!(false))
    );
    assert!(
        m["error"].as_str().unwrap().starts_with("unreachable"),
        "{m}"
    );

    // Approve on the first desk, deny on the second, from the plane.
    let (s0, s1) = (&agents[0].1, &agents[1].1);
    let name = |i: usize| ds[i].base.trim_start_matches("http://").to_string();
    let (status, out) = plane
        .send(
            OPERATOR,
            "POST",
            "/fleet/approve",
            Some(json!({"desk": name(0), "session_id": s0, "action_id": "g1"})),
        )
        .await;
    assert_eq!(
        (status, out["answer"]["status"].clone()),
        (200, json!("approved")),
        "{out}"
    );
    let (status, out) = plane
        .send(
            OPERATOR,
            "POST",
            "/fleet/deny",
            Some(
                json!({"desk": name(1), "session_id": s1, "action_id": "g1", "reason": "not now"}),
            ),
        )
        .await;
    assert_eq!(
        (status, out["answer"]["status"].clone()),
        (200, json!("denied")),
        "{out}"
    );
    let receipt = ok(&agents[0].0, "execute_action", agents[0].2.clone()).await;
    assert_eq!(receipt["receipt"]["status"], "committed", "{receipt}");
    let e = refused(&agents[1].0, "execute_action", agents[1].2.clone()).await;
    assert_eq!(e["details"]["approvalStatus"], "denied", "{e}");

    // A desk's own refusal comes back as the desk said it; bad requests are clear.
    let (status, out) = plane
        .send(
            OPERATOR,
            "POST",
            "/fleet/approve",
            Some(json!({"desk": name(0), "session_id": s0, "action_id": "g1"})),
        )
        .await;
    assert_eq!(status, 409, "already decided: {out}");
    for (body, want) in [
        (json!({"session_id": s0}), 400),
        (
            json!({"desk": "nowhere:1", "session_id": s0, "action_id": "g1"}),
            404,
        ),
        (
            json!({"desk": missing.trim_start_matches("http://"), "session_id": s0, "action_id": "g1"}),
            502,
        ),
    ] {
        let (status, out) = plane
            .send(OPERATOR, "POST", "/fleet/approve", Some(body))
            .await;
        assert_eq!(status, want, "{out}");
        assert!(out["message"].is_string(), "{out}");
    }
    let (status, _) = plane.send(OPERATOR, "POST", "/fleet/approve", None).await;
    assert_eq!(status, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_desk_whose_display_is_gone_is_shown_unhealthy() {
    // The desk starts its own runtime to check its bus: not on this test's.
    let x = std::thread::spawn(cc_test_kit::x11::Desk::start)
        .join()
        .expect("the X11 desk starts");
    let dir = TempDir::new();
    let config = dir.0.join("config.json");
    std::fs::write(&config, desk_config(0).to_string()).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_computer-control"));
    cmd.args([
        "serve",
        "--transport",
        "http",
        "--port",
        "0",
        "--platform",
        "x11",
    ])
    .arg("--config")
    .arg(&config)
    .env_remove("COMPUTER_CONTROL_CONFIG")
    .env("XDG_RUNTIME_DIR", &dir.0)
    .env("XDG_STATE_HOME", &dir.0);
    x.env(&mut cmd);
    let (tx, rx) = std::sync::mpsc::channel();
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let said = Arc::new(Mutex::new(Vec::new()));
    let sink = said.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("computer-control: http listening on ") {
                let _ = tx.send(url.trim().to_string());
            }
            sink.lock().unwrap().push(line);
        }
    });
    let base = rx
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("the X11 desk did not start: {:?}", said.lock().unwrap()));
    // Its X server goes away before the plane ever sees it.
    let xvfb = x.pids()[0];
    let _ = Command::new("kill")
        .args(["-9", &xvfb.to_string()])
        .status();
    let plane = Plane::start(std::slice::from_ref(&base));
    let f = plane
        .until("the desk answers unhealthy", |f| {
            desk(f, &base)["reachable"] == true
        })
        .await;
    let v = desk(&f, &base);
    assert_eq!(v["healthy"], false, "{v:#}");
    assert_eq!(v["health"]["display"]["ready"], false, "{v:#}");
    let _ = child.kill();
    let _ = child.wait();
}

/// A long, slowly typed text: the typing is still running when the stop comes.
const LONG: &str = "the quick brown fox jumps over the lazy dog, again and again and again";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stop_all_pre_empts_typing_on_every_desk() {
    let ds = Arc::new(desks(3));
    let bases: Vec<String> = ds.iter().map(|d| d.base.clone()).collect();
    let plane = Plane::start(&bases);
    let mut typing = Vec::new();
    for i in 0..3 {
        let ds = ds.clone();
        let token = agent_token(i);
        assert_eq!(
            ds[i].call(&token, "session.start", json!({})).await["ok"],
            true
        );
        typing.push(tokio::spawn(async move {
            ds[i].call(&token, "tools.call",
                json!({"tool": "keyboard.type", "arguments": {"text": LONG, "interval_ms": 40}}))
                .await
        }));
    }
    // Every desk is typing (its action.started reached the plane's trail).
    plane
        .until("typing on every desk", |f| {
            bases.iter().all(|b| {
                desk(f, b)["recent"].as_array().unwrap().iter().any(|e| {
                    e["type"] == "action.started" && e["payload"]["tool"] == "keyboard.type"
                })
            })
        })
        .await;
    let (status, out) = plane.send(OPERATOR, "POST", "/fleet/stop-all", None).await;
    assert_eq!(status, 200, "{out}");
    assert_eq!(out["all_stopped"], true, "{out:#}");
    for d in out["desks"].as_array().unwrap() {
        assert_eq!(d["state"], "stopped", "{d}");
        assert_eq!(d["held"], json!({"keys": [], "buttons": []}), "{d}");
    }
    for t in typing {
        let answer = t.await.unwrap();
        assert_eq!(answer["error"]["code"], "safety_stopped", "{answer}");
    }
    for (i, d) in ds.iter().enumerate() {
        let s = d.call(&agent_token(i), "system.status", json!({})).await;
        assert_eq!(s["result"]["state"], "stopped");
        assert_eq!(s["result"]["held"], json!({"keys": [], "buttons": []}));
    }
    // Only the operator releases a desk, from the plane too.
    let name = ds[0].base.trim_start_matches("http://");
    let (status, out) = plane
        .send(
            OPERATOR,
            "POST",
            "/fleet/resume",
            Some(json!({"desk": name})),
        )
        .await;
    assert_eq!(
        (status, out["result"]["panic"].clone()),
        (200, json!(false)),
        "{out}"
    );
    let (status, _) = plane
        .send(
            &agent_token(0),
            "POST",
            "/fleet/resume",
            Some(json!({"desk": name})),
        )
        .await;
    assert_eq!(status, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn journals_are_gathered_and_a_tampered_chain_is_found() {
    let ds = desks(2);
    let bases: Vec<String> = ds.iter().map(|d| d.base.clone()).collect();
    for (i, d) in ds.iter().enumerate() {
        let a = agent(&d.base, &agent_token(i)).await;
        let (sid, _) = session(&a).await;
        ok(&a, "pause_session", json!({"session_id": sid})).await;
    }
    let plane = Plane::start(&bases);
    let (status, out) = plane.send(OPERATOR, "GET", "/fleet/journals", None).await;
    assert_eq!(status, 200);
    assert_eq!(out["all_verified"], true, "{out:#}");
    for d in out["desks"].as_array().unwrap() {
        let s = &d["sessions"][0];
        assert_eq!(s["verified"], true, "{d}");
        assert!(s["events"].as_u64().unwrap() >= 3, "{d}");
        assert_eq!(s["principal_id"], "local-user");
    }
    // One event of the second desk's journal rewritten on disk: the plane finds it.
    let db = ds[1].dir.0.join("computer-control/governance.db");
    assert!(db.exists(), "{}", db.display());
    let st = Command::new("sqlite3")
        .arg(&db)
        .arg("UPDATE events SET data = json_set(data, '$.at', '2000-01-01T00:00:00.000Z') WHERE sequence = 2;")
        .status()
        .expect("sqlite3");
    assert!(st.success());
    let (_, out) = plane.send(OPERATOR, "GET", "/fleet/journals", None).await;
    assert_eq!(out["all_verified"], false, "{out:#}");
    let bad = out["desks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["desk"] == ds[1].base.trim_start_matches("http://"))
        .unwrap();
    assert_eq!(bad["sessions"][0]["verified"], false, "{bad}");
    assert_eq!(bad["sessions"][0]["first_bad_sequence"], 2, "{bad}");
    // The agent may not read a whole journal on its own desk.
    let (status, _) = {
        let res = client()
            .get(ds[0].url("/journal"))
            .bearer_auth(agent_token(0))
            .send()
            .await
            .unwrap();
        (res.status().as_u16(), ())
    };
    assert_eq!(status, 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_agent_token_reaches_nothing_on_the_plane_or_another_desk() {
    let ds = desks(2);
    let bases: Vec<String> = ds.iter().map(|d| d.base.clone()).collect();
    let plane = Plane::start(&bases);
    let a0 = agent_token(0);
    for (method, path) in [
        ("GET", "/fleet"),
        ("GET", "/whoami"),
        ("GET", "/fleet/journals"),
        ("POST", "/fleet/stop-all"),
        ("POST", "/fleet/approve"),
        ("POST", "/fleet/deny"),
        ("POST", "/fleet/resume"),
        ("GET", "/fleet/frame/x"),
    ] {
        let (status, out) = plane.send(&a0, method, path, Some(json!({}))).await;
        assert_eq!(status, 401, "{method} {path}: {out}");
    }
    // The stop-all refused, so no desk stopped.
    assert_eq!(
        ds[0].call(&a0, "system.status", json!({})).await["result"]["state"],
        "idle"
    );
    // Desk 0's agent token on desk 1: every route refuses it.
    let c = client();
    for (method, path) in [
        ("POST", "/rpc"),
        ("GET", "/approvals"),
        ("GET", "/journal"),
        ("GET", "/events"),
        ("POST", "/mcp"),
    ] {
        let res = c
            .request(method.parse().unwrap(), ds[1].url(path))
            .bearer_auth(&a0)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(json!({"jsonrpc": "2.0", "id": 1, "method": "system.status"}).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 401, "{method} {path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_plane_signs_in_like_a_desk_console() {
    let ds = desks(1);
    let plane = Plane::start(&[ds[0].base.clone()]);
    let c = client();
    let origin = plane.base.clone();
    let login = |token: &str, with_origin: bool| {
        let mut r = c
            .post(format!("{}/console/login", plane.base))
            .header("content-type", "application/json")
            .body(json!({"token": token}).to_string());
        if with_origin {
            r = r.header("origin", &origin);
        }
        r.send()
    };
    assert_eq!(
        login(OPERATOR, false).await.unwrap().status(),
        403,
        "no Origin"
    );
    assert_eq!(login("nope", true).await.unwrap().status(), 401);
    assert_eq!(login(&agent_token(0), true).await.unwrap().status(), 401);
    let bad = c
        .post(format!("{}/console/login", plane.base))
        .header("origin", &origin)
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    let res = login(OPERATOR, true).await.unwrap();
    assert_eq!(res.status(), 200);
    let cookie = res.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let cookie = cookie.split(';').next().unwrap().to_string();
    let key = res.json::<Value>().await.unwrap()["key"]
        .as_str()
        .unwrap()
        .to_string();
    let get = |cookie: Option<&str>, key: Option<&str>| {
        let mut r = c.get(format!("{}/fleet", plane.base));
        if let Some(v) = cookie {
            r = r.header("cookie", v);
        }
        if let Some(k) = key {
            r = r.header("x-console-key", k);
        }
        r.send()
    };
    assert_eq!(get(Some(&cookie), Some(&key)).await.unwrap().status(), 200);
    assert_eq!(
        get(Some(&cookie), None).await.unwrap().status(),
        401,
        "the cookie alone"
    );
    assert_eq!(
        get(None, Some(&key)).await.unwrap().status(),
        401,
        "the key alone"
    );
    let stop = c
        .post(format!("{}/fleet/stop-all", plane.base))
        .header("cookie", &cookie)
        .header("x-console-key", &key)
        .send()
        .await
        .unwrap();
    assert_eq!(stop.status(), 403, "a change without the page's Origin");
    let foreign = c
        .get(format!("{}/fleet", plane.base))
        .header("host", "evil.example:80")
        .bearer_auth(OPERATOR)
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403, "DNS-rebinding protection");
    let out = c
        .post(format!("{}/console/logout", plane.base))
        .header("cookie", &cookie)
        .header("origin", &origin)
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 200);
    assert_eq!(
        get(Some(&cookie), Some(&key)).await.unwrap().status(),
        401,
        "signed out"
    );
}

fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn approvals_from_the_fleet_console_in_a_browser() {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        browser_dir().join("node_modules/playwright-core").is_dir()
            && Path::new(&chromium).exists(),
        "chromium and playwright-core are needed: run scripts/test.sh"
    );
    let ds = desks(3);
    let bases: Vec<String> = ds.iter().map(|d| d.base.clone()).collect();
    let plane = Plane::start(&bases);
    // Governed clicks waiting on the first two desks.
    let mut waiting = Vec::new();
    for (i, d) in ds.iter().enumerate().take(2) {
        let a = agent(&d.base, &agent_token(i)).await;
        let (sid, lid) = session(&a).await;
        let (window, submit) = form(&a).await;
        let gov = click(&window, submit, &sid, &lid, "g1", 0, &now());
        assert_eq!(
            ok(&a, "preview_action", gov.clone()).await["blocker"],
            "approval_required"
        );
        waiting.push((a, gov));
    }
    let names: Vec<String> = bases[..2]
        .iter()
        .map(|b| b.trim_start_matches("http://").to_string())
        .collect();
    let mut child = Command::new("node")
        .arg("fleet_test.js")
        .current_dir(browser_dir())
        .env("CC_BASE", &plane.base)
        .env("CC_OPERATOR_TOKEN", OPERATOR)
        .env("CC_AGENT_TOKEN", agent_token(0))
        .env("CC_DESKS", names.join(","))
        .env("CHROMIUM", &chromium)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node is needed for the browser test");
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    let result: Value =
        serde_json::from_str(out.lines().last().unwrap_or_default()).unwrap_or(Value::Null);
    assert!(
        status.success() && result["ok"] == true,
        "browser: {result:#}\n{out}\n{err}"
    );
    let steps = result["steps"].to_string();
    for want in [
        "the agent token is refused",
        "stop-all: every desk stopped with nothing held",
        "resumed each desk",
    ] {
        assert!(steps.contains(want), "{want}: {steps}");
    }
    // The page's approvals let both agents' clicks commit (the desks were resumed).
    for (a, gov) in &waiting {
        let r = ok(a, "execute_action", gov.clone()).await;
        assert_eq!(r["receipt"]["status"], "committed", "{r}");
    }
}

#[test]
fn a_plane_that_cannot_start_says_why() {
    let dir = TempDir::new();
    let empty = dir.0.join("empty");
    std::fs::write(&empty, "\n").unwrap();
    let token = dir.0.join("token");
    std::fs::write(&token, OPERATOR).unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_computer-control"))
            .arg("fleet")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let t = token.to_str().unwrap();
    for (args, why) in [
        (vec!["--operator-token-file", t], "name the desks"),
        (
            vec![
                "--desk",
                "http://127.0.0.1:1",
                "--operator-token-file",
                empty.to_str().unwrap(),
            ],
            "the file is empty",
        ),
        (
            vec![
                "--desk",
                "http://127.0.0.1:1",
                "--operator-token-file",
                "/nonexistent/token",
            ],
            "cannot read it",
        ),
        (
            vec!["--desk", "127.0.0.1:1", "--operator-token-file", t],
            "http://HOST:PORT",
        ),
        (
            vec!["--discover", "desks", "--operator-token-file", t],
            "NAME:PORT",
        ),
    ] {
        let err = run(&args);
        assert!(err.contains(why), "{args:?}: {err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_desk_that_refuses_the_planes_token_is_shown_and_not_mistaken_for_a_sign_out() {
    let other = Server::start_with(
        Some(
            json!({"http": {"token": agent_token(9), "operator_token": "another-operator-token-0123456789abcdef"}}),
        ),
        &[],
        &[],
    );
    let plane = Plane::start(std::slice::from_ref(&other.base));
    let f = plane
        .until("the desk's refusal", |f| {
            desk(f, &other.base)["error"].is_string() && desk(f, &other.base)["reachable"] == true
        })
        .await;
    let v = desk(&f, &other.base);
    assert!(
        v["error"].as_str().unwrap().contains("refused (401)"),
        "{v}"
    );
    let name = other.base.trim_start_matches("http://");
    for path in ["/fleet/approve", "/fleet/resume"] {
        let (status, out) = plane
            .send(
                OPERATOR,
                "POST",
                path,
                Some(json!({"desk": name, "session_id": "s", "action_id": "a", "request_id": "r"})),
            )
            .await;
        assert_eq!(status, 502, "{path}: {out}");
    }
    let (_, out) = plane.send(OPERATOR, "POST", "/fleet/stop-all", None).await;
    assert_eq!(out["all_stopped"], false, "{out}");
    assert!(
        out["desks"][0]["error"].as_str().unwrap().contains("401"),
        "{out}"
    );
}
