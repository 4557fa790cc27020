//! What the server can do for an operation on an app, and at what cost to the user.

use serde::{Deserialize, Serialize};

use super::action::ExecutionMode;
use super::number::js_f64;

wire_enum! {
    /// How much an operation disturbs the user's desktop.
    pub enum InterferenceLevel {
        /// None.
        None = "none",
        /// Draws an overlay only.
        VisualOverlayOnly = "visual_overlay_only",
        /// May raise a window.
        MayRaiseWindow = "may_raise_window",
        /// Takes keyboard focus.
        TakesForeground = "takes_foreground",
        /// Moves the user's physical pointer.
        MovesPhysicalPointer = "moves_physical_pointer",
    }
}

wire_enum! {
    /// How the capability was established.
    pub enum VerificationSource {
        /// A static rule for the platform.
        PlatformRule = "platform_rule",
        /// A live probe of the app.
        LiveProbe = "live_probe",
        /// A certified adapter.
        Adapter = "adapter",
        /// Not known.
        Unknown = "unknown",
    }
}

/// Certification of an adapter-backed capability (upstream's `certification`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CapabilityCertification {
    /// Certification id.
    pub certification_id: String,
    /// Adapter id.
    pub adapter_id: String,
    /// Adapter version.
    pub adapter_version: String,
    /// Certified app version.
    pub app_version: String,
    /// Certified tool.
    pub tool: String,
    /// Digest of the certified action contract.
    pub action_contract_digest: String,
    /// Fingerprint of the probe.
    pub probe_fingerprint: String,
    /// Digest of the certification trace.
    pub trace_digest: String,
    /// End of validity (RFC 3339).
    pub valid_until: String,
}

/// The capability a preview selected for its action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecutionCapability {
    /// App the capability covers, `*` for any.
    pub app_id: String,
    /// Operation covered.
    pub operation: String,
    /// Backend performing it. Open text: upstream uses `applescript javascript powershell
    /// scripting ax uia filesystem registry process physical_input browser none`, and other
    /// servers name their own backends.
    pub backend: String,
    /// Modes the backend can honour.
    pub supported_modes: Vec<ExecutionMode>,
    /// Disturbance to the user.
    pub interference: InterferenceLevel,
    /// Confidence, 0..=1.
    #[serde(with = "js_f64")]
    pub confidence: f64,
    /// When it was last verified (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_at: Option<String>,
    /// How it was established.
    pub verification_source: VerificationSource,
    /// Adapter certification, for adapter-backed capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certification: Option<CapabilityCertification>,
}
