//! A remote-desktop session through the desktop portal (`org.freedesktop.portal.
//! RemoteDesktop` with `ScreenCast` sources): what a sandboxed application, or any
//! application on KDE Plasma, is allowed to use. Every step is a request whose answer
//! arrives later as a `Response` signal on a request object the caller names in
//! advance; `Start` raises the desktop's consent dialog and answers only when the user
//! has. Input is sent to the session; frames come over a PipeWire connection the
//! portal opens for this session alone.
//!
//! Consent is remembered with a restore token where the portal can (RemoteDesktop
//! version 2 and later): the token from one start is handed to the next, which then
//! starts without a dialog.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use cc_desktop::DriverError;
use futures_util::StreamExt as _;
use zbus::zvariant::{OwnedObjectPath, OwnedValue, Value};

pub const DESKTOP: &str = "org.freedesktop.portal.Desktop";
pub const PATH: &str = "/org/freedesktop/portal/desktop";
pub const RD: &str = "org.freedesktop.portal.RemoteDesktop";
pub const SC: &str = "org.freedesktop.portal.ScreenCast";
const REQUEST: &str = "org.freedesktop.portal.Request";
const SESSION: &str = "org.freedesktop.portal.Session";

/// How long a step other than `Start` may take to answer.
const STEP_TIMEOUT: Duration = Duration::from_secs(20);

/// `types` of `SelectDevices`: keyboard and pointer.
const DEVICES: u32 = 1 | 2;
/// `types` of `SelectSources`: monitors.
const MONITORS: u32 = 1;
/// `cursor_mode` hidden: the pointer is not drawn into frames (as an X11 capture).
const CURSOR_HIDDEN: u32 = 1;
/// `persist_mode`: until the permission is revoked.
const PERSIST_UNTIL_REVOKED: u32 = 2;

/// The portal's answer to a request that the user turned down.
const CANCELLED: u32 = 1;

/// What the portal offers, read before a session is made (`check` reports it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    /// `org.freedesktop.portal.RemoteDesktop`'s version (0: not offered).
    pub remote_desktop: u32,
    /// `org.freedesktop.portal.ScreenCast`'s version (0: not offered).
    pub screen_cast: u32,
}

impl Offer {
    /// Whether consent can be remembered between sessions (RemoteDesktop version 2
    /// carries `persist_mode` and restore tokens).
    pub fn remembers_consent(&self) -> bool {
        self.remote_desktop >= 2
    }
}

/// Reads the versions of the two interfaces (0 when absent: the portal has no backend
/// for them on this desktop, or no portal runs).
pub async fn offer(conn: &zbus::Connection) -> Offer {
    let version = async |iface: &'static str| -> u32 {
        let Ok(p) = zbus::Proxy::new(conn, DESKTOP, PATH, iface).await else {
            return 0;
        };
        p.get_property::<u32>("version").await.unwrap_or(0)
    };
    Offer {
        remote_desktop: version(RD).await,
        screen_cast: version(SC).await,
    }
}

/// One shared monitor: its PipeWire node and where it sits in the layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stream {
    pub node: u32,
    pub position: (i32, i32),
    pub size: (i32, i32),
}

/// A started portal session.
pub struct Session {
    pub conn: zbus::Connection,
    pub handle: OwnedObjectPath,
    pub streams: Vec<Stream>,
    /// The token that starts the next session without a dialog (when the portal gave
    /// one).
    pub restore_token: Option<String>,
}

fn failed(what: &str) -> impl Fn(zbus::Error) -> DriverError + '_ {
    move |e| DriverError::Failed(format!("desktop portal {what}: {e}"))
}

/// A token unique in this process, as the portal's request and session paths need.
fn token() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "cc{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The request object path the portal will use for `token` from this connection.
fn request_path(conn: &zbus::Connection, token: &str) -> Result<OwnedObjectPath, DriverError> {
    let sender = conn
        .unique_name()
        .map(|n| n.trim_start_matches(':').replace('.', "_"))
        .ok_or_else(|| DriverError::Failed("desktop portal: the bus gave no name".into()))?;
    OwnedObjectPath::try_from(format!("{PATH}/request/{sender}/{token}"))
        .map_err(|e| DriverError::Failed(format!("desktop portal request path: {e}")))
}

