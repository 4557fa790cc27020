//! The operator channel against an agent that holds only its own token and controls
//! everything the desktop user can (docs/SECURITY.md): what it can read finds no
//! operator token, the console signs in without a secret in any URL and its session is
//! no agent credential, the journal is private, `check_setup` names no path, and the
//! Host check accepts the names the operator allowed and no others.

use crate::http_support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use http_support::{AGENT, OPERATOR, Server, TempDir, client, tokens_config};
use serde_json::{Value, json};

/// Every 64-hex-digit word in `text`: what an agent would try as a token.
fn hex_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_hexdigit())
        .filter(|w| w.len() == 64)
        .map(str::to_string)
        .collect()
}

/// Everything the desktop user can read under `dir` (the runtime directory the
/// server writes to), as one string.
fn readable_under(dir: &Path) -> String {
    let mut all = String::new();
    for entry in walk(dir) {
        if let Ok(text) = std::fs::read_to_string(&entry) {
            all.push_str(&text);
            all.push('\n');
        }
    }
    all
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `GET /whoami` with a bearer token: its role, or the status.
async fn role_of(s: &Server, token: &str) -> Result<String, u16> {
    let res = client()
        .get(s.url("/whoami"))
        .bearer_auth(token)
        .send()
        .await
        .expect("GET /whoami");
    match res.status().as_u16() {
        200 => Ok(res.json::<Value>().await.unwrap()["role"]
            .as_str()
            .unwrap()
            .to_string()),
        st => Err(st),
    }
}

/// The first attack: a shell on the desk reads whatever the server wrote for the
/// desktop user. A fresh `serve --transport http` writes the agent's token only; no
/// operator token exists to find, so the agent cannot approve or release anything.
#[tokio::test]
async fn a_fresh_server_writes_no_operator_token_for_a_shell_to_read() {
    let s = Server::start_with(None, &[], &[]);
    let stderr = s.stderr_text();
    assert!(
        stderr.contains("no operator token was handed in"),
        "{stderr}"
    );
    let path = stderr
        .lines()
        .find_map(|l| l.strip_prefix("computer-control: generated agent token written to "))
        .map(|r| r.split(" (mode").next().unwrap().to_string())
        .unwrap_or_else(|| panic!("no agent token file:\n{stderr}"));
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v.get("operator"), None, "{v}");
    let agent = v["agent"].as_str().unwrap().to_string();
    assert_eq!(role_of(&s, &agent).await, Ok("agent".into()));

    // What a shell of the desktop user can read: every file the server could have
    // written (its runtime directory), its stderr, its command line and environment.
    let mut seen = readable_under(&s.dir.0);
    seen.push_str(&stderr);
    for f in ["cmdline", "environ"] {
        if let Ok(b) = std::fs::read(format!("/proc/{}/{f}", s.pid())) {
            seen.push_str(&String::from_utf8_lossy(&b));
        }
    }
    let found = hex_words(&seen);
    assert!(found.contains(&agent), "the agent's own token is there");
    for t in &found {
        assert_ne!(role_of(&s, t).await, Ok("operator".into()), "{t}");
    }
    // So the agent cannot confirm its own actions or release the stop.
    let (st, _) = s
        .post_rpc(
            &agent,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "control.panic", "params": {"on": false}}),
        )
        .await;
    assert_eq!(st, 403);
    // And nobody can sign in to the console: there is nothing to sign in with.
    let (st, body) = login(&s, &agent, true).await;
    assert_eq!(
        (st, body["error"].as_str()),
        (403, Some("no_operator_token"))
    );
}

/// The operator token handed in by the host through a descriptor: it works, and it is
/// written nowhere, printed nowhere, and in neither the command line nor the
/// environment.
#[tokio::test]
async fn an_operator_token_handed_in_on_a_descriptor_is_written_nowhere() {
    let s = Server::start_fed(
        Some(json!({"http": {"token": AGENT}})),
        &["--operator-token-file", "/dev/stdin"],
        &[],
        Some(&format!("{OPERATOR}\n")),
    );
    assert_eq!(role_of(&s, OPERATOR).await, Ok("operator".into()));
    assert_eq!(role_of(&s, AGENT).await, Ok("agent".into()));
    let mut seen = readable_under(&s.dir.0);
    seen.push_str(&s.stderr_text());
    for f in ["cmdline", "environ"] {
        if let Ok(b) = std::fs::read(format!("/proc/{}/{f}", s.pid())) {
            seen.push_str(&String::from_utf8_lossy(&b));
        }
    }
    assert!(
        !seen.contains(OPERATOR),
        "the operator token leaked: {seen}"
    );
    assert_eq!(s.call(AGENT, "session.start", json!({})).await["ok"], true);
    let r = s.call(OPERATOR, "session.resume", json!({})).await;
    assert_eq!(r["ok"], true, "{r}");
}

