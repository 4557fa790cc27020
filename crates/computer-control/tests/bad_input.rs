//! The bad-input corpus: every malformed line, bad request and bad argument is
//! answered as PROTOCOL §1/§3 say, and the server keeps answering valid requests after
//! each one.

use crate::common;

use std::time::Duration;

use common::{Out, Server, issue_paths};
use serde_json::{Value, json};

const QUIET: Duration = Duration::from_millis(150);

/// A protocol-level error: checks code and id, returns the message.
fn assert_rpc_error(resp: &Value, code: i64, id: Value) -> String {
    assert_eq!(resp["jsonrpc"], "2.0", "{resp}");
    assert_eq!(resp["id"], id, "{resp}");
    assert!(resp.get("result").is_none(), "{resp}");
    assert_eq!(resp["error"]["code"], code, "{resp}");
    resp["error"]["message"]
        .as_str()
        .expect("error message")
        .to_string()
}

/// A valid request right after: it gets its own answer.
fn still_answers(s: &mut Server) {
    let r = s.request("system.status", json!(null));
    assert_eq!(r["result"]["ok"], true, "{r}");
}

#[test]
fn malformed_json_is_a_parse_error_with_null_id() {
    let mut s = Server::start();
    for line in [
        &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"[..],
        b"not json at all",
        b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"system.status\"}}",
        b"{'jsonrpc':'2.0'}",
        b"[1,2",
        b"\"unterminated",
        b"{\"a\":1,}",
    ] {
        let r = s.raw_request(line);
        let msg = assert_rpc_error(&r, -32700, Value::Null);
        assert!(msg.to_lowercase().contains("parse"), "{msg}");
        still_answers(&mut s);
    }
}

#[test]
fn invalid_utf8_is_a_parse_error() {
    let mut s = Server::start();
    for line in [
        &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"system.status\",\"params\":{\"x\":\"\xff\xfe\"}}"[..],
        b"\xc3\x28",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sys\xed\xa0\x80\"}",
    ] {
        let r = s.raw_request(line);
        assert_rpc_error(&r, -32700, Value::Null);
        still_answers(&mut s);
    }
}

#[test]
fn blank_lines_are_ignored() {
    let mut s = Server::start();
    s.send_raw(b"\n\n   \t  \n\r\n \r\n");
    s.expect_no_response(QUIET);
    // A valid request after them is answered, and nothing else is.
    let id = s.send("system.status", json!(null));
    let r = s.response(id);
    assert_eq!(r["result"]["ok"], true);
    s.expect_no_response(QUIET);
    // CRLF line endings and surrounding whitespace are fine.
    s.send_raw(b"  {\"jsonrpc\":\"2.0\",\"id\":\"crlf\",\"method\":\"system.status\"}  \r\n");
    let r = s.next_response();
    assert_eq!(r["id"], "crlf");
    assert_eq!(r["result"]["ok"], true);
}

#[test]
fn a_line_over_ten_mib_is_refused_and_the_server_goes_on() {
    let mut s = Server::start();
    let mut big =
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"system.status\",\"params\":{\"p\":\"".to_vec();
    big.resize(10 * 1024 * 1024 + 64, b'a');
    big.extend_from_slice(b"\"}}");
    let r = s.raw_request(&big);
    let msg = assert_rpc_error(&r, -32600, Value::Null);
    assert!(msg.contains("10 MiB"), "{msg}");
    still_answers(&mut s);
    // A large line under the limit is an ordinary request (here: 5 MiB of spaces).
    let mut ok = b"{\"jsonrpc\":\"2.0\",\"id\":\"big\",\"method\":\"system.status\"".to_vec();
    ok.resize(ok.len() + 5 * 1024 * 1024, b' ');
    ok.push(b'}');
    let r = s.raw_request(&ok);
    assert_eq!(r["id"], "big");
    assert_eq!(r["result"]["ok"], true);
}

