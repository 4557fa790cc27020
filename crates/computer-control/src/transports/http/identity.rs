//! Who a bearer token is: its role (PROTOCOL §8) and the principal its governed MCP
//! calls act for (GOVERNANCE.md: "the identity of the HTTP token").

use super::Role;

/// Put into every authenticated request's extensions by the token check; the MCP
/// route reads it to pick the principal of governed tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// What the token may do.
    pub role: Role,
    /// `None` for `http.token` and `http.operator_token`: the host's configured
    /// principal (`governance.principal_id`). `Some` for an `http.agents` entry.
    pub principal: Option<String>,
}
