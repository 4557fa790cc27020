//! The operator console open in Debian's chromium on the very X11 desk the agent
//! drives: the agent previews a governed action whose decision is `confirm`, the
//! console shows its card, and the agent tries to press Approve itself — by its
//! coordinates (a minimized terminal still listed over the console changes nothing),
//! by the keyboard, by accessibility activation, by pointer tools aimed at
//! a console element, by focusing the window.
//! Every attempt is refused `policy_denied` by the built-in console rule, and the
//! approval stays pending until a person decides.

use crate::governed_http_support;
use cc_test_kit::x11 as x11_support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use governed_http_support::{agent, find, now, ok};
use serde_json::{Value, json};
use x11_support::Desk;

const AGENT: &str = "console-agent-token-0123456789abcdef0123456789";
const OPERATOR: &str = "console-operator-token-fedcba9876543210fedcb";

struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `serve --transport http --platform x11` on the desk, every click a `confirm`.
fn serve(desk: &Desk, dir: &std::path::Path) -> Server {
    let config = dir.join("config.json");
    let c = json!({"http": {"token": AGENT, "operator_token": OPERATOR},
                   "safety": {"rules": [{"match": {"tool": "pointer.click"}, "effect": "confirm"}]}});
    std::fs::write(&config, c.to_string()).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_computer-control"));
    desk.env(&mut cmd);
    let mut child = cmd
        .args([
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
        .arg("--journal")
        .arg(dir.join("journal.db"))
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env("COMPUTER_CONTROL_LOG", "warn")
        .env("XDG_STATE_HOME", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn computer-control");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(b) = line.strip_prefix("computer-control: http listening on ") {
                let _ = tx.send(b.trim().to_string());
            }
        }
    });
    let base = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the server listens");
    Server { child, base }
}

fn http() -> reqwest::Client {
    // With every workspace feature on, reqwest's rustls comes without a crypto provider
    // (the client library's `rustls` feature installs its own at run time): install ring's
    // once, before any client is built.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

/// A tool call over `/rpc` with the agent's token; the envelope.
async fn tool(base: &str, name: &str, arguments: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools.call",
                      "params": {"tool": name, "arguments": arguments}});
    let r: Value = http()
        .post(format!("{base}/rpc"))
        .bearer_auth(AGENT)
        .body(body.to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    r["result"].clone()
}

async fn pending(base: &str) -> Vec<Value> {
    let r: Value = http()
        .get(format!("{base}/approvals"))
        .bearer_auth(OPERATOR)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    r["approvals"].as_array().cloned().unwrap_or_default()
}

fn refused_as_console(env: &Value, what: &str) {
    assert_eq!(env["ok"], false, "{what} ran: {env}");
    assert_eq!(env["error"]["code"], "policy_denied", "{what}: {env}");
    assert_eq!(
        env["error"]["data"]["rule"], "protect_console",
        "{what}: {env}"
    );
}

