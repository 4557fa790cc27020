//! HTTP security (PROTOCOL §8): tokens and roles, generated token files, the Host and
//! Origin checks, and the public surface (health and the console's static files).

use crate::http_support;

use std::time::Duration;

use http_support::{AGENT, OPERATOR, Server, client, tokens_config};
use serde_json::{Value, json};

const PROTECTED: [(&str, &str); 4] = [
    ("POST", "/rpc"),
    ("GET", "/events"),
    ("GET", "/frame"),
    ("GET", "/whoami"),
];

async fn send(
    s: &Server,
    method: &str,
    path: &str,
    token: Option<&str>,
    headers: &[(&str, String)],
) -> reqwest::Response {
    let c = client();
    let mut r = match method {
        "POST" => c
            .post(s.url(path))
            .body(json!({"jsonrpc": "2.0", "id": 1, "method": "system.status"}).to_string()),
        _ => c.get(s.url(path)),
    };
    if let Some(t) = token {
        r = r.bearer_auth(t);
    }
    for (k, v) in headers {
        r = r.header(*k, v.as_str());
    }
    r.send().await.expect("request")
}

#[tokio::test]
async fn every_protected_endpoint_needs_a_valid_token() {
    let s = Server::start();
    for (method, path) in PROTECTED {
        for (token, why) in [
            (None, "missing"),
            (Some("wrong-token"), "wrong"),
            (Some(""), "empty"),
            (
                Some(&AGENT[..AGENT.len() - 1]),
                "a prefix of the agent token",
            ),
        ] {
            let res = send(&s, method, path, token, &[]).await;
            assert_eq!(
                res.status().as_u16(),
                401,
                "{method} {path} with a {why} token"
            );
            assert!(
                res.headers()["www-authenticate"]
                    .to_str()
                    .unwrap()
                    .starts_with("Bearer"),
                "{method} {path}"
            );
            let v: Value = serde_json::from_slice(&res.bytes().await.unwrap()).unwrap();
            assert_eq!(v["error"], "unauthorized");
        }
        // A non-bearer scheme is no token either.
        let res = send(
            &s,
            method,
            path,
            None,
            &[("authorization", format!("Basic {AGENT}"))],
        )
        .await;
        assert_eq!(res.status().as_u16(), 401, "{method} {path} basic");
        for token in [AGENT, OPERATOR] {
            let res = send(&s, method, path, Some(token), &[]).await;
            assert!(
                [200, 204].contains(&res.status().as_u16()),
                "{method} {path}: {}",
                res.status()
            );
        }
    }
    // Public: health and the console's static files (no data in them).
    for path in ["/health", "/", "/console/app.js", "/console/style.css"] {
        let res = send(&s, "GET", path, None, &[]).await;
        assert_eq!(res.status().as_u16(), 200, "{path}");
    }
    let res = send(&s, "GET", "/", None, &[]).await;
    let csp = res.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        csp.contains("default-src 'none'") && csp.contains("connect-src 'self'"),
        "{csp}"
    );
    let html = res.text().await.unwrap();
    assert!(html.contains("/console/app.js"));
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "the console loads nothing from the network"
    );
}

