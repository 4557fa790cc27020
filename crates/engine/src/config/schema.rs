//! The config spec: the single source of validation, defaults and `config-schema`.

use serde_json::{Map, Value, json};
use std::sync::OnceLock;

use crate::spec::{Default, Field, Ty, to_json_schema};

fn display_spec() -> Ty {
    Ty::Object(vec![
        Field::req(
            "id",
            Ty::Str {
                max_chars: Some(64),
                non_empty: true,
            },
            "display id",
        ),
        Field::opt(
            "name",
            Ty::Str {
                max_chars: Some(64),
                non_empty: false,
            },
            "display name",
        ),
        Field::req("x", Ty::int(-32768, 32767), "physical left"),
        Field::req("y", Ty::int(-32768, 32767), "physical top"),
        Field::req("width", Ty::int(64, 16384), "physical width"),
        Field::req("height", Ty::int(64, 16384), "physical height"),
        Field::opt("primary", Ty::Bool, "the primary display"),
    ])
}

/// One entry of `http.agents`: an agent-role bearer token and the principal its
/// governed calls act for (GOVERNANCE.md: the identity of the HTTP token).
fn agent_token_spec() -> Ty {
    let non_empty = |max| Ty::Str {
        max_chars: Some(max),
        non_empty: true,
    };
    Ty::Object(vec![
        Field::req(
            "principal_id",
            non_empty(128),
            "the principal this token's governed calls act for",
        ),
        Field::req("token", non_empty(512), "the bearer token"),
    ])
}

fn rule_spec() -> Ty {
    let argument = Ty::Object(vec![
        Field::req(
            "name",
            Ty::Str {
                max_chars: Some(128),
                non_empty: true,
            },
            "argument name; a dotted path such as from.x",
        ),
        Field::req(
            "matcher",
            Ty::one_of(&["equals", "glob", "contains", "regex", "in_region"]),
            "how value is compared",
        ),
        Field::req(
            "value",
            Ty::Any,
            "the value to compare with ({x,y,width,height} for in_region)",
        ),
    ]);
    let window = Ty::Object(vec![
        Field::opt("app", Ty::string(), "glob on the window's app_id"),
        Field::opt("title", Ty::string(), "glob on the window title"),
    ]);
    let matcher = Ty::Object(vec![
        Field::req(
            "tool",
            Ty::Str {
                max_chars: Some(128),
                non_empty: true,
            },
            "case-sensitive glob on the tool name",
        ),
        Field::opt("argument", argument, "match on one argument"),
        Field::opt("window", window, "match on the window the action lands in"),
    ]);
    Ty::Object(vec![
        Field::req("match", matcher, "what the rule applies to"),
        Field::req(
            "effect",
            Ty::one_of(&["allow", "deny", "confirm"]),
            "what happens on a match",
        ),
    ])
}