#[test]
fn a_bad_operator_token_file_stops_the_start() {
    let dir = TempDir::new();
    let empty = dir.0.join("empty");
    std::fs::write(&empty, "\n").unwrap();
    for (path, why) in [
        (dir.0.join("missing"), "--operator-token-file"),
        (empty, "the file is empty"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_computer-control"))
            .args(["serve", "--transport", "http", "--port", "0"])
            .args(["--platform", "virtual", "--operator-token-file"])
            .arg(&path)
            .env_remove("COMPUTER_CONTROL_CONFIG")
            .env("XDG_RUNTIME_DIR", &dir.0)
            .env("XDG_STATE_HOME", &dir.0)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{err}");
        assert!(err.contains(why), "{err}");
    }
}

/// `POST /console/login` as the page sends it (`Origin` the server's own unless told
/// otherwise): `(status, body)`, and the `Set-Cookie` in `body["set-cookie"]`.
async fn login(s: &Server, token: &str, with_origin: bool) -> (u16, Value) {
    let mut req = client()
        .post(s.url("/console/login"))
        .header("content-type", "application/json")
        .body(json!({"token": token}).to_string());
    if with_origin {
        req = req.header("origin", s.base.as_str());
    }
    let res = req.send().await.expect("login");
    let status = res.status().as_u16();
    let cookie = res
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let mut body: Value = res.json().await.unwrap_or(Value::Null);
    if let (Some(c), Value::Object(m)) = (cookie, &mut body) {
        m.insert("set-cookie".into(), json!(c));
    }
    (status, body)
}

/// A request carrying the console's session: `cookie` (`name=value`) and `key`.
fn with_session(
    req: reqwest::RequestBuilder,
    cookie: Option<&str>,
    key: Option<&str>,
) -> reqwest::RequestBuilder {
    let mut req = req;
    if let Some(c) = cookie {
        req = req.header("cookie", c);
    }
    if let Some(k) = key {
        req = req.header("x-console-key", k);
    }
    req
}

#[tokio::test]
async fn the_console_signs_in_with_a_session_that_is_no_agent_credential() {
    let s = Server::start();
    assert_eq!(s.call(AGENT, "session.start", json!({})).await["ok"], true);
    // Refusals: a wrong token, the agent's token, a missing Origin, a malformed body.
    assert_eq!(login(&s, "not-the-token", true).await.0, 401);
    let (st, body) = login(&s, AGENT, true).await;
    assert_eq!((st, body["error"].as_str()), (403, Some("forbidden")));
    assert_eq!(login(&s, OPERATOR, false).await.0, 403, "no Origin");
    let foreign = client()
        .post(s.url("/console/login"))
        .header("origin", "http://evil.example")
        .body(json!({"token": OPERATOR}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status().as_u16(), 403);
    let bad = client()
        .post(s.url("/console/login"))
        .header("origin", s.base.as_str())
        .body("{\"token\": 1}")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status().as_u16(), 400);

    let (st, body) = login(&s, OPERATOR, true).await;
    assert_eq!(st, 200, "{body}");
    assert_eq!(body["role"], "operator");
    let key = body["key"].as_str().unwrap().to_string();
    let set = body["set-cookie"].as_str().unwrap().to_string();
    let attrs: Vec<&str> = set.split(';').map(str::trim).collect();
    assert!(attrs.contains(&"HttpOnly"), "{set}");
    assert!(attrs.contains(&"SameSite=Strict"), "{set}");
    assert!(attrs.contains(&"Path=/"), "{set}");
    assert!(
        !set.to_ascii_lowercase().contains("max-age") && !set.contains("Expires"),
        "a session cookie, kept in memory only: {set}"
    );
    let cookie = attrs[0].to_string();
    assert!(
        cookie.starts_with(&format!("cc_console_{}=", s.port)),
        "{cookie}"
    );
    assert!(!set.contains(OPERATOR) && !key.contains(OPERATOR));

    let whoami = |c: Option<&str>, k: Option<&str>| {
        let req = with_session(client().get(s.url("/whoami")), c, k);
        async move { req.send().await.unwrap().status().as_u16() }
    };
    assert_eq!(whoami(Some(&cookie), Some(&key)).await, 200);
    // Either half alone is nothing: the cookie reaches every port of this host and
    // every window of the browser; the key stays in its tab.
    assert_eq!(whoami(Some(&cookie), None).await, 401);
    assert_eq!(whoami(None, Some(&key)).await, 401);
    assert_eq!(whoami(Some(&cookie), Some(AGENT)).await, 401);

    // The session is the operator: it resumes, with the page's Origin.
    let resume = json!({"jsonrpc": "2.0", "id": 1, "method": "session.resume"});
    let post = |origin: Option<&str>| {
        let mut req = with_session(client().post(s.url("/rpc")), Some(&cookie), Some(&key))
            .header("content-type", "application/json")
            .body(resume.to_string());
        if let Some(o) = origin {
            req = req.header("origin", o);
        }
        async move {
            let r = req.send().await.unwrap();
            (
                r.status().as_u16(),
                r.json::<Value>().await.unwrap_or(Value::Null),
            )
        }
    };
    let (st, body) = post(Some(&s.base)).await;
    assert_eq!(st, 200, "{body}");
    assert_eq!(body["result"]["ok"], true, "{body}");
    // Without an Origin a request changing something is not the page's.
    assert_eq!(post(None).await.0, 403);
    // A foreign page cannot use it (the guard, before the session is looked at).
    assert_eq!(post(Some("http://evil.example")).await.0, 403);

    // Not at /mcp: the agent's endpoint takes bearer tokens only.
    let mcp = with_session(client().post(s.url("/mcp")), Some(&cookie), Some(&key))
        .header("origin", s.base.as_str())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(mcp.status().as_u16(), 401);

    // Sign-out ends it for good.
    let out = with_session(client().post(s.url("/console/logout")), Some(&cookie), None)
        .header("origin", s.base.as_str())
        .send()
        .await
        .unwrap();
    assert_eq!(out.status().as_u16(), 200);
    let cleared = out.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cleared.contains("Max-Age=0"), "{cleared}");
    assert_eq!(whoami(Some(&cookie), Some(&key)).await, 401);
}

