//! Every fixture of `tests/fixtures/v8` and `tests/fixtures/adk-v8` that is an instance
//! of a contract type decodes and re-encodes to the same JSON — the same value and the
//! same member order. Every other file is listed with the reason it is not one, so a new
//! fixture cannot go unnoticed.

use crate::common;

use std::collections::BTreeSet;

use cc_contract::types::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn round_trip<T: DeserializeOwned + Serialize>(relative: &str) -> T {
    let text = common::fixture_text(relative);
    let original: Value = serde_json::from_str(&text).expect("fixture is JSON");
    let typed: T = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{relative}: {e}"));
    let encoded = serde_json::to_value(&typed).expect("encode");
    assert_eq!(encoded, original, "{relative}: value changed");
    // `preserve_order` keeps member order in both, so the compact texts agree too.
    assert_eq!(
        serde_json::to_string(&typed).expect("encode"),
        serde_json::to_string(&original).expect("encode"),
        "{relative}: member order changed"
    );
    typed
}

/// Fixtures that are instances of a contract type, checked by `round_trip`.
const TYPED: &[&str] = &[
    "v8/action-preview.json",
    "adk-v8/action-preview.json",
    "v8/approval-grant.json",
    "v8/control-lease.json",
    "v8/execution-receipt.json",
    "v8/session-event.json",
    "v8/target-reservation.json",
    "v8/session-completion.json",
    "v8/session-deletion.json",
    "adk-v8/session-deletion.json",
    "v8/session-follow-up.json",
];

/// Data files that are not contract objects.
const NOT_CONTRACT_OBJECTS: &[(&str, &str)] = &[
    (
        "v8/multimodal-result.json",
        "an MCP CallToolResult: protocol, not contract",
    ),
    (
        "v8/manifest.json",
        "fixture index; its `errors` are checked against ErrorCode",
    ),
    (
        "v8/safety-corpus.json",
        "test scenarios; their codes are checked below",
    ),
    (
        "v8/reliability-lab-corpus.json",
        "upstream's reliability lab scenarios",
    ),
    (
        "adk-v8/adk-evaluation-receipt-7.0.0.json",
        "an adk-rust evaluation receipt",
    ),
];

#[test]
fn every_fixture_is_accounted_for() {
    let mut listed: BTreeSet<String> = TYPED.iter().map(|s| s.to_string()).collect();
    listed.extend(NOT_CONTRACT_OBJECTS.iter().map(|(s, _)| s.to_string()));
    let mut found = BTreeSet::new();
    for dir in ["v8", "adk-v8"] {
        for entry in std::fs::read_dir(common::fixtures_dir().join(dir)).expect("fixture dir") {
            let name = entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned();
            if name.ends_with(".json") && !name.ends_with(".schema.json") {
                found.insert(format!("{dir}/{name}"));
            }
        }
    }
    assert_eq!(found, listed);
}

#[test]
fn action_previews_round_trip() {
    let v8: ActionPreview = round_trip("v8/action-preview.json");
    assert_eq!(v8.blocker, Some(Blocker::ForegroundRequired));
    assert!(!v8.executable);
    assert_eq!(v8.policy.decision, PolicyVerdict::Allow);
    assert_eq!(v8.envelope.target.as_ref().map(|t| t.confidence), Some(1.0));
    let adk: ActionPreview = round_trip("adk-v8/action-preview.json");
    let sensitivity = adk
        .envelope
        .target_sensitivity
        .as_ref()
        .expect("targetSensitivity");
    sensitivity
        .validate()
        .expect("fixture sensitivity is schema-valid");
    assert_eq!(sensitivity.assessment, SensitivityAssessment::NonSensitive);
    // The adk-rust copy adds targetSensitivity and nothing else.
    let mut stripped = adk.clone();
    stripped.envelope.target_sensitivity = None;
    assert_eq!(stripped, v8);
    for preview in [&v8, &adk] {
        preview
            .envelope
            .postcondition
            .as_ref()
            .expect("postcondition")
            .validate()
            .expect("fixture postcondition is schema-valid");
    }
}

