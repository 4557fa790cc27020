//! The MCP handler, one value shared by every transport (stdio, Streamable HTTP, the
//! `/mcp` route of the HTTP transport): the engine and the process's governed kernels.
//!
//! Two families of tools share one list: the plain tools of PROTOCOL.md under
//! MCP-safe names (`pointer.click` → `pointer_click`; input schemas generated from the
//! engine's tool specs) and the governed tools of GOVERNANCE.md Part A. Both are thin
//! mappings: a plain tool's call is made here, at the edge (`Engine::prepare`), handed
//! to the safety gate as it is (`Engine::run_then`) and its answer awaited without a
//! thread parked on it; the governed ones go to `Governance::call` for the caller's
//! principal. Between them, the vendors' vocabularies (`anthropic_computer`,
//! `openai_computer`, `gemini_computer`), translated by the engine into plain tools.
//! Governed, vocabulary and journal calls block, so each runs on tokio's blocking pool.

use std::sync::{Arc, OnceLock};

use axum::http::request::Parts;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use cc_engine::tools::ToolCall;
use cc_engine::tools::tools;
use cc_engine::{CallControl, Engine, Progress, Vocabulary, vocabularies};
use cc_governance::{governed_tool, mcp_tool_name, resolve_tool};
use cc_protocol::{Envelope, ErrorCode};

use super::progress::Notifier;
use super::{approval_wait, check_tool, outputs, portable, presentation, results, schemas};
use crate::transports::identity::Identity;
use cc_governance::{Caller, Kernels};

/// The MCP server: the engine and the governed kernels over it. Cloning is cheap, so
/// the Streamable HTTP service can hand one to each MCP session.
#[derive(Clone)]
pub struct McpServer {
    engine: Engine,
    kernels: Arc<Kernels>,
    /// Serving Streamable HTTP: every call must carry the token's [`Identity`].
    over_http: bool,
    /// The operator console's address (`http://host:port`), once its listener is
    /// bound: where an approval announced to an MCP client links to.
    console: Arc<OnceLock<String>>,
}

impl McpServer {
    /// A server over an engine and the process's governed kernels.
    pub fn new(engine: Engine, kernels: Arc<Kernels>) -> Self {
        McpServer {
            engine,
            kernels,
            over_http: false,
            console: Arc::default(),
        }
    }

    /// Where the operator console listens (`http://host:port`), for every clone of
    /// this server; set once, when its listener is bound.
    pub fn set_console(&self, base: &str) {
        let _ = self.console.set(base.to_string());
    }

    /// The same server for the Streamable HTTP service: a call without the HTTP
    /// request's authenticated identity is refused instead of acting for the host.
    pub fn for_http(&self) -> Self {
        McpServer {
            over_http: true,
            ..self.clone()
        }
    }

    /// Every tool: the plain ones (MCP-safe names), then the governed ones, each with
    /// its input and output schemas (made portable for strict clients), title, icon
    /// and annotations.
    pub(super) fn tool_list() -> Vec<Tool> {
        let plain = tools().iter().map(|t| {
            Tool::new(mcp_tool_name(t.name), t.summary, as_object(t.schema()))
                .with_raw_output_schema(as_object(outputs::plain_output_schema(t)))
                .with_annotations(outputs::plain_annotations(t))
        });
        let governed = schemas::governed_tools()
            .into_iter()
            .map(|(name, description, schema)| {
                Tool::new(name, description, as_object(schema))
                    .with_raw_output_schema(as_object(outputs::governed_output_schema(name)))
                    .with_annotations(outputs::governed_annotations(name))
            });
        let vendor = vocabularies().iter().map(|v| {
            Tool::new(mcp_tool_name(v.name), v.summary, as_object((v.schema)()))
                .with_raw_output_schema(as_object(outputs::vocabulary_output_schema(v)))
                .with_annotations(outputs::vocabulary_annotations())
        });
        plain
            .chain(vendor)
            .chain(governed)
            .chain(std::iter::once(check_tool::tool()))
            .map(presented)
            .collect()
    }

