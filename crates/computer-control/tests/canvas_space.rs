//! One space for what a model sees and where it clicks (PROTOCOL §4.1), beyond the
//! conformance suite's scenarios (a point read off the default capture clicks what it
//! shows, on every desk): a vocabulary's own screenshot size over the default canvas; a
//! desk that already fits keeps its own size. The canvas is the operator's: an agent
//! cannot rescale it out from under an `in_region` rule.

use crate::common;
use crate::http_support;

use std::process::Command;
use std::time::{Duration, Instant};

use crate::conformance::scenarios::pointer::default_image;
use cc_test_kit::x11;
use common::{Server, has_state};
use serde_json::{Value, json};

/// The vocabularies declare their own screenshot sizes over whatever canvas there is:
/// Anthropic's reference shows the default 1430 × 804 canvas as 1366 × 768, and a
/// point read there lands on the checkbox.
#[test]
fn a_vendor_vocabulary_works_on_the_default_canvas() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let shot = s.ok("anthropic.computer", json!({"action": "screenshot"}));
    let data = shot["content"][0]["source"]["data"].as_str().unwrap();
    use base64::Engine as _;
    let png = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    let (w, h, _, _) = common::decode_png(&png);
    assert_eq!((w, h), (1366, 768));
    let (x, y) = common::center(&s.node("checkbox", "Remember me"));
    let shown = [
        (x as f64 * 1366.0 / 1430.0).round() as i64,
        (y as f64 * 768.0 / 804.0).round() as i64,
    ];
    let r = s.ok(
        "anthropic.computer",
        json!({"action": "left_click", "coordinate": shown}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert!(has_state(&s.node("checkbox", "Remember me"), "checked"));
}

/// The canvas is the space the operator's `in_region` rules are written in. An agent
/// that could rescale it would move every rule's rectangle out from under its clicks
/// (on a canvas 4000 wide, canvas (600, 420) is the physical pixel that canvas (300,
/// 200) of the operator's canvas shows); so the width is the operator's, at session
/// start and at runtime, and the rule still holds.
#[tokio::test]
async fn an_agent_cannot_rescale_the_canvas_out_from_under_an_operator_rule() {
    use http_support::{AGENT, OPERATOR, tokens_config};
    let mut config = tokens_config();
    config["safety"] = json!({"rules": [{
        "match": {"tool": "pointer.click", "argument": {
            "name": "x", "matcher": "in_region",
            "value": {"x": 0, "y": 0, "width": 400, "height": 300}}},
        "effect": "deny"}]});
    let s = http_support::Server::start_with(Some(config), &[], &[]);
    let refused = |st: u16, r: &Value| {
        assert_eq!(st, 403, "{r}");
        let why = r["error"]["message"].as_str().unwrap_or_default();
        assert!(why.contains("capture.default_width"), "{why}");
    };
    let (st, r) = s
        .post_rpc(
            AGENT,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "session.start",
                    "params": {"capture": {"default_width": 4000}}}),
        )
        .await;
    refused(st, &r);
    let started = s.call(AGENT, "session.start", json!({})).await;
    assert_eq!(started["ok"], true, "{started}");
    let surface = started["result"]["surface"].clone();
    assert_eq!(surface["display_width_px"], 1430);
    for width in [json!(4000), json!(200), json!("auto")] {
        for params in [
            json!({"capture": {"default_width": width}}),
            json!({"patch": {"capture": {"default_width": width, "grayscale": true}}}),
        ] {
            let (st, r) = s
                .post_rpc(
                    AGENT,
                    &json!({"jsonrpc": "2.0", "id": 1, "method": "session.configure",
                            "params": params}),
                )
                .await;
            refused(st, &r);
        }
    }
    let status = s.call(AGENT, "system.status", json!({})).await;
    assert_eq!(status["result"]["surface"], surface, "the canvas stayed");
    // The click the rule is about is still refused, and nothing moved.
    let click = s
        .call(
            AGENT,
            "tools.call",
            json!({"tool": "pointer.click", "arguments": {"x": 300, "y": 200}}),
        )
        .await;
    assert_eq!(click["error"]["code"], "policy_denied", "{click}");
    let at = s
        .call(
            AGENT,
            "tools.call",
            json!({"tool": "pointer.position", "arguments": {}}),
        )
        .await;
    assert_ne!(
        at["result"]["position"],
        json!({"x": 300, "y": 200}),
        "{at}"
    );
    // The operator may change the canvas (and with it what the rule covers).
    let r = s
        .call(
            OPERATOR,
            "session.configure",
            json!({"capture": {"default_width": 1920}}),
        )
        .await;
    assert_eq!(r["ok"], true, "{r}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let status = s.call(AGENT, "system.status", json!({})).await;
        if status["result"]["surface"]["display_width_px"] == 1920 {
            break;
        }
        assert!(Instant::now() < deadline, "{status}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[test]
fn x11_a_desk_that_fits_a_model_keeps_its_size() {
    let desk = x11::Desk::start_sized(1280, 800);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_computer-control"));
    desk.env(&mut cmd);
    cmd.args(["serve", "--platform", "x11"])
        .env_remove("COMPUTER_CONTROL_CONFIG");
    let mut s = Server::start_command(cmd);
    let started = s.start_session(json!({}));
    let surface = &started["surface"];
    assert_eq!(
        (
            &surface["display_width_px"],
            &surface["display_height_px"],
            &surface["scale"]
        ),
        (&json!(1280), &json!(800), &json!(1.0)),
        "{surface}"
    );
    let (w, px) = default_image(&mut s);
    assert_eq!((w, px.len()), (1280, 1280 * 800 * 3));
}