#[tokio::test]
async fn allowed_hosts_admit_the_names_the_operator_gave() {
    let s = Server::start_with(
        Some(json!({"http": {"token": AGENT, "operator_token": OPERATOR,
                             "allowed_hosts": ["192.0.2.7", "desk.example", "[2001:db8::7]"]}})),
        &["--host", "0.0.0.0"],
        &[],
    );
    let port = s.port;
    let url = format!("http://127.0.0.1:{port}/whoami");
    let get = |host: String, origin: Option<String>| {
        let mut req = client().get(&url).bearer_auth(AGENT).header("host", host);
        if let Some(o) = origin {
            req = req.header("origin", o);
        }
        async move { req.send().await.unwrap().status().as_u16() }
    };
    for name in ["192.0.2.7", "desk.example", "DESK.example", "[2001:db8::7]"] {
        let host = format!("{name}:{port}");
        assert_eq!(get(host.clone(), None).await, 200, "{host}");
        assert_eq!(
            get(host.clone(), Some(format!("http://{host}"))).await,
            200,
            "{host} with its Origin"
        );
    }
    for host in [
        format!("192.0.2.8:{port}"),
        format!("desk.example:{}", port.wrapping_add(1)),
        format!("evil.desk.example:{port}"),
    ] {
        assert_eq!(get(host.clone(), None).await, 403, "{host}");
    }
}

#[test]
fn a_malformed_allowed_host_stops_the_start() {
    let dir = TempDir::new();
    let config = dir.0.join("c.json");
    std::fs::write(
        &config,
        json!({"http": {"allowed_hosts": ["http://desk.example/"]}}).to_string(),
    )
    .unwrap();
    let out = http_support::serve_command(&dir)
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("http.allowed_hosts"), "{err}");
}

/// `allowed_hosts` is the operator's and fixed at start: an agent cannot widen it.
#[tokio::test]
async fn an_agent_cannot_allow_a_host() {
    let s = Server::start();
    let (st, _) = s
        .post_rpc(
            AGENT,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "session.configure",
                    "params": {"http": {"allowed_hosts": ["evil.example"]}}}),
        )
        .await;
    assert_eq!(st, 403);
}