type Results = HashMap<String, OwnedValue>;

/// Calls `method` of `iface` with a fresh `handle_token` added to `options` (the last
/// argument, built by `body`), and waits up to `wait` for its `Response`.
async fn request<B>(
    conn: &zbus::Connection,
    iface: &'static str,
    method: &'static str,
    body: impl FnOnce(HashMap<&'static str, Value<'static>>) -> B,
    mut options: HashMap<&'static str, Value<'static>>,
    wait: Duration,
) -> Result<Results, DriverError>
where
    B: serde::Serialize + zbus::zvariant::DynamicType,
{
    let token = token();
    let path = request_path(conn, &token)?;
    let req = zbus::Proxy::new(conn, DESKTOP, path, REQUEST)
        .await
        .map_err(failed(method))?;
    // Subscribed before the call: the answer may come before the call returns.
    let mut responses = req
        .receive_signal("Response")
        .await
        .map_err(failed(method))?;
    options.insert("handle_token", Value::from(token));
    conn.call_method(Some(DESKTOP), PATH, Some(iface), method, &body(options))
        .await
        .map_err(failed(method))?;
    let Ok(Some(msg)) = tokio::time::timeout(wait, responses.next()).await else {
        // Withdraw the request (its dialog, if any) rather than leave it on screen.
        let _ = req.call_method("Close", &()).await;
        return Err(DriverError::Unavailable(format!(
            "desktop portal {method}: no answer within {} s",
            wait.as_secs()
        )));
    };
    let (code, results): (u32, Results) = msg
        .body()
        .deserialize()
        .map_err(|e| DriverError::Failed(format!("desktop portal {method} response: {e}")))?;
    match code {
        0 => Ok(results),
        CANCELLED => Err(DriverError::Unavailable(format!(
            "desktop portal {method}: the user declined"
        ))),
        _ => Err(DriverError::Unavailable(format!(
            "desktop portal {method}: the portal ended the request (code {code})"
        ))),
    }
}

/// The portal tells a sandboxed caller from a host program by opening the caller's
/// `/proc/PID/root`, which a non-dumpable process (the server makes itself one, so the
/// user's other programs cannot read its memory) closes to it: the request is then
/// refused ("Unable to open /proc/PID/root"). The portal looks a connection up once, at
/// its first request, and keeps the answer; so the process is dumpable for that one
/// request only, and non-dumpable again as soon as the request has been answered.
struct Identifiable {
    restore: bool,
}

impl Identifiable {
    fn begin() -> Identifiable {
        use rustix::process::{DumpableBehavior, dumpable_behavior, set_dumpable_behavior};
        let hidden = matches!(dumpable_behavior(), Ok(DumpableBehavior::NotDumpable));
        let restore = hidden && set_dumpable_behavior(DumpableBehavior::Dumpable).is_ok();
        Identifiable { restore }
    }
}

impl Drop for Identifiable {
    fn drop(&mut self) {
        if self.restore {
            let _ = rustix::process::set_dumpable_behavior(
                rustix::process::DumpableBehavior::NotDumpable,
            );
        }
    }
}

/// What a start asks for.
pub struct StartOptions<'a> {
    /// A restore token from an earlier session (used when the portal remembers).
    pub restore_token: Option<&'a str>,
    /// How long the user has to answer the dialog.
    pub consent_timeout: Duration,
    /// Called right before the dialog is raised, with what the user is asked.
    pub on_dialog: &'a (dyn Fn(&str) + Send + Sync),
}

