//! `notifications/progress` for one tool call that carried a `progressToken`.
//!
//! The engine reports typed progress on its worker thread ([`cc_engine::Progress`]);
//! this queues it and sends the latest at most every [`EVERY`], from the call's own
//! handler (so over Streamable HTTP it travels on the call's stream). Progress only
//! ever grows: a report that would not is dropped, as MCP requires.

use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use cc_engine::{CallControl, Progress};

/// The fastest a call's progress is sent.
pub const EVERY: Duration = Duration::from_millis(100);

/// One call's progress: where the engine's reports arrive and where they go.
pub struct Notifier {
    peer: Peer<RoleServer>,
    token: Option<ProgressToken>,
    rx: UnboundedReceiver<Progress>,
    tx: UnboundedSender<Progress>,
    sent: f64,
    latest: Option<(f64, Option<f64>, String)>,
}

impl Notifier {
    /// A notifier for a call; without a token it sends nothing.
    pub fn new(peer: Peer<RoleServer>, token: Option<ProgressToken>) -> Self {
        let (tx, rx) = unbounded_channel();
        Notifier {
            peer,
            token,
            rx,
            tx,
            sent: f64::NEG_INFINITY,
            latest: None,
        }
    }

    /// Whether the client asked for progress.
    pub fn wanted(&self) -> bool {
        self.token.is_some()
    }

    /// The engine's side: a control whose reports reach this notifier when the
    /// client gave a token or `listen` (the transport looks at reports it does not
    /// send: a vocabulary's wait for a person); otherwise the engine queues none.
    pub fn control(&self, listen: bool) -> CallControl {
        if !self.wanted() && !listen {
            return CallControl::default();
        }
        let tx = self.tx.clone();
        CallControl::reporting(move |p| {
            let _ = tx.send(p);
        })
    }

    /// Takes whatever the engine reported since the last call (keeps the latest).
    pub fn drain(&mut self) {
        while let Ok(p) = self.rx.try_recv() {
            let (done, total, message) = p.parts();
            self.latest = Some((done, Some(total), message));
        }
    }

    /// Waits for the next report from the engine (forever without a token), keeps
    /// it as the latest, and hands it back for a look.
    pub async fn next(&mut self) -> Progress {
        match self.rx.recv().await {
            Some(p) => {
                let (done, total, message) = p.parts();
                self.latest = Some((done, Some(total), message));
                p
            }
            None => std::future::pending().await,
        }
    }

    /// Sets the latest progress directly (a wait the MCP layer itself reports).
    pub fn set(&mut self, done: f64, total: Option<f64>, message: String) {
        self.latest = Some((done, total, message));
    }

    /// Sends the latest progress if it advanced since the last one sent.
    pub async fn flush(&mut self) {
        let Some(token) = self.token.clone() else {
            return;
        };
        let Some((done, total, message)) = self.latest.take() else {
            return;
        };
        if done <= self.sent {
            return;
        }
        self.sent = done;
        let mut param = ProgressNotificationParam::new(token, done).with_message(message);
        if let Some(t) = total {
            param = param.with_total(t);
        }
        if let Err(e) = self.peer.notify_progress(param).await {
            tracing::debug!("progress notification not sent: {e}");
        }
    }
}
