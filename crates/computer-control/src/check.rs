//! `computer-control check`: what this machine offers, as one document a host can show
//! its user. Each area (platform, display, input, capture, accessibility, hotkey,
//! journal, transports) is `ok`, `degraded` or `missing` with the reason, and every
//! problem carries the one next step that fixes it; `blockers` lists them, first cause
//! first. `drivers` lists the desktop drivers built in and whether what each loads at
//! run time is there (PipeWire's client library for GNOME and the portal). The
//! document's JSON Schema is `check.schema.json` (`check --json-schema`);
//! the same document is the MCP tool [`TOOL`].

#[cfg(any(
    all(feature = "x11", unix),
    all(feature = "wlroots", target_os = "linux"),
    all(feature = "gnome", target_os = "linux")
))]
mod buses;
mod desktop;
mod drivers;
#[cfg(all(feature = "gnome", target_os = "linux"))]
mod gnome;
mod journal;
#[cfg(all(feature = "gnome", target_os = "linux"))]
mod portal;
mod transports;
mod virtual_desktop;
#[cfg(all(feature = "wlroots", target_os = "linux"))]
mod wayland;
#[cfg(feature = "windows")]
mod windows;
#[cfg(all(feature = "x11", unix))]
mod x11;

use std::process::ExitCode;

use serde_json::{Map, Value, json};

use crate::session::Session;

/// The MCP tool that returns the report of the running server.
pub const TOOL: &str = "check_setup";

/// The JSON Schema of the report (one home: the file beside Cargo.toml).
pub const SCHEMA: &str = include_str!("../check.schema.json");

/// The areas, in the order they are reported and their problems listed.
pub const AREAS: [&str; 8] = [
    "platform",
    "display",
    "input",
    "capture",
    "accessibility",
    "hotkey",
    "journal",
    "transports",
];

/// `check`'s options.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Print the report as one JSON document (see --json-schema).
    #[arg(long, conflicts_with = "json_schema")]
    json: bool,
    /// Print the JSON Schema of the report and exit.
    #[arg(long)]
    json_schema: bool,
    /// The backend to check for, as `serve --platform` would pick it.
    #[arg(
        long,
        env = "COMPUTER_CONTROL_PLATFORM",
        default_value = "auto",
        value_parser = clap::builder::PossibleValuesParser::new(crate::platform::names())
    )]
    platform: String,
    /// The governance journal to check (as `serve --journal`).
    #[arg(long, env = "COMPUTER_CONTROL_JOURNAL")]
    journal: Option<std::path::PathBuf>,
}

impl CheckArgs {
    /// True unless the virtual desktop was asked for (or only the schema).
    pub fn wants_desktop(&self) -> bool {
        !self.json_schema && self.platform != "virtual"
    }
}

/// The state of one area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    Degraded,
    Missing,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Degraded => "degraded",
            Status::Missing => "missing",
        }
    }
}

/// One area's finding: its status, why, the fix when it is not ok, and details.
#[derive(Debug, Clone)]
pub struct Finding {
    pub status: Status,
    pub reason: String,
    pub next_step: Option<String>,
    pub details: Map<String, Value>,
}

impl Finding {
    pub fn ok(reason: impl Into<String>) -> Finding {
        Finding {
            status: Status::Ok,
            reason: reason.into(),
            next_step: None,
            details: Map::new(),
        }
    }

    /// A problem: `status` must not be ok, and `next_step` is what fixes it.
    pub fn problem(
        status: Status,
        reason: impl Into<String>,
        next_step: impl Into<String>,
    ) -> Finding {
        Finding {
            status,
            reason: reason.into(),
            next_step: Some(next_step.into()),
            details: Map::new(),
        }
    }

    pub fn with(mut self, key: &str, value: Value) -> Finding {
        self.details.insert(key.to_string(), value);
        self
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("status".into(), json!(self.status.as_str()));
        m.insert("reason".into(), json!(self.reason));
        if let Some(n) = &self.next_step {
            m.insert("next_step".into(), json!(n));
        }
        m.extend(self.details.clone());
        Value::Object(m)
    }
}

/// What the running server knows better than a fresh probe: its backend, and that it
/// holds the hotkey and the journal itself.
pub struct ServerView {
    pub platform: &'static str,
    pub capabilities: Value,
}

/// What to check.
pub struct Options {
    /// `auto`, `virtual` or a built-in driver's name (`x11`, `wlroots`, `gnome`).
    pub platform: String,
    /// `governance.journal` as configured (empty: the default place).
    pub journal: String,
}

