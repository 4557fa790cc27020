//! `targetSensitivity` of an envelope: whether the field a text-entry action writes into
//! is a secret one, so the digest binds that assessment and the policy can ask a human
//! before a model types into a password field.
//!
//! The evidence is the accessibility role in the target evidence the agent captured
//! (a password role on every platform names "password" or "secure":
//! `password_text`, `AXSecureTextField`, `PasswordBox`, …). The kernel cannot re-read the
//! focused element without replacing the agent's latest accessibility snapshot (which
//! would make its next `a11y.*` action stale), so it does not; the engine's gate still
//! checks the real focus when the action runs, so a missing or wrong role can only
//! under-report here, never let the action past the gate. Only `keyboard.type` and
//! `a11y.input` write text; other tools get no assessment.

use cc_contract::{
    DataLabel, SensitivityAssessment, SensitivitySignal, SensitivitySource, TargetEvidence,
    TargetSensitivity,
};

/// Whether a tool writes text into a field.
pub(crate) fn writes_text(tool: &str) -> bool {
    matches!(tool, "keyboard.type" | "a11y.input")
}

/// Whether an accessibility role names a secret field.
fn secure_role(role: &str) -> bool {
    let r = role.to_ascii_lowercase();
    r.contains("password") || r.contains("secure")
}

/// The assessment for a text-entry action (`None` for other tools): `sensitive` with
/// `secure_role` when the target's role is a password role, `non_sensitive` when it
/// names another role, and `unknown` (`native_signal_unavailable`) without a target
/// role. `observed_at` is the preview time (not in the digest).
pub(crate) fn assess(
    tool: &str,
    target: Option<&TargetEvidence>,
    observed_at: String,
) -> Option<TargetSensitivity> {
    if !writes_text(tool) {
        return None;
    }
    let (assessment, source, signals, fields_checked) = match target.and_then(|t| t.role.as_deref())
    {
        Some(role) if secure_role(role) => (
            SensitivityAssessment::Sensitive,
            SensitivitySource::Accessibility,
            vec![SensitivitySignal::SecureRole],
            1,
        ),
        Some(_) => (
            SensitivityAssessment::NonSensitive,
            SensitivitySource::Accessibility,
            Vec::new(),
            1,
        ),
        None => (
            SensitivityAssessment::Unknown,
            SensitivitySource::Unavailable,
            vec![SensitivitySignal::NativeSignalUnavailable],
            0,
        ),
    };
    Some(TargetSensitivity {
        assessment,
        source,
        signals,
        fields_checked,
        observed_at,
    })
}

/// Whether the action writes a secret: into a field assessed sensitive, or text the
/// caller labelled `credential`. Such an action is high risk (as typing into a
/// focused password field is for the engine's gate), so the policy asks a human.
pub(crate) fn writes_secret(
    tool: &str,
    sensitivity: Option<&TargetSensitivity>,
    labels: &[DataLabel],
) -> bool {
    writes_text(tool)
        && (sensitivity.is_some_and(|s| s.assessment == SensitivityAssessment::Sensitive)
            || labels.contains(&DataLabel::Credential))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(role: Option<&str>) -> TargetEvidence {
        serde_json::from_value(serde_json::json!({
            "platform": "virtual", "appId": "a", "observationId": "o", "confidence": 1,
            "capturedAt": "2026-11-29T10:00:00.000Z", "role": role,
        }))
        .unwrap()
    }

    #[test]
    fn password_roles_of_every_platform_are_sensitive() {
        for role in [
            "password_text",
            "AXSecureTextField",
            "PasswordBox",
            "password",
        ] {
            let s = assess("keyboard.type", Some(&target(Some(role))), "t".into()).unwrap();
            assert_eq!(s.assessment, SensitivityAssessment::Sensitive, "{role}");
            assert_eq!(s.signals, [SensitivitySignal::SecureRole]);
            assert_eq!(s.validate(), Ok(()));
        }
        let plain = assess("a11y.input", Some(&target(Some("edit"))), "t".into()).unwrap();
        assert_eq!(plain.assessment, SensitivityAssessment::NonSensitive);
        assert_eq!(plain.validate(), Ok(()));
        let unknown = assess("keyboard.type", Some(&target(None)), "t".into()).unwrap();
        assert_eq!(unknown.assessment, SensitivityAssessment::Unknown);
        assert_eq!(unknown.validate(), Ok(()));
        assert!(assess("pointer.click", Some(&target(Some("password"))), "t".into()).is_none());
    }

    #[test]
    fn credentials_are_secret_only_for_text_entry() {
        assert!(writes_secret(
            "keyboard.type",
            None,
            &[DataLabel::Credential]
        ));
        assert!(!writes_secret(
            "pointer.click",
            None,
            &[DataLabel::Credential]
        ));
        assert!(!writes_secret("keyboard.type", None, &[DataLabel::Private]));
    }
}
