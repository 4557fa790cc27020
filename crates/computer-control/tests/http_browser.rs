//! The operator console in a real browser (Debian's chromium, driven by playwright-core
//! from `tests/browser/console_test.js` and `card_test.js`): the operator signs in
//! through its form (no token in the address, the history, the page's storage or a
//! script-readable cookie; another window of the browser is not signed in; `#token=` is
//! refused), a governed click the
//! agent previewed over MCP (`/mcp`, policy `confirm`) waits in its card and is approved
//! in the page, after which the agent's `execute_action` commits; a high-risk action
//! sent by the agent appears as a card, approving it in the page runs it and the trail
//! shows it, and the panic button stops the session. For every pointer and element form
//! and the keyboard tools, a confirmation card says what will run on which element in
//! which window and marks the point on the frame, as `safety.confirmation_requested`
//! carries it. Screenshots go to `target/console-screenshots/` (CI artifacts).
//!
//! Prerequisites (`scripts/test.sh` installs them): `/usr/bin/chromium`, and
//! `npm install --no-save playwright-core` in `tests/browser`.

use crate::governed_http_support;
use crate::http_support;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use governed_http_support::{agent, click, confirm_clicks_config, form, now, ok, session};
use http_support::{AGENT, OPERATOR, Server, tokens_config};
use serde_json::{Value, json};

fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser")
}

fn screenshots_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/console-screenshots")
}