/// The whole report. Blocks (X connection, accessibility bus): run it off async code.
pub fn report(opts: &Options, session: &Session, server: Option<&ServerView>) -> Value {
    let mut found: Vec<(&str, Finding)> = desktop::findings(&opts.platform, server);
    found.push(("journal", journal::finding(&opts.journal, server.is_some())));
    found.push(("transports", transports::finding()));
    let mut doc = Map::new();
    doc.insert("version".into(), json!(env!("CARGO_PKG_VERSION")));
    doc.insert("session".into(), session.to_json());
    let mut problems: Vec<(&str, &Finding)> = Vec::new();
    for area in AREAS {
        let Some((_, f)) = found.iter().find(|(a, _)| *a == area) else {
            continue;
        };
        doc.insert(area.into(), f.to_json());
        if f.status != Status::Ok {
            problems.push((area, f));
        }
    }
    // Missing before degraded (what stops a feature before what slows it), and one
    // blocker per distinct next step: the first cause names it.
    problems.sort_by_key(|(_, f)| f.status != Status::Missing);
    let mut blockers: Vec<Value> = Vec::new();
    let mut steps: Vec<&str> = Vec::new();
    for (area, f) in problems {
        let Some(step) = f.next_step.as_deref() else {
            continue;
        };
        if steps.contains(&step) {
            continue;
        }
        steps.push(step);
        blockers.push(json!({
            "area": area,
            "status": f.status.as_str(),
            "reason": f.reason,
            "next_step": step,
        }));
    }
    let ready = found.iter().all(|(_, f)| f.status != Status::Missing);
    doc.insert("ready".into(), json!(ready));
    doc.insert("blockers".into(), Value::Array(blockers));
    doc.insert("drivers".into(), drivers::to_json(&drivers::findings()));
    Value::Object(doc)
}

/// The report of a running server (the MCP tool): its backend and capabilities, the
/// journal it holds, and a fresh look at the desktop, with no path in it
/// ([`hide_paths`]): the tool's caller is the agent, which has no business knowing
/// where the runtime directory, the journal or the session's files are (the
/// operator's `computer-control check` shows them).
pub fn for_server(engine: &cc_engine::Engine) -> Value {
    let mut doc = server_report(engine);
    hide_paths(&mut doc);
    doc
}

/// What replaces a path in the agent's report.
pub const HIDDEN: &str = "(path hidden)";

/// Removes every filesystem path from a report: the journal's `path` member goes, and
/// in every string each word from a `/` that starts it (or follows `=`, `(` or a quote)
/// becomes [`HIDDEN`], so `unix:path=/run/user/1000/bus` reads `unix:path=(path hidden)`.
pub fn hide_paths(doc: &mut Value) {
    match doc {
        Value::Object(m) => {
            if let Some(Value::Object(j)) = m.get_mut("journal") {
                j.remove("path");
            }
            m.values_mut().for_each(hide_paths);
        }
        Value::Array(a) => a.iter_mut().for_each(hide_paths),
        Value::String(s) => *s = hide_paths_in(s),
        _ => {}
    }
}

/// Whether `rest` starts a Windows path: a drive (`C:\`), a UNC share (`\\host`),
/// or `%VAR%\`.
fn windows_path_start(rest: &str) -> bool {
    let b = rest.as_bytes();
    (b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'\\')
        || rest.starts_with("\\\\")
        || (rest.starts_with('%')
            && rest[1..]
                .split_once('%')
                .is_some_and(|(_, t)| t.starts_with('\\')))
}

fn hide_paths_in(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // A Windows path's later words (`C:\Users\Ada Lovelace\…`) go with its first.
    let mut in_windows_path = false;
    for (i, word) in text.split(' ').enumerate() {
        if in_windows_path && word.contains('\\') {
            continue;
        }
        in_windows_path = false;
        if i > 0 {
            out.push(' ');
        }
        let start = word.char_indices().find_map(|(j, c)| {
            let before = word[..j].chars().last();
            let opens = matches!(before, None | Some('=' | '(' | '\'' | '"' | '`'));
            let windows = windows_path_start(&word[j..]);
            in_windows_path |= windows && opens;
            ((c == '/' || (c == '~' && word[j..].starts_with("~/")) || windows) && opens)
                .then_some(j)
        });
        match start {
            Some(j) => {
                // Keep closing punctuation: `(…/x)` stays balanced.
                let tail = word[j..]
                    .trim_end_matches([')', ',', ';', '.', ':', '\'', '"', '`'])
                    .len();
                out.push_str(&word[..j]);
                out.push_str(HIDDEN);
                out.push_str(&word[j + tail..]);
            }
            None => out.push_str(word),
        }
    }
    out
}

fn server_report(engine: &cc_engine::Engine) -> Value {
    let view = ServerView {
        platform: engine.platform(),
        capabilities: engine.capabilities_json(),
    };
    let journal = engine.base_config().config().governance.journal.clone();
    let opts = Options {
        platform: view.platform.to_string(),
        journal,
    };
    let session = crate::session::current();
    // The accessibility probe runs its own runtime, which tokio refuses inside another
    // runtime's threads: a plain thread keeps it out of the server's.
    std::thread::spawn(move || report(&opts, &session, Some(&view)))
        .join()
        .unwrap_or_else(|_| json!({"error": "the check panicked"}))
}

