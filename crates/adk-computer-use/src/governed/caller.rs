//! [`ToolCaller`]: the one seam between the governed runtime and whatever serves the
//! Part A tools — an MCP client over a process or HTTP, or the in-process kernel.
//!
//! The runtime logic (argument shapes, binding checks at the call boundary, the envelope
//! comparison before execute) is written once against this trait, so the MCP runtime and
//! the local runtime cannot drift apart.

use std::future::Future;

use serde_json::{Map, Value};

use crate::runtime::RuntimeResult;

/// One successful tool answer. Errors (`isError` with `{error, message, details}`) never
/// reach here: callers map them to [`ComputerUseError::Runtime`](crate::ComputerUseError)
/// with the contract code.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolReply {
    /// The structured result, decoded.
    pub structured: Value,
    /// The exact JSON text the server sent for it, so a preview can be kept byte for byte.
    pub raw: String,
    /// An image the tool returned beside the JSON (a screenshot), if any.
    pub image: Option<ToolImage>,
}

/// An image block of a tool answer, already decoded from base64.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolImage {
    /// Its MIME type (`image/png`, ...).
    pub mime_type: String,
    /// The encoded image bytes.
    pub bytes: Vec<u8>,
}

/// What a server says it serves: its tool names and a description of itself.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolListing {
    /// Tool names as callable.
    pub tools: Vec<String>,
    /// The server's own description (name, version, instructions).
    pub server: Value,
}

/// A server of the Part A tools (snake_case arguments, camelCase results).
///
/// Public so a host can put its own transport (or, in a test, a fault-injecting wrapper)
/// under the same governed runtime.
pub trait ToolCaller: Send + Sync {
    /// Calls `tool` with `arguments`. A tool error is
    /// [`ComputerUseError::Runtime`](crate::ComputerUseError) with `operation: tool` and
    /// the contract's code.
    fn call_tool(
        &self,
        tool: &'static str,
        arguments: Map<String, Value>,
    ) -> impl Future<Output = RuntimeResult<ToolReply>> + Send;

    /// Lists the tools the server serves.
    fn list_tools(&self) -> impl Future<Output = RuntimeResult<ToolListing>> + Send;
}