/// The journal and its side files, once a governed session wrote to it, are the
/// owner's alone; so is the state directory the server made for it.
#[tokio::test]
async fn the_journal_is_private() {
    let s = Server::start_with(Some(tokens_config()), &[], &[]);
    let a = crate::governed_http_support::agent(&s.base, AGENT).await;
    crate::governed_http_support::ok(&a, "start_session", json!({"objective": "private"})).await;
    let dir = s.dir.0.join("computer-control");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700, "the journal's directory");
    let db = dir.join("governance.db");
    assert_eq!(mode(&db), 0o600, "the journal");
    let mut sides = 0;
    for side in [
        "governance.db-wal",
        "governance.db-shm",
        "governance.db.lock",
    ] {
        let p = dir.join(side);
        if p.exists() {
            sides += 1;
            assert_eq!(mode(&p), 0o600, "{side}");
        }
    }
    assert!(sides >= 2, "WAL mode keeps -wal and -shm while open");
}

/// `check_setup`, as the agent calls it over MCP, names no path: not the runtime
/// directory, not the journal, not the session bus.
#[tokio::test]
async fn check_setup_tells_the_agent_no_path() {
    let s = Server::start_with(Some(tokens_config()), &[], &[]);
    let a = crate::governed_http_support::agent(&s.base, AGENT).await;
    let report = crate::governed_http_support::ok(&a, "check_setup", json!({})).await;
    let text = report.to_string();
    let dir = s.dir.0.display().to_string();
    assert!(
        !text.contains(&dir),
        "the runtime/state directory: {report:#}"
    );
    assert!(!text.contains("governance.db"), "the journal: {report:#}");
    assert_eq!(report["journal"].get("path"), None, "{report:#}");
    assert!(
        report["journal"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("this server")),
        "{report:#}"
    );
    // The operator's own `check` still shows where the journal is.
    let journal = s.dir.0.join("computer-control/governance.db");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_computer-control"))
        .args(["check", "--json", "--platform", "virtual", "--journal"])
        .arg(&journal)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["journal"]["path"], journal.display().to_string());
}

/// Another process of the server's own user (an agent's program) cannot read the
/// server's environment or memory under `/proc`: the server makes itself
/// non-dumpable, so a token it holds stays its own. Both run as `nobody` here (the
/// test runs as root, which may read anything), through `setpriv`.
#[test]
fn another_process_of_the_same_user_cannot_read_the_servers_proc_files() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::fs::PermissionsExt;
    if !Path::new("/usr/bin/setpriv").exists() {
        panic!("setpriv (util-linux) is needed for this test");
    }
    let dir = TempDir::new();
    let home = dir.0.join("nobody");
    std::fs::create_dir(&home).unwrap();
    for d in [&dir.0, &home] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let config = home.join("config.json");
    std::fs::write(&config, tokens_config().to_string()).unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
    let as_nobody = || {
        let mut c = std::process::Command::new("/usr/bin/setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
        c
    };
    let mut child = as_nobody()
        .arg(env!("CARGO_BIN_EXE_computer-control"))
        .args([
            "serve",
            "--transport",
            "http",
            "--port",
            "0",
            "--platform",
            "virtual",
        ])
        .arg("--config")
        .arg(&config)
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env("HOME", &home)
        .env("XDG_RUNTIME_DIR", &home)
        .env("XDG_STATE_HOME", &home)
        .env("CC_PROBE", "visible-in-environ")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("setpriv");
    let stderr = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    for line in BufReader::new(stderr).lines().map_while(Result::ok) {
        let up = line.starts_with("computer-control: http listening on ");
        seen.push(line);
        if up {
            break;
        }
    }
    let pid = child.id();
    let peek = |what: &str| {
        as_nobody()
            .args(["cat", &format!("/proc/{pid}/{what}")])
            .output()
            .unwrap()
    };
    let environ = peek("environ");
    let mem_maps = peek("maps");
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        seen.iter().any(|l| l.contains("http listening")),
        "the server did not start as nobody: {seen:?}"
    );
    assert!(
        !environ.status.success()
            && !String::from_utf8_lossy(&environ.stdout).contains("visible-in-environ"),
        "/proc/{pid}/environ was readable by the same user"
    );
    assert!(
        !mem_maps.status.success(),
        "/proc/{pid}/maps was readable by the same user"
    );
}
