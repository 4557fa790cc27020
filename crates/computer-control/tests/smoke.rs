//! The smallest end-to-end check: start, act, observe, stop, exit cleanly.

use crate::common;

use common::Server;
use serde_json::json;

#[test]
fn start_click_capture_stop() {
    let mut s = Server::start();
    let started = s.start_session(json!({}));
    assert_eq!(started["platform"], "virtual");
    s.ok("pointer.click", json!({"x": 100, "y": 100}));
    let cap = s.ok("screen.capture", json!({"scale": 0.25}));
    // A quarter of the default 1430-wide canvas.
    assert_eq!(cap["width"], 358);
    let stop = s.call("session.stop", json!(null));
    assert_eq!(stop["result"]["state"], "idle");
    let (status, _) = s.finish();
    assert!(status.success());
}