#[tokio::test]
async fn the_agent_token_cannot_act_as_operator() {
    let s = Server::start();
    assert_eq!(s.call(AGENT, "session.start", json!({})).await["ok"], true);

    // A high-risk action waits for confirmation.
    let env = s
        .call(
            AGENT,
            "tools.call",
            json!({"tool": "keyboard.combo", "arguments": {"keys": "win+r"}}),
        )
        .await;
    assert_eq!(env["result"]["status"], "awaiting_confirmation", "{env}");
    let id = env["result"]["request_id"].as_str().unwrap().to_string();

    let refused = [
        (
            "session.confirm",
            json!({"request_id": id, "approve": true}),
        ),
        (
            "session.confirm",
            json!({"request_id": id, "approve": false}),
        ),
        ("session.resume", json!({})),
        ("control.panic", json!({"on": false})),
        ("control.panic", json!({"on": "0"})),
        (
            "session.configure",
            json!({"safety": {"confirm_threshold": "high"}}),
        ),
        (
            "session.configure",
            json!({"patch": {"safety": {"rules": []}}}),
        ),
    ];
    for (method, params) in refused {
        let (st, r) = s
            .post_rpc(
                AGENT,
                &json!({"jsonrpc": "2.0", "id": 9, "method": method, "params": params}),
            )
            .await;
        assert_eq!(st, 403, "{method} {params}");
        assert_eq!(r["error"]["code"], -32003, "{r}");
        assert_eq!(r["id"], 9);
        assert_eq!(r["error"]["data"]["method"], method);
        assert_eq!(r["error"]["data"]["role"], "agent");
    }
    // A batch hiding one operator method is refused whole: nothing in it ran.
    let count = |v: &Value| v["result"]["action_count"].as_u64().unwrap();
    let before = count(&s.call(OPERATOR, "system.status", json!({})).await);
    let (st, r) = s
        .post_rpc(
            AGENT,
            &json!([
                {"jsonrpc": "2.0", "id": 1, "method": "control.panic", "params": {"on": true}},
                {"jsonrpc": "2.0", "id": 2, "method": "session.resume"},
            ]),
        )
        .await;
    assert_eq!((st, r["id"].clone()), (403, Value::Null), "{r}");
    let status = s.call(OPERATOR, "system.status", json!({})).await;
    assert_eq!(count(&status), before);
    assert_eq!(
        status["result"]["state"], "confirming",
        "still pending: {status}"
    );
    assert_eq!(
        status["result"]["pending_confirmation"]["request_id"],
        id.as_str()
    );

    // The operator token can do all of it, on the same /rpc.
    let r = s
        .call(
            OPERATOR,
            "session.confirm",
            json!({"request_id": id, "approve": true}),
        )
        .await;
    assert_eq!(r["result"]["status"], "approved", "{r}");
    // The agent may engage the stop, but not release it.
    let r = s.call(AGENT, "control.panic", json!({"on": true})).await;
    assert_eq!(r["result"]["state"], "stopped", "{r}");
    let (st, _) = s
        .post_rpc(
            AGENT,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "session.resume"}),
        )
        .await;
    assert_eq!(st, 403);
    let r = s.call(OPERATOR, "session.resume", json!({})).await;
    assert_eq!(r["result"]["state"], "ready", "{r}");
    let r = s.call(OPERATOR, "control.panic", json!({"on": true})).await;
    assert_eq!(r["result"]["state"], "stopped");
    let r = s
        .call(OPERATOR, "control.panic", json!({"on": false}))
        .await;
    assert_eq!(r["result"]["state"], "ready", "{r}");
    let r = s
        .call(
            OPERATOR,
            "session.configure",
            json!({"safety": {"confirm_timeout_s": 20}}),
        )
        .await;
    assert_eq!(r["ok"], true, "{r}");
    // Agent configuration outside `safety` is fine.
    let r = s
        .call(
            AGENT,
            "session.configure",
            json!({"capture": {"default_quality": 70}}),
        )
        .await;
    assert_eq!(r["ok"], true, "{r}");
    // The agent cannot bring its own safety section to a new session.
    s.call(AGENT, "session.stop", json!({})).await;
    let (st, _) = s
        .post_rpc(
            AGENT,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "session.start", "params": {"config": {"safety": {"rules": []}}}}),
        )
        .await;
    assert_eq!(st, 403);
}

