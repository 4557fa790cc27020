//! The typed view of a complete, validated config value.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use cc_protocol::Risk;

/// The effective configuration of a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Which desktop, fixed at server start.
    pub platform: PlatformConfig,
    /// The canvas and how captures are encoded and redacted.
    pub capture: CaptureConfig,
    /// The gate: rules, risk threshold, confirmation, stop and idle.
    pub safety: SafetyConfig,
    /// Accessibility snapshots.
    pub a11y: A11yConfig,
    /// Batches and waits.
    pub runtime: RuntimeConfig,
    /// What `app.launch` may start.
    pub apps: AppsConfig,
    /// The HTTP transport's tokens.
    pub http: HttpConfig,
    /// The governed kernel.
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
    /// Desktop backend.
    pub name: String,
    /// Monitors of the built-in virtual desktop (physical pixels).
    pub virtual_displays: Vec<DisplaySpec>,
}

/// One monitor of the virtual desktop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisplaySpec {
    /// Display id.
    pub id: String,
    /// Display name.
    #[serde(default)]
    pub name: Option<String>,
    /// Physical left.
    pub x: i32,
    /// Physical top.
    pub y: i32,
    /// Physical width.
    pub width: u32,
    /// Physical height.
    pub height: u32,
    /// The primary display.
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
    /// Canvas width in pixels; auto: the largest canvas within a model's image limits (long edge 1568, 1.15 MP), never wider than the desktop; the operator's to set.
    pub default_width: CanvasWidth,
    /// Capture format; auto: the cheapest for the content (palette PNG or JPEG).
    pub default_format: String,
    /// JPEG quality.
    pub default_quality: u8,
    /// Capture in grayscale.
    pub grayscale: bool,
    /// Largest image area in pixels; larger captures are scaled down.
    pub max_area: u64,
    /// Largest encoded image; larger captures are scaled down.
    pub max_bytes: u64,
    /// Black out password fields in captures.
    pub redact_sensitive: bool,
    /// X11 capture path.
    pub backend: String,
}

/// `safety`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SafetyConfig {
    /// Global panic hotkey.
    pub emergency_hotkey: Vec<String>,
    /// While this file exists the session is stopped.
    pub panic_file: String,
    /// Show that the desktop is under automation.
    pub visual_indicator: bool,
    /// Refuse every action that lands on the operator console's window.
    pub protect_console: bool,
    /// Risk from which a human must confirm.
    pub confirm_threshold: Risk,
    /// Seconds before a pending confirmation is denied.
    pub confirm_timeout_s: f64,
    /// Let benign observations run while a confirmation is pending.
    pub observe_while_confirming: bool,
    /// Idle seconds before session.idle (0 = off).
    pub idle_timeout_s: f64,
    /// What idleness does.
    pub idle_action: String,
    /// Effect when no rule matched (deny = allowlist mode).
    pub default_rule: Effect,
    /// Policy rules.
    pub rules: Vec<Rule>,
}

/// `a11y`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct A11yConfig {
    /// Snapshot level.
    pub default_level: String,
    /// Longest name at the standard level.
    pub max_name_len: usize,
    /// Include canvas rects.
    pub include_rects: bool,
    /// Most nodes ever read from the platform.
    pub hard_walk_cap: usize,
}

/// `runtime`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuntimeConfig {
    /// Pause between batch items.
    pub batch_gap_ms: u64,
    /// Longest wait.pause.
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
    /// Agent bearer token (generated when empty).
    pub token: String,
    /// Operator bearer token (never generated: without one, nobody is the operator over HTTP).
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
    /// The principal the token's bearer acts as.
    pub principal_id: String,
    /// The bearer token.
    pub token: String,
}

/// A rule's effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Runs without asking (and, in allowlist mode, is what may run at all).
    Allow,
    /// Refused with `policy_denied`.
    Deny,
    /// A person must approve it first.
    Confirm,
}

/// One policy rule (PROTOCOL §5.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    /// What the rule matches (`match` on the wire).
    #[serde(rename = "match")]
    pub matches: RuleMatch,
    /// What happens on a match.
    pub effect: Effect,
}

/// What a rule applies to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleMatch {
    /// Case-sensitive glob on the tool name.
    pub tool: String,
    /// Match on one argument.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argument: Option<RuleArgument>,
    /// Match on the window the action lands in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<RuleWindow>,
}

/// A match on one (dotted) argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleArgument {
    /// Argument name; a dotted path such as from.x.
    pub name: String,
    /// How value is compared.
    pub matcher: Matcher,
    /// The value to compare with ({x,y,width,height} for in_region).
    pub value: Value,
}

/// Argument matchers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Matcher {
    /// The argument equals the value.
    Equals,
    /// The argument matches the glob.
    Glob,
    /// The argument contains the value.
    Contains,
    /// The argument matches the regular expression.
    Regex,
    /// The point the argument names lies in the `{x, y, width, height}` rectangle.
    InRegion,
}

/// A match on the window an action lands in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleWindow {
    /// Glob on the window's app_id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    /// Glob on the window title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}
