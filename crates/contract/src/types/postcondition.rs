//! Digest-only expected state after an action, verified by the server with an
//! independent read-back. Schema: `action-postcondition.schema.json`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The expected state, tagged by `kind`. Values are never carried raw: a UI value or file
/// content is given as its [`crate::sha256::value_digest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase", deny_unknown_fields)]
pub enum ActionPostcondition {
    /// An accessibility element, found by role and/or label.
    #[serde(rename = "ui_element", rename_all = "camelCase")]
    UiElement {
        /// Accessibility role.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<String>,
        /// Element label.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        label: Option<String>,
        /// Whether the element must exist.
        exists: bool,
        /// `sha256:` digest of the expected value; forbidden when `exists` is false.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value_digest: Option<String>,
    },
    /// A file or directory.
    #[serde(rename = "filesystem", rename_all = "camelCase")]
    Filesystem {
        /// Absolute path.
        path: String,
        /// Whether the path must exist.
        exists: bool,
        /// `sha256:` digest of the expected content; forbidden when `exists` is false.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content_digest: Option<String>,
    },
    /// A Windows registry value. Decoded so an upstream envelope can be read, but this
    /// server cannot verify it: see [`ActionPostcondition::is_supported`].
    #[serde(rename = "registry", rename_all = "camelCase")]
    Registry {
        /// Key path.
        path: String,
        /// Value name.
        name: String,
        /// Whether the value must exist.
        exists: bool,
        /// `sha256:` digest of the expected value; forbidden when `exists` is false.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value_digest: Option<String>,
    },
    /// A process that must have ended. Only absence can be proved, so `running` is always
    /// `false` on the wire.
    #[serde(rename = "process", rename_all = "camelCase")]
    Process {
        /// Process id (at least 1).
        pid: u32,
        /// Always `false`.
        running: NotRunning,
    },
    /// A window that must exist or be gone.
    #[serde(rename = "window", rename_all = "camelCase")]
    Window {
        /// Window id (a number: the schema allows no string here).
        window_id: u64,
        /// Whether the window must exist.
        exists: bool,
    },
}

/// The literal `false` of a process postcondition: decoding `true` is an error, so a
/// "process is running" claim cannot be expressed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct NotRunning;

impl Serialize for NotRunning {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bool(false)
    }
}

impl<'de> Deserialize<'de> for NotRunning {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if bool::deserialize(deserializer)? {
            Err(serde::de::Error::custom(
                "a process postcondition can only assert `running: false`",
            ))
        } else {
            Ok(NotRunning)
        }
    }
}

/// A schema rule of `action-postcondition.schema.json` beyond shape that is broken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PostconditionError {
    /// A digest together with `exists: false`.
    #[error("a digest is not allowed when `exists` is false")]
    DigestWithoutExistence,
    /// A digest that is not `sha256:` + 64 lowercase hex.
    #[error("`{0}` is not a `sha256:` + 64 lowercase hex digest")]
    MalformedDigest(String),
    /// A `ui_element` with neither role nor label.
    #[error("a ui_element postcondition needs a role or a label")]
    UnlocatedElement,
    /// An empty string where the schema requires at least one character.
    #[error("`{0}` must not be empty")]
    EmptyField(&'static str),
    /// Process id 0.
    #[error("pid must be at least 1")]
    ZeroPid,
}

impl ActionPostcondition {
    /// The `kind` tag.
    pub fn kind(&self) -> &'static str {
        match self {
            ActionPostcondition::UiElement { .. } => "ui_element",
            ActionPostcondition::Filesystem { .. } => "filesystem",
            ActionPostcondition::Registry { .. } => "registry",
            ActionPostcondition::Process { .. } => "process",
            ActionPostcondition::Window { .. } => "window",
        }
    }

    /// Whether this server can verify the postcondition. `registry` is Windows-only: a
    /// preview that declares one is blocked with `postcondition_unavailable`.
    pub fn is_supported(&self) -> bool {
        !matches!(self, ActionPostcondition::Registry { .. })
    }

    /// The expected digest, when the postcondition carries one.
    pub fn expected_digest(&self) -> Option<&str> {
        match self {
            ActionPostcondition::UiElement { value_digest, .. }
            | ActionPostcondition::Registry { value_digest, .. } => value_digest.as_deref(),
            ActionPostcondition::Filesystem { content_digest, .. } => content_digest.as_deref(),
            ActionPostcondition::Process { .. } | ActionPostcondition::Window { .. } => None,
        }
    }

    /// Checks the schema's rules beyond shape (decoding checks only the shape).
    pub fn validate(&self) -> Result<(), PostconditionError> {
        let exists = match self {
            ActionPostcondition::UiElement {
                role,
                label,
                exists,
                ..
            } => {
                if role.is_none() && label.is_none() {
                    return Err(PostconditionError::UnlocatedElement);
                }
                non_empty("role", role.as_deref())?;
                non_empty("label", label.as_deref())?;
                *exists
            }
            ActionPostcondition::Filesystem { path, exists, .. } => {
                non_empty("path", Some(path))?;
                *exists
            }
            ActionPostcondition::Registry {
                path, name, exists, ..
            } => {
                non_empty("path", Some(path))?;
                non_empty("name", Some(name))?;
                *exists
            }
            ActionPostcondition::Process { pid, .. } => {
                return if *pid == 0 {
                    Err(PostconditionError::ZeroPid)
                } else {
                    Ok(())
                };
            }
            ActionPostcondition::Window { .. } => return Ok(()),
        };
        match self.expected_digest() {
            Some(_) if !exists => Err(PostconditionError::DigestWithoutExistence),
            Some(digest) if !crate::sha256::is_value_digest(digest) => {
                Err(PostconditionError::MalformedDigest(digest.to_owned()))
            }
            _ => Ok(()),
        }
    }
}

fn non_empty(field: &'static str, value: Option<&str>) -> Result<(), PostconditionError> {
    match value {
        Some("") => Err(PostconditionError::EmptyField(field)),
        _ => Ok(()),
    }
}