#[test]
fn lease_reservation_receipt_grant_event_round_trip() {
    let lease: ControlLease = round_trip("v8/control-lease.json");
    assert_eq!(
        (lease.kind, lease.state),
        (LeaseKind::Exclusive, LeaseState::Active)
    );
    assert_eq!(lease.boundaries.window_ids, vec![WindowId::Number(42)]);
    let reservation: TargetReservation = round_trip("v8/target-reservation.json");
    assert_eq!(reservation.state, ReservationState::Active);
    let receipt: ExecutionReceipt = round_trip("v8/execution-receipt.json");
    assert_eq!(receipt.status, ReceiptStatus::Committed);
    let result = receipt.result.as_ref().expect("result");
    assert!(
        result.verification.is_none(),
        "upstream never reports verification"
    );
    assert!(result.tool_result.contains_key("structuredContent"));
    let grant: ApprovalGrant = round_trip("v8/approval-grant.json");
    assert_eq!(grant.scope, GrantScope::SessionOperation);
    let event: SessionEvent = round_trip("v8/session-event.json");
    assert_eq!(event.event_type, "action.committed");
    assert!(
        event.integrity.is_none(),
        "the upstream fixture has no integrity"
    );
}

#[test]
fn session_records_round_trip() {
    let session: Session = round_trip("v8/session-completion.json");
    assert!(session.state.is_terminal());
    let old: SessionDeletion = round_trip("v8/session-deletion.json");
    assert_eq!(old.deleted_evidence_frames, None);
    let new: SessionDeletion = round_trip("adk-v8/session-deletion.json");
    assert_eq!(new.deleted_evidence_frames, Some(4));
    let _: SessionFollowUp = round_trip("v8/session-follow-up.json");
}

#[test]
fn manifest_errors_are_error_codes() {
    let manifest = common::fixture_json("v8/manifest.json");
    let mut upstream_only = Vec::new();
    for code in manifest["errors"].as_array().expect("errors") {
        let code: ErrorCode = serde_json::from_value(code.clone()).expect("known code");
        if !code.is_governance_code() {
            upstream_only.push(code);
        }
    }
    assert_eq!(upstream_only, vec![ErrorCode::SessionNotTerminal]);
}

#[test]
fn safety_corpus_codes_decode() {
    let corpus = common::fixture_json("v8/safety-corpus.json");
    for scenario in corpus["scenarios"].as_array().expect("scenarios") {
        let expected = &scenario["expected"];
        if let Some(code) = expected.get("error") {
            let _: ErrorCode = serde_json::from_value(code.clone()).expect("error code");
        }
        for key in ["status", "receiptStatus"] {
            if let Some(status) = expected.get(key) {
                let _: ReceiptStatus = serde_json::from_value(status.clone()).expect("status");
            }
        }
    }
}

fn schema_enum(relative: &str, pointer: &str) -> BTreeSet<String> {
    common::fixture_json(relative)
        .pointer(pointer)
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("{relative}{pointer}"))
        .iter()
        .map(|v| v.as_str().expect("string").to_owned())
        .collect()
}

fn words<T: Copy>(all: &[T], as_str: fn(T) -> &'static str) -> BTreeSet<String> {
    all.iter().map(|v| as_str(*v).to_owned()).collect()
}

#[test]
fn enums_match_the_schemas() {
    let grant = "v8/approval-grant.schema.json";
    assert_eq!(
        schema_enum(grant, "/properties/actionClass/enum"),
        words(ActionClass::ALL, ActionClass::as_str)
    );
    assert_eq!(
        schema_enum(grant, "/properties/mode/enum"),
        words(ExecutionMode::ALL, ExecutionMode::as_str)
    );
    assert_eq!(
        schema_enum(grant, "/properties/scope/enum"),
        words(GrantScope::ALL, GrantScope::as_str)
    );
    let sensitivity = "v8/target-sensitivity.schema.json";
    assert_eq!(
        schema_enum(sensitivity, "/properties/assessment/enum"),
        words(SensitivityAssessment::ALL, SensitivityAssessment::as_str)
    );
    assert_eq!(
        schema_enum(sensitivity, "/properties/source/enum"),
        words(SensitivitySource::ALL, SensitivitySource::as_str)
    );
    assert_eq!(
        schema_enum(sensitivity, "/properties/signals/items/enum"),
        words(SensitivitySignal::ALL, SensitivitySignal::as_str)
    );
    let kinds: BTreeSet<String> =
        common::fixture_json("v8/action-postcondition.schema.json")["oneOf"]
            .as_array()
            .expect("oneOf")
            .iter()
            .map(|v| {
                v["properties"]["kind"]["const"]
                    .as_str()
                    .expect("kind")
                    .to_owned()
            })
            .collect();
    let ours: BTreeSet<String> = ["ui_element", "filesystem", "registry", "process", "window"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(kinds, ours);
}