/// Debian's chromium, with playwright-core installed beside the scripts.
fn chromium() -> String {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        Path::new(&chromium).exists(),
        "{chromium} is missing: run scripts/test.sh (apt-get install -y chromium)"
    );
    assert!(
        browser_dir().join("node_modules/playwright-core").is_dir(),
        "playwright-core is missing: run scripts/test.sh (npm install --no-save playwright-core in {})",
        browser_dir().display()
    );
    chromium
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_approves_and_panics_in_the_console() {
    let chromium = chromium();

    let s = Server::start_with(Some(confirm_clicks_config(tokens_config())), &[], &[]);
    assert_eq!(s.call(AGENT, "session.start", json!({})).await["ok"], true);
    let cap = s
        .call(
            AGENT,
            "tools.call",
            json!({"tool": "screen.capture", "arguments": {"format": "jpeg", "scale": 0.5}}),
        )
        .await;
    assert_eq!(cap["ok"], true, "{cap}");

    // The agent previews a governed click: policy `confirm`, so it waits for the
    // operator (the page approves it).
    let a = agent(&s.base, AGENT).await;
    let (gov_session, gov_lease) = session(&a).await;
    let (window, submit) = form(&a).await;
    let gov = click(&window, submit, &gov_session, &gov_lease, "g1", 0, &now());
    let preview = ok(&a, "preview_action", gov.clone()).await;
    assert_eq!(preview["blocker"], "approval_required", "{preview}");

    // Everything the page makes happen, read as it happens: the replay ring keeps only
    // the last 200 events, and a slow machine's page can outlast that.
    let seen = s.events(AGENT, None).await.collect();

    let shots = screenshots_dir().join("console");
    let _ = std::fs::remove_dir_all(&shots);
    let mut child = Command::new("node")
        .arg("console_test.js")
        .current_dir(browser_dir())
        .env("CC_BASE", &s.base)
        .env("CC_AGENT_TOKEN", AGENT)
        .env("CC_OPERATOR_TOKEN", OPERATOR)
        .env("CC_SCREENSHOTS", &shots)
        .env("CC_GOV_SESSION", &gov_session)
        .env("CC_GOV_ACTION", "g1")
        .env("CHROMIUM", &chromium)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node is needed for the browser test");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let t = Instant::now();
    // While the page runs, the agent relies on the server remembering the operator's
    // grant for its action: once a re-preview names it, it executes at once (the
    // target evidence must stay under 30 s old).
    let mut receipt = None;
    let status = loop {
        if receipt.is_none() {
            let p = ok(&a, "preview_action", gov.clone()).await;
            if p["policy"]["grantId"].is_string() {
                receipt = Some(ok(&a, "execute_action", gov.clone()).await["receipt"].clone());
            }
        }
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        if t.elapsed() > Duration::from_secs(240) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let stdout = out_reader.join().unwrap();
    let stderr = err_reader.join().unwrap();
    let last = stdout.lines().last().unwrap_or_default();
    let result: Value = serde_json::from_str(last).unwrap_or(Value::Null);
    assert!(
        status.is_some_and(|s| s.success()) && result["ok"] == true,
        "browser test failed ({status:?}):\n{result:#}\nstdout:\n{stdout}\nstderr:\n{stderr}\nserver:\n{}",
        s.stderr_text()
    );

    // The sign-in steps ran: through the form, nothing left behind, #token= refused.
    let steps = result["steps"].to_string();
    for want in [
        "signed in through the form; no token in the address, history, storage or cookies",
        "another window of the browser is not signed in",
        "signed out; the old session is refused; #token= is not accepted",
    ] {
        assert!(steps.contains(want), "{want}: {steps}");
    }

    // The operator's grant from the page let the agent's governed click commit.
    let receipt = receipt.expect("the page's approval reached the agent");
    assert_eq!(receipt["status"], "committed", "{receipt}");
    assert_eq!(receipt["result"]["verification"]["satisfied"], true);

    // What the page did, checked from outside it.
    let id = result["request_id"].as_str().unwrap();
    let status = s.call(AGENT, "system.status", json!({})).await;
    assert_eq!(
        status["result"]["state"], "ready",
        "resumed at the end: {status}"
    );
    let last_seq = s.health().await["last_seq"].as_u64().unwrap();
    let evs = seen.until_seq(last_seq, Duration::from_secs(30)).await;
    let approved = evs.iter().any(|e| {
        e["type"] == "safety.confirmation_resolved"
            && e["payload"]["request_id"] == id
            && e["payload"]["approve"] == true
    });
    let ran = evs.iter().any(|e| {
        e["type"] == "action.finished"
            && e["payload"]["request_id"] == id
            && e["payload"]["ok"] == true
    });
    let panicked = evs.iter().any(|e| e["type"] == "safety.panic_triggered");
    assert!(
        approved && ran && panicked,
        "events: approved {approved}, ran {ran}, panic {panicked}; request {id}; seen: {}",
        evs.iter()
            .map(|e| format!("{} {}", e["type"], e["payload"]["request_id"]))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for f in [
        "0-governed-pending.png",
        "1-pending-win-r.png",
        "2-approved-trail.png",
        "3-pending-click-marked.png",
        "4-pending-type.png",
        "5-stopped.png",
    ] {
        let p = shots.join(f);
        assert!(
            std::fs::metadata(&p).is_ok_and(|m| m.len() > 1000),
            "{}",
            p.display()
        );
    }
}

/// PROTOCOL §5.3, §8: every form of aiming a pointer tool (a canvas point, a point
/// relative to a window, an element by ref or selector, both ends of a drag, where the
/// pointer is), the accessibility tools by ref and by selector and the keyboard tools:
/// the card says what will run on which element in which window, marks each point on
/// the frame, and `safety.confirmation_requested` carries the same landing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirmation_cards_show_where_each_action_lands() {
    let chromium = chromium();
    let mut config = tokens_config();
    config["safety"] = json!({"rules": [
        {"match": {"tool": "pointer.*"}, "effect": "confirm"},
        {"match": {"tool": "a11y.activate"}, "effect": "confirm"},
        {"match": {"tool": "a11y.input"}, "effect": "confirm"},
        {"match": {"tool": "keyboard.*"}, "effect": "confirm"}
    ]});
    // The operator's canvas of 1920 (the canvas width is not the agent's to set).
    config["capture"] = json!({"default_width": 1920});
    let s = Server::start_with(Some(config), &[], &[]);
    let started = s.call(AGENT, "session.start", json!({})).await;
    assert_eq!(started["ok"], true, "{started}");
    let cap = s
        .call(
            AGENT,
            "tools.call",
            json!({"tool": "screen.capture", "arguments": {"format": "jpeg", "scale": 0.5}}),
        )
        .await;
    assert_eq!(cap["ok"], true, "{cap}");

    let mut sub = s.events(AGENT, None).await;
    let shots = screenshots_dir().join("cards");
    let _ = std::fs::remove_dir_all(&shots);
    let out = tokio::task::spawn_blocking({
        let (base, shots) = (s.base.clone(), shots.clone());
        move || {
            Command::new("node")
                .arg("card_test.js")
                .current_dir(browser_dir())
                .env("CC_BASE", &base)
                .env("CC_AGENT_TOKEN", AGENT)
                .env("CC_OPERATOR_TOKEN", OPERATOR)
                .env("CC_SCREENSHOTS", &shots)
                .env("CHROMIUM", &chromium)
                .stdin(Stdio::null())
                .output()
                .expect("node is needed for the browser test")
        }
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    let result: Value = serde_json::from_str(last).unwrap_or(Value::Null);
    assert!(
        out.status.success() && result["ok"] == true,
        "browser test failed ({:?}):\n{result:#}\nstderr:\n{}\nserver:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        s.stderr_text()
    );

    // The events carried what the page was shown.
    let cases = result["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 19, "{result:#}");
    let last_seq = s.health().await["last_seq"].as_u64().unwrap();
    let evs: Vec<Value> = sub
        .until_seq(last_seq, Duration::from_secs(30))
        .await
        .into_iter()
        .filter_map(|m| m.data)
        .collect();
    for case in cases {
        let ev = evs
            .iter()
            .find(|e| {
                e["type"] == "safety.confirmation_requested"
                    && e["payload"]["request_id"] == case["request_id"]
            })
            .unwrap_or_else(|| panic!("no event for {case}"));
        assert_eq!(ev["payload"]["tool"], case["tool"], "{ev}");
        assert_eq!(ev["payload"]["landing"], case["landing"], "{ev}");
    }
}
