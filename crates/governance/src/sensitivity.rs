//! `targetSensitivity` of an envelope: whether the field a text-entry action writes into
//! is a secret one, so the digest binds that assessment and the policy can ask a human
//! before a model types into a password field.
//!
//! Two sources. The engine's own knowledge comes first
//! ([`cc_engine::Engine::text_target_is_password`]): the focused element's password
//! state for `keyboard.type`, the `password` state of the latest snapshot's node for
//! `a11y.input` — the desktop's facts, which the agent cannot misstate, read without
//! replacing the agent's latest snapshot. When the engine says "password", the action
//! is sensitive whatever the evidence claims. Otherwise (not a password field, or the
//! engine cannot tell: a stale snapshot, a driver error) the accessibility role in the
//! agent's target evidence decides (a password role on every platform names "password"
//! or "secure": `password_text`, `AXSecureTextField`, `PasswordBox`, …), so evidence can
//! only raise the assessment. The engine's gate still checks the real focus when the
//! action runs. Only `keyboard.type` and `a11y.input` write text; other tools get no
//! assessment.

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
/// `secure_role` when the engine knows the field is a password field (`live`) or the
/// target's role is a password role, `non_sensitive` when the role names another role,
/// and `unknown` (`native_signal_unavailable`) without a target role. `observed_at` is
/// the preview time (not in the digest).
pub(crate) fn assess(
    tool: &str,
    target: Option<&TargetEvidence>,
    live: Option<bool>,
    observed_at: String,
) -> Option<TargetSensitivity> {
    if !writes_text(tool) {
        return None;
    }
    let role = target.and_then(|t| t.role.as_deref());
    let (assessment, source, signals, fields_checked) = match role {
        _ if live == Some(true) => (
            SensitivityAssessment::Sensitive,
            SensitivitySource::Accessibility,
            vec![SensitivitySignal::SecureRole],
            1,
        ),
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
            let s = assess("keyboard.type", Some(&target(Some(role))), None, "t".into()).unwrap();
            assert_eq!(s.assessment, SensitivityAssessment::Sensitive, "{role}");
            assert_eq!(s.signals, [SensitivitySignal::SecureRole]);
            assert_eq!(s.validate(), Ok(()));
        }
        let plain = assess(
            "a11y.input",
            Some(&target(Some("edit"))),
            Some(false),
            "t".into(),
        )
        .unwrap();
        assert_eq!(plain.assessment, SensitivityAssessment::NonSensitive);
        assert_eq!(plain.validate(), Ok(()));
        let unknown = assess("keyboard.type", Some(&target(None)), None, "t".into()).unwrap();
        assert_eq!(unknown.assessment, SensitivityAssessment::Unknown);
        assert_eq!(unknown.validate(), Ok(()));
        // The engine's knowledge wins over evidence claiming another role, or none.
        for role in [Some("edit"), None] {
            let live = assess("keyboard.type", Some(&target(role)), Some(true), "t".into());
            let live = live.unwrap();
            assert_eq!(
                live.assessment,
                SensitivityAssessment::Sensitive,
                "{role:?}"
            );
            assert_eq!(live.validate(), Ok(()));
        }
        // A field the engine does not know as a password one keeps the evidence's role.
        let claimed = assess(
            "a11y.input",
            Some(&target(Some("password"))),
            Some(false),
            "t".into(),
        );
        assert_eq!(
            claimed.unwrap().assessment,
            SensitivityAssessment::Sensitive
        );
        assert!(
            assess(
                "pointer.click",
                Some(&target(Some("password"))),
                Some(true),
                "t".into()
            )
            .is_none()
        );
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
