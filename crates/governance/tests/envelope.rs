//! What a preview puts in the envelope beyond the arguments: the `resource` the action
//! touches (and that it is in the `argsDigest`), and the judgement of a `batch.execute`
//! by every one of its items, the most restrictive deciding. Real kernel on a temp
//! SQLite file, the virtual desktop through the engine.

use crate::support;

use cc_contract::{ActionEnvelope, ArgsDigestInput, ErrorCode, args_digest, format_timestamp};
use cc_desktop::VirtualDesktop;
use cc_engine::Engine;
use cc_engine::config::ConfigStack;
use cc_governance::Governance;
use serde_json::{Map, Value, json};

struct Fx {
    _dir: tempfile::TempDir,
    engine: Engine,
    g: Governance,
    form: Value,
    s: String,
    l: String,
}

/// A kernel whose engine denies `pointer.scroll` by rule.
fn fx() -> Fx {
    let dir = tempfile::tempdir().unwrap();
    let mut config = ConfigStack::new();
    config
        .apply(&json!({"safety": {"rules": [
            {"match": {"tool": "pointer.scroll"}, "effect": "deny"}
        ]}}))
        .unwrap();
    let engine = Engine::new(Box::new(VirtualDesktop::default()), config);
    assert!(engine.start(&json!({})).ok);
    let g = Governance::open(engine.clone(), &dir.path().join("j.db"), "local-user").unwrap();
    let form = support::form(&engine).window;
    let s = g.call("start_session", &json!({})).unwrap().unwrap()["session"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let l = g
        .call(
            "acquire_control_lease",
            &json!({"session_id": s, "kind": "exclusive", "mode": "foreground",
                    "ttl_ms": 60_000, "action_budget": 10}),
        )
        .unwrap()
        .unwrap()["lease"]["leaseId"]
        .as_str()
        .unwrap()
        .to_string();
    Fx {
        _dir: dir,
        engine,
        g,
        form,
        s,
        l,
    }
}

impl Fx {
    fn target(&self) -> Value {
        let w = &self.form;
        json!({"platform": "virtual", "appId": "cc-form", "pid": w["pid"], "windowId": w["id"],
               "bounds": w["rect"], "observationId": "obs-1", "confidence": 1,
               "capturedAt": format_timestamp(time::OffsetDateTime::now_utc())})
    }

    fn action(&self, id: &str, tool: &str, arguments: Value) -> Value {
        json!({"session_id": self.s, "action_id": id, "lease_id": self.l, "tool": tool,
               "arguments": arguments, "mode": "foreground", "target": self.target()})
    }

    fn preview(&self, args: Value) -> Value {
        self.g.call("preview_action", &args).unwrap().unwrap()
    }

    fn refused(&self, tool: &str, args: Value) -> cc_contract::ContractError {
        match self.g.call(tool, &args).unwrap() {
            Ok(v) => panic!("{tool} succeeded: {v}"),
            Err(e) => e,
        }
    }

    fn name_field(&self) -> String {
        support::name_field(&self.engine, &self.form)
    }
}

/// The digest recomputed here from the envelope the preview answered.
fn digest_of(envelope: &Value, arguments: &Value) -> String {
    let e: ActionEnvelope = serde_json::from_value(envelope.clone()).unwrap();
    let args: Map<String, Value> = arguments.as_object().unwrap().clone();
    args_digest(&ArgsDigestInput::from_envelope(&e, &args))
}

#[test]
fn the_resource_names_the_target_app_and_window_and_is_in_the_digest() {
    let x = fx();
    let args = json!({"text": "a"});
    let p = x.preview(x.action("r1", "keyboard_type", args.clone()));
    let env = &p["envelope"];
    assert_eq!(
        env["resource"],
        json!({"targetAppId": "cc-form", "targetWindowId": x.form["id"]})
    );
    assert_eq!(env["argsDigest"], digest_of(env, &args).as_str());
    // The canonical form carries the resource, so another window is another digest.
    let e: ActionEnvelope = serde_json::from_value(env.clone()).unwrap();
    let a = args.as_object().unwrap().clone();
    assert!(
        ArgsDigestInput::from_envelope(&e, &a)
            .canonical()
            .contains(r#""resource":{"targetAppId":"cc-form","targetWindowId":"#)
    );
    let mut without = e.clone();
    without.resource = None;
    assert_ne!(
        args_digest(&ArgsDigestInput::from_envelope(&without, &a)),
        e.args_digest
    );
    // window.focus names its window even without target evidence.
    let mut focus = x.action("r2", "window_focus", json!({"id": x.form["id"]}));
    focus.as_object_mut().unwrap().remove("target");
    let p = x.preview(focus);
    assert_eq!(
        p["envelope"]["resource"],
        json!({"targetWindowId": x.form["id"]})
    );
    // Nothing known: no resource, and the digest prints it as `{}`.
    let look = json!({"session_id": x.s, "tool": "window_list", "mode": "shadow"});
    let p = x.preview(look);
    assert!(p["envelope"].get("resource").is_none(), "{p}");
    let e: ActionEnvelope = serde_json::from_value(p["envelope"].clone()).unwrap();
    assert!(
        ArgsDigestInput::from_envelope(&e, &Map::new())
            .canonical()
            .contains(r#""resource":{}"#)
    );
    // Execute re-previews to the same digest: the receipt carries it.
    let receipt =
        x.g.call(
            "execute_action",
            &x.action("r1", "keyboard_type", args.clone()),
        )
        .unwrap()
        .unwrap()["receipt"]
            .clone();
    assert_eq!(receipt["status"], "committed", "{receipt}");
}

#[test]
fn a_batch_is_judged_by_its_most_restrictive_item() {
    let x = fx();
    // One high-risk item makes the whole batch a confirm (and a privilege change).
    let risky = json!({"items": [
        {"tool": "window.list"},
        {"tool": "keyboard.combo", "arguments": {"keys": ["win", "r"]}}
    ]});
    let p = x.preview(x.action("b1", "batch_execute", risky.clone()));
    assert_eq!(p["policy"]["decision"], "confirm", "{p}");
    assert_eq!(p["blocker"], "approval_required");
    assert_eq!(p["envelope"]["actionClass"], "privilege_change");
    assert_eq!(
        x.refused("execute_action", x.action("b1", "batch_execute", risky))
            .error,
        ErrorCode::ApprovalRequired
    );
    // One denied item denies the batch, naming the item; nothing runs.
    let denied = json!({"items": [
        {"tool": "keyboard.type", "arguments": {"text": "q"}},
        {"tool": "pointer.scroll", "arguments": {"amount": 1}}
    ]});
    let p = x.preview(x.action("b2", "batch_execute", denied.clone()));
    assert_eq!(p["policy"]["decision"], "deny", "{p}");
    assert_eq!(p["blocker"], "policy_denied");
    assert!(
        p["policy"]["reasons"][0]
            .as_str()
            .unwrap()
            .starts_with("item 1 (pointer.scroll)"),
        "{p}"
    );
    assert_eq!(
        x.refused("execute_action", x.action("b2", "batch_execute", denied))
            .error,
        ErrorCode::PolicyDenied
    );
    assert_eq!(x.name_field(), "", "the denied batch never ran");
    // Observations only: not a mutation, so shadow mode is fine and no target needed.
    let look = json!({"session_id": x.s, "tool": "batch_execute", "mode": "shadow",
                      "arguments": {"items": [{"tool": "window.list"}, {"tool": "wait.pause", "arguments": {"ms": 0}}]}});
    let p = x.preview(look);
    assert_eq!(p["executable"], true, "{p}");
    assert_eq!(p["envelope"]["actionClass"], "observe");
    // A mutating item in shadow mode is a shadow mutation, as it would be alone.
    let mut sneaky = x.action(
        "b3",
        "batch_execute",
        json!({"items": [{"tool": "window.list"}, {"tool": "keyboard.type", "arguments": {"text": "q"}}]}),
    );
    sneaky["mode"] = json!("shadow");
    assert_eq!(x.preview(sneaky)["blocker"], "shadow_mutation");
    // Allowed items: the batch commits and each item acted once.
    let fine = json!({"items": [
        {"tool": "keyboard.type", "arguments": {"text": "a"}},
        {"tool": "keyboard.type", "arguments": {"text": "b"}}
    ]});
    let p = x.preview(x.action("b4", "batch_execute", fine.clone()));
    assert_eq!(p["policy"]["decision"], "allow", "{p}");
    assert_eq!(p["envelope"]["actionClass"], "edit_reversible");
    let r =
        x.g.call("execute_action", &x.action("b4", "batch_execute", fine))
            .unwrap()
            .unwrap()["receipt"]
            .clone();
    assert_eq!(r["status"], "committed", "{r}");
    assert_eq!(x.name_field(), "ab");
}

#[test]
fn a_batch_item_that_is_not_a_valid_call_is_invalid_arguments() {
    let x = fx();
    for (items, path) in [
        (json!([{"tool": "no.such.tool"}]), "items[0].tool"),
        (
            json!([{"tool": "window.list"}, {"tool": "batch.execute", "arguments": {"items": [{"tool": "window.list"}]}}]),
            "items[1].tool",
        ),
        (
            json!([{"tool": "keyboard.type", "arguments": {"text": 5}}]),
            "items[0].arguments.text",
        ),
    ] {
        let e = x.refused(
            "preview_action",
            x.action("bad", "batch_execute", json!({"items": items})),
        );
        assert_eq!(e.error, ErrorCode::InvalidArguments, "{e:?}");
        assert_eq!(e.details["issues"][0]["path"], path, "{e:?}");
        // Nothing was judged or journaled for it: the id is still free.
        assert_eq!(
            x.refused(
                "execute_action",
                x.action("bad", "batch_execute", json!({"items": items}))
            )
            .error,
            ErrorCode::InvalidArguments
        );
    }
    let ok = x.g.call(
        "execute_action",
        &x.action(
            "bad",
            "batch_execute",
            json!({"items": [{"tool": "keyboard.type", "arguments": {"text": "z"}}]}),
        ),
    );
    assert_eq!(ok.unwrap().unwrap()["receipt"]["status"], "committed");
}

#[test]
fn typing_into_a_password_field_is_assessed_sensitive_bound_in_the_digest_and_confirmed() {
    let x = fx();
    let typed = |id: &str, role: Option<&str>, labels: Value| {
        let mut a = x.action(id, "keyboard_type", json!({"text": "hunter2"}));
        if let Some(r) = role {
            a["target"]["role"] = json!(r);
        }
        a["data_labels"] = labels;
        a
    };
    let p = x.preview(typed("p1", Some("password_text"), json!([])));
    let env = &p["envelope"];
    let s = &env["targetSensitivity"];
    assert_eq!(s["assessment"], "sensitive", "{p}");
    assert_eq!(s["source"], "accessibility");
    assert_eq!(s["signals"], json!(["secure_role"]));
    assert_eq!(s["fieldsChecked"], 1);
    assert!(s["observedAt"].is_string());
    assert_eq!(p["policy"]["decision"], "confirm");
    assert_eq!(p["blocker"], "approval_required");
    assert_eq!(env["actionClass"], "authentication");
    // The digest binds the assessment (without observedAt: a later preview of the same
    // action has the same digest).
    let args = json!({"text": "hunter2"});
    assert_eq!(env["argsDigest"], digest_of(env, &args).as_str());
    let e: ActionEnvelope = serde_json::from_value(env.clone()).unwrap();
    let a = args.as_object().unwrap().clone();
    assert!(
        ArgsDigestInput::from_envelope(&e, &a)
            .canonical()
            .contains(r#""targetSensitivity":{"#)
    );
    let mut unassessed = e.clone();
    unassessed.target_sensitivity = None;
    assert_ne!(
        args_digest(&ArgsDigestInput::from_envelope(&unassessed, &a)),
        e.args_digest
    );
    let mut later = e.clone();
    if let Some(s) = later.target_sensitivity.as_mut() {
        s.observed_at = "2030-01-01T00:00:00.000Z".into();
    }
    assert_eq!(
        args_digest(&ArgsDigestInput::from_envelope(&later, &a)),
        e.args_digest
    );
    assert_eq!(
        x.refused(
            "execute_action",
            typed("p1", Some("password_text"), json!([]))
        )
        .error,
        ErrorCode::ApprovalRequired
    );
    assert_eq!(x.name_field(), "", "nothing was typed");

    // Another role: not sensitive, allowed; no role: unknown, allowed.
    let p = x.preview(typed("p2", Some("edit"), json!([])));
    assert_eq!(
        p["envelope"]["targetSensitivity"]["assessment"],
        "non_sensitive"
    );
    assert_eq!(p["policy"]["decision"], "allow", "{p}");
    let p = x.preview(typed("p3", None, json!([])));
    let s = &p["envelope"]["targetSensitivity"];
    assert_eq!(s["assessment"], "unknown");
    assert_eq!(s["source"], "unavailable");
    assert_eq!(s["signals"], json!(["native_signal_unavailable"]));
    assert_eq!(p["policy"]["decision"], "allow");
    // Text the caller labels a credential is confirmed wherever it goes.
    let p = x.preview(typed("p4", Some("edit"), json!(["credential"])));
    assert_eq!(p["policy"]["decision"], "confirm", "{p}");
    assert_eq!(p["envelope"]["actionClass"], "authentication");
    // A click is not text entry: no assessment.
    let mut click = x.action("p5", "pointer_click", json!({"x": 1, "y": 1}));
    click["target"]["role"] = json!("password_text");
    assert!(
        x.preview(click)["envelope"]
            .get("targetSensitivity")
            .is_none()
    );
}

#[test]
fn an_approved_batch_with_a_high_risk_item_runs_once_under_its_grant() {
    let x = fx();
    let batch = json!({"items": [
        {"tool": "keyboard.type", "arguments": {"text": "a"}},
        {"tool": "keyboard.combo", "arguments": {"keys": ["win", "r"]}}
    ]});
    let action = x.action("ab1", "batch_execute", batch);
    let p = x.preview(action.clone());
    assert_eq!(p["policy"]["decision"], "confirm", "{p}");
    let preview: cc_contract::ActionPreview = serde_json::from_value(p).unwrap();
    x.g.approve_preview(&preview, 60_000).unwrap();
    let r = x.g.call("execute_action", &action).unwrap().unwrap()["receipt"].clone();
    assert_eq!(r["status"], "committed", "{r}");
    assert_eq!(x.name_field(), "a", "the batch ran once");
    // Its grant was single-use: the replay answers the receipt and types nothing more.
    let again = x.g.call("execute_action", &action).unwrap().unwrap()["receipt"].clone();
    assert_eq!(again, r);
    assert_eq!(x.name_field(), "a");
}

/// The `edit` node named `name` of a snapshot tree: its node id and the centre of its rect.
fn edit_node(tree: &Value, name: &str) -> (u64, (i64, i64)) {
    fn find<'a>(n: &'a Value, name: &str) -> Option<&'a Value> {
        if n["role"] == "edit" && n["name"] == name {
            return Some(n);
        }
        n["children"].as_array()?.iter().find_map(|c| find(c, name))
    }
    let n = find(tree, name).unwrap();
    let r = &n["rect"];
    let c = |i: usize| r[i].as_i64().unwrap();
    (
        n["id"].as_u64().unwrap(),
        ((c(0) + c(2)) / 2, (c(1) + c(3)) / 2),
    )
}

#[test]
fn the_desktop_not_the_agents_evidence_says_whether_a_field_is_a_password_field() {
    let x = fx();
    let snap = x
        .engine
        .call_tool(
            "a11y.snapshot",
            &json!({"window": x.form["id"], "level": "full"}),
        )
        .result
        .unwrap();
    let snapshot_id = snap["snapshot_id"].as_str().unwrap().to_string();
    let (password, password_at) = edit_node(&snap["tree"], "Password");
    let (name, name_at) = edit_node(&snap["tree"], "Name");
    let click = |(x_, y): (i64, i64)| {
        let r = x
            .engine
            .call_tool("pointer.click", &json!({"x": x_, "y": y}));
        assert!(r.ok, "{r:?}");
    };
    // Evidence that claims a plain edit field, and no password state.
    let claimed_edit = |id: &str, tool: &str, arguments: Value| {
        let mut a = x.action(id, tool, arguments);
        a["target"]["role"] = json!("edit");
        a
    };
    let assessed = |p: &Value| p["envelope"]["targetSensitivity"]["assessment"].clone();

    // The focus in the Password field: typing there is a secret, whatever the evidence.
    click(password_at);
    let typed = x.preview(claimed_edit(
        "t1",
        "keyboard_type",
        json!({"text": "hunter2"}),
    ));
    assert_eq!(assessed(&typed), "sensitive", "{typed}");
    assert_eq!(
        typed["envelope"]["targetSensitivity"]["signals"],
        json!(["secure_role"])
    );
    assert_eq!(typed["envelope"]["actionClass"], "authentication");
    assert_eq!(typed["policy"]["decision"], "confirm");
    assert_eq!(typed["blocker"], "approval_required");
    // The operator is shown no secret, although the evidence named no password role.
    let shown = x.g.pending_approvals().unwrap();
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(shown[0].arguments["text"], "[redacted]");
    // Setting the Password node of the latest snapshot, likewise.
    let input = x.preview(claimed_edit(
        "t2",
        "a11y_input",
        json!({"snapshot_id": snapshot_id, "node_id": password, "text": "hunter2"}),
    ));
    assert_eq!(assessed(&input), "sensitive", "{input}");
    assert_eq!(input["policy"]["decision"], "confirm");

    // The Name field, by focus and by node: not a secret.
    click(name_at);
    let typed = x.preview(claimed_edit("t3", "keyboard_type", json!({"text": "ada"})));
    assert_eq!(assessed(&typed), "non_sensitive", "{typed}");
    assert_eq!(typed["policy"]["decision"], "allow");
    let input = x.preview(claimed_edit(
        "t4",
        "a11y_input",
        json!({"snapshot_id": snapshot_id, "node_id": name, "text": "ada"}),
    ));
    assert_eq!(assessed(&input), "non_sensitive", "{input}");

    // Asking did not replace the agent's latest snapshot: its node ids still act.
    let set = x.engine.call_tool(
        "a11y.input",
        &json!({"snapshot_id": snapshot_id, "node_id": name, "text": "ada"}),
    );
    assert!(set.ok, "{set:?}");
    assert_eq!(x.name_field(), "ada");
    // A snapshot that is no longer the latest tells the engine nothing: the evidence's
    // role decides again (`edit`: not sensitive).
    let stale = x.preview(claimed_edit(
        "t5",
        "a11y_input",
        json!({"snapshot_id": snapshot_id, "node_id": password, "text": "hunter2"}),
    ));
    assert_eq!(assessed(&stale), "non_sensitive", "{stale}");
}

/// What `clipboard.read` reads goes to the caller, never into the journal: the receipt
/// keeps its length, in the foreground with a lease and in the shadow without one.
#[test]
fn a_clipboard_read_answers_its_caller_but_the_journal_keeps_only_its_length() {
    const SECRET: &str = "Governed-Clipboard-Secret-31";
    let x = fx();
    assert!(
        x.engine
            .call_tool("clipboard.write", &json!({ "text": SECRET }))
            .ok
    );
    let mut shadow = json!({"session_id": x.s, "action_id": "c2", "tool": "clipboard_read",
                            "arguments": {}, "mode": "shadow"});
    for args in [x.action("c1", "clipboard_read", json!({})), shadow.take()] {
        let done = x.g.call("execute_action", &args).unwrap().unwrap();
        assert_eq!(done["output"]["text"], SECRET, "{done}");
        let kept = &done["receipt"]["result"];
        assert_eq!(kept["text"], "[redacted]", "{done}");
        assert_eq!(kept["text_chars"], SECRET.len(), "{done}");
    }
    // Not a byte of it in the SQLite files (the database and its write-ahead log).
    for entry in std::fs::read_dir(x._dir.path()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        let found = bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes());
        assert!(!found, "the clipboard's text reached the journal");
    }
}
