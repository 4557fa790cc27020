//! Accessibility over AT-SPI (D-Bus), for any Linux desktop driver (X11, Wayland).
//!
//! The driver is blocking, so a small tokio runtime lives here and every call is
//! `block_on`. The runtime is single-threaded: the connection's reader and the
//! operation run on the calling thread, so a snapshot's hundred replies wake no other
//! thread. Between operations nothing reads the connection, and nothing needs to: no
//! signal is subscribed (the one registered event only turns GTK's cache on), so
//! nothing accumulates. Only during a wait on a condition ([`A11y::watch`]) are
//! object and window events asked for and heard (`events.rs`). The bus is joined lazily and re-tried, so an accessibility bus
//! that starts after the driver is still found.
//!
//! What a driver supplies is its list of top-level windows ([`Toplevel`]): the
//! accessible top-levels of each application are matched to them, which gives every
//! node its `window_id`.

#![warn(missing_docs)]

mod actions;
mod bus;
mod events;
mod matching;
mod roles;
mod snapshot;
mod toplevel;
mod tree;

use std::collections::HashMap;
use std::future::Future;
use std::time::{Duration, Instant};

use tokio::runtime::Runtime;

use bus::Bus;
use cc_desktop::{DriverError, ElementHandle, ElementInfo, RawNode, SemanticAction};
pub use toplevel::Toplevel;

/// How long a failed connection attempt is remembered before trying again.
const RETRY: Duration = Duration::from_secs(30);
/// The whole of one operation (a snapshot of many applications included).
const OP_TIMEOUT: Duration = Duration::from_secs(10);
/// Joining the bus at start.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// What the driver keeps between operations on the bus.
#[derive(Default)]
struct Memo {
    /// Process id per application bus name (names are never reused).
    pids: HashMap<String, Option<u32>>,
    /// What the latest snapshot of each scope asked the applications for.
    recent: snapshot::Recent,
    /// The applications were asked for object and window events (kept once asked).
    registered: bool,
}

/// A driver's connection to the accessibility bus and what it remembers between
/// operations.
pub struct A11y {
    // The bus and the event subscription are declared (so dropped) before the runtime
    // they run on.
    events: Option<events::Events>,
    bus: Option<Bus>,
    rt: Option<Runtime>,
    tried: Option<Instant>,
    /// Why the bus is unavailable, for `check`.
    pub error: Option<String>,
    /// What earlier operations learned (process ids, the latest snapshots' requests).
    memo: Memo,
    /// The session bus to ask for the accessibility bus (else the environment's).
    session: Option<String>,
    /// The accessibility bus address the display server publishes (X11's
    /// `AT_SPI_BUS` root-window property), tried before asking the session bus.
    pub x_address: Option<String>,
    /// Walk trees even where a bulk cache exists (the path toolkits without a cache
    /// take, exercised by tests).
    walk_only: bool,
}

impl A11y {
    /// Builds the runtime and tries the bus once.
    pub fn new(session: Option<String>, x_address: Option<String>, walk_only: bool) -> A11y {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build();
        let mut a = A11y {
            error: rt.as_ref().err().map(|e| format!("tokio runtime: {e}")),
            rt: rt.ok(),
            events: None,
            bus: None,
            tried: None,
            memo: Memo::default(),
            session,
            x_address,
            walk_only,
        };
        let _ = a.connect();
        a
    }

    /// True when no connection attempt is due (joined, or failed moments ago).
    pub fn settled(&self) -> bool {
        self.bus.is_some() || self.tried.is_some_and(|t| t.elapsed() < RETRY)
    }

    /// True when the bus is joined.
    pub fn available(&self) -> bool {
        self.bus.is_some()
    }

    fn connect(&mut self) -> Result<(), DriverError> {
        if self.bus.is_some() {
            return Ok(());
        }
        if self.tried.is_some_and(|t| t.elapsed() < RETRY) {
            return Err(DriverError::Unavailable(
                self.error
                    .clone()
                    .unwrap_or_else(|| "no accessibility bus".into()),
            ));
        }
        self.tried = Some(Instant::now());
        let Some(rt) = self.rt.as_ref() else {
            return Err(DriverError::Unavailable(
                self.error.clone().unwrap_or_default(),
            ));
        };
        let r = rt.block_on(async {
            tokio::time::timeout(
                CONNECT_TIMEOUT,
                Bus::connect(self.session.as_deref(), self.x_address.as_deref()),
            )
            .await
            .unwrap_or_else(|_| {
                Err(DriverError::Unavailable(
                    "accessibility bus: connection timed out".into(),
                ))
            })
        });
        match r {
            Ok(mut b) => {
                b.walk_only = self.walk_only;
                self.bus = Some(b);
                self.error = None;
                Ok(())
            }
            Err(e) => {
                self.error = Some(e.to_string());
                Err(e)
            }
        }
    }