#[test]
fn params_must_be_an_object() {
    let mut s = Server::start();
    for params in [json!([1, 2]), json!(5), json!("x"), json!(true)] {
        let line = json!({"jsonrpc": "2.0", "id": 7, "method": "system.status", "params": params});
        let r = s.raw_request(line.to_string().as_bytes());
        assert_rpc_error(&r, -32602, json!(7));
        still_answers(&mut s);
    }
    // Absent or null params are fine.
    let r = s.raw_request(br#"{"jsonrpc":"2.0","id":8,"method":"system.status","params":null}"#);
    assert_eq!(r["result"]["ok"], true);
}

#[test]
fn bad_envelopes_are_invalid_requests() {
    let mut s = Server::start();
    for (line, id) in [
        (json!({"id": 1, "method": "system.status"}), json!(1)),
        (
            json!({"jsonrpc": "1.0", "id": 2, "method": "system.status"}),
            json!(2),
        ),
        (
            json!({"jsonrpc": 2.0, "id": 3, "method": "system.status"}),
            json!(3),
        ),
        (json!({"jsonrpc": "2.0", "id": 4, "method": 5}), json!(4)),
        (json!({"jsonrpc": "2.0", "id": 5, "method": null}), json!(5)),
        (json!({"jsonrpc": "2.0", "id": 6}), json!(6)),
        (
            json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "system.status"}),
            json!(null),
        ),
        (
            json!({"jsonrpc": "2.0", "id": [1], "method": "system.status"}),
            json!(null),
        ),
        (
            json!({"jsonrpc": "2.0", "id": true, "method": "system.status"}),
            json!(null),
        ),
        (json!(42), json!(null)),
        (json!("system.status"), json!(null)),
        (json!(null), json!(null)),
    ] {
        let r = s.raw_request(line.to_string().as_bytes());
        assert_rpc_error(&r, -32600, id);
        still_answers(&mut s);
    }
    // A null id is an id (not a notification): answered, with id null.
    let r = s.raw_request(br#"{"jsonrpc":"2.0","id":null,"method":"system.status"}"#);
    assert_eq!(r["id"], Value::Null);
    assert_eq!(r["result"]["ok"], true, "{r}");
    // Ids of any valid type are echoed as given.
    for id in [json!("abc"), json!(1.5), json!(-3), json!(0), json!("")] {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": "system.status"});
        let r = s.raw_request(line.to_string().as_bytes());
        assert_eq!(r["id"], id, "{r}");
        assert_eq!(r["result"]["ok"], true);
    }
}

#[test]
fn batches_answer_requests_only_in_one_line() {
    let mut s = Server::start();
    // An empty batch is one invalid request (not an array).
    let r = s.raw_request(b"[]");
    assert!(r.is_object(), "{r}");
    assert_rpc_error(&r, -32600, Value::Null);
    still_answers(&mut s);

    let lines_before = s.lines.len();
    let batch = json!([
        {"jsonrpc": "2.0", "id": 10, "method": "system.status"},
        {"jsonrpc": "2.0", "method": "tools.list"},
        {"jsonrpc": "2.0", "id": 11, "method": "tools.list"},
        {"jsonrpc": "2.0", "id": 12, "method": "no.such.method"},
        7
    ]);
    let r = s.raw_request(batch.to_string().as_bytes());
    let arr = r.as_array().expect("a batch is answered with an array");
    let ids: Vec<Value> = arr.iter().map(|x| x["id"].clone()).collect();
    assert_eq!(ids, vec![json!(10), json!(11), json!(12), Value::Null]);
    assert_eq!(arr[0]["result"]["meta"]["tool"], "system.status");
    assert_eq!(
        arr[1]["result"]["result"]["tools"]
            .as_array()
            .unwrap()
            .len(),
        common::SPEC_TOOLS.len()
    );
    assert_rpc_error(&arr[2], -32601, json!(12));
    assert_rpc_error(&arr[3], -32600, Value::Null);
    // One line holds the whole answer.
    let answer_lines = s.lines[lines_before..]
        .iter()
        .filter(|l| matches!(l, Out::Json(v) if v.get("method").is_none()))
        .count();
    assert_eq!(answer_lines, 1);
    s.expect_no_response(QUIET);

    // A batch of notifications only is not answered at all; but it runs.
    s.start_session(json!({}));
    let batch = json!([
        {"jsonrpc": "2.0", "method": "control.panic", "params": {"on": true}},
        {"jsonrpc": "2.0", "method": "system.status"}
    ]);
    s.send_raw(format!("{batch}\n").as_bytes());
    s.wait_event("safety.panic_triggered");
    s.expect_no_response(QUIET);
    assert_eq!(s.status()["state"], "stopped");
}

