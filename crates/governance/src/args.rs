//! Arguments of the governed tools: the types live in [`cc_contract::args`] (one
//! definition for the server's parsing and the library's requests); this module adds
//! their decoding into `invalid_arguments` and the server's limits.

pub use cc_contract::args::*;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::{GovResult, invalid};

/// Longest lease, reservation or envelope lifetime (GOVERNANCE.md Part A).
pub const MAX_TTL_MS: u64 = 300_000;
/// Largest lease budget.
pub const MAX_BUDGET: u32 = 10_000;
/// Default envelope lifetime when `expires_in_ms` is absent.
pub const DEFAULT_EXPIRES_MS: u64 = 60_000;

/// Decodes tool arguments, mapping serde's message to `invalid_arguments`.
pub fn parse<T: DeserializeOwned>(args: &Value) -> GovResult<T> {
    let args = if args.is_null() {
        Value::Object(Map::new())
    } else {
        args.clone()
    };
    serde_json::from_value(args).map_err(|e| invalid(format!("invalid arguments: {e}")))
}

/// Checks a TTL is in `1..=MAX_TTL_MS`.
pub fn check_ttl(field: &str, ttl_ms: u64) -> GovResult<()> {
    if ttl_ms == 0 || ttl_ms > MAX_TTL_MS {
        return Err(invalid(format!("{field} must be in 1..={MAX_TTL_MS}")));
    }
    Ok(())
}
