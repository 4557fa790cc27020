//! The governed MCP tools (`Governance::call`) over an engine on the virtual desktop and
//! a fresh SQLite journal: whatever the arguments, no call panics, every failure is a
//! contract error that survives its wire form, and every session's hash chain still
//! verifies afterwards.

use std::sync::mpsc;
use std::time::Duration;

use cc_contract::{ContractError, format_timestamp};
use cc_desktop::VirtualDesktop;
use cc_engine::Engine;
use cc_engine::config::ConfigStack;
use cc_governance::{GOVERNED_TOOLS, Governance, governed_tool};
use serde_json::{Map, Value, json};

/// How long one call may run before the watchdog engages the emergency stop (a
/// governed action may wait or type for long; the stop ends it).
const WATCHDOG: Duration = Duration::from_millis(150);

/// The most calls one input makes.
const MAX_STEPS: usize = 12;

/// Ids the input refers to by placeholder, filled from earlier results.
#[derive(Default)]
struct Ids {
    vars: Map<String, Value>,
    sessions: Vec<String>,
}

impl Ids {
    /// Replaces `"$session"`, `"$lease"`, `"$reservation"`, `"$action"`, `"$grant"`,
    /// `"$window"`, `"$pid"`, `"$bounds"` (the sign-in form's) and `"$now"` anywhere in `v` by the latest such value.
    fn fill(&self, v: &mut Value) {
        match v {
            Value::String(s) if s.starts_with('$') => {
                if s == "$now" {
                    *v = json!(format_timestamp(time::OffsetDateTime::now_utc()));
                } else if let Some(x) = self.vars.get(&s[1..]) {
                    *v = x.clone();
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| self.fill(i)),
            Value::Object(m) => m.values_mut().for_each(|i| self.fill(i)),
            _ => {}
        }
    }

    /// Remembers the ids a result carries.
    fn learn(&mut self, tool: &str, v: &Value) {
        for (key, var) in [
            ("sessionId", "session"),
            ("leaseId", "lease"),
            ("reservationId", "reservation"),
            ("actionId", "action"),
            ("approvalGrantId", "grant"),
        ] {
            if let Some(id) = find_key(v, key) {
                if var == "session"
                    && tool == "start_session"
                    && let Some(s) = id.as_str()
                {
                    self.sessions.push(s.to_string());
                }
                self.vars.insert(var.into(), id.clone());
            }
        }
    }
}

fn find_key<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    match v {
        Value::Object(m) => m
            .get(key)
            .filter(|x| x.is_string())
            .or_else(|| m.values().find_map(|x| find_key(x, key))),
        Value::Array(items) => items.iter().find_map(|x| find_key(x, key)),
        _ => None,
    }
}

/// The input is JSON: an array of `[tool, arguments]` steps, `tool` a governed tool's
/// name or an index into `GOVERNED_TOOLS`.
pub fn check(data: &[u8]) {
    let Ok(Value::Array(steps)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let engine = Engine::new(Box::new(VirtualDesktop::default()), ConfigStack::new());
    let started = engine.start(&json!({"config": {
        "runtime": {"batch_gap_ms": 0, "max_wait_ms": 100},
        "safety": {"confirm_timeout_s": 0.1},
    }}));
    assert!(started.ok, "session.start: {:?}", started.error);
    let mut ids = Ids::default();
    let windows = engine.call_tool("window.list", &json!({})).result;
    if let Some(form) = windows
        .as_ref()
        .and_then(|w| w["windows"].as_array())
        .and_then(|ws| ws.iter().find(|w| w["app_id"] == "cc-form"))
    {
        ids.vars.insert("window".into(), form["id"].clone());
        ids.vars.insert("pid".into(), form["pid"].clone());
        ids.vars.insert("bounds".into(), form["rect"].clone());
    }
    let dir = tempfile::Builder::new()
        .prefix("cc-fuzz-governed-")
        .tempdir_in(scratch())
        .expect("a temp dir");
    let g = Governance::open(
        engine.clone(),
        &dir.path().join("journal.db"),
        "fuzz-principal",
    )
    .expect("open the journal");
    for step in steps.into_iter().take(MAX_STEPS) {
        let Value::Array(mut pair) = step else {
            continue;
        };
        if pair.len() != 2 {
            continue;
        }
        let mut args = pair.pop().unwrap_or(Value::Null);
        let tool = match &pair[0] {
            Value::String(s) => s.clone(),
            Value::Number(n) => {
                let i = n.as_u64().unwrap_or(0) as usize;
                GOVERNED_TOOLS[i % GOVERNED_TOOLS.len()].name.to_string()
            }
            _ => continue,
        };
        ids.fill(&mut args);
        let outcome = guarded(&engine, || g.call(&tool, &args));
        match outcome {
            None => assert!(governed_tool(&tool).is_none(), "{tool} is governed"),
            Some(Ok(v)) => {
                assert!(v.is_object(), "{tool} answered a non-object {v}");
                ids.learn(&tool, &v);
            }
            Some(Err(e)) => wire_form(&tool, &e),
        }
    }
    for s in &ids.sessions {
        match g.verify_session_chain(s) {
            Ok(Ok(())) => {}
            Ok(Err(seq)) => panic!("session {s}: the hash chain breaks at event {seq}"),
            Err(e) => panic!("session {s}: cannot verify its chain: {e:?}"),
        }
    }
    drop(g);
    engine.stop();
}

/// A contract error reads back from its wire form as itself.
fn wire_form(tool: &str, e: &ContractError) {
    assert!(
        !e.message.trim().is_empty(),
        "{tool}: an error without a message: {e:?}"
    );
    let wire = serde_json::to_value(e).expect("a contract error serializes");
    let back: ContractError = serde_json::from_value(wire.clone())
        .unwrap_or_else(|err| panic!("{tool}: error {wire} does not decode: {err}"));
    assert_eq!(&back, e, "{tool}: the error changed on the wire");
}

/// Runs `f` while a watchdog engages the emergency stop every [`WATCHDOG`].
fn guarded<T>(engine: &Engine, f: impl FnOnce() -> T) -> T {
    let (done, finished) = mpsc::channel::<()>();
    let e = engine.clone();
    let watchdog = std::thread::spawn(move || {
        while let Err(mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(WATCHDOG) {
            e.panic(&json!({"on": true}));
        }
    });
    let out = f();
    drop(done);
    watchdog.join().expect("the watchdog");
    out
}

/// A RAM-backed directory when there is one: the journal is written on every call.
fn scratch() -> std::path::PathBuf {
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}
