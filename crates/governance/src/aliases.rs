//! The upstream client's observation tools as names of our own: `snapshot`,
//! `get_ui_tree` and `list_windows`. Each is a translation, not a tool: its arguments
//! become a plain tool's, which then goes through the same preview, policy, gate and
//! receipt as any governed action, and its result is reshaped into the members the
//! upstream client reads (windows as `{windowId, bundleId, pid, title, bounds}`).

use cc_engine::tools::ToolDef;
use serde_json::{Map, Value, json};

use crate::error::{GovResult, invalid};
use crate::policy::tool_or_invalid;

/// Tool arguments (or a tool's result): one JSON object.
type Args = Map<String, Value>;
/// An alias's arguments as a plain tool's: its name and arguments.
type Translated = GovResult<(&'static str, Args)>;

/// One upstream name and how it maps onto a plain tool.
pub(crate) struct Alias {
    /// The upstream tool name.
    pub name: &'static str,
    /// Its arguments as the plain tool's (refusing what the upstream tool does not take).
    translate: fn(&Args) -> Translated,
    /// The plain tool's result in the shape the upstream client reads.
    reshape: fn(&Args, Args) -> Args,
}

/// Every alias, by upstream name.
const ALIASES: &[Alias] = &[
    Alias {
        name: "snapshot",
        translate: snapshot,
        reshape: keep,
    },
    Alias {
        name: "get_ui_tree",
        translate: ui_tree,
        reshape: keep,
    },
    Alias {
        name: "list_windows",
        translate: list_windows,
        reshape: windows,
    },
];

/// The upstream names answered, for documentation and tests.
pub fn names() -> impl Iterator<Item = &'static str> {
    ALIASES.iter().map(|a| a.name)
}

/// What a governed action's `tool` resolved to.
pub(crate) struct Resolved {
    pub def: &'static ToolDef,
    /// The arguments as the plain tool receives them.
    pub arguments: Map<String, Value>,
    /// The alias, when the name was one (its result is reshaped).
    pub alias: Option<&'static Alias>,
    /// The arguments as the client sent them (what the reshape may read).
    pub sent: Map<String, Value>,
}

impl Resolved {
    /// The plain tool's result as the client expects it.
    pub fn output(&self, result: Map<String, Value>) -> Map<String, Value> {
        match self.alias {
            Some(a) => (a.reshape)(&self.sent, result),
            None => result,
        }
    }
}

/// Resolves a governed action's `tool`: a plain tool (either spelling) or an alias.
pub(crate) fn resolve(tool: &str, arguments: &Map<String, Value>) -> GovResult<Resolved> {
    if let Some(alias) = ALIASES.iter().find(|a| a.name == tool) {
        let (name, translated) = (alias.translate)(arguments)?;
        return Ok(Resolved {
            def: tool_or_invalid(name)?,
            arguments: translated,
            alias: Some(alias),
            sent: arguments.clone(),
        });
    }
    Ok(Resolved {
        def: tool_or_invalid(tool)?,
        arguments: arguments.clone(),
        alias: None,
        sent: arguments.clone(),
    })
}

/// Refuses members other than `allowed`, as every argument object does.
fn only(tool: &str, args: &Map<String, Value>, allowed: &[&str]) -> GovResult<()> {
    match args.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(invalid(format!("{tool} takes no argument `{k}`"))),
        None => Ok(()),
    }
}

fn flag(tool: &str, args: &Map<String, Value>, name: &str) -> GovResult<Option<bool>> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(invalid(format!("{tool}: `{name}` must be a boolean"))),
    }
}

fn text<'a>(tool: &str, args: &'a Map<String, Value>, name: &str) -> GovResult<Option<&'a str>> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(invalid(format!("{tool}: `{name}` must be a string"))),
    }
}

/// `snapshot{use_vision?, use_annotation?, target_app?}`: the screen (`screen.capture`,
/// pixels as an image block), or the accessibility tree when `use_vision` is `false`.
/// `use_annotation` and `target_app` are accepted and do not narrow anything: the capture
/// is the whole canvas, unannotated, sized for models, and always carries its image
/// (upstream has no `unchanged` answer).
fn snapshot(args: &Map<String, Value>) -> GovResult<(&'static str, Map<String, Value>)> {
    only(
        "snapshot",
        args,
        &["use_vision", "use_annotation", "target_app"],
    )?;
    flag("snapshot", args, "use_annotation")?;
    text("snapshot", args, "target_app")?;
    Ok(match flag("snapshot", args, "use_vision")? {
        Some(false) => ("a11y.snapshot", Map::new()),
        _ => (
            "screen.capture",
            Map::from_iter([("if_changed".to_string(), Value::Bool(false))]),
        ),
    })
}