/// The screen centre of the console's Approve button, from the page itself over the
/// DevTools protocol (`tests/browser/approve_point.js`, playwright-core), once the
/// person at the desk (the script, not the agent) signed in through the form.
fn approve_point(profile: &std::path::Path) -> (i64, i64) {
    let port_file = profile.join("DevToolsActivePort");
    let deadline = Instant::now() + Duration::from_secs(30);
    let port = loop {
        if let Some(p) = std::fs::read_to_string(&port_file)
            .ok()
            .and_then(|t| t.lines().next().map(str::to_string))
        {
            break p;
        }
        assert!(
            Instant::now() < deadline,
            "chromium wrote no DevToolsActivePort"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/browser/approve_point.js"
    );
    let out = Command::new("node")
        .arg(script)
        .arg(format!("http://127.0.0.1:{port}"))
        .env("CC_OPERATOR_TOKEN", OPERATOR)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/browser"))
        .output()
        .expect("run node");
    assert!(
        out.status.success(),
        "approve_point.js: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("a point");
    (v["x"].as_i64().unwrap(), v["y"].as_i64().unwrap())
}

fn center(rect: &Value) -> (i64, i64) {
    let at = |i: usize| rect[i].as_i64().expect("rect");
    ((at(0) + at(2)) / 2, (at(1) + at(3)) / 2)
}

#[test]
fn the_agent_cannot_approve_its_own_action_on_the_console() {
    // The desk's own driver runs a runtime of its own: start it outside the test's.
    let desk = Desk::start();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(on_the_desk(desk));
}

async fn on_the_desk(mut desk: Desk) {
    let dir = desk.path("server");
    std::fs::create_dir_all(&dir).unwrap();
    let server = serve(&desk, &dir);
    let base = server.base.clone();
    desk.spawn("xterm", &["-geometry", "80x24+1250+100"]);
    let profile = desk.path("chromium-profile");
    let url = format!("{base}/");
    desk.spawn(
        "chromium",
        &[
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--force-renderer-accessibility",
            "--remote-debugging-port=0",
            "--window-position=0,0",
            "--window-size=1200,1000",
            &format!("--user-data-dir={}", profile.display()),
            &url,
        ],
    );

    // The agent's MCP session sees both windows.
    let a = agent(&base, AGENT).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let (console, xterm) = loop {
        let list = ok(&a, "window_list", json!({})).await;
        let windows = list["windows"].as_array().cloned().unwrap_or_default();
        let by = |f: &dyn Fn(&Value) -> bool| windows.iter().find(|w| f(w)).cloned();
        let console = by(&|w| {
            w["title"]
                .as_str()
                .is_some_and(|t| t.contains(cc_engine::CONSOLE_TITLE))
        });
        let xterm = by(&|w| {
            w["app_id"]
                .as_str()
                .is_some_and(|a| a.eq_ignore_ascii_case("xterm"))
        });
        if let (Some(c), Some(x)) = (console, xterm) {
            break (c, x);
        }
        assert!(Instant::now() < deadline, "windows: {list}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };

    // A governed click on the xterm: its decision is `confirm`, so it waits for a
    // person, and the console shows its card.
    let s = ok(
        &a,
        "start_session",
        json!({"objective": "click the terminal"}),
    )
    .await;
    let sid = s["session"]["sessionId"].as_str().unwrap().to_string();
    let at = center(&json!([
        xterm["rect"]["x"],
        xterm["rect"]["y"],
        xterm["rect"]["x"].as_i64().unwrap() + xterm["rect"]["width"].as_i64().unwrap(),
        xterm["rect"]["y"].as_i64().unwrap() + xterm["rect"]["height"].as_i64().unwrap()
    ]));
    let preview = ok(
        &a,
        "preview_action",
        json!({"session_id": sid, "action_id": "a1", "tool": "pointer_click",
               "arguments": {"x": at.0, "y": at.1}, "mode": "foreground",
               "expires_in_ms": 300_000,
               "target": {"platform": "x11", "appId": xterm["app_id"], "pid": xterm["pid"],
                          "windowId": xterm["id"], "bounds": xterm["rect"],
                          "observationId": "obs-1", "confidence": 1, "capturedAt": now()},
               "postcondition": {"kind": "window", "windowId": xterm["id"], "exists": true}}),
    )
    .await;
    assert_eq!(preview["policy"]["decision"], "confirm", "{preview}");
    assert_eq!(pending(&base).await.len(), 1);

    // Where the card's Approve button is on the screen, asked of the browser itself
    // (this driver's snapshot does not reach into chromium's web content, so the
    // agent would find it on a screenshot; the test asks the page to be exact).
    let (x, y) = approve_point(&profile);
    // A node of the console's window the agent does see: the browser's Reload button.
    let snap = tool(
        &base,
        "a11y.snapshot",
        json!({"window": console["id"], "level": "full"}),
    )
    .await;
    let snapshot_id = snap["result"]["snapshot_id"].clone();
    let reload = find(&snap["result"]["tree"], "button", "Reload")
        .unwrap_or_else(|| panic!("no Reload button: {snap}"))
        .clone();

    // 1. By its coordinates, after hiding a terminal behind it the way an agent could:
    // maximized, then minimized, it stays first in the window manager's list at its
    // full-screen rectangle, but it is not what a click there reaches.
    // (On a thread of its own: the desk's driver runs a runtime of its own.)
    std::thread::scope(|t| {
        t.spawn(|| {
            let shadow = desk.xterm("shadow", "40x10+300+300");
            desk.maximize(shadow);
            desk.minimize(shadow);
        })
        .join()
        .expect("the shadow terminal");
    });
    refused_as_console(
        &tool(&base, "pointer.click", json!({"x": x, "y": y})).await,
        "a click on Approve",
    );
    refused_as_console(
        &tool(
            &base,
            "pointer.drag",
            json!({"from": {"x": x - 200, "y": y}, "to": {"x": x, "y": y}}),
        )
        .await,
        "a drag onto Approve",
    );
    // 2. By accessibility.
    refused_as_console(
        &tool(
            &base,
            "a11y.activate",
            json!({"snapshot_id": snapshot_id, "node_id": reload["id"]}),
        )
        .await,
        "activating a node of the console",
    );
    // 3. By pointer tools aimed at a console element: judged where its centre lands.
    let on_reload = json!({"ref": reload["ref"]});
    for (name, args) in [
        ("pointer.click", json!({"element": on_reload})),
        ("pointer.move", json!({"element": on_reload})),
        (
            "pointer.scroll",
            json!({"amount": -1, "element": on_reload}),
        ),
        (
            "pointer.drag",
            json!({"from": {"x": x - 200, "y": y}, "to_element": on_reload}),
        ),
    ] {
        refused_as_console(
            &tool(&base, name, args.clone()).await,
            &format!("{name} {args}"),
        );
    }
    // 4. By focusing the console, then by keys while a person left it focused.
    refused_as_console(
        &tool(&base, "window.focus", json!({"id": console["id"]})).await,
        "focusing the console",
    );
    desk.run(
        "xdotool",
        &[
            "search",
            "--name",
            "operator console",
            "windowactivate",
            "--sync",
        ],
    );
    for (name, args) in [
        ("keyboard.press", json!({"key": "Tab"})),
        ("keyboard.press", json!({"key": "Enter"})),
        ("keyboard.type", json!({"text": "\n"})),
        ("keyboard.combo", json!({"keys": ["shift", "Tab"]})),
    ] {
        refused_as_console(
            &tool(&base, name, args.clone()).await,
            &format!("{name} {args}"),
        );
    }
    // 5. A governed action aimed at the console.
    let l = ok(
        &a,
        "acquire_control_lease",
        json!({"session_id": sid, "kind": "cooperative", "mode": "foreground",
               "ttl_ms": 60_000, "action_budget": 5}),
    )
    .await;
    let lid = l["lease"]["leaseId"].as_str().unwrap();
    let aimed = json!({"session_id": sid, "action_id": "a2", "lease_id": lid,
        "tool": "pointer_click", "arguments": {"x": x, "y": y}, "mode": "foreground",
        "target": {"platform": "x11", "appId": console["app_id"], "pid": console["pid"],
                   "windowId": console["id"], "bounds": console["rect"],
                   "observationId": "obs-2", "confidence": 1, "capturedAt": now()},
        "postcondition": {"kind": "window", "windowId": console["id"], "exists": true}});
    let p = ok(&a, "preview_action", aimed).await;
    assert_eq!(p["policy"]["decision"], "deny", "{p}");

    // The approval is still the person's to give.
    let still = pending(&base).await;
    assert_eq!(still.len(), 1, "{still:?}");
    assert_eq!(still[0]["actionId"], "a1", "{still:?}");
    a.cancel().await.ok();
    drop(server);
}