/// Creates a session for keyboard, pointer and every monitor, starts it (the user is
/// asked unless a restore token stands for an earlier answer) and reads the streams.
pub async fn start(
    conn: &zbus::Connection,
    offer: &Offer,
    opts: StartOptions<'_>,
) -> Result<Session, DriverError> {
    if offer.remote_desktop == 0 || offer.screen_cast == 0 {
        return Err(DriverError::Unavailable(
            "the desktop portal offers no RemoteDesktop and ScreenCast here (install \
             xdg-desktop-portal with the desktop's backend: xdg-desktop-portal-gnome or \
             xdg-desktop-portal-kde)"
                .into(),
        ));
    }
    let mut o = HashMap::new();
    o.insert("session_handle_token", Value::from(token()));
    let created = {
        let _readable = Identifiable::begin();
        request(conn, RD, "CreateSession", |o| (o,), o, STEP_TIMEOUT).await?
    };
    let handle: String = created
        .get("session_handle")
        .and_then(|v| String::try_from(v.try_clone().ok()?).ok())
        .ok_or_else(|| DriverError::Failed("desktop portal: no session_handle".into()))?;
    let handle = OwnedObjectPath::try_from(handle)
        .map_err(|e| DriverError::Failed(format!("desktop portal session_handle: {e}")))?;
    let mut session = Session {
        conn: conn.clone(),
        handle: handle.clone(),
        streams: Vec::new(),
        restore_token: None,
    };
    match select_and_start(conn, offer, &opts, &handle, &mut session).await {
        Ok(()) => Ok(session),
        Err(e) => {
            // No half-made session is left behind (nor its dialog).
            session.close().await;
            Err(e)
        }
    }
}

async fn select_and_start(
    conn: &zbus::Connection,
    offer: &Offer,
    opts: &StartOptions<'_>,
    handle: &OwnedObjectPath,
    session: &mut Session,
) -> Result<(), DriverError> {
    let h = || handle.clone();
    let mut o = HashMap::new();
    o.insert("types", Value::from(DEVICES));
    if offer.remembers_consent() {
        o.insert("persist_mode", Value::from(PERSIST_UNTIL_REVOKED));
        if let Some(t) = opts.restore_token {
            o.insert("restore_token", Value::from(t.to_string()));
        }
    }
    request(conn, RD, "SelectDevices", |o| (h(), o), o, STEP_TIMEOUT).await?;
    let mut o = HashMap::new();
    o.insert("types", Value::from(MONITORS));
    o.insert("multiple", Value::from(true));
    let cursor_modes = zbus::Proxy::new(conn, DESKTOP, PATH, SC)
        .await
        .map_err(failed("ScreenCast"))?
        .get_property::<u32>("AvailableCursorModes")
        .await
        .unwrap_or(0);
    if cursor_modes & CURSOR_HIDDEN != 0 {
        o.insert("cursor_mode", Value::from(CURSOR_HIDDEN));
    }
    request(conn, SC, "SelectSources", |o| (h(), o), o, STEP_TIMEOUT).await?;
    (opts.on_dialog)(
        if offer.remembers_consent() && opts.restore_token.is_some() {
            "the desktop may ask the user again to allow remote control and screen sharing \
         (a dialog on the screen: allow remote interaction, then Share)"
        } else {
            "the desktop is asking the user to allow remote control and screen sharing (a \
         dialog on the screen: allow remote interaction, then Share)"
        },
    );
    let started = request(
        conn,
        RD,
        "Start",
        |o| (h(), "", o),
        HashMap::new(),
        opts.consent_timeout,
    )
    .await?;
    let devices = started
        .get("devices")
        .and_then(|v| u32::try_from(v).ok())
        .unwrap_or(0);
    if devices & 2 == 0 {
        return Err(DriverError::Unavailable(
            "desktop portal: the user shared the screen but did not allow remote \
             interaction (pointer and keyboard)"
                .into(),
        ));
    }
    session.streams = started
        .get("streams")
        .map(streams_of)
        .transpose()?
        .unwrap_or_default();
    if session.streams.is_empty() {
        return Err(DriverError::Unavailable(
            "desktop portal: no monitor was shared".into(),
        ));
    }
    session.restore_token = started
        .get("restore_token")
        .and_then(|v| String::try_from(v.try_clone().ok()?).ok());
    Ok(())
}