    /// Runs one call: governed first, then plain; `None` for an unknown name.
    /// `control` is the plain tool's own stop and progress sink. A plain tool is handed
    /// to the engine's worker and its answer awaited here, with no thread parked on
    /// it; the rest block (the journal's writes, a vendor's translated steps) and run on
    /// tokio's blocking pool.
    async fn dispatch(
        &self,
        caller: Caller,
        name: String,
        arguments: Value,
        control: CallControl,
    ) -> Result<Option<CallToolResult>, tokio::task::JoinError> {
        let blocks = name == crate::check::TOOL
            || governed_tool(&name).is_some()
            || vocabulary(&name).is_some();
        if !blocks {
            let Some(def) = resolve_tool(&name) else {
                return Ok(None);
            };
            return Ok(Some(self.plain(def.name, &arguments, control).await));
        }
        let server = self.clone();
        tokio::task::spawn_blocking(move || {
            server.dispatch_blocking(&caller, &name, arguments, control)
        })
        .await
    }

    /// A plain tool: the MCP edge makes the typed call; the engine runs it as it is.
    async fn plain(&self, tool: &str, arguments: &Value, control: CallControl) -> CallToolResult {
        let call = match self.engine.prepare(tool, arguments) {
            Ok(call) => call,
            Err(e) => return results::envelope_error(Some(e)),
        };
        let mut env = self.run(call.clone(), control.clone()).await;
        if not_started(&env) {
            let engine = self.engine.clone();
            if let Err(e) = tokio::task::spawn_blocking(move || start_session(&engine)).await {
                tracing::warn!("the engine session did not start: {e}");
            }
            env = self.run(call, control).await;
        }
        if env.ok {
            results::plain(env.result.unwrap_or_else(|| json!({})))
        } else {
            results::envelope_error(env.error)
        }
    }

    /// One plain call through the gate on the worker, its answer awaited with the
    /// same bound and the same answers for a lost or late one as a blocking caller's.
    async fn run(&self, call: ToolCall, control: CallControl) -> Envelope {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let handed = match self.engine.run_then(call, control, move |env| {
            let _ = tx.send(env);
        }) {
            Ok(handed) => handed,
            Err(refused) => return *refused,
        };
        match tokio::time::timeout(handed.wait, rx).await {
            Ok(Ok(env)) => env,
            Ok(Err(_)) => handed.dropped(),
            Err(_) => handed.timed_out(),
        }
    }

    /// The calls that block: the check tool, governed tools (for `caller`), vendor
    /// vocabularies. Run on tokio's blocking pool.
    fn dispatch_blocking(
        &self,
        caller: &Caller,
        name: &str,
        arguments: Value,
        control: CallControl,
    ) -> Option<CallToolResult> {
        if name == crate::check::TOOL {
            return Some(check_tool::call(&self.engine));
        }
        if governed_tool(name).is_some() {
            let out = self
                .kernels
                .for_caller(caller)
                .and_then(|k| k.call(name, &arguments).transpose())
                .transpose()?;
            return Some(match out {
                Ok(v) => results::governed(v),
                Err(e) => results::contract_error(&e),
            });
        }
        let voc = vocabulary(name)?;
        let call = || {
            self.engine
                .call_vocabulary_with(voc, &arguments, control.clone())
        };
        let mut env = call();
        if not_started(&env) {
            start_session(&self.engine);
            env = call();
        }
        Some(results::vocabulary(voc, env))
    }
}

/// The answer of a call made before any engine session: the MCP client has none to
/// start, so the server starts one (`start_session`) and calls again.
fn not_started(env: &Envelope) -> bool {
    env.error.as_ref().map(|e| e.code) == Some(ErrorCode::NotStarted)
}

/// Starts the engine session an MCP client has no `session.start` for (a governed
/// action starts it too). Blocking. A failure is logged; the call made again then
/// answers why.
fn start_session(engine: &Engine) {
    let started = engine.start(&json!({}));
    if !started.ok {
        tracing::warn!(?started.error, "the engine session did not start");
    }
}

/// The vendor vocabulary listed under this MCP name.
fn vocabulary(name: &str) -> Option<&'static Vocabulary> {
    vocabularies()
        .iter()
        .find(|v| mcp_tool_name(v.name) == name)
}

/// Who the caller of a request is, from the HTTP request the SDK hands over (if any).
/// Over HTTP the token check put an [`Identity`] into the request; a call over HTTP
/// without one is refused rather than run as the host (fail closed). Over stdio there
/// is no HTTP request: the host's principal.
fn caller(over_http: bool, parts: Option<&Parts>) -> Result<Caller, ErrorData> {
    let identity = parts.and_then(|p| p.extensions.get::<Identity>());
    match (over_http, identity) {
        (_, Some(id)) => Ok(id.principal.clone().map_or(Caller::Host, Caller::Principal)),
        (false, None) if parts.is_none() => Ok(Caller::Host),
        _ => Err(ErrorData::internal_error(
            "the HTTP request carries no authenticated identity",
            None,
        )),
    }
}

