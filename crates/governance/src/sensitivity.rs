//! `targetSensitivity` of an envelope: whether the field a text-entry action writes into
//! is a secret one, so the digest binds that assessment and the policy can ask a human
//! before a model types into a password field.
//!
//! Two sources. The engine's own knowledge comes first (`secret_target` of its
//! assessment, [`cc_engine::Engine::assess`]): the focused element's password state for
//! a tool that types at the focus (`keyboard.type`), the `password` state of the latest
//! snapshot's node for one that sets an element's text (`a11y.input`) — the desktop's facts, which the agent cannot misstate, read without
//! replacing the agent's latest snapshot. When the engine says "password", the action
//! is sensitive whatever the evidence claims. Otherwise (not a password field, or the
//! engine cannot tell: a stale snapshot, a driver error) the accessibility role in the
//! agent's target evidence decides (a password role on every platform names "password"
//! or "secure": `password_text`, `AXSecureTextField`, `PasswordBox`, …), so evidence can
//! only raise the assessment. The engine's gate still checks the real focus when the
//! action runs. Only the tools that write text (their table says so) get an assessment.

use cc_contract::{
    DataLabel, SensitivityAssessment, SensitivitySignal, SensitivitySource, TargetEvidence,
    TargetSensitivity,
};
use cc_engine::assess::Declared;
use cc_engine::tools::ToolDef;

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
    def: &ToolDef,
    target: Option<&TargetEvidence>,
    live: Option<bool>,
    observed_at: String,
) -> Option<TargetSensitivity> {
    if !def.writes_text() {
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

/// What the caller's own word adds to the engine's assessment of a text-entry action:
/// the field is secret when its evidence assesses it sensitive (`evidence`, assessed
/// without the desktop's answer, which the engine adds itself), and the text is secret
/// wherever it goes when the caller labelled it `credential`. Writing a secret is high
/// risk (as typing into a focused password field is for the engine's gate), so the
/// policy asks a human.
pub(crate) fn declared(evidence: Option<&TargetSensitivity>, labels: &[DataLabel]) -> Declared {
    Declared {
        target_secret: evidence.is_some_and(|s| s.assessment == SensitivityAssessment::Sensitive),
        text_secret: labels.contains(&DataLabel::Credential),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_engine::tools::find;

    fn tool(name: &str) -> &'static ToolDef {
        find(name).unwrap()
    }

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
            let s = assess(
                tool("keyboard.type"),
                Some(&target(Some(role))),
                None,
                "t".into(),
            )
            .unwrap();
            assert_eq!(s.assessment, SensitivityAssessment::Sensitive, "{role}");
            assert_eq!(s.signals, [SensitivitySignal::SecureRole]);
            assert_eq!(s.validate(), Ok(()));
        }
        let plain = assess(
            tool("a11y.input"),
            Some(&target(Some("edit"))),
            Some(false),
            "t".into(),
        )
        .unwrap();
        assert_eq!(plain.assessment, SensitivityAssessment::NonSensitive);
        assert_eq!(plain.validate(), Ok(()));
        let unknown = assess(tool("keyboard.type"), Some(&target(None)), None, "t".into()).unwrap();
        assert_eq!(unknown.assessment, SensitivityAssessment::Unknown);
        assert_eq!(unknown.validate(), Ok(()));
        // The engine's knowledge wins over evidence claiming another role, or none.
        for role in [Some("edit"), None] {
            let live = assess(
                tool("keyboard.type"),
                Some(&target(role)),
                Some(true),
                "t".into(),
            );
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
            tool("a11y.input"),
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
                tool("pointer.click"),
                Some(&target(Some("password"))),
                Some(true),
                "t".into()
            )
            .is_none()
        );
    }

    #[test]
    fn credentials_are_secret_only_for_text_entry() {
        // What the engine concludes from the declaration: a secret write needs a tool
        // that writes text and a secret field or secret text.
        let writes_secret = |name: &str, labels: &[DataLabel]| {
            let d = declared(None, labels);
            tool(name).writes_text() && (d.target_secret || d.text_secret)
        };
        assert!(writes_secret("keyboard.type", &[DataLabel::Credential]));
        assert!(!writes_secret("pointer.click", &[DataLabel::Credential]));
        assert!(!writes_secret("keyboard.type", &[DataLabel::Private]));
        let sensitive = assess(
            tool("a11y.input"),
            Some(&target(Some("password"))),
            None,
            "t".into(),
        );
        assert!(declared(sensitive.as_ref(), &[]).target_secret);
    }
}
