//! Value-free evidence of whether a target field is sensitive (a password box, say),
//! from the accessibility tree. Schema: `target-sensitivity.schema.json`.

use serde::{Deserialize, Serialize};

wire_enum! {
    /// Conclusion of the sensitivity check.
    pub enum SensitivityAssessment {
        /// The target holds sensitive content.
        Sensitive = "sensitive",
        /// The target was inspected and is not sensitive.
        NonSensitive = "non_sensitive",
        /// No conclusion.
        Unknown = "unknown",
    }
}

wire_enum! {
    /// Where the assessment came from.
    pub enum SensitivitySource {
        /// The platform accessibility API.
        Accessibility = "accessibility",
        /// No native signal could be read.
        Unavailable = "unavailable",
    }
}

wire_enum! {
    /// One signal behind an assessment.
    pub enum SensitivitySignal {
        /// Secure accessibility role.
        SecureRole = "secure_role",
        /// Secure accessibility subrole.
        SecureSubrole = "secure_subrole",
        /// Content marked protected.
        ProtectedContent = "protected_content",
        /// UI Automation `IsPassword`.
        UiaIsPassword = "uia_is_password",
        /// Label matched a sensitive pattern.
        SensitiveLabel = "sensitive_label",
        /// Several elements matched.
        AmbiguousMatch = "ambiguous_match",
        /// The element was not found.
        ElementNotFound = "element_not_found",
        /// Inspection failed.
        InspectionError = "inspection_error",
        /// The field could not be inspected.
        InvalidField = "invalid_field",
        /// The platform offers no native signal.
        NativeSignalUnavailable = "native_signal_unavailable",
    }
}

/// Sensitivity evidence for the target of an action. In the `argsDigest` without
/// `observedAt` (see [`TargetSensitivity::digest_form`]), so re-inspection at execute time
/// yields the same digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TargetSensitivity {
    /// Conclusion.
    pub assessment: SensitivityAssessment,
    /// Evidence source.
    pub source: SensitivitySource,
    /// Distinct signals, at most 10.
    pub signals: Vec<SensitivitySignal>,
    /// Fields inspected, 0..=100.
    pub fields_checked: u32,
    /// When the inspection ran (RFC 3339).
    pub observed_at: String,
}

/// A schema rule of `target-sensitivity.schema.json` that the evidence breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SensitivityError {
    /// More than 10 signals.
    #[error("at most 10 signals are allowed")]
    TooManySignals,
    /// A signal appears twice.
    #[error("signal `{0}` appears more than once")]
    DuplicateSignal(SensitivitySignal),
    /// More than 100 fields checked.
    #[error("fieldsChecked is at most 100")]
    TooManyFields,
    /// A conclusive assessment without accessibility evidence of at least one field.
    #[error("a conclusive assessment needs source `accessibility` and fieldsChecked >= 1")]
    InconclusiveEvidence,
    /// `sensitive` without a signal.
    #[error("a sensitive assessment needs at least one signal")]
    MissingSignal,
}

impl TargetSensitivity {
    /// Checks the schema's rules beyond shape (decoding checks only the shape).
    pub fn validate(&self) -> Result<(), SensitivityError> {
        if self.signals.len() > 10 {
            return Err(SensitivityError::TooManySignals);
        }
        for (i, signal) in self.signals.iter().enumerate() {
            if self.signals[..i].contains(signal) {
                return Err(SensitivityError::DuplicateSignal(*signal));
            }
        }
        if self.fields_checked > 100 {
            return Err(SensitivityError::TooManyFields);
        }
        if self.assessment != SensitivityAssessment::Unknown
            && (self.source != SensitivitySource::Accessibility || self.fields_checked == 0)
        {
            return Err(SensitivityError::InconclusiveEvidence);
        }
        if self.assessment == SensitivityAssessment::Sensitive && self.signals.is_empty() {
            return Err(SensitivityError::MissingSignal);
        }
        Ok(())
    }

    /// The JSON that enters the `argsDigest`: every field but `observedAt`.
    pub fn digest_form(&self) -> serde_json::Value {
        serde_json::json!({
            "assessment": self.assessment.as_str(),
            "source": self.source.as_str(),
            "signals": self.signals.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
            "fieldsChecked": self.fields_checked,
        })
    }
}
