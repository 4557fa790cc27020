//! Act and observe in one call: any acting tool's `observe` answers a capture and a
//! snapshot (or its difference) taken after the action, exactly as the observing tools
//! would answer them; each observation passes the gate as its own tool would (a rule
//! that denies captures refuses the observed capture too), and bad observation
//! arguments refuse the action before anything runs.

use crate::common;

use common::{Server, data_url_bytes, decode_png, find_node, issue_paths};
use serde_json::{Value, json};

fn checked(n: &Value) -> bool {
    n["states"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s == "checked")
}

#[test]
fn an_action_answers_the_capture_and_the_snapshot_diff_after_it() {
    let mut s = Server::start();
    s.start_session(common::full_canvas());
    let snap = s.snapshot(json!({"level": "full"}));
    let cb = find_node(&snap["tree"], "checkbox", "Remember me")
        .unwrap()
        .clone();
    let (x, y) = common::center(&cb);
    let r = s.ok(
        "pointer.click",
        json!({"x": x, "y": y, "observe": {
            "capture": {"scale": 0.5, "format": "png"},
            "snapshot": {"level": "full", "diff": true},
        }}),
    );
    assert_eq!(r["button"], "left", "the action's own answer is kept");
    let o = &r["observation"];
    assert_eq!(o["settled"]["stable"], true, "{o}");
    let cap = &o["capture"];
    assert_eq!(cap["width"], 960);
    assert!(cap["frame"].as_u64().unwrap() >= 1);
    let (w, h, _, _) = decode_png(&data_url_bytes(cap["data_url"].as_str().unwrap()));
    assert_eq!((w, h), (960, 540));
    // The diff names the checkbox that changed, by its ref, with states before/after.
    let diff = &o["snapshot"]["diff"];
    assert_eq!(diff["since"], snap["snapshot_id"]);
    assert!(o["snapshot"].get("tree").is_none());
    let changed = diff["changed"].as_array().unwrap();
    let c = changed
        .iter()
        .find(|c| c["ref"] == cb["ref"])
        .unwrap_or_else(|| panic!("{diff}"));
    let [before, after] = [&c["changes"]["states"][0], &c["changes"]["states"][1]];
    assert!(!before.as_array().unwrap().iter().any(|s| s == "checked"));
    assert!(after.as_array().unwrap().iter().any(|s| s == "checked"));
    assert!(diff["added"].as_array().unwrap().is_empty(), "{diff}");
    // The observed snapshot is the latest: its node ids act.
    let sid = o["snapshot"]["snapshot_id"].clone();
    s.ok(
        "a11y.activate",
        json!({"snapshot_id": sid, "node_id": cb["id"]}),
    );
    assert!(!checked(&s.node("checkbox", "Remember me")));
    // The same capture taken separately has the same pixels.
    let alone = s.ok("screen.capture", json!({"scale": 0.5, "format": "png"}));
    assert_eq!(alone["width"], cap["width"]);
}

#[test]
fn a_keyboard_action_observes_too_and_redaction_applies() {
    let mut s = Server::start();
    s.start_session(json!({"capture": {"redact_sensitive": true}}));
    // The session's first snapshot has nothing to differ from: the tree comes.
    let r = s.ok(
        "keyboard.press",
        json!({"key": "end", "observe": {"snapshot": {"diff": true}, "settle_ms": 0}}),
    );
    assert!(r["observation"]["snapshot"]["tree"].is_object(), "{r}");
    assert_eq!(r["observation"]["settled"]["waited_ms"], 0);
    // Type into the name field: the diff shows the value typed.
    s.click_node("edit", "Name");
    let r = s.ok(
        "keyboard.type",
        json!({"text": "Ada", "observe": {"snapshot": {"level": "full", "diff": true}}}),
    );
    let changed = r["observation"]["snapshot"]["diff"]["changed"].clone();
    let name = changed
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["role"] == "edit" && c["name"] == "Name")
        .unwrap_or_else(|| panic!("{changed}"));
    assert_eq!(name["changes"]["value"], json!(["", "Ada"]));
    // The password field shows no value, and its pixels in an observed capture are
    // blacked out like a plain capture's.
    let pw = s.node("edit", "Password");
    let (px, py) = common::center(&pw);
    let r = s.ok(
        "pointer.click",
        json!({"x": px, "y": py, "observe": {"capture": {"format": "png", "size": "canvas"}}}),
    );
    let cap = &r["observation"]["capture"];
    let (w, _, _, rgb) = decode_png(&data_url_bytes(cap["data_url"].as_str().unwrap()));
    let i = ((py as u32 * w + px as u32) * 3) as usize;
    assert_eq!(
        &rgb[i..i + 3],
        &[0, 0, 0],
        "the password field is blacked out"
    );
}

#[test]
fn observations_pass_the_gate_as_their_own_tools() {
    let mut s = Server::start();
    s.start_session(json!({"safety": {"rules": [
        {"match": {"tool": "screen.capture"}, "effect": "deny"},
    ]}}));
    let cb = s.node("checkbox", "Remember me");
    let (x, y) = common::center(&cb);
    let r = s.ok(
        "pointer.click",
        json!({"x": x, "y": y, "observe": {"capture": {}, "snapshot": {"level": "skeleton"}}}),
    );
    let o = &r["observation"];
    assert_eq!(o["capture"]["error"]["code"], "policy_denied", "{o}");
    assert!(o["capture"].get("data_url").is_none());
    assert!(o["snapshot"]["snapshot_id"].is_string(), "{o}");
    assert!(checked(&s.node("checkbox", "Remember me")), "the click ran");
}

#[test]
fn bad_observation_arguments_refuse_the_action_before_it_runs() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let cb = s.node("checkbox", "Remember me");
    let (x, y) = common::center(&cb);
    let e = s.fails(
        "pointer.click",
        json!({"x": x, "y": y, "observe": {"capture": {"scale": 9}, "snapshot": {"level": "huge"}, "settle_ms": -1}}),
        "invalid_arguments",
    );
    let mut paths = issue_paths(&e);
    paths.sort();
    assert_eq!(
        paths,
        [
            "observe.capture.scale",
            "observe.settle_ms",
            "observe.snapshot.level"
        ]
    );
    assert!(!checked(&s.node("checkbox", "Remember me")), "nothing ran");
    // Observing tools and the batch take no observe.
    s.fails(
        "screen.capture",
        json!({"observe": {"capture": {}}}),
        "invalid_arguments",
    );
    s.fails(
        "batch.execute",
        json!({"items": [], "observe": {}}),
        "invalid_arguments",
    );
}
