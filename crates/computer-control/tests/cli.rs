//! The command line (PROTOCOL §1, §9): `--version`, `--help`, `list`, `manifest`,
//! `config-schema`, `check`, config files and `COMPUTER_CONTROL_CONFIG`.

use crate::common;

use std::process::{Command, Output, Stdio};

use common::tempfile_dir::TempDir;
use common::{SPEC_TOOLS, Server};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_computer-control");

fn run(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env("COMPUTER_CONTROL_LOG", "warn")
        .stdin(Stdio::null());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("run computer-control")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

fn json_out(args: &[&str]) -> Value {
    let o = run(args, &[]);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{args:?} is not JSON: {e}"))
}

const EVENTS: [&str; 16] = [
    "session.started",
    "session.stopped",
    "session.resumed",
    "session.configured",
    "session.idle",
    "action.started",
    "action.finished",
    "batch.finished",
    "safety.confirmation_requested",
    "safety.confirmation_resolved",
    "safety.confirmation_expired",
    "safety.confirmation_notice",
    "safety.panic_triggered",
    "safety.panic_released",
    "governance.approval_requested",
    "governance.approval_resolved",
];

#[test]
fn version_and_help() {
    let o = run(&["--version"], &[]);
    assert!(o.status.success());
    assert_eq!(
        stdout(&o).trim(),
        format!("computer-control {}", env!("CARGO_PKG_VERSION"))
    );
    let o = run(&["--help"], &[]);
    assert!(o.status.success());
    let text = stdout(&o);
    for sub in [
        "serve",
        "mcp",
        "check",
        "setup",
        "list",
        "manifest",
        "config-schema",
    ] {
        assert!(text.contains(sub), "--help lacks {sub}: {text}");
    }
    let o = run(&["serve", "--help"], &[]);
    let text = stdout(&o);
    for flag in ["--config", "--transport", "--platform", "--host", "--port"] {
        assert!(text.contains(flag), "serve --help lacks {flag}");
    }
    // `mcp` takes serve's options but the transport's and HTTP's.
    let o = run(&["mcp", "--help"], &[]);
    let text = stdout(&o);
    for flag in [
        "--config",
        "--platform",
        "--journal",
        "--principal-id",
        "--operator-listen",
    ] {
        assert!(text.contains(flag), "mcp --help lacks {flag}");
    }
    assert!(
        !text
            .lines()
            .any(|l| l.trim_start().starts_with("--transport")),
        "{text}"
    );
    let o = run(&["mcp", "--transport", "mcp"], &[]);
    assert_eq!(o.status.code(), Some(2), "mcp refuses --transport");
    // A wrong subcommand fails with usage on stderr, nothing on stdout.
    let o = run(&["frobnicate"], &[]);
    assert!(!o.status.success());
    assert!(o.stdout.is_empty());
    assert!(!stderr(&o).is_empty());
}

#[test]
fn list_text_and_json() {
    let o = run(&["list"], &[]);
    assert!(o.status.success());
    let text = stdout(&o);
    for t in SPEC_TOOLS.iter().chain(EVENTS.iter()) {
        assert!(text.contains(t), "list lacks {t}");
    }
    assert!(!text.contains("session.confirm"));
    let v = json_out(&["list", "--json"]);
    let tools: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, SPEC_TOOLS);
    let vocabularies: Vec<&str> = v["vocabularies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        vocabularies,
        ["anthropic.computer", "openai.computer", "gemini.computer"]
    );
    for name in &vocabularies {
        assert!(text.contains(name), "list lacks {name}");
    }
    let events: Vec<&str> = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(events, EVENTS);
    for e in v["events"].as_array().unwrap() {
        assert!(e["summary"].as_str().is_some_and(|s| !s.is_empty()));
    }
    for t in v["tools"].as_array().unwrap() {
        assert!(t["risk"].is_string() && t["parameters"].is_object(), "{t}");
    }
}

#[test]
fn manifest_equals_the_checked_in_file() {
    let printed = json_out(&["manifest"]);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../manifest.json");
    let file: Value = serde_json::from_str(
        &std::fs::read_to_string(path).expect("manifest.json at the repository root"),
    )
    .expect("manifest.json is JSON");
    assert_eq!(
        printed, file,
        "manifest.json is stale: regenerate it with `computer-control manifest > manifest.json`"
    );
    assert_eq!(printed["schema_version"], 1);
    assert_eq!(printed["id"], "computer-control");
    assert_eq!(printed["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        printed["entry"],
        json!({"command": ["computer-control", "serve"], "working_directory": "."})
    );
    assert_eq!(
        printed["transport"],
        json!({"type": "stdio-jsonrpc", "framing": "line-delimited-json", "encoding": "utf-8", "protocol_version": "2.0"})
    );
    assert_eq!(
        printed["lifecycle"],
        json!({"start": "session.start", "stop": "session.stop"})
    );
    let names: Vec<&str> = printed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, SPEC_TOOLS);
    assert!(
        !printed["tools"].to_string().contains("confirm\""),
        "no confirmation tool"
    );
    assert!(names.iter().all(|n| !n.contains("confirm")));
    for t in printed["tools"].as_array().unwrap() {
        for k in ["name", "summary", "risk", "parameters"] {
            assert!(t.get(k).is_some(), "{t} lacks {k}");
        }
    }
    assert_eq!(printed["config_schema"], json_out(&["config-schema"]));
    for k in ["name", "description", "license"] {
        assert!(printed[k].as_str().is_some_and(|s| !s.is_empty()), "{k}");
    }
}