/// The operator's stop and standby hold against an agent that ends its session and
/// starts another: they are the server's latches, and only the operator releases them.
#[tokio::test]
async fn an_agent_cannot_shed_the_stop_or_standby_by_restarting_its_session() {
    let s = Server::start_with(
        Some(json!({
            "http": {"token": AGENT, "operator_token": OPERATOR},
            "safety": {"idle_timeout_s": 0.3}
        })),
        &[],
        &[],
    );
    let agent_move = || async {
        s.call(
            AGENT,
            "tools.call",
            json!({"tool": "pointer.move", "arguments": {"x": 5, "y": 5}}),
        )
        .await
    };
    assert_eq!(s.call(AGENT, "session.start", json!({})).await["ok"], true);
    let r = s.call(OPERATOR, "control.panic", json!({"on": true})).await;
    assert_eq!(r["result"]["panic"], true, "{r}");
    assert_eq!(agent_move().await["error"]["code"], "safety_stopped");
    let (st, _) = s
        .post_rpc(
            AGENT,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "control.panic", "params": {"on": false}}),
        )
        .await;
    assert_eq!(st, 403);
    // Stop and start again, twice, and the stop is still there.
    for _ in 0..2 {
        assert_eq!(s.call(AGENT, "session.stop", json!({})).await["ok"], true);
        let started = s.call(AGENT, "session.start", json!({})).await;
        assert_eq!(started["result"]["state"], "stopped", "{started}");
        let env = agent_move().await;
        assert_eq!(env["error"]["code"], "safety_stopped", "{env}");
    }
    let r = s
        .call(OPERATOR, "control.panic", json!({"on": false}))
        .await;
    assert_eq!(r["result"]["state"], "ready", "{r}");
    assert_eq!(agent_move().await["ok"], true);

    // Idle standby: entered after 0.3 s without actions, kept across a restart.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let st = s.call(AGENT, "system.status", json!({})).await;
        if st["result"]["state"] == "standby" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no standby: {st}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    s.call(AGENT, "session.stop", json!({})).await;
    let started = s.call(AGENT, "session.start", json!({})).await;
    assert_eq!(started["result"]["state"], "standby", "{started}");
    assert_eq!(agent_move().await["error"]["code"], "safety_standby");
    let (st, _) = s
        .post_rpc(
            AGENT,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "session.resume"}),
        )
        .await;
    assert_eq!(st, 403);
    let r = s.call(OPERATOR, "session.resume", json!({})).await;
    assert_eq!(r["result"]["state"], "ready", "{r}");
    assert_eq!(agent_move().await["ok"], true);
}

/// An agent sets only its own preferences: redaction, limits and every other key
/// outside the allowlist are the operator's, at session start and at runtime.
#[tokio::test]
async fn an_agent_configures_only_the_allowlisted_keys() {
    let s = Server::start();
    for (method, params) in [
        (
            "session.start",
            json!({"capture": {"redact_sensitive": false}}),
        ),
        (
            "session.start",
            json!({"config": {"a11y": {"hard_walk_cap": 1}}}),
        ),
        // What may be launched without a person is the operator's trust.
        (
            "session.start",
            json!({"apps": {"launch_allowed": ["xterm"]}}),
        ),
    ] {
        let (st, r) = s
            .post_rpc(
                AGENT,
                &json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
            )
            .await;
        assert_eq!(st, 403, "{method} {params}: {r}");
    }
    let r = s
        .call(
            AGENT,
            "session.start",
            json!({"capture": {"default_format": "jpeg"}}),
        )
        .await;
    assert_eq!(r["ok"], true, "{r}");
    let (st, r) = s
        .post_rpc(
            AGENT,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "session.configure",
                    "params": {"capture": {"redact_sensitive": false}}}),
        )
        .await;
    assert_eq!(st, 403, "{r}");
    let why = r["error"]["message"].as_str().unwrap();
    assert!(why.contains("capture.redact_sensitive"), "{why}");
    let r = s
        .call(
            OPERATOR,
            "session.configure",
            json!({"capture": {"redact_sensitive": true}}),
        )
        .await;
    assert_eq!(r["ok"], true, "{r}");
}

#[tokio::test]
async fn host_and_origin_must_be_this_server() {
    let s = Server::start();
    let p = s.port;
    let ok_hosts = [
        format!("127.0.0.1:{p}"),
        format!("localhost:{p}"),
        format!("LOCALHOST:{p}"),
    ];
    for h in &ok_hosts {
        let res = send(&s, "POST", "/rpc", Some(AGENT), &[("host", h.clone())]).await;
        assert_eq!(res.status().as_u16(), 200, "Host {h}");
    }
    let bad_hosts = [
        format!("evil.example:{p}"),
        format!("127.0.0.1:{}", p.wrapping_add(1)),
        "127.0.0.1".to_string(),
        format!("127.0.0.1.nip.io:{p}"),
    ];
    for h in &bad_hosts {
        for (method, path, token) in [
            ("POST", "/rpc", Some(AGENT)),
            ("GET", "/health", None),
            ("GET", "/", None),
        ] {
            let res = send(&s, method, path, token, &[("host", h.clone())]).await;
            assert_eq!(res.status().as_u16(), 403, "Host {h} on {path}");
            let v: Value = serde_json::from_slice(&res.bytes().await.unwrap()).unwrap();
            assert_eq!(v["error"], "bad_host");
        }
    }
    // Origin: absent or this very server is fine; anything else is refused.
    for o in [
        format!("http://127.0.0.1:{p}"),
        format!("HTTP://127.0.0.1:{p}"),
    ] {
        let res = send(&s, "POST", "/rpc", Some(AGENT), &[("origin", o.clone())]).await;
        assert_eq!(res.status().as_u16(), 200, "Origin {o}");
    }
    let bad_origins = [
        "http://evil.example".to_string(),
        format!("http://evil.example:{p}"),
        format!("https://127.0.0.1:{p}"),
        format!("http://localhost:{p}"), // not the Host this request was sent to
        format!("http://127.0.0.1:{}", p.wrapping_add(1)),
        "null".to_string(),
    ];
    for o in &bad_origins {
        for (method, path) in PROTECTED {
            let res = send(&s, method, path, Some(OPERATOR), &[("origin", o.clone())]).await;
            assert_eq!(res.status().as_u16(), 403, "Origin {o} on {method} {path}");
        }
    }
    // A rebinding page sends both its own name as Host and its own Origin: refused.
    let res = send(
        &s,
        "POST",
        "/rpc",
        Some(AGENT),
        &[
            ("host", format!("attacker.example:{p}")),
            ("origin", format!("http://attacker.example:{p}")),
        ],
    )
    .await;
    assert_eq!(res.status().as_u16(), 403);
}