/// `get_ui_tree{window_id}`: `a11y.snapshot` of that window (a number, or its decimal text).
fn ui_tree(args: &Map<String, Value>) -> GovResult<(&'static str, Map<String, Value>)> {
    only("get_ui_tree", args, &["window_id"])?;
    let id = match args.get("window_id") {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.parse::<u64>().ok(),
        _ => None,
    }
    .ok_or_else(|| invalid("get_ui_tree needs a window_id of list_windows"))?;
    let mut m = Map::new();
    m.insert("window".into(), json!(id));
    Ok(("a11y.snapshot", m))
}

/// `list_windows{bundle_id?}`: `window.list`, narrowed to one application afterwards.
fn list_windows(args: &Map<String, Value>) -> GovResult<(&'static str, Map<String, Value>)> {
    only("list_windows", args, &["bundle_id"])?;
    text("list_windows", args, "bundle_id")?;
    Ok(("window.list", Map::new()))
}

fn keep(_: &Map<String, Value>, result: Map<String, Value>) -> Map<String, Value> {
    result
}

/// `window.list`'s windows as upstream reads them: `windowId`, `bundleId`, `pid`, `title`,
/// `bounds` (and `displayId`, `focused`), only those of `bundle_id` when given.
fn windows(sent: &Map<String, Value>, mut result: Map<String, Value>) -> Map<String, Value> {
    let bundle = sent.get("bundle_id").and_then(Value::as_str);
    let list = result
        .remove("windows")
        .and_then(|w| match w {
            Value::Array(items) => Some(items),
            _ => None,
        })
        .unwrap_or_default();
    let shaped: Vec<Value> = list
        .into_iter()
        .filter(|w| bundle.is_none_or(|b| w["app_id"].as_str() == Some(b)))
        .map(|w| {
            let mut m = Map::new();
            m.insert("windowId".into(), w["id"].clone());
            m.insert("bundleId".into(), w["app_id"].clone());
            m.insert("pid".into(), w["pid"].clone());
            m.insert("title".into(), w["title"].clone());
            m.insert("bounds".into(), w["rect"].clone());
            if let Some(display) = w.get("display").filter(|d| !d.is_null()) {
                let id = display
                    .as_str()
                    .map_or_else(|| display.to_string(), str::to_string);
                m.insert("displayId".into(), json!(id));
            }
            if let Some(focused) = w.get("focused") {
                m.insert("focused".into(), focused.clone());
            }
            Value::Object(m)
        })
        .collect();
    result.insert("windows".into(), Value::Array(shaped));
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn each_alias_names_a_plain_tool() {
        let r = resolve(
            "snapshot",
            &args(json!({"use_vision": true, "use_annotation": true, "target_app": "x"})),
        )
        .expect("snapshot");
        assert_eq!(
            (r.def.name, r.arguments["if_changed"].clone()),
            ("screen.capture", json!(false))
        );
        let r = resolve("snapshot", &args(json!({"use_vision": false}))).expect("snapshot");
        assert_eq!(r.def.name, "a11y.snapshot");
        let r = resolve("get_ui_tree", &args(json!({"window_id": "7"}))).expect("tree");
        assert_eq!(
            (r.def.name, r.arguments["window"].clone()),
            ("a11y.snapshot", json!(7))
        );
        let r = resolve("list_windows", &args(json!({}))).expect("windows");
        assert_eq!(r.def.name, "window.list");
        assert_eq!(
            resolve("pointer_click", &Map::new())
                .expect("plain")
                .def
                .name,
            "pointer.click"
        );
        assert_eq!(names().count(), ALIASES.len());
    }

    #[test]
    fn bad_alias_arguments_are_invalid() {
        for (tool, a) in [
            ("snapshot", json!({"use_vision": "yes"})),
            ("snapshot", json!({"region": 1})),
            ("get_ui_tree", json!({})),
            ("get_ui_tree", json!({"window_id": "front"})),
            ("list_windows", json!({"bundle_id": 3})),
        ] {
            let e = resolve(tool, &args(a.clone())).err().expect("refused");
            assert_eq!(
                e.error,
                cc_contract::ErrorCode::InvalidArguments,
                "{tool} {a}"
            );
        }
    }

    #[test]
    fn windows_come_back_as_upstream_reads_them() {
        let r = resolve("list_windows", &args(json!({"bundle_id": "cc-form"}))).expect("alias");
        let out = r.output(args(json!({"windows": [
            {"id": 3, "app_id": "cc-form", "pid": 9, "title": "Sign in",
             "rect": {"x": 1, "y": 2, "width": 3, "height": 4}, "display": 0, "focused": true},
            {"id": 4, "app_id": "cc-list", "pid": 9, "title": "Items",
             "rect": {"x": 1, "y": 2, "width": 3, "height": 4}, "display": 0, "focused": false}
        ]})));
        assert_eq!(
            Value::Object(out),
            json!({"windows": [{"windowId": 3, "bundleId": "cc-form", "pid": 9, "title": "Sign in",
                                "bounds": {"x": 1, "y": 2, "width": 3, "height": 4},
                                "displayId": "0", "focused": true}]})
        );
    }
}
