//! `manifest.json` (PROTOCOL §9), generated from the same tables the server uses.

use serde_json::{Value, json};

use cc_engine::config::config_json_schema;
use cc_engine::tools::tools;
use cc_protocol::event::EVENT_TYPES;

/// How a manifest's `entry.command` starts the server, by where the manifest sits.
/// The original plugin's entry was `python -m computer_control serve`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Entry {
    /// `computer-control serve` from `PATH`: the repository's `manifest.json`.
    #[default]
    Path,
    /// The npm package's launcher, relative to the package's directory (the plugin
    /// directory of `node_modules/computer-control`): `node bin/computer-control.js serve`.
    Npm,
    /// The PyPI package's module, exactly the original's entry:
    /// `python -m computer_control serve` (the plugin directory is the installed
    /// `computer_control` package).
    Python,
}

impl Entry {
    /// The entry's `command`.
    pub fn command(self) -> Vec<String> {
        let words: &[&str] = match self {
            Entry::Path => &["computer-control", "serve"],
            Entry::Npm => &["node", "bin/computer-control.js", "serve"],
            Entry::Python => &["python", "-m", "computer_control", "serve"],
        };
        words.iter().map(|w| w.to_string()).collect()
    }
}

/// The plugin manifest. Deterministic: the checked-in `manifest.json` must equal it.
pub fn manifest() -> Value {
    manifest_with(Entry::Path.command())
}

/// The plugin manifest whose `entry.command` is `command` (run in the plugin directory):
/// the packages' manifests and the one `setup --print dsh` writes differ only there.
pub fn manifest_with(command: Vec<String>) -> Value {
    let tool_list: Vec<Value> = tools()
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "summary": t.summary,
                "risk": t.risk,
                "parameters": t.schema(),
            })
        })
        .collect();
    let events: Vec<Value> = EVENT_TYPES
        .iter()
        .map(|(n, s)| json!({"name": n, "summary": s}))
        .collect();
    json!({
        "schema_version": 1,
        "id": "computer-control",
        "name": "computer-control",
        "version": env!("CARGO_PKG_VERSION"),
        "description": "Governed desktop automation: observe a desktop (screenshots, accessibility trees) and act on it (pointer, keyboard, semantic activation) through a safety gate with policy rules, risk levels, human confirmation and an emergency stop.",
        "license": env!("CARGO_PKG_LICENSE"),
        "entry": {"command": command, "working_directory": "."},
        "transport": {
            "type": "stdio-jsonrpc",
            "framing": "line-delimited-json",
            "encoding": "utf-8",
            "protocol_version": "2.0"
        },
        "lifecycle": {"start": "session.start", "stop": "session.stop"},
        "methods": cc_engine::METHODS,
        "http_routes": crate::transports::http::routes::routes_json(),
        "config_schema": config_json_schema(),
        "tools": tool_list,
        "vocabularies": cc_engine::vocabularies().iter().map(cc_engine::vocabulary_json).collect::<Vec<_>>(),
        "events": events,
    })
}