fn build() -> Ty {
    let platform = Ty::Object(vec![
        Field::def("name", Ty::one_of(&["auto", "x11", "wlroots", "gnome", "portal", "windows", "virtual"]), json!("auto"), "desktop backend").immutable(),
        Field::def(
            "virtual_displays",
            Ty::list(display_spec(), 1, Some(8)),
            json!([{"id": "0", "name": "VIRTUAL-1", "x": 0, "y": 0, "width": 1920, "height": 1080, "primary": true}]),
            "monitors of the built-in virtual desktop (physical pixels)",
        )
        .immutable(),
    ]);
    let capture = Ty::Object(vec![
        Field::def(
            "default_width",
            Ty::AutoOrInt { min: 1, max: 16384 },
            json!("auto"),
            "canvas width in pixels; auto: the largest canvas within a model's image limits (long edge 1568, 1.15 MP), never wider than the desktop; the operator's to set",
        ),
        Field::def(
            "default_format",
            Ty::one_of(&["auto", "png", "jpeg", "webp"]),
            json!("auto"),
            "capture format; auto: the cheapest for the content (palette PNG or JPEG)",
        ),
        Field::def(
            "default_quality",
            Ty::int(1, 100),
            json!(85),
            "JPEG quality",
        ),
        Field::def("grayscale", Ty::Bool, json!(false), "capture in grayscale"),
        Field::def(
            "max_area",
            Ty::int(1024, 1 << 40),
            json!(5_000_000),
            "largest image area in pixels; larger captures are scaled down",
        ),
        Field::def(
            "max_bytes",
            Ty::int(1024, 1 << 34),
            json!(8 * 1024 * 1024),
            "largest encoded image; larger captures are scaled down",
        ),
        Field::def(
            "redact_sensitive",
            Ty::Bool,
            json!(false),
            "black out password fields in captures",
        ),
        Field::def(
            "backend",
            Ty::one_of(&["auto", "shm", "core"]),
            json!("auto"),
            "X11 capture path",
        )
        .immutable(),
    ]);
    let safety = Ty::Object(vec![
        Field::def(
            "emergency_hotkey",
            Ty::KeyCombo,
            json!("ctrl+alt+f12"),
            "global panic hotkey",
        )
        .immutable(),
        Field::def(
            "panic_file",
            Ty::string(),
            json!(""),
            "while this file exists the session is stopped",
        )
        .immutable(),
        Field::def(
            "visual_indicator",
            Ty::Bool,
            json!(true),
            "show that the desktop is under automation",
        )
        .immutable(),
        Field::def(
            "protect_console",
            Ty::Bool,
            json!(true),
            "refuse every action that lands on the operator console's window",
        ),
        Field::def(
            "confirm_threshold",
            Ty::one_of(&["benign", "moderate", "high"]),
            json!("high"),
            "risk from which a human must confirm",
        ),
        Field::def(
            "confirm_timeout_s",
            Ty::num(0.05, 86400.0),
            json!(30),
            "seconds before a pending confirmation is denied",
        ),
        Field::def(
            "observe_while_confirming",
            Ty::Bool,
            json!(false),
            "let benign observations run while a confirmation is pending",
        ),
        Field::def(
            "idle_timeout_s",
            Ty::num(0.0, 86400.0),
            json!(0),
            "idle seconds before session.idle (0 = off)",
        ),
        Field::def(
            "idle_action",
            Ty::one_of(&["standby", "none"]),
            json!("standby"),
            "what idleness does",
        ),
        Field::def(
            "default_rule",
            Ty::one_of(&["allow", "deny"]),
            json!("allow"),
            "effect when no rule matched (deny = allowlist mode)",
        ),
        Field::def(
            "rules",
            Ty::list(rule_spec(), 0, Some(1000)),
            json!([]),
            "policy rules",
        ),
    ]);
    let a11y = Ty::Object(vec![
        Field::def(
            "default_level",
            Ty::one_of(&["skeleton", "standard", "full"]),
            json!("standard"),
            "snapshot level",
        ),
        Field::def(
            "max_name_len",
            Ty::int(8, 4096),
            json!(64),
            "longest name at the standard level",
        ),
        Field::def(
            "include_rects",
            Ty::Bool,
            json!(true),
            "include canvas rects",
        ),
        Field::def(
            "hard_walk_cap",
            Ty::int(1, 100_000),
            json!(5000),
            "most nodes ever read from the platform",
        ),
    ]);
    let runtime = Ty::Object(vec![
        Field::def(
            "batch_gap_ms",
            Ty::int(0, 60_000),
            json!(150),
            "pause between batch items",
        ),
        Field::def(
            "max_wait_ms",
            Ty::int(0, 600_000),
            json!(600_000),
            "longest wait.pause",
        ),
    ]);
    let apps = Ty::Object(vec![Field::def(
        "launch_allowed",
        Ty::list(
            Ty::Str {
                max_chars: Some(255),
                non_empty: true,
            },
            0,
            Some(256),
        ),
        json!([]),
        "applications app.launch may start at moderate risk (exact desktop-file ids or executable names); any other is high risk",
    )]);
    let http = Ty::Object(vec![
        Field::def(
            "token",
            Ty::string(),
            json!(""),
            "agent bearer token (generated when empty)",
        )
        .immutable(),
        Field::def(
            "operator_token",
            Ty::string(),
            json!(""),
            "operator bearer token (never generated: without one, nobody is the operator over HTTP)",
        )
        .immutable(),
        Field::def(
            "agents",
            Ty::list(agent_token_spec(), 0, Some(64)),
            json!([]),
            "more agent tokens, each with the identity its governed MCP calls act for",
        )
        .immutable(),
        Field::def(
            "allowed_hosts",
            Ty::list(
                Ty::Str {
                    max_chars: Some(255),
                    non_empty: true,
                },
                0,
                Some(64),
            ),
            json!([]),
            "more names and addresses (no port) the Host/Origin check accepts, for a console reached from another machine; the same as --allow-host",
        )
        .immutable(),
        Field::def(
            "header_timeout_ms",
            Ty::int(100, 600_000),
            json!(15_000),
            "time a connection has to send a request's headers, and the longest it may wait idle for its next request",
        )
        .immutable(),
        Field::def(
            "anonymous_connections",
            Ty::int(1, 4096),
            json!(64),
            "connections without an authenticated request yet, all listeners together; the oldest is closed for a new one",
        )
        .immutable(),
        Field::def(
            "agent_connections",
            Ty::int(1, 4096),
            json!(128),
            "connections one agent principal may hold",
        )
        .immutable(),
        Field::def(
            "agent_connections_total",
            Ty::int(1, 4096),
            json!(256),
            "connections all agent principals together may hold",
        )
        .immutable(),
        Field::def(
            "agent_event_streams",
            Ty::int(1, 4096),
            json!(64),
            "/events streams one agent principal may hold",
        )
        .immutable(),
        Field::def(
            "operator_connections",
            Ty::int(1, 4096),
            json!(128),
            "connections the operator may hold, apart from every agent's",
        )
        .immutable(),
    ]);
    let governance = Ty::Object(vec![
        Field::def(
            "principal_id",
            Ty::Str {
                max_chars: Some(128),
                non_empty: true,
            },
            json!("local-user"),
            "the principal governed operations act for (the host's identity, never a tool argument; --principal-id overrides it)",
        )
        .immutable(),
        Field::def(
            "journal",
            Ty::Str {
                max_chars: Some(4096),
                non_empty: false,
            },
            json!(""),
            "the governance journal (SQLite, WAL); empty: $XDG_STATE_HOME/computer-control/governance.db (--journal overrides it)",
        )
        .immutable(),
    ]);
    let section = |name, ty, doc, mutable| Field {
        name,
        ty,
        required: false,
        default: Default::None,
        doc,
        mutable,
    };
    Ty::Object(vec![
        section(
            "platform",
            platform,
            "desktop backend (fixed at server start)",
            false,
        ),
        section("capture", capture, "screen capture", true),
        section("safety", safety, "the safety gate", true),
        section("a11y", a11y, "accessibility snapshots", true),
        section("runtime", runtime, "runtime limits", true),
        section(
            "apps",
            apps,
            "launching applications (the operator's)",
            true,
        ),
        section(
            "http",
            http,
            "HTTP transport (fixed at server start)",
            false,
        ),
        section(
            "governance",
            governance,
            "governed actions (fixed at server start)",
            false,
        ),
    ])
}

