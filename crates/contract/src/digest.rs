//! SHA-256 digests of the contract.
//!
//! * `argsDigest` / `actionDigest`: bare lowercase hex of the canonical action
//!   ([`args_digest`]). It covers what the action does, not when or by whom, so a
//!   re-preview at execute time reaches the same digest.
//! * Postcondition `valueDigest` / `contentDigest` and observed digests: `sha256:` + hex of
//!   the UTF-8 value ([`crate::sha256::value_digest`]).
//! * Session event chain: [`event_hash`].

use serde::Serialize;
use serde_json::{Map, Value};

use crate::canonical::{CanonValue, canonical_string};
use crate::sha256::sha256_hex;
use crate::types::{
    ActionEnvelope, ActionPostcondition, ActionProvenance, ActionResource, DataLabel,
    ExecutionMode, SessionEvent, TargetEvidence, TargetSensitivity,
};

/// `previousHash` of the first event of a chain: 64 zeros.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The JavaScript value of a contract type, through its serde form.
fn canon_of<T: Serialize>(value: &T) -> CanonValue {
    // The contract types serialize infallibly (string keys only, no failing adapters),
    // so an error here is a bug in this crate, not bad input.
    let json = serde_json::to_value(value).expect("contract types serialize to JSON");
    CanonValue::from(&json)
}

/// The members of the canonical action, as the server holds them when it previews.
///
/// Absent optional members (`target`, `provenance`, `postcondition`) are printed as
/// `undefined`, as upstream passes the request's fields through; `resource` is always an
/// object (`{}` when nothing is known) because upstream always derives one.
/// `targetSensitivity` is a member only when present, and without `observedAt`.
#[derive(Debug, Clone, Copy)]
pub struct ArgsDigestInput<'a> {
    /// Plain tool name as requested.
    pub tool: &'a str,
    /// Operation (the tool when the request names none).
    pub operation: &'a str,
    /// The tool arguments, as received.
    pub args: &'a Map<String, Value>,
    /// Requested mode.
    pub mode: ExecutionMode,
    /// Target evidence.
    pub target: Option<&'a TargetEvidence>,
    /// Derived resource; `None` prints `{}`.
    pub resource: Option<&'a ActionResource>,
    /// Data labels (after the server's default of `["unknown"]`).
    pub data_labels: &'a [DataLabel],
    /// Provenance.
    pub provenance: Option<&'a ActionProvenance>,
    /// Postcondition.
    pub postcondition: Option<&'a ActionPostcondition>,
    /// Target sensitivity evidence.
    pub target_sensitivity: Option<&'a TargetSensitivity>,
}

impl<'a> ArgsDigestInput<'a> {
    /// The input for an envelope and the arguments it was previewed with (the envelope does
    /// not carry them), to recheck an envelope's `argsDigest`.
    pub fn from_envelope(envelope: &'a ActionEnvelope, args: &'a Map<String, Value>) -> Self {
        Self {
            tool: &envelope.tool,
            operation: &envelope.operation,
            args,
            mode: envelope.requested_mode,
            target: envelope.target.as_ref(),
            resource: envelope.resource.as_ref(),
            data_labels: &envelope.data_labels,
            provenance: envelope.provenance.as_ref(),
            postcondition: envelope.postcondition.as_ref(),
            target_sensitivity: envelope.target_sensitivity.as_ref(),
        }
    }

    /// The canonical action as a JavaScript value, members in upstream's order.
    pub fn to_canon(&self) -> CanonValue {
        let mut members = vec![
            ("tool", CanonValue::string(self.tool)),
            ("operation", CanonValue::string(self.operation)),
            ("args", CanonValue::from(self.args)),
            ("mode", CanonValue::string(self.mode.as_str())),
            (
                "target",
                CanonValue::or_undefined(self.target.map(canon_of)),
            ),
            (
                "resource",
                self.resource
                    .map(canon_of)
                    .unwrap_or_else(|| CanonValue::Object(Vec::new())),
            ),
            ("dataLabels", canon_of(&self.data_labels)),
            (
                "provenance",
                CanonValue::or_undefined(self.provenance.map(canon_of)),
            ),
            (
                "postcondition",
                CanonValue::or_undefined(self.postcondition.map(canon_of)),
            ),
        ];
        if let Some(sensitivity) = self.target_sensitivity {
            members.push((
                "targetSensitivity",
                CanonValue::from(&sensitivity.digest_form()),
            ));
        }
        CanonValue::object(members)
    }

    /// The canonical string that is hashed.
    pub fn canonical(&self) -> String {
        canonical_string(&self.to_canon())
    }
}

/// The `argsDigest` of an action: bare lowercase hex SHA-256 of its canonical form.
pub fn args_digest(input: &ArgsDigestInput<'_>) -> String {
    sha256_hex(&input.canonical())
}

/// The chain hash of `event` after `previous_hash`: SHA-256 of `previous_hash`, `\n`, and
/// the canonical JSON of the event without `integrity` (upstream's journal rule). A chain
/// starts at [`GENESIS_HASH`].
pub fn event_hash(previous_hash: &str, event: &SessionEvent) -> String {
    let mut json = serde_json::to_value(event).expect("contract types serialize to JSON");
    if let Value::Object(map) = &mut json {
        map.shift_remove("integrity");
    }
    sha256_hex(&format!(
        "{previous_hash}\n{}",
        canonical_string(&CanonValue::from(&json))
    ))
}