/// The `streams` of `Start`'s results: `a(ua{sv})`, node id with `position` and
/// `size`.
fn streams_of(v: &OwnedValue) -> Result<Vec<Stream>, DriverError> {
    let list: Vec<(u32, HashMap<String, OwnedValue>)> = v
        .try_clone()
        .map_err(|e| DriverError::Failed(format!("desktop portal streams: {e}")))?
        .try_into()
        .map_err(|e| DriverError::Failed(format!("desktop portal streams: {e}")))?;
    let pair = |props: &HashMap<String, OwnedValue>, key: &str| -> Option<(i32, i32)> {
        props
            .get(key)
            .and_then(|v| <(i32, i32)>::try_from(v.try_clone().ok()?).ok())
    };
    list.into_iter()
        .map(|(node, props)| {
            let size = pair(&props, "size").ok_or_else(|| {
                DriverError::Failed(format!("desktop portal: stream {node} has no size"))
            })?;
            Ok(Stream {
                node,
                position: pair(&props, "position").unwrap_or((0, 0)),
                size,
            })
        })
        .collect()
}

impl Session {
    async fn notify(
        &self,
        method: &str,
        body: &(impl serde::Serialize + zbus::zvariant::DynamicType),
    ) -> Result<(), DriverError> {
        self.conn
            .call_method(Some(DESKTOP), PATH, Some(RD), method, body)
            .await
            .map(|_| ())
            .map_err(|e| DriverError::Failed(format!("desktop portal {method}: {e}")))
    }

    fn no_options() -> HashMap<&'static str, Value<'static>> {
        HashMap::new()
    }

    /// Moves the pointer to (`x`, `y`) inside the stream of `node`.
    pub async fn pointer_to(&self, node: u32, x: f64, y: f64) -> Result<(), DriverError> {
        let body = (&self.handle, Self::no_options(), node, x, y);
        self.notify("NotifyPointerMotionAbsolute", &body).await
    }

    /// Presses or releases a button (a Linux input event code).
    pub async fn button(&self, code: i32, down: bool) -> Result<(), DriverError> {
        let body = (&self.handle, Self::no_options(), code, u32::from(down));
        self.notify("NotifyPointerButton", &body).await
    }

    /// Scrolls one step on `axis` (0 vertical, 1 horizontal).
    pub async fn axis(&self, axis: u32, steps: i32) -> Result<(), DriverError> {
        let body = (&self.handle, Self::no_options(), axis, steps);
        self.notify("NotifyPointerAxisDiscrete", &body).await
    }

    /// Presses or releases the key of a keysym.
    pub async fn keysym(&self, sym: u32, down: bool) -> Result<(), DriverError> {
        let sym =
            i32::try_from(sym).map_err(|_| DriverError::Unavailable(format!("keysym {sym:#x}")))?;
        let body = (&self.handle, Self::no_options(), sym, u32::from(down));
        self.notify("NotifyKeyboardKeysym", &body).await
    }

    /// The PipeWire connection that carries this session's streams.
    pub async fn pipewire(&self) -> Result<OwnedFd, DriverError> {
        let msg = self
            .conn
            .call_method(
                Some(DESKTOP),
                PATH,
                Some(SC),
                "OpenPipeWireRemote",
                &(&self.handle, Self::no_options()),
            )
            .await
            .map_err(failed("OpenPipeWireRemote"))?;
        let fd: zbus::zvariant::OwnedFd = msg
            .body()
            .deserialize()
            .map_err(|e| DriverError::Failed(format!("OpenPipeWireRemote: {e}")))?;
        Ok(fd.into())
    }

    /// Ends the session (the portal also ends it when the connection closes).
    pub async fn close(&self) {
        if let Ok(p) = zbus::Proxy::new(&self.conn, DESKTOP, self.handle.clone(), SESSION).await {
            let _ = p.call_method("Close", &()).await;
        }
    }
}
