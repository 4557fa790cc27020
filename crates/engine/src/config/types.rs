//! The typed view of a complete, validated config value.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use cc_protocol::Risk;

/// The effective configuration of a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    pub platform: PlatformConfig,
    pub capture: CaptureConfig,
    pub safety: SafetyConfig,
    pub a11y: A11yConfig,
    pub runtime: RuntimeConfig,
    pub apps: AppsConfig,
    pub http: HttpConfig,
    pub governance: GovernanceConfig,
}

/// `governance`: the governed kernel's identity and journal, fixed at server start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GovernanceConfig {
    /// Who governed operations act for when the caller has no identity of its own.
    pub principal_id: String,
    /// The SQLite journal; empty means the XDG state directory.
    pub journal: String,
}

/// `platform`: fixed when the server starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlatformConfig {
    pub name: String,
    pub virtual_displays: Vec<DisplaySpec>,
}

/// One monitor of the virtual desktop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisplaySpec {
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
    #[serde(default)]
    pub primary: Option<bool>,
}

/// `capture.default_width`: how wide the canvas is (PROTOCOL §4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Value", into = "Value")]
pub enum CanvasWidth {
    /// The largest canvas a model takes without resizing it (the default), so the
    /// default capture is the canvas itself and a point read off it is clicked as is.
    Auto,
    /// The operator's width in canvas pixels.
    Px(u32),
}

impl TryFrom<Value> for CanvasWidth {
    type Error = String;

    fn try_from(v: Value) -> Result<Self, String> {
        match &v {
            Value::String(s) if s == "auto" => Ok(CanvasWidth::Auto),
            _ => v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n > 0)
                .map(CanvasWidth::Px)
                .ok_or_else(|| format!("expected \"auto\" or a width in pixels, got {v}")),
        }
    }
}

impl From<CanvasWidth> for Value {
    fn from(w: CanvasWidth) -> Value {
        match w {
            CanvasWidth::Auto => Value::from("auto"),
            CanvasWidth::Px(n) => Value::from(n),
        }
    }
}

/// `capture`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaptureConfig {
    pub default_width: CanvasWidth,
    pub default_format: String,
    pub default_quality: u8,
    pub grayscale: bool,
    pub max_area: u64,
    pub max_bytes: u64,
    pub redact_sensitive: bool,
    pub backend: String,
}

/// `safety`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SafetyConfig {
    pub emergency_hotkey: Vec<String>,
    pub panic_file: String,
    pub visual_indicator: bool,
    pub protect_console: bool,
    pub confirm_threshold: Risk,
    pub confirm_timeout_s: f64,
    pub observe_while_confirming: bool,
    pub idle_timeout_s: f64,
    pub idle_action: String,
    pub default_rule: Effect,
    pub rules: Vec<Rule>,
}

/// `a11y`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct A11yConfig {
    pub default_level: String,
    pub max_name_len: usize,
    pub include_rects: bool,
    pub hard_walk_cap: usize,
}

/// `runtime`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuntimeConfig {
    pub batch_gap_ms: u64,
    pub max_wait_ms: u64,
}

/// `apps`: what the operator trusts an agent to start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppsConfig {
    /// `app.launch` of one of these (its `app` argument, exactly) is moderate risk
    /// rather than high.
    pub launch_allowed: Vec<String>,
}

/// `http`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpConfig {
    pub token: String,
    pub operator_token: String,
    /// More agent tokens, each with its own principal (governed MCP calls).
    pub agents: Vec<AgentToken>,
    /// More `Host` names and addresses the server answers to (a console reached by
    /// name or address from another machine).
    pub allowed_hosts: Vec<String>,
    /// Time to receive a request's headers, and the longest a connection may wait
    /// idle for its next request.
    pub header_timeout_ms: u64,
    /// Connections without an authenticated request yet (all listeners together);
    /// when full, the oldest of them is closed for the new one.
    pub anonymous_connections: usize,
    /// Connections one agent principal may hold.
    pub agent_connections: usize,
    /// Connections all agent principals together may hold.
    pub agent_connections_total: usize,
    /// `/events` streams one agent principal may hold.
    pub agent_event_streams: usize,
    /// Connections the operator may hold, apart from every agent's.
    pub operator_connections: usize,
}

/// An agent bearer token with the principal it acts for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentToken {
    pub principal_id: String,
    pub token: String,
}

/// A rule's effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    Allow,
    Deny,
    Confirm,
}

/// One policy rule (PROTOCOL §5.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    #[serde(rename = "match")]
    pub matches: RuleMatch,
    pub effect: Effect,
}

/// What a rule applies to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleMatch {
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argument: Option<RuleArgument>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<RuleWindow>,
}

/// A match on one (dotted) argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleArgument {
    pub name: String,
    pub matcher: Matcher,
    pub value: Value,
}

/// Argument matchers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Matcher {
    Equals,
    Glob,
    Contains,
    Regex,
    InRegion,
}

/// A match on the window an action lands in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleWindow {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}
