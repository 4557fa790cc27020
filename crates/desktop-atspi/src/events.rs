//! Accessibility events, heard only while the engine waits on a condition: the
//! applications are asked to emit object and window events (`RegisterEvent` on the
//! registry, which toolkits follow), and the bus routes them here (a match rule per
//! event interface). When the wait ends both are withdrawn, so an idle driver costs
//! the applications nothing.

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

/// A wait's subscription.
pub(crate) struct Events {
    streams: SelectAll<MessageStream>,
}

async fn register(bus: &Bus, method: &str, event: &str) -> bool {
    let path = "/org/a11y/atspi/registry";
    if method == "RegisterEvent" {
        let with_props = bus
            .call::<()>(
                REGISTRY,
                path,
                REGISTRY,
                method,
                &(event, Vec::<String>::new(), ""),
            )
            .await;
        if with_props.is_ok() {
            return true;
        }
    }
    bus.call::<()>(REGISTRY, path, REGISTRY, method, &(event,))
        .await
        .is_ok()
}

impl Events {
    /// Subscribes; `None` when the bus refuses the match rules.
    pub async fn start(bus: &Bus) -> Option<Events> {
        let mut streams = SelectAll::new();
        for iface in INTERFACES {
            let rule = zbus::MatchRule::builder()
                .msg_type(zbus::message::Type::Signal)
                .interface(iface)
                .ok()?
                .build();
            streams.push(
                MessageStream::for_match_rule(rule, &bus.conn, Some(QUEUE))
                    .await
                    .ok()?,
            );
        }
        for e in EVENTS {
            // An old registry without the call still forwards what toolkits emit.
            let _ = register(bus, "RegisterEvent", e).await;
        }
        Some(Events { streams })
    }

    /// Withdraws the registrations (the match rules go with the streams).
    pub async fn stop(self, bus: &Bus) {
        for e in EVENTS {
            let _ = register(bus, "DeregisterEvent", e).await;
        }
        drop(self.streams);
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