#[tokio::test]
async fn a_generated_agent_token_goes_to_a_private_file_removed_at_exit() {
    use std::os::unix::fs::PermissionsExt;
    let mut s = Server::start_with(None, &[], &[]);
    assert!(
        s.base.starts_with("http://127.0.0.1:"),
        "binds loopback by default: {}",
        s.base
    );
    let text = s.stderr_text();
    let path = text
        .lines()
        .find_map(|l| l.strip_prefix("computer-control: generated agent token written to "))
        .map(|r| r.split(" (mode").next().unwrap().to_string())
        .unwrap_or_else(|| panic!("no token file on stderr:\n{text}"));
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600, "token file mode");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let agent = v["agent"].as_str().unwrap().to_string();
    assert!(
        agent.len() >= 64 && agent.chars().all(|c| c.is_ascii_hexdigit()),
        "{agent}"
    );
    // An operator token is never generated, so none is written (docs/SECURITY.md).
    assert_eq!(v.get("operator"), None, "{v}");
    assert!(!text.contains(&agent), "tokens never on stderr");
    assert_eq!(v["url"], s.base.as_str());
    // It works, with its role.
    let r = s.call(&agent, "session.start", json!({})).await;
    assert_eq!(r["ok"], true);
    let (st, _) = s
        .post_rpc(
            &agent,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "session.resume"}),
        )
        .await;
    assert_eq!(st, 403);
    // SIGTERM: the server stops and removes the file.
    let status = std::process::Command::new("kill")
        .args(["-TERM", &s.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = s
        .wait_exit(Duration::from_secs(20))
        .expect("exits after SIGTERM");
    assert!(exit.success(), "{exit:?}");
    assert!(
        !std::path::Path::new(&path).exists(),
        "token file removed at exit"
    );
}

#[tokio::test]
async fn a_configured_token_is_not_written_anywhere() {
    // Only the operator token configured: the agent's is generated and only it is written.
    let s = Server::start_with(
        Some(json!({"http": {"operator_token": OPERATOR}})),
        &[],
        &[],
    );
    let text = s.stderr_text();
    let path = text
        .lines()
        .find_map(|l| l.strip_prefix("computer-control: generated agent token written to "))
        .map(|r| r.split(" (mode").next().unwrap().to_string())
        .expect("token file");
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(!written.contains(OPERATOR), "{written}");
    let v: Value = serde_json::from_str(&written).unwrap();
    assert!(v["agent"].as_str().unwrap().len() >= 64);
    // Both tokens configured: no file at all.
    let s = Server::start_with(Some(tokens_config()), &[], &[]);
    assert!(!s.stderr_text().contains("generated agent token"));
}

#[test]
fn equal_tokens_are_refused_at_start() {
    let dir = http_support::TempDir::new();
    let path = dir.0.join("c.json");
    std::fs::write(
        &path,
        json!({"http": {"token": AGENT, "operator_token": AGENT}}).to_string(),
    )
    .unwrap();
    let out = http_support::serve_command(&dir)
        .arg("--config")
        .arg(&path)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("http.token and http.operator_token are equal"),
        "{err}"
    );
}
