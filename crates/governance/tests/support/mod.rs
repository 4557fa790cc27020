//! What the kernel's end-to-end tests share: calling a governed tool expecting success or
//! a refusal, and reading the virtual desktop's sign-in form (its window, the centre of
//! its Submit button, its Name field, its status bar) through the engine, as an agent
//! would.

#![allow(dead_code)] // the benchmark includes it too and uses its own subset

use cc_contract::ContractError;
use cc_engine::Engine;
use cc_governance::Governance;
use serde_json::{Value, json};

/// A governed tool that must succeed.
pub fn ok(g: &Governance, tool: &str, args: Value) -> Value {
    match g.call(tool, &args).expect("a governed tool") {
        Ok(v) => v,
        Err(e) => panic!("{tool} failed: {e:?}"),
    }
}

/// A governed tool that must be refused.
pub fn err(g: &Governance, tool: &str, args: Value) -> ContractError {
    match g.call(tool, &args).expect("a governed tool") {
        Ok(v) => panic!("{tool} succeeded: {v}"),
        Err(e) => e,
    }
}

/// The sign-in form window and the centre of its Submit button, read from the engine.
pub struct Form {
    pub window: Value,
    pub submit: (i64, i64),
}

pub fn form(e: &Engine) -> Form {
    let list = e.call_tool("window.list", &json!({})).result.unwrap();
    let window = list["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["app_id"] == "cc-form")
        .unwrap()
        .clone();
    let snap = e
        .call_tool(
            "a11y.snapshot",
            &json!({"window": window["id"], "level": "full"}),
        )
        .result
        .unwrap();
    fn find<'a>(n: &'a Value, name: &str) -> Option<&'a Value> {
        if n["name"] == name && n["role"] == "button" {
            return Some(n);
        }
        n["children"].as_array()?.iter().find_map(|c| find(c, name))
    }
    let r = &find(&snap["tree"], "Submit").unwrap()["rect"];
    let c = |i: usize| r[i].as_i64().unwrap();
    Form {
        window,
        submit: ((c(0) + c(2)) / 2, (c(1) + c(3)) / 2),
    }
}

/// The status bar's value, read from the desktop.
pub fn status_bar(e: &Engine) -> String {
    let snap = e
        .call_tool("a11y.snapshot", &json!({"level": "full"}))
        .result
        .unwrap();
    fn find(n: &Value) -> Option<String> {
        if n["role"] == "statusbar" {
            return n["value"]
                .as_str()
                .or(n["name"].as_str())
                .map(str::to_string);
        }
        n["children"].as_array()?.iter().find_map(find)
    }
    find(&snap["tree"]).unwrap_or_default()
}

/// The value of the sign-in form's Name field (in `window`, a `window.list` entry).
pub fn name_field(e: &Engine, window: &Value) -> String {
    let snap = e
        .call_tool(
            "a11y.snapshot",
            &json!({"window": window["id"], "level": "full"}),
        )
        .result
        .unwrap();
    fn find(n: &Value) -> Option<&Value> {
        if n["role"] == "edit" && n["name"] == "Name" {
            return Some(n);
        }
        n["children"].as_array()?.iter().find_map(find)
    }
    find(&snap["tree"]).unwrap()["value"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}
