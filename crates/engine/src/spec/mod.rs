//! One declarative description of every argument and config key.
//!
//! Validation (with the protocol's coercions), defaults and the published JSON Schema
//! are all derived from the same [`Ty`] tree, so the schema a model reads can never
//! drift from what the server accepts.

mod json_schema;
mod ty;
mod validate;

pub use json_schema::to_json_schema;
pub use ty::{Default, Field, Ty};
pub(crate) use validate::invalid_args;
pub use validate::{Issue, ValidateMode, validate};
