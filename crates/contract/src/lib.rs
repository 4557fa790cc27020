//! Wire types of the governed-action contract (GOVERNANCE.md, Part A) and the upstream
//! canonical JSON and digests that bind them together.
//!
//! Two parties depend on this crate: the governed kernel of the `computer-control` server,
//! which produces these objects, and the `adk-computer-use` library, which receives them and
//! checks them against the request that produced them. Keeping both on one definition means
//! they can never disagree about a field name, an enum spelling or a digest.
//!
//! * [`args`] — the governed tools' arguments (snake_case), shared by the server's
//!   parsing and the library's requests.
//! * [`types`] — serde types, camelCase on the wire. Decoding proves shape, not
//!   provenance: binding a response back to its request is the caller's job. Types whose
//!   upstream schema is closed reject unknown fields; the remaining free-form payloads
//!   (`result`, `payload`, `details`) are kept as JSON maps so nothing is lost.
//! * [`canonical`] — the canonical JSON of the upstream server (JavaScript `localeCompare`
//!   key order, `JSON.stringify` primitives, bare `undefined`), reproduced bit for bit.
//! * [`digest`] — SHA-256 helpers: `argsDigest`, postcondition value digests and the
//!   session-event hash chain.
//! * [`tools`] — the governed tools, one table: names, titles, summaries, effects,
//!   result members.
//! * [`limits`] — the governed tools' numeric limits (lifetimes, budgets, pages).
//! * [`timestamp`] — timestamps stay strings on the wire; this parses them strictly so an
//!   unparseable expiry is an error, never an absent constraint.

#![warn(missing_docs)]

pub mod args;
pub mod canonical;
pub mod digest;
pub mod limits;
pub mod sha256;
pub mod timestamp;
pub mod tools;
pub mod types;

pub use canonical::{CanonValue, JsString, canonical_string};
pub use digest::{ArgsDigestInput, args_digest, event_hash};
pub use sha256::{sha256_hex, value_digest};
pub use timestamp::{TimestampError, format_timestamp, parse_timestamp};
pub use types::*;