/// A tool as hosts show it: its title (also in the annotations, where clients of the
/// 2025-03-26 revision read it), the icon, and schemas made portable.
fn presented(mut t: Tool) -> Tool {
    let title = presentation::title(&t.name);
    t.input_schema = as_object(portable::portable(Value::Object((*t.input_schema).clone())));
    t.output_schema = t
        .output_schema
        .map(|s| as_object(portable::portable(Value::Object((*s).clone()))));
    t.annotations = t.annotations.map(|mut a| {
        a.title = Some(title.clone());
        a
    });
    t.with_title(title).with_icons(presentation::icons())
}

/// A JSON Schema as the SDK's object type (a non-object schema becomes `{}`).
fn as_object(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(JsonObject::new()),
    }
}

impl McpServer {
    /// Announces the approval that `result` (of `preview_action` or `execute_action`
    /// for `session`) left pending, if any, to the client's user.
    async fn announce_governed(
        &self,
        context: &RequestContext<RoleServer>,
        result: &CallToolResult,
        (session, action, who): (String, Option<String>, Caller),
    ) {
        // A preview without an action id names the one it made in its envelope.
        let action = action.or_else(|| {
            let s = result.structured_content.as_ref()?;
            s.pointer("/envelope/actionId")?
                .as_str()
                .map(str::to_string)
        });
        let kernels = self.kernels.clone();
        let pending = tokio::task::spawn_blocking(move || {
            kernels.for_caller(&who).ok()?.pending_approvals().ok()
        })
        .await
        .ok()
        .flatten()
        .unwrap_or_default();
        if let Some(r) = pending
            .iter()
            .find(|r| r.session_id == session && Some(&r.action_id) == action.as_ref())
        {
            let console = self.console.get().map(String::as_str);
            approval_wait::announce_governed(&self.engine, context, console, r).await;
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "computer-control",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "Governed desktop automation. Plain tools act through the safety gate; \
                 governed tools (start_session, preview_action, execute_action, …) add \
                 sessions, leases, receipts and a hash-chained journal.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(Self::tool_list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let who = caller(self.over_http, context.extensions.get::<Parts>())?;
        let name = request.name.to_string();
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let mut progress = Notifier::new(context.peer.clone(), context.meta.get_progress_token());
        let elicits = !context.peer.supported_elicitation_modes().is_empty();
        let control = progress.control(elicits);
        // A governed action that may wait for the operator: its session and action.
        let governed = matches!(name.as_str(), "preview_action" | "execute_action").then(|| {
            let id = |k: &str| arguments.get(k).and_then(Value::as_str).map(str::to_string);
            (id("session_id"), id("action_id"), who.clone())
        });
        let before = self.engine.bus_stats().last_seq;
        let cancel = control.clone();
        // Boxed, as are the waits for a person below: rmcp spawns a task per request
        // and moves its future as it does, so a future the size of every path's state
        // was copied several times per call, the largest cost of a call over MCP.
        let mut task = Box::pin(self.dispatch(who, name.clone(), arguments, control));
        // The call runs; its progress goes out as it comes (at most every
        // `progress::EVERY`), and a cancellation stops it as the emergency stop would.
        let mut every = tokio::time::interval(super::progress::EVERY);
        let mut cancelled = false;
        // A vendor vocabulary waits for a person inside the call: announced as below.
        let mut announced: Option<approval_wait::Announcement> = None;
        let console = self.console.get().map(String::as_str);
        let out = loop {
            tokio::select! {
                out = &mut task => {
                    // What it reported last goes out before its answer.
                    progress.drain();
                    progress.flush().await;
                    break out;
                }
                p = progress.next() => {
                    if let (Progress::Confirming { request_id, .. }, None) = (&p, &announced)
                        && let Some(parked) = approval_wait::Parked::find(&self.engine, before, request_id)
                    {
                        announced = Some(approval_wait::Announcement::start(
                            &self.engine, &context, &parked, console,
                        ));
                    }
                }
                _ = async {
                    match announced.as_mut() {
                        Some(a) => a.answered(&self.engine).await,
                        None => std::future::pending().await,
                    }
                } => {}
                _ = every.tick() => progress.flush().await,
                _ = context.ct.cancelled(), if !cancelled => {
                    cancelled = true;
                    cancel.cancel();
                }
            }
        }
        .map_err(|e| ErrorData::internal_error(format!("tool task failed: {e}"), None))?;
        if let Some(a) = announced {
            a.finish(&self.engine);
        }
        let Some(result) = out else {
            return Err(ErrorData::invalid_params(format!("no tool {name:?}"), None));
        };
        // A governed action now pending the operator is announced to the client's user.
        if let (Some((Some(session), action, who)), true, false) = (governed, elicits, cancelled) {
            Box::pin(self.announce_governed(&context, &result, (session, action, who))).await;
        }
        // A parked action waits here for a person when the client can be told so.
        if let Some(id) = approval_wait::parked_id(&result)
            && !cancelled
            && resolve_tool(&name).is_some()
            && approval_wait::informable(&context, &progress)
        {
            let waited = Box::pin(approval_wait::wait(
                &self.engine,
                &context,
                console,
                &mut progress,
                &id,
                before,
                result,
            ))
            .await;
            return Ok(waited.into());
        }
        Ok(result.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transports::identity::Role;

    fn parts(identity: Option<Identity>) -> Parts {
        let mut req = axum::http::Request::new(());
        if let Some(id) = identity {
            req.extensions_mut().insert(id);
        }
        req.into_parts().0
    }

    /// What strict clients and hint-driven hosts need of every listed tool: portable
    /// schemas, a title, an icon, and all four hints stated.
    #[test]
    fn every_tool_is_portable_titled_and_fully_annotated() {
        let list = McpServer::tool_list();
        assert_eq!(
            list.len(),
            tools().len() + vocabularies().len() + cc_governance::GOVERNED_TOOLS.len() + 1
        );
        for t in &list {
            let name = t.name.as_ref();
            let input = Value::Object((*t.input_schema).clone());
            assert_eq!(
                portable::problems(&input),
                Vec::<String>::new(),
                "{name} input"
            );
            assert_eq!(
                input["additionalProperties"], false,
                "{name}: closed arguments"
            );
            let output =
                Value::Object((*t.output_schema.clone().expect("an output schema")).clone());
            assert_eq!(
                portable::problems(&output),
                Vec::<String>::new(),
                "{name} output"
            );
            let title = t.title.as_deref().expect("a title");
            assert_ne!(title, name, "{name}: a title of its own");
            assert_eq!(t.icons.as_ref().map(Vec::len), Some(1), "{name}");
            let a = t.annotations.as_ref().expect("annotations");
            assert_eq!(a.title.as_deref(), Some(title), "{name}");
            for (hint, v) in [
                ("readOnlyHint", a.read_only_hint),
                ("destructiveHint", a.destructive_hint),
                ("idempotentHint", a.idempotent_hint),
                ("openWorldHint", a.open_world_hint),
            ] {
                assert!(v.is_some(), "{name}: {hint} stated");
            }
        }
        // The schemas that carried `format: uint*` no longer do, and keep their bounds.
        let lease = list
            .iter()
            .find(|t| t.name == "acquire_control_lease")
            .expect("listed");
        let ttl = &lease.input_schema["properties"]["ttl_ms"];
        assert!(ttl.get("format").is_none(), "{ttl}");
        assert_eq!(ttl["minimum"], 1);
    }

    #[test]
    fn the_caller_comes_from_the_transport_never_from_arguments() {
        assert_eq!(caller(false, None), Ok(Caller::Host));
        let agent_b = Identity {
            role: Role::Agent,
            principal: Some("agent-b".into()),
        };
        let host = Identity {
            role: Role::Operator,
            principal: None,
        };
        assert_eq!(
            caller(true, Some(&parts(Some(agent_b)))),
            Ok(Caller::Principal("agent-b".into()))
        );
        assert_eq!(caller(true, Some(&parts(Some(host)))), Ok(Caller::Host));
        // Over HTTP without an identity, or without the request at all: refused.
        assert!(caller(true, Some(&parts(None))).is_err());
        assert!(caller(true, None).is_err());
        assert!(caller(false, Some(&parts(None))).is_err());
    }
}