#[test]
fn notifications_run_but_are_never_answered() {
    let mut s = Server::start();
    s.notify("session.start", json!({}));
    s.wait_event("session.started");
    s.notify("control.panic", json!({"on": true}));
    let ev = s.wait_event("safety.panic_triggered");
    assert_eq!(ev["payload"]["source"], "protocol");
    // Even bad notifications get no answer.
    s.notify("no.such.method", json!({}));
    s.send_raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"system.status\",\"params\":[1]}\n");
    s.notify("tools.call", json!({"tool": "nope"}));
    s.expect_no_response(QUIET);
    assert_eq!(s.status()["state"], "stopped", "the notification ran");
    s.notify("control.panic", json!({"on": false}));
    s.wait_event("safety.panic_released");
    assert_eq!(s.status()["state"], "ready");
}

#[test]
fn unknown_methods_and_tools() {
    let mut s = Server::start();
    for m in [
        "session.bogus",
        "event",
        "tools.call ",
        "",
        "SYSTEM.STATUS",
        "rpc.discover",
    ] {
        let r = s.request(m, json!({}));
        assert_rpc_error(&r, -32601, r["id"].clone());
        still_answers(&mut s);
    }
    s.start_session(json!({}));
    for t in [
        "nope",
        "screen.Capture",
        "pointer_click",
        "session.confirm",
        "",
    ] {
        let env = s.call("tools.call", json!({"tool": t, "arguments": {}}));
        let code = env["error"]["code"].as_str().unwrap_or_default();
        if t.is_empty() {
            assert_eq!(code, "invalid_arguments", "{env}");
        } else {
            assert_eq!(code, "unknown_tool", "{t}: {env}");
        }
    }
    still_answers(&mut s);
}

#[test]
fn invalid_arguments_list_every_problem_with_paths() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let err = s.fails(
        "pointer.click",
        json!({"x": "left", "y": true, "button": "side", "times": 9, "hold_ms": -1, "bogus": 1, "frame": "f"}),
        "invalid_arguments",
    );
    let mut paths = issue_paths(&err);
    paths.sort();
    assert_eq!(
        paths,
        ["bogus", "button", "frame", "hold_ms", "times", "x", "y"]
    );
    let err = s.fails(
        "pointer.drag",
        json!({"from": {"x": 1}, "to": {"x": "q", "y": 2, "z": 3}, "steps": 0}),
        "invalid_arguments",
    );
    let mut paths = issue_paths(&err);
    paths.sort();
    assert_eq!(paths, ["from.y", "steps", "to.x", "to.z"]);
    let err = s.fails(
        "screen.capture",
        json!({"region": {"x": 0}, "format": "gif", "quality": 0, "scale": 2}),
        "invalid_arguments",
    );
    let mut paths = issue_paths(&err);
    paths.sort();
    assert_eq!(
        paths,
        [
            "format",
            "quality",
            "region.height",
            "region.width",
            "region.y",
            "scale"
        ]
    );
    let err = s.fails("screen.capture", json!([1]), "invalid_arguments");
    assert_eq!(issue_paths(&err), ["$"]);
    let err = s.fails(
        "keyboard.type",
        json!({"text": 5, "submit": "yes"}),
        "invalid_arguments",
    );
    let mut paths = issue_paths(&err);
    paths.sort();
    assert_eq!(paths, ["submit", "text"]);
    // The message summarises, the issues carry messages.
    assert!(err["message"].as_str().unwrap().contains("text"));
    still_answers(&mut s);
}