/// Every object schema (with `properties`) is closed.
fn assert_closed(schema: &Value, path: &str, count: &mut usize) {
    match schema {
        Value::Object(m) => {
            if m.get("type") == Some(&json!("object")) || m.contains_key("properties") {
                assert_eq!(
                    m.get("additionalProperties"),
                    Some(&json!(false)),
                    "open object at {path}"
                );
                *count += 1;
            }
            for (k, v) in m {
                assert_closed(v, &format!("{path}/{k}"), count);
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                assert_closed(v, &format!("{path}/{i}"), count);
            }
        }
        _ => {}
    }
}

#[test]
fn config_schema_is_closed_at_every_depth() {
    let s = json_out(&["config-schema"]);
    assert!(s["$schema"].as_str().unwrap().contains("json-schema.org"));
    assert_eq!(s["type"], "object");
    let sections: Vec<&str> = s["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    for sec in ["platform", "capture", "safety", "a11y", "runtime", "http"] {
        assert!(sections.contains(&sec), "no section {sec}");
    }
    let mut objects = 0;
    assert_closed(&s, "#", &mut objects);
    // root, 6 sections, a display, a rule, its match, argument and window.
    assert!(objects >= 12, "only {objects} object schemas");
    let cap = &s["properties"]["capture"]["properties"];
    assert_eq!(cap["default_width"]["default"], "auto");
    assert_eq!(
        cap["default_width"]["oneOf"],
        json!([{"type": "string", "const": "auto"},
               {"type": "integer", "minimum": 1, "maximum": 16384}])
    );
    assert_eq!(
        s["properties"]["runtime"]["properties"]["batch_gap_ms"]["default"],
        150
    );
    // Tool parameter schemas are closed too.
    let m = json_out(&["manifest"]);
    for t in m["tools"].as_array().unwrap() {
        let mut n = 0;
        assert_closed(&t["parameters"], t["name"].as_str().unwrap(), &mut n);
        assert!(n >= 1);
    }
}

#[test]
fn check_exits_zero() {
    let o = run(&["check"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).is_empty());
    let v = json_out(&["check", "--json"]);
    assert!(v.is_object());
}

fn write(dir: &TempDir, name: &str, text: &str) -> String {
    let p = dir.0.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().to_string()
}

#[test]
fn bad_config_files_fail_before_serving() {
    let dir = TempDir::new();
    let unknown = write(&dir, "unknown.json", r#"{"capture": {"bogus": 1}}"#);
    let badtype = write(
        &dir,
        "badtype.json",
        r#"{"runtime": {"max_wait_ms": "soon"}}"#,
    );
    let invalid = write(&dir, "invalid.json", "{ not json");
    let notobj = write(&dir, "array.json", "[1, 2]");
    let missing = dir.0.join("missing.json").to_string_lossy().to_string();
    for (path, needle) in [
        (&unknown, "capture.bogus"),
        (&badtype, "runtime.max_wait_ms"),
        (&invalid, "not valid JSON"),
        (&notobj, "object"),
        (&missing, "cannot read"),
    ] {
        for how in ["flag", "env"] {
            let o = if how == "flag" {
                run(&["serve", "--platform", "virtual", "--config", path], &[])
            } else {
                run(
                    &["serve", "--platform", "virtual"],
                    &[("COMPUTER_CONTROL_CONFIG", path.as_str())],
                )
            };
            assert!(!o.status.success(), "{path} via {how} was accepted");
            assert!(
                o.stdout.is_empty(),
                "stdout must stay clean: {:?}",
                stdout(&o)
            );
            let err = stderr(&o);
            assert!(
                err.contains(needle),
                "{how} {path}: stderr lacks {needle:?}: {err}"
            );
            assert!(err.contains(path.as_str()), "stderr names the file: {err}");
        }
    }
}

#[test]
fn config_file_from_the_environment_and_blank_means_none() {
    let dir = TempDir::new();
    let path = write(&dir, "cfg.json", r#"{"capture": {"default_width": 800}}"#);
    let mut s = Server::start_env(None, &[], &[("COMPUTER_CONTROL_CONFIG", path.as_str())]);
    let r = s.start_session(json!({}));
    assert_eq!(r["surface"]["display_width_px"], 800);
    drop(s);
    for blank in ["", "   "] {
        let mut s = Server::start_env(None, &[], &[("COMPUTER_CONTROL_CONFIG", blank)]);
        let r = s.start_session(json!({}));
        assert_eq!(
            r["surface"]["display_width_px"], 1430,
            "{blank:?} means no file"
        );
    }
    // --config wins over the environment.
    let other = write(&dir, "other.json", r#"{"capture": {"default_width": 640}}"#);
    let mut s = Server::start_env(
        None,
        &["--config", other.as_str()],
        &[("COMPUTER_CONTROL_CONFIG", path.as_str())],
    );
    let r = s.start_session(json!({}));
    assert_eq!(r["surface"]["display_width_px"], 640);
    // session.start params layer over the file.
    s.method_ok("session.stop", json!(null));
    let r = s.start_session(json!({"capture": {"default_width": 320}}));
    assert_eq!(r["surface"]["display_width_px"], 320);
}

#[test]
fn serve_exits_cleanly_when_stdin_closes() {
    let mut s = Server::start();
    s.start_session(json!({}));
    s.ok("pointer.move", json!({"x": 1, "y": 1}));
    let (status, lines) = s.finish();
    assert!(status.success());
    // Closing stdin ends the session: its stop is announced.
    let stopped = lines
        .iter()
        .any(|l| matches!(l, common::Out::Json(v) if v["params"]["type"] == "session.stopped"));
    assert!(stopped);
}
