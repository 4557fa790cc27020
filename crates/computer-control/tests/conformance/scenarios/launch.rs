//! `app.launch` (PROTOCOL §4): listed as available where the desk can launch; an
//! application the operator did not list waits for a person (high risk), one listed
//! runs at once; each is a window of its own with the launched pid, running on this
//! desk; a deny rule holds whatever the list says.

use serde_json::json;

use super::{can, listed};
use crate::conformance::desk::{Desk, serve, window_where};

pub fn app_launch_asks_first_unless_listed_and_a_deny_rule_holds<D: Desk>() {
    let mut desk = D::start();
    let mut s = serve(&desk, "info", None);
    s.start_session(json!({}));
    if !can(&desk, &mut s, "launch") {
        return;
    }
    let list = s.method_ok("tools.list", json!({}));
    assert_eq!(listed(&list, "app.launch")["available"], true);
    let app = desk.launchable();

    // Unlisted: high risk, a person confirms first.
    let env = s.tool("app.launch", json!({"app": app}));
    let parked = &env["result"];
    assert_eq!(parked["status"], "awaiting_confirmation", "{env}");
    assert_eq!(parked["risk"], "high", "{env}");
    let id = parked["request_id"].clone();
    let ok = s.call(
        "session.confirm",
        json!({"request_id": id, "approve": true}),
    );
    assert_eq!(ok["ok"], true, "{ok}");
    let fin = s
        .wait_event_matching("action.finished", 0, |p| p["request_id"] == id)
        .1;
    let launched = fin["payload"]["envelope"]["result"].clone();
    assert_eq!(launched["app"], app, "{fin}");
    let pid = launched["pid"].as_u64().unwrap_or_default();
    assert!(pid > 0, "{fin}");
    let w = window_where(&mut s, app, |w| w["pid"] == pid);
    desk.check_launched(&mut s, &w, pid);

    // Listed by the operator: runs at once.
    let env = s.call(
        "session.configure",
        json!({"apps": {"launch_allowed": [app]}}),
    );
    assert_eq!(env["ok"], true, "{env}");
    let r = s.ok("app.launch", json!({"app": app}));
    let pid = r["pid"].as_u64().unwrap_or_default();
    assert!(pid > 0, "{r}");
    let w = window_where(&mut s, app, |w| w["pid"] == pid);
    desk.check_launched(&mut s, &w, pid);

    // A deny rule holds whatever the list says.
    let env = s.call(
        "session.configure",
        json!({"apps": {"launch_allowed": [app]},
               "safety": {"rules": [{"match": {"tool": "app.launch"}, "effect": "deny"}]}}),
    );
    assert_eq!(env["ok"], true, "{env}");
    s.fails("app.launch", json!({"app": app}), "policy_denied");
}
