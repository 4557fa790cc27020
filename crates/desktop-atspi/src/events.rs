//! Accessibility events, heard only while the engine waits on a condition: the
//! applications are asked once to emit object and window events (`RegisterEvent` on
//! the registry, which toolkits follow, applications started later included), and
//! while a wait runs the bus routes them here (a match rule per event interface). The
//! rules go when the wait ends, so nothing accumulates between waits; the
//! registrations stay, as a screen reader's do, so the next wait hears at once.

use futures_util::StreamExt;
use futures_util::stream::SelectAll;
use zbus::MessageStream;

use crate::bus::{Bus, REGISTRY};

/// The events a wait asks the applications for: tree structure, names, states, and
/// windows opening and closing.
const EVENTS: [&str; 5] = [
    "object:children-changed",
    "object:state-changed",
    "object:property-change:accessible-name",
    "window:create",
    "window:destroy",
];

/// The interfaces those events arrive on.
const INTERFACES: [&str; 2] = ["org.a11y.atspi.Event.Object", "org.a11y.atspi.Event.Window"];

/// Messages kept between two reads at most (only "something happened" matters).
const QUEUE: usize = 256;

/// How long the registry may take to accept the registrations.
const REGISTER_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(1500);

/// A wait's subscription.
pub(crate) struct Events {
    streams: SelectAll<MessageStream>,
}

/// `RegisterEvent`, in the current signature or the older one.
async fn register(bus: &Bus, event: &str) -> bool {
    let path = "/org/a11y/atspi/registry";
    let method = "RegisterEvent";
    let with_props = bus
        .call::<()>(
            REGISTRY,
            path,
            REGISTRY,
            method,
            &(event, Vec::<String>::new(), ""),
        )
        .await;
    with_props.is_ok()
        || bus
            .call::<()>(REGISTRY, path, REGISTRY, method, &(event,))
            .await
            .is_ok()
}

impl Events {
    /// Asks the applications for the events, once per connection; false when the
    /// registry did not take them in time (the next wait asks again).
    pub async fn register(bus: &Bus) -> bool {
        // All at once, and not for long: a registry that is still starting must not
        // hold the wait up (it then polls, and says so).
        let calls = futures_util::future::join_all(EVENTS.map(|e| register(bus, e)));
        matches!(
            tokio::time::timeout(REGISTER_TIMEOUT, calls).await,
            Ok(done) if done.iter().all(|ok| *ok)
        )
    }

    /// Subscribes; the error says why the bus refused the match rules.
    pub async fn start(bus: &Bus) -> Result<Events, String> {
        let mut streams = SelectAll::new();
        for iface in INTERFACES {
            let rule = zbus::MatchRule::builder()
                .msg_type(zbus::message::Type::Signal)
                .interface(iface)
                .map_err(|e| e.to_string())?
                .build();
            streams.push(
                MessageStream::for_match_rule(rule, &bus.conn, Some(QUEUE))
                    .await
                    .map_err(|e| format!("match {iface}: {e}"))?,
            );
        }
        Ok(Events { streams })
    }

    /// Waits at most `timeout` for an event; true when at least one arrived (every
    /// event already queued is taken with it).
    pub async fn wait(&mut self, timeout: std::time::Duration) -> bool {
        let got = matches!(
            tokio::time::timeout(timeout, self.streams.next()).await,
            Ok(Some(_))
        );
        if got {
            while let Some(Some(_)) = futures_util::FutureExt::now_or_never(self.streams.next()) {}
        }
        got
    }
}
