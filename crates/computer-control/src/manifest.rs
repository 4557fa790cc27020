//! `manifest.json` (PROTOCOL §9), generated from the same tables the server uses.

use serde_json::{Value, json};

use cc_engine::config::config_json_schema;
use cc_engine::tools::tools;
use cc_protocol::event::EVENT_TYPES;

/// The plugin manifest. Deterministic: the checked-in `manifest.json` must equal it.
pub fn manifest() -> Value {
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
        "entry": {"command": ["computer-control", "serve"], "working_directory": "."},
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