#[test]
fn out_of_range_and_non_finite_numbers() {
    let mut s = Server::start();
    s.start_session(json!({}));
    for (tool, args, path) in [
        ("pointer.click", json!({"times": 4}), "times"),
        ("pointer.click", json!({"times": 0}), "times"),
        ("pointer.click", json!({"times": 1.5}), "times"),
        ("pointer.click", json!({"hold_ms": 10001}), "hold_ms"),
        (
            "pointer.move",
            json!({"x": 1, "y": 1, "steps": 201}),
            "steps",
        ),
        ("pointer.scroll", json!({"amount": 101}), "amount"),
        ("pointer.scroll", json!({"amount": -101}), "amount"),
        ("screen.capture", json!({"scale": 0.05}), "scale"),
        ("screen.capture", json!({"quality": 101}), "quality"),
        ("wait.pause", json!({"ms": 600001}), "ms"),
        (
            "keyboard.type",
            json!({"text": "x", "interval_ms": 1001}),
            "interval_ms",
        ),
        // Non-finite numbers, as strings (JSON has no literal for them).
        ("pointer.move", json!({"x": "NaN", "y": 1}), "x"),
        ("pointer.move", json!({"x": 1, "y": "Infinity"}), "y"),
        ("pointer.move", json!({"x": "-inf", "y": 1}), "x"),
        ("screen.capture", json!({"scale": "nan"}), "scale"),
        ("wait.pause", json!({"ms": "inf"}), "ms"),
    ] {
        let err = s.fails(tool, args.clone(), "invalid_arguments");
        assert_eq!(issue_paths(&err), [path], "{tool} {args}");
    }
    // The literal 1e999 is valid JSON syntax but no number a double holds: a parse
    // error (-32700), still answered with the request's id, and nothing runs.
    let r = s.raw_request(
        br#"{"jsonrpc":"2.0","id":77,"method":"tools.call","params":{"tool":"pointer.move","arguments":{"x":1e999,"y":-1E+400}}}"#,
    );
    assert_eq!(r["id"], 77, "{r}");
    assert_eq!(r["error"]["code"], -32700, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too large")
    );
    // Never typed as "Infinity".
    let r = s.raw_request(
        br#"{"jsonrpc":"2.0","id":79,"method":"tools.call","params":{"tool":"keyboard.type","arguments":{"text":1e999}}}"#,
    );
    assert_eq!(r["error"]["code"], -32700, "{r}");
    // In a string it is just text.
    let r = s.raw_request(
        br#"{"jsonrpc":"2.0","id":78,"method":"tools.call","params":{"tool":"keyboard.type","arguments":{"text":"1e999"}}}"#,
    );
    assert_eq!(r["result"]["result"]["chars"], 5, "{r}");
    still_answers(&mut s);
}

#[test]
fn documented_coercions_are_accepted() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let r = s.ok(
        "pointer.click",
        json!({"x": "100", "y": " 200 ", "times": "2", "button": null}),
    );
    assert_eq!(r["position"], json!({"x": 100, "y": 200}));
    assert_eq!(r["times"], 2);
    assert_eq!(r["button"], "left", "null means the default");
    let (_, _, _, ct, _) = s.capture_png(json!({"scale": "0.1", "grayscale": "1"}));
    assert_eq!(ct, png::ColorType::Grayscale);
    let (_, _, _, ct, _) = s.capture_png(json!({"scale": 0.1, "grayscale": "0"}));
    assert_eq!(ct, png::ColorType::Rgb);
    let (_, _, _, ct, _) = s.capture_png(json!({"scale": 0.1, "grayscale": "true"}));
    assert_eq!(ct, png::ColorType::Grayscale);
    let (r, w, _, ct, _) = s.capture_png(json!({
        "scale": null, "grayscale": "false", "display": null, "quality": null,
        "region": {"x": 0, "y": 0, "width": 200, "height": 100}
    }));
    assert_eq!((w, ct), (200, png::ColorType::Rgb));
    assert_eq!(r["image_scale"], 1.0);
    let r = s.ok(
        "keyboard.type",
        json!({"text": "", "submit": "0", "interval_ms": "0"}),
    );
    assert_eq!(r, json!({"chars": 0, "submit": false}));
    let r = s.ok("wait.pause", json!({"ms": "5"}));
    assert_eq!(r, json!({"waited_ms": 5}));
    let r = s.ok("pointer.scroll", json!({"amount": "-1", "axis": null}));
    assert_eq!(r, json!({"axis": "vertical", "amount": -1}));
    // Numbers are not booleans, and "yes" is not a boolean.
    s.fails(
        "screen.capture",
        json!({"grayscale": 1}),
        "invalid_arguments",
    );
    s.fails(
        "screen.capture",
        json!({"grayscale": "yes"}),
        "invalid_arguments",
    );
    // Booleans are not numbers.
    s.fails("wait.pause", json!({"ms": true}), "invalid_arguments");
}