/// The config spec (built once).
pub(crate) fn config_spec() -> &'static Ty {
    static SPEC: OnceLock<Ty> = OnceLock::new();
    SPEC.get_or_init(build)
}

/// The built-in defaults as a complete config value.
pub(crate) fn defaults() -> Value {
    fn fill(ty: &Ty) -> Value {
        let Ty::Object(fields) = ty else {
            return Value::Null;
        };
        let mut m = Map::new();
        for f in fields {
            match (&f.default, &f.ty) {
                (Default::Value(v), _) => {
                    m.insert(f.name.to_string(), v.clone());
                }
                (_, Ty::Object(_)) => {
                    m.insert(f.name.to_string(), fill(&f.ty));
                }
                _ => {}
            }
        }
        Value::Object(m)
    }
    let mut v = fill(config_spec());
    // The hotkey default is written as a string for people; store it normalized.
    if let Some(s) = v.pointer_mut("/safety/emergency_hotkey") {
        *s = json!(["ctrl", "alt", "f12"]);
    }
    v
}

/// `computer-control config-schema`.
pub fn config_json_schema() -> Value {
    let mut s = to_json_schema(config_spec());
    if let Value::Object(m) = &mut s {
        m.insert(
            "$schema".into(),
            json!("https://json-schema.org/draft/2020-12/schema"),
        );
        m.insert("title".into(), json!("computer-control configuration"));
    }
    s
}
