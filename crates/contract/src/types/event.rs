//! Session events: the append-only, hash-chained journal of a session.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `integrity` of an event: the chain link. `hash` = SHA-256 of `previousHash`, a newline
/// and the canonical JSON of the event without `integrity` (see [`crate::digest::event_hash`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventIntegrity {
    /// Hash of the previous event of the chain ([`crate::digest::GENESIS_HASH`] first).
    pub previous_hash: String,
    /// Hash of this event.
    pub hash: String,
}

/// The literal `schemaVersion: 1`; any other version is a decode error.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct EventSchemaVersion;

impl Serialize for EventSchemaVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u8(1)
    }
}

impl<'de> Deserialize<'de> for EventSchemaVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match u64::deserialize(deserializer)? {
            1 => Ok(EventSchemaVersion),
            other => Err(serde::de::Error::custom(format!(
                "unsupported session event schemaVersion {other}"
            ))),
        }
    }
}

/// One session event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionEvent {
    /// Always 1.
    pub schema_version: EventSchemaVersion,
    /// Event id.
    pub event_id: String,
    /// Position in the session, from 1, without gaps.
    pub sequence: u64,
    /// Session.
    pub session_id: String,
    /// Action concerned, when any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action_id: Option<String>,
    /// Event type (`action.previewed`, `action.committed`, ...): open-ended.
    #[serde(rename = "type")]
    pub event_type: String,
    /// When it happened (RFC 3339).
    pub at: String,
    /// Principal concerned, when any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal_id: Option<String>,
    /// Type-specific, redacted data.
    pub payload: serde_json::Map<String, serde_json::Value>,
    /// Chain link. This server always sets it; upstream sets it only on events read back
    /// from its opt-in journal, so it is optional for decoding (the v8 fixture has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity: Option<EventIntegrity>,
}