#[test]
fn cross_field_and_desktop_checks() {
    let mut s = Server::start();
    s.start_session(json!({}));
    // Duplicate keys in a combo.
    let err = s.fails(
        "keyboard.combo",
        json!({"keys": "ctrl+c+ctrl"}),
        "invalid_arguments",
    );
    assert_eq!(issue_paths(&err), ["keys[2]"]);
    // x without y and y without x.
    let err = s.fails("pointer.click", json!({"x": 5}), "invalid_arguments");
    assert_eq!(issue_paths(&err), ["y"]);
    let err = s.fails("pointer.click", json!({"y": 5}), "invalid_arguments");
    assert_eq!(issue_paths(&err), ["x"]);
    let err = s.fails(
        "pointer.scroll",
        json!({"amount": 1, "x": 5}),
        "invalid_arguments",
    );
    assert_eq!(issue_paths(&err), ["y"]);
    s.fails("pointer.move", json!({"x": 5}), "invalid_arguments");
    // A region outside the canvas, an unknown display.
    let err = s.fails(
        "screen.capture",
        json!({"region": {"x": 0, "y": 2000, "width": 10, "height": 10}}),
        "invalid_arguments",
    );
    assert_eq!(issue_paths(&err), ["region"]);
    let err = s.fails(
        "screen.capture",
        json!({"region": {"x": -100, "y": 0, "width": 100, "height": 10}}),
        "invalid_arguments",
    );
    assert_eq!(issue_paths(&err), ["region"]);
    s.fails(
        "screen.capture",
        json!({"region": {"x": 0, "y": 0, "width": 0, "height": 10}}),
        "invalid_arguments",
    );
    let err = s.fails(
        "screen.capture",
        json!({"display": "0", "region": {"x": 0, "y": 0, "width": 10, "height": 10}}),
        "invalid_arguments",
    );
    assert_eq!(
        issue_paths(&err),
        ["display"],
        "region and display exclude each other"
    );
    let err = s.fails(
        "screen.capture",
        json!({"display": "HDMI-9"}),
        "invalid_arguments",
    );
    assert_eq!(issue_paths(&err), ["display"]);
    s.fails(
        "screen.capture",
        json!({"display": ""}),
        "invalid_arguments",
    );
    still_answers(&mut s);
}

#[test]
fn after_the_whole_corpus_the_server_is_alive_and_exits_cleanly() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let corpus: Vec<&[u8]> = vec![
        b"{",
        b"\xff\xfe\xfd",
        b"",
        b"   ",
        b"[]",
        b"[{}]",
        b"{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"method\":\"system.status\",\"params\":[]}",
        b"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"system.status\"}",
        b"{\"jsonrpc\":\"2.0\",\"id\":\"c2\",\"method\":\"nope\"}",
        b"{\"jsonrpc\":\"2.0\",\"id\":\"c3\",\"method\":\"tools.call\",\"params\":{\"tool\":\"pointer.click\",\"arguments\":{\"x\":1e999}}}",
        b"{\"jsonrpc\":\"2.0\",\"id\":\"c4\",\"method\":\"tools.call\",\"params\":{\"tool\":\"pointer.click\",\"arguments\":{\"x\":\"NaN\",\"y\":1}}}",
        b"{\"jsonrpc\":\"2.0\",\"method\":\"tools.call\",\"params\":{\"tool\":\"wait.pause\",\"arguments\":{\"ms\":1}}}",
        b"\x00\x01\x02",
        b"null",
        b"{\"jsonrpc\":\"2.0\",\"id\":\"c5\",\"method\":\"session.start\",\"params\":{\"config\":{\"capture\":{\"bogus\":1}}}}",
    ];
    for line in &corpus {
        let mut l = line.to_vec();
        l.push(b'\n');
        s.send_raw(&l);
    }
    // Everything owed is answered, in order, and a status after the corpus works.
    let id = s.send("system.status", json!(null));
    let last = s.response(id);
    assert_eq!(last["result"]["result"]["state"], "ready", "{last}");
    s.method_ok("session.stop", json!(null));
    let (status, lines) = s.finish();
    assert!(status.success(), "exit status {status:?}");
    for l in &lines {
        assert!(matches!(l, Out::Json(_)), "non-JSON stdout line: {l:?}");
    }
    let responses = lines
        .iter()
        .filter(|l| matches!(l, Out::Json(v) if v.get("method").is_none()))
        .count();
    // session.start + every corpus line but "", "   " and the notification + the
    // status + session.stop.
    assert_eq!(responses, 1 + (corpus.len() - 3) + 2);
}
