//! Arguments of the governed tools: the types live in [`cc_contract::args`] (one
//! definition for the server's parsing and the library's requests); this module adds
//! their decoding into `invalid_arguments` and the checks of the limits
//! ([`cc_contract::limits`]).

pub use cc_contract::args::*;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::{GovResult, invalid};

pub use cc_contract::limits::{DEFAULT_TTL_MS, MAX_ACTION_BUDGET, MAX_TTL_MS};

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
