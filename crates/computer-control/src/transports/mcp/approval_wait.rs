//! A plain action parked for a person's confirmation, seen from the MCP call that
//! asked for it (PROTOCOL §7).
//!
//! When the client can be kept informed (it sent a `progressToken` or declared
//! elicitation), the call stays open until the request is decided on the operator
//! channel or expires, and then answers what happened: the approved action's own
//! result, or the refusal. Meanwhile the client gets the seconds left as progress,
//! and its user gets an elicitation naming what waits (what it does in its tool's
//! words, tool, arguments as the gate judged them, risk, reason, time left) with a
//! link to that request on the operator
//! console. The elicitation's answer never approves anything: a host may answer it on
//! its own, or wrap its own approvals in one. An accept is recorded as acknowledged,
//! anything else as declined or unavailable; either way the request stays pending.
//! Cancelling the call withdraws the request.

use std::collections::BTreeMap;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, RequestContext};
use serde_json::{Value, json};
use tokio::sync::mpsc::unbounded_channel;

use cc_engine::{Engine, Notice, SharedEvent};
use cc_protocol::{Envelope, ErrorCode, ToolError};

use super::progress::Notifier;
use super::results;

/// How the announcement is recorded (`safety.confirmation_notice {via}`).
const VIA: &str = "mcp_elicitation";

/// How long past its expiry a request may stay unresolved before the call stops
/// waiting for the engine to say so.
const GRACE: Duration = Duration::from_secs(5);

/// What the gate said about the parked action (`safety.confirmation_requested`).
#[derive(Debug, Clone, PartialEq)]
pub struct Parked {
    pub request_id: String,
    pub tool: String,
    /// What it does, in its tool's words (the `title` of its `description`).
    pub what: String,
    pub arguments: Value,
    pub risk: String,
    pub reason: String,
    pub expires_at: String,
    pub timeout_s: f64,
}

impl Parked {
    /// Request `id` as the bus announced it after `after_seq` (from the bus's replay
    /// ring), if it is still there.
    pub fn find(engine: &Engine, after_seq: u64, id: &str) -> Option<Parked> {
        let (replay, _) = engine.subscribe(1, Some(after_seq));
        replay
            .iter()
            .find(|e| e.kind == "safety.confirmation_requested" && e.payload["request_id"] == id)
            .and_then(|e| Parked::from_event(&e.payload))
    }

    fn from_event(p: &Value) -> Option<Parked> {
        Some(Parked {
            request_id: p["request_id"].as_str()?.to_string(),
            tool: p["tool"].as_str().unwrap_or_default().to_string(),
            what: p["description"]["title"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            arguments: p["arguments"].clone(),
            risk: p["risk"].as_str().unwrap_or_default().to_string(),
            reason: p["reason"].as_str().unwrap_or_default().to_string(),
            expires_at: p["expires_at"].as_str().unwrap_or_default().to_string(),
            timeout_s: p["timeout_s"].as_f64().unwrap_or(0.0),
        })
    }

    /// The operator console's page for this request (never with a token: the console
    /// asks the operator to sign in).
    pub fn link(&self, console: &str) -> String {
        format!(
            "{}/#approval={}",
            console.trim_end_matches('/'),
            self.request_id
        )
    }

    /// What the person is told.
    pub fn message(&self, console: Option<&str>, left_s: u64) -> String {
        let args = self.arguments.to_string();
        let args = if args.chars().count() > 400 {
            format!("{}…", args.chars().take(400).collect::<String>())
        } else {
            args
        };
        let reason = if self.reason.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.reason)
        };
        let what = if self.what.is_empty() {
            String::new()
        } else {
            format!("What: {}\n", self.what)
        };
        let head = format!(
            "computer-control: an action waits for a person's approval.\n\
             {what}Tool: {}\nArguments: {args}\nRisk: {}{reason}\n\
             Time left: {left_s} s (expires {}).\n",
            self.tool, self.risk, self.expires_at
        );
        let tail = match console {
            Some(c) => format!(
                "Approve or deny it on the operator console, signed in as the operator: {}\n\
                 Answering this prompt approves nothing.",
                self.link(c)
            ),
            None => "No operator console runs beside this server (start it with \
                     --operator-listen), so only the operator channel's session.confirm can \
                     approve it; otherwise it expires. Answering this prompt approves nothing."
                .to_string(),
        };
        head + &tail
    }
}

