//! Configuration (PROTOCOL §9): one spec, layered sources, strict validation.

mod agent;
mod layers;
mod schema;
mod types;

pub use agent::{AGENT_SETTABLE, first_operator_only, patch_of};
pub use layers::{ConfigError, ConfigStack, load_file, validate_patch};
pub use schema::config_json_schema;
pub(crate) use schema::{config_spec, defaults};
pub use types::{
    A11yConfig, AgentToken, AppsConfig, CanvasWidth, CaptureConfig, Config, DisplaySpec, Effect,
    GovernanceConfig, HttpConfig, Matcher, PlatformConfig, Rule, RuleArgument, RuleMatch,
    RuleWindow, RuntimeConfig, SafetyConfig,
};