    /// Runs one operation on the bus with an overall timeout.
    fn run<T>(
        &mut self,
        op: impl AsyncFnOnce(&Bus, &mut Memo) -> Result<T, DriverError>,
    ) -> Result<T, DriverError> {
        self.connect()?;
        let (Some(rt), Some(bus)) = (self.rt.as_ref(), self.bus.as_ref()) else {
            return Err(DriverError::Unavailable("no accessibility bus".into()));
        };
        let r = rt.block_on(timeout(op(bus, &mut self.memo)));
        if let Err(DriverError::Unavailable(_)) = &r {
            // The bus went away (session ended): join again next time, and ask the
            // new bus's applications for events again.
            self.bus = None;
            self.memo.registered = false;
        }
        r
    }

    /// The accessibility tree of every matched top-level (or only `window`), at most
    /// `max_nodes` nodes.
    pub fn tree(
        &mut self,
        wins: &[Toplevel],
        window: Option<u64>,
        max_nodes: usize,
    ) -> Result<Vec<RawNode>, DriverError> {
        self.run(async |bus, m| {
            snapshot::tree(bus, &mut m.pids, &mut m.recent, wins, window, max_nodes).await
        })
    }

    /// Re-reads one element; `None` when it is gone.
    pub fn element(
        &mut self,
        wins: &[Toplevel],
        handle: &ElementHandle,
    ) -> Result<Option<ElementInfo>, DriverError> {
        actions::parse_handle(handle)?;
        self.run(async |bus, m| actions::element(bus, &mut m.pids, wins, handle).await)
    }

    /// Performs a semantic action through the element's Action interface.
    pub fn perform(
        &mut self,
        handle: &ElementHandle,
        action: SemanticAction,
    ) -> Result<(), DriverError> {
        actions::parse_handle(handle)?;
        self.run(async |bus, _| actions::perform(bus, handle, action).await)
    }

    /// Replaces the element's text through EditableText.
    pub fn set_text(&mut self, handle: &ElementHandle, text: &str) -> Result<(), DriverError> {
        actions::parse_handle(handle)?;
        self.run(async |bus, _| actions::set_text(bus, handle, text).await)
    }

    /// Starts (`on`) or stops hearing the applications' object and window events, for
    /// a wait on a condition. True when events will arrive.
    pub fn watch(&mut self, on: bool) -> bool {
        if !on {
            // The match rules go with the streams; the registrations stay.
            if let (Some(ev), Some(rt)) = (self.events.take(), self.rt.as_ref()) {
                rt.block_on(async { drop(ev) });
            }
            return false;
        }
        if self.events.is_some() {
            return true;
        }
        if self.connect().is_err() {
            return false;
        }
        let (Some(rt), Some(bus)) = (self.rt.as_ref(), self.bus.as_ref()) else {
            return false;
        };
        let registered = self.memo.registered;
        let (registered, started) = rt.block_on(async {
            let registered = registered || events::Events::register(bus).await;
            let started = tokio::time::timeout(OP_TIMEOUT, events::Events::start(bus))
                .await
                .unwrap_or_else(|_| Err("the bus did not answer in time".into()));
            (registered, started)
        });
        self.memo.registered = registered;
        // Without the registrations the applications emit nothing: the wait polls.
        self.events = started.ok().filter(|_| registered);
        self.events.is_some()
    }

    /// Waits at most `timeout` for an accessibility event while watching; true when
    /// one (or more) arrived.
    pub fn wait_event(&mut self, timeout: Duration) -> bool {
        let (Some(rt), Some(ev)) = (self.rt.as_ref(), self.events.as_mut()) else {
            std::thread::sleep(timeout);
            return false;
        };
        rt.block_on(ev.wait(timeout))
    }

    /// True when the focused element of the focused window's application is a
    /// password field.
    pub fn focused_is_password(&mut self, wins: &[Toplevel]) -> Result<bool, DriverError> {
        self.run(async |bus, m| actions::focused_is_password(bus, &mut m.pids, wins).await)
    }
}

async fn timeout<T>(fut: impl Future<Output = Result<T, DriverError>>) -> Result<T, DriverError> {
    tokio::time::timeout(OP_TIMEOUT, fut)
        .await
        .unwrap_or_else(|_| {
            Err(DriverError::Failed(
                "accessibility: an application did not answer in time".into(),
            ))
        })
}