/// The `request_id` of an `awaiting_confirmation` answer.
pub fn parked_id(result: &CallToolResult) -> Option<String> {
    let s = result.structured_content.as_ref()?;
    (s["status"] == "awaiting_confirmation")
        .then(|| s["request_id"].as_str().map(str::to_string))
        .flatten()
}

/// Whether the client can be kept informed while a call waits for a person.
pub fn informable(ctx: &RequestContext<RoleServer>, progress: &Notifier) -> bool {
    progress.wanted() || !ctx.peer.supported_elicitation_modes().is_empty()
}

/// How the request ended.
enum End {
    /// The approved action ran: its envelope.
    Ran(Box<Envelope>),
    Denied(Option<String>),
    Expired,
    /// The call was cancelled, so the request was withdrawn.
    Withdrawn,
    /// The approved action finished without its envelope (a bug).
    Unreadable,
}

/// Waits for request `id` (its events after `after_seq`), keeping the client informed.
pub async fn wait(
    engine: &Engine,
    ctx: &RequestContext<RoleServer>,
    console: Option<&str>,
    progress: &mut Notifier,
    id: &str,
    after_seq: u64,
    first: CallToolResult,
) -> CallToolResult {
    let (replay, sub) = engine.subscribe(64, Some(after_seq));
    let (tx, mut rx) = unbounded_channel::<SharedEvent>();
    let mine = |e: &SharedEvent| e.payload["request_id"] == id;
    for e in replay.into_iter().filter(&mine) {
        let _ = tx.send(e);
    }
    // The bus is a blocking channel: a thread forwards this request's events until
    // the wait ends (the receiver is dropped).
    let wanted = id.to_string();
    std::thread::spawn(move || {
        loop {
            match sub.rx.recv_timeout(Duration::from_millis(200)) {
                Ok(e) if e.payload["request_id"] == wanted.as_str() => {
                    if tx.send(e).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) if tx.is_closed() => return,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    });
    let started = Instant::now();
    let mut parked: Option<Parked> = None;
    let mut announced: Option<Announcement> = None;
    let mut approved = false;
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let end = loop {
        tokio::select! {
            ev = rx.recv() => {
                let Some(ev) = ev else { break End::Expired };
                match ev.kind.as_str() {
                    "safety.confirmation_requested" => parked = Parked::from_event(&ev.payload),
                    "safety.confirmation_resolved" if ev.payload["approve"] == true => approved = true,
                    "safety.confirmation_resolved" => {
                        break End::Denied(ev.payload["reason"].as_str().map(str::to_string))
                    }
                    "safety.confirmation_expired" => break End::Expired,
                    "action.finished" => {
                        match serde_json::from_value::<Envelope>(ev.payload["envelope"].clone()) {
                            Ok(env) => break End::Ran(Box::new(env)),
                            Err(_) => break End::Unreadable,
                        }
                    }
                    _ => {}
                }
                if let (Some(p), None) = (&parked, &announced) {
                    // The client hears at once that the call waits, and for how long.
                    report_left(progress, p, started).await;
                    announced = Some(Announcement::start(engine, ctx, p, console));
                }
            }
            _ = async {
                match announced.as_mut() {
                    Some(a) => a.answered(engine).await,
                    None => std::future::pending().await,
                }
            } => {}
            _ = tick.tick() => {
                if let Some(p) = &parked && !approved {
                    report_left(progress, p, started).await;
                    if started.elapsed() > Duration::from_secs_f64(p.timeout_s) + GRACE {
                        break End::Expired;
                    }
                }
            }
            _ = ctx.ct.cancelled() => {
                if !approved {
                    let engine = engine.clone();
                    let withdraw = json!({"request_id": id, "approve": false});
                    let _ = tokio::task::spawn_blocking(move || engine.confirm(&withdraw)).await;
                }
                break End::Withdrawn;
            }
        }
    };
    if let Some(a) = announced {
        a.finish(engine);
    }
    match end {
        End::Ran(env) if env.ok => results::plain(env.result.unwrap_or_else(|| json!({}))),
        End::Ran(env) => results::envelope_error(env.error),
        End::Denied(reason) => results::envelope_error(Some(ToolError::with_data(
            ErrorCode::PolicyDenied,
            format!(
                "{id} was denied{}",
                reason.map(|r| format!(": {r}")).unwrap_or_default()
            ),
            json!({"request_id": id, "denied": true}),
        ))),
        End::Expired => results::envelope_error(Some(ToolError::with_data(
            ErrorCode::ConfirmationExpired,
            format!("{id}: nobody approved it on the operator channel in time; it was denied"),
            json!({"request_id": id}),
        ))),
        End::Withdrawn => first,
        End::Unreadable => results::envelope_error(Some(ToolError::new(
            ErrorCode::DriverFailed,
            format!("{id} ran, but its answer could not be read; the action may have executed"),
        ))),
    }
}

/// A governed action waiting for the operator (`preview_action` or `execute_action` with
/// a pending approval), announced like a plain one: the call answers once the client
/// answered the elicitation (or it timed out with the approval's expiry), and the
/// answer approves nothing. The approval keeps its own course on the operator channel;
/// the client library asks again after the operator's decision.
pub async fn announce_governed(
    engine: &Engine,
    ctx: &RequestContext<RoleServer>,
    console: Option<&str>,
    request: &cc_governance::approvals::ApprovalRequest,
) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let left = cc_contract::parse_timestamp(&request.expires_at)
        .map_or(0, |t| t.unix_timestamp() - now)
        .max(1);
    let parked = Parked {
        request_id: format!("{}/{}", request.session_id, request.action_id),
        tool: request.tool.clone(),
        what: request.description.title.clone(),
        arguments: request.arguments.clone(),
        risk: serde_json::to_value(request.action_class)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        reason: request.reasons.join("; "),
        expires_at: request.expires_at.clone(),
        timeout_s: left as f64,
    };
    let mut a = Announcement::start(engine, ctx, &parked, console);
    if a.elicitation.is_some() {
        a.answered(engine).await;
    }
    a.finish(engine);
}

/// One pending request announced to the client's user, and what came back: recorded
/// once, as `safety.confirmation_notice` (never an approval).
pub struct Announcement {
    request_id: String,
    elicitation: Option<Elicitation>,
    recorded: bool,
}

impl Announcement {
    /// Sends the elicitation the client supports; one that supports none is recorded
    /// at once as unavailable.
    pub fn start(
        engine: &Engine,
        ctx: &RequestContext<RoleServer>,
        p: &Parked,
        console: Option<&str>,
    ) -> Announcement {
        let elicitation = elicit(ctx, p, console);
        if elicitation.is_none() {
            engine.confirmation_notice(
                &p.request_id,
                VIA,
                Notice::DeclinedOrUnavailable("not_supported"),
            );
        }
        Announcement {
            request_id: p.request_id.clone(),
            recorded: elicitation.is_none(),
            elicitation,
        }
    }

    /// Waits for the client's answer and records it (pending forever once recorded).
    pub async fn answered(&mut self, engine: &Engine) {
        let Some(f) = self.elicitation.as_mut() else {
            return std::future::pending().await;
        };
        let answer = f.await;
        self.elicitation = None;
        self.recorded = true;
        let notice = match answer {
            Ok(ElicitationAction::Accept) => Notice::Acknowledged,
            Ok(ElicitationAction::Decline) => Notice::DeclinedOrUnavailable("decline"),
            Ok(ElicitationAction::Cancel) => Notice::DeclinedOrUnavailable("cancel"),
            Ok(_) => Notice::DeclinedOrUnavailable("unknown"),
            Err(()) => Notice::DeclinedOrUnavailable("error"),
        };
        engine.confirmation_notice(&self.request_id, VIA, notice);
    }

    /// The request was decided (or the call ended) before any answer: recorded as
    /// unanswered.
    pub fn finish(self, engine: &Engine) {
        if !self.recorded {
            engine.confirmation_notice(
                &self.request_id,
                VIA,
                Notice::DeclinedOrUnavailable("no_answer"),
            );
        }
    }
}

/// Progress of an approval wait: seconds waited of the timeout, the seconds left said.
async fn report_left(progress: &mut Notifier, p: &Parked, started: Instant) {
    let waited = started.elapsed().as_secs_f64();
    let total = p.timeout_s;
    let left = (total - waited).max(0.0).round() as u64;
    progress.set(
        waited.min(total),
        Some(total),
        format!(
            "waiting for a person to approve {} on the operator channel: {left} s left",
            p.tool
        ),
    );
    progress.flush().await;
}

/// Sends the elicitation the client supports (URL mode to the console's page for the
/// request, else form mode with the link in the message); `None` when it supports
/// neither.
/// An elicitation in flight: the client's answer, or `Err` when there was none.
type Elicitation =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<ElicitationAction, ()>> + Send>>;

fn elicit(
    ctx: &RequestContext<RoleServer>,
    p: &Parked,
    console: Option<&str>,
) -> Option<Elicitation> {
    let modes = ctx.peer.supported_elicitation_modes();
    let left = Duration::from_secs_f64(p.timeout_s.max(1.0));
    let message = p.message(console, p.timeout_s.ceil() as u64);
    let params = match console {
        Some(c) if modes.contains(&ElicitationMode::Url) => {
            ElicitRequestParams::UrlElicitationParams {
                meta: None,
                message,
                url: p.link(c),
                elicitation_id: p.request_id.clone(),
            }
        }
        _ if modes.contains(&ElicitationMode::Form) => ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema: ElicitationSchema::new(BTreeMap::new()),
        },
        _ => return None,
    };
    let peer = ctx.peer.clone();
    Some(Box::pin(async move {
        peer.create_elicitation_with_timeout(params, Some(left))
            .await
            .map(|r| r.action)
            .map_err(|e| tracing::debug!("elicitation: {e}"))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parked() -> Parked {
        Parked::from_event(&json!({
            "request_id": "cfm-1", "tool": "keyboard.combo", "arguments": {"keys": ["win", "r"]},
            "description": {"title": "Press Win + R", "keys": ["win", "r"]},
            "risk": "high", "reason": "risk high", "expires_at": "2026-01-01T00:00:30Z",
            "timeout_s": 30
        }))
        .expect("a request")
    }

    #[test]
    fn the_link_names_the_request_and_never_a_token() {
        let p = parked();
        assert_eq!(
            p.link("http://127.0.0.1:8767/"),
            "http://127.0.0.1:8767/#approval=cfm-1"
        );
        let m = p.message(Some("http://127.0.0.1:8767"), 30);
        for part in [
            "What: Press Win + R",
            "keyboard.combo",
            "\"win\"",
            "high",
            "30 s",
            "#approval=cfm-1",
            "approves nothing",
        ] {
            assert!(m.contains(part), "{part}: {m}");
        }
        assert!(!m.contains("token"), "{m}");
        let none = p.message(None, 12);
        assert!(
            none.contains("--operator-listen") && none.contains("12 s"),
            "{none}"
        );
        assert!(Parked::from_event(&json!({})).is_none());
    }

    #[test]
    fn only_an_awaiting_answer_is_parked() {
        let awaiting = CallToolResult::structured(
            json!({"status": "awaiting_confirmation", "request_id": "cfm-2", "risk": "high"}),
        );
        assert_eq!(parked_id(&awaiting).as_deref(), Some("cfm-2"));
        assert_eq!(
            parked_id(&CallToolResult::structured(json!({"chars": 3}))),
            None
        );
    }
}
