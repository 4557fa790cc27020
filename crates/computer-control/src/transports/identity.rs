//! Who a caller is: the role of its bearer token (PROTOCOL §8) and the principal its
//! governed MCP calls act for (the identity of the HTTP token). The HTTP transport
//! decides it; the MCP handler reads it. Neither transport owns it.

/// Who a token belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `http.token`: `/rpc`, events, frames; no operator method.
    Agent,
    /// `http.operator_token`: everything.
    Operator,
}

impl Role {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Agent => "agent",
            Role::Operator => "operator",
        }
    }
}

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
