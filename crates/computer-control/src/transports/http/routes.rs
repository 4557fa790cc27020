//! Every HTTP route, in one table: the router is built from it and the manifest lists
//! it, so a route that is not here is not served and the role matrix test, which
//! covers every entry, cannot miss one.

use serde_json::{Value, json};

/// Which listener serves a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// `--transport http`: everything, `/mcp` included.
    Http,
    /// `--transport mcp-http`: `/mcp` and `/health`.
    McpHttp,
    /// `--operator-listen`: the operator side, never `/mcp`, operator token only.
    Operator,
}

impl Listener {
    fn as_str(self) -> &'static str {
        match self {
            Listener::Http => "http",
            Listener::McpHttp => "mcp-http",
            Listener::Operator => "operator",
        }
    }
}

/// One route.
#[derive(Debug, Clone, Copy)]
pub struct Route {
    /// `GET`, `POST`, or `ANY` (the MCP endpoint answers several).
    pub method: &'static str,
    pub path: &'static str,
    /// Served without a token: only what carries no data (health, the console's
    /// static files and its sign-in, after which the page fetches everything else).
    pub public: bool,
    pub on: &'static [Listener],
}

const ALL: &[Listener] = &[Listener::Http, Listener::McpHttp, Listener::Operator];
const CONSOLE: &[Listener] = &[Listener::Http, Listener::Operator];
const MCP: &[Listener] = &[Listener::Http, Listener::McpHttp];

const fn route(
    method: &'static str,
    path: &'static str,
    public: bool,
    on: &'static [Listener],
) -> Route {
    Route {
        method,
        path,
        public,
        on,
    }
}

/// The routes.
pub const ROUTES: &[Route] = &[
    route("GET", "/health", true, ALL),
    route("GET", "/", true, CONSOLE),
    route("GET", "/console/app.js", true, CONSOLE),
    route("GET", "/console/style.css", true, CONSOLE),
    route("POST", "/console/login", true, CONSOLE),
    route("POST", "/console/logout", true, CONSOLE),
    route("POST", "/rpc", false, CONSOLE),
    route("GET", "/events", false, CONSOLE),
    route("GET", "/frame", false, CONSOLE),
    route("GET", "/whoami", false, CONSOLE),
    route("GET", "/approvals", false, CONSOLE),
    route("POST", "/approvals/approve", false, CONSOLE),
    route("POST", "/approvals/deny", false, CONSOLE),
    route("GET", "/journal", false, CONSOLE),
    route("ANY", "/mcp", false, MCP),
];

/// The table as the manifest shows it.
pub fn routes_json() -> Value {
    ROUTES
        .iter()
        .map(|r| {
            json!({
                "method": r.method,
                "path": r.path,
                "auth": if r.public { "none" } else { "bearer" },
                "listeners": r.on.iter().map(|l| l.as_str()).collect::<Vec<_>>(),
            })
        })
        .collect()
}