/// Prints the report (text, or JSON) or the schema; exit 0 either way: the virtual
/// desktop always works, and `ready`/`blockers` say what does not.
pub fn run(args: &CheckArgs, session: &Session) -> anyhow::Result<ExitCode> {
    if args.json_schema {
        print!("{SCHEMA}");
        return Ok(ExitCode::SUCCESS);
    }
    let journal = match &args.journal {
        Some(p) => p
            .to_str()
            .ok_or_else(|| anyhow::anyhow!("--journal {} is not valid UTF-8", p.display()))?
            .to_string(),
        None => String::new(),
    };
    let opts = Options {
        platform: args.platform.clone(),
        journal,
    };
    let doc = report(&opts, session, None);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", text(&doc));
    }
    Ok(ExitCode::SUCCESS)
}

/// The report for a terminal: one line per area, the next step under each problem.
fn text(doc: &Value) -> String {
    let mut out = String::new();
    for area in AREAS {
        let f = &doc[area];
        let status = f["status"].as_str().unwrap_or_default();
        out.push_str(&format!(
            "{status:<9} {area:<14} {}\n",
            f["reason"].as_str().unwrap_or_default()
        ));
        if let Some(step) = f["next_step"].as_str() {
            out.push_str(&format!("{:<24}next: {step}\n", ""));
        }
    }
    out.push_str(&drivers::text(doc));
    out.push_str("session:\n");
    for (var, v) in doc["session"].as_object().into_iter().flatten() {
        if let (Some(value), Some(source)) = (v["value"].as_str(), v["source"].as_str()) {
            out.push_str(&format!("  {var}={value}  ({source})\n"));
        }
    }
    let ready = doc["ready"].as_bool().unwrap_or(false);
    out.push_str(if ready {
        "ready\n"
    } else {
        "not ready: see the next steps above\n"
    });
    out
}

/// The six desktop findings of a backend that cannot start: `platform` says why,
/// `display` what is missing (or, when `None`, the same pointer as the rest), and the
/// other areas point there, so every backend's refusal reads alike.
#[cfg_attr(all(feature = "windows", windows), allow(dead_code))]
fn cannot_start(
    platform: Finding,
    display: Option<Finding>,
    absent: &str,
    step: &str,
) -> Vec<(&'static str, Finding)> {
    let gone = || Finding::problem(Status::Missing, absent, step);
    vec![
        ("platform", platform),
        ("display", display.unwrap_or_else(gone)),
        ("input", gone()),
        ("capture", gone()),
        ("accessibility", gone()),
        ("hotkey", gone()),
    ]
}

#[cfg(test)]
mod hide_paths_tests {
    use super::*;

    #[test]
    fn no_path_survives_and_the_rest_reads_the_same() {
        let mut doc = json!({
            "session": {
                "XDG_RUNTIME_DIR": {"value": "/run/user/1000", "source": "environment"},
                "DBUS_SESSION_BUS_ADDRESS": {"value": "unix:path=/run/user/1000/bus", "source": "socket (/run/user/1000/bus)"},
                "XAUTHORITY": {"value": "~/.Xauthority", "source": "file '/home/u/.Xauthority'"},
                "DISPLAY": {"value": ":1", "source": "process 42 (xterm)"},
            },
            "journal": {"status": "ok", "reason": "/home/u/.local/state/j.db (open in this server)", "path": "/home/u/j.db"},
            "hotkey": {"status": "ok", "reason": "held by this server; set $XDG_RUNTIME_DIR/x in env"},
        });
        hide_paths(&mut doc);
        let text = doc.to_string();
        for leak in ["/run/user", "/home/u", ".Xauthority\"", "j.db"] {
            assert!(!text.contains(leak), "{leak} in {text}");
        }
        assert_eq!(doc["journal"].get("path"), None);
        assert_eq!(
            doc["journal"]["reason"],
            "(path hidden) (open in this server)"
        );
        let s = &doc["session"];
        assert_eq!(s["XDG_RUNTIME_DIR"]["value"], HIDDEN);
        assert_eq!(
            s["DBUS_SESSION_BUS_ADDRESS"]["value"],
            "unix:path=(path hidden)"
        );
        assert_eq!(
            s["DBUS_SESSION_BUS_ADDRESS"]["source"],
            "socket ((path hidden))"
        );
        assert_eq!(s["XAUTHORITY"]["source"], "file '(path hidden)'");
        assert_eq!(
            s["DISPLAY"],
            json!({"value": ":1", "source": "process 42 (xterm)"})
        );
        assert_eq!(
            doc["hotkey"]["reason"],
            "held by this server; set $XDG_RUNTIME_DIR/x in env"
        );
    }

    #[test]
    fn windows_paths_are_hidden_too_with_their_spaces() {
        let mut doc = json!({
            "journal": {"status": "ok", "reason": r"C:\Users\Ada Lovelace\AppData\Local\computer-control\governance.db (open in this server)"},
            "a": r"share \\srv\home\ada\j.db, and %APPDATA%\Claude\x.json; C: alone",
        });
        hide_paths(&mut doc);
        let text = doc.to_string();
        for leak in ["Users", "Lovelace", "srv", "Claude", "governance"] {
            assert!(!text.contains(leak), "{leak} in {text}");
        }
        assert_eq!(
            doc["journal"]["reason"],
            "(path hidden) (open in this server)"
        );
        assert_eq!(doc["a"], "share (path hidden), and (path hidden); C: alone");
    }
}
