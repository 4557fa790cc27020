//! Mutter's remote-desktop session with a screen cast of every monitor attached, on one
//! D-Bus connection kept for the driver's life: Mutter ends a session when the
//! connection that created it closes, so a connection per call would lose the seat
//! (and the first key of every call).
//!
//! The connection runs on a runtime with one worker thread of its own, so signals
//! (a stream's PipeWire node, a clipboard transfer an application asks for) are
//! answered while the driver's thread blocks in a call.

use std::collections::HashMap;
use std::time::Duration;

use cc_desktop::DriverError;
use futures_util::StreamExt as _;
use tokio::runtime::Runtime;
use zbus::zvariant::{OwnedObjectPath, Value};

pub const RD_BUS: &str = "org.gnome.Mutter.RemoteDesktop";
const RD_PATH: &str = "/org/gnome/Mutter/RemoteDesktop";
const RD_SESSION: &str = "org.gnome.Mutter.RemoteDesktop.Session";
pub const SC_BUS: &str = "org.gnome.Mutter.ScreenCast";
const SC_PATH: &str = "/org/gnome/Mutter/ScreenCast";
const SC_SESSION: &str = "org.gnome.Mutter.ScreenCast.Session";
const SC_STREAM: &str = "org.gnome.Mutter.ScreenCast.Stream";

/// How long a stream may take to announce its PipeWire node.
const NODE_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest any D-Bus call may take (a hung shell must not hang the driver).
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// `cursor-mode` of a recorded monitor: the pointer is not drawn into frames (as an
/// X11 capture), so moving it repaints nothing.
const CURSOR_HIDDEN: u32 = 0;

/// Maps D-Bus failures to driver errors.
pub fn failed(what: &str) -> impl Fn(zbus::Error) -> DriverError + '_ {
    move |e| DriverError::Failed(format!("{what}: {e}"))
}

/// The runtime the session bus connection lives on (one worker thread).
pub fn runtime() -> Result<Runtime, DriverError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("cc-gnome-dbus")
        .enable_all()
        .build()
        .map_err(|e| DriverError::Failed(format!("tokio runtime: {e}")))
}

/// Joins the session bus: the address given, or the environment's.
pub async fn connect(address: Option<&str>) -> Result<zbus::Connection, DriverError> {
    let builder = match address {
        Some(a) => zbus::connection::Builder::address(a),
        None => zbus::connection::Builder::session(),
    }
    .map_err(|e| DriverError::Unavailable(format!("no session bus: {e}")))?;
    builder
        .method_timeout(CALL_TIMEOUT)
        .build()
        .await
        .map_err(|e| DriverError::Unavailable(format!("no session bus: {e}")))
}

/// Whether a name has an owner on the bus (Mutter's services are not activatable, so
/// an unowned name means this is not a GNOME session, or Mutter is too old).
pub async fn has_owner(conn: &zbus::Connection, name: &str) -> bool {
    let Ok(dbus) = zbus::fdo::DBusProxy::new(conn).await else {
        return false;
    };
    let Ok(name) = zbus::names::BusName::try_from(name) else {
        return false;
    };
    dbus.name_has_owner(name).await.unwrap_or(false)
}

/// One recorded monitor: the stream input is aimed at and its PipeWire node.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub connector: String,
    pub stream: OwnedObjectPath,
    pub node: u32,
}

/// A started remote-desktop session with its screen cast.
pub struct Session {
    pub rd: zbus::Proxy<'static>,
    pub streams: Vec<Recorded>,
}

async fn proxy(
    conn: &zbus::Connection,
    dest: &'static str,
    path: OwnedObjectPath,
    iface: &'static str,
) -> Result<zbus::Proxy<'static>, DriverError> {
    zbus::Proxy::new(conn, dest, path, iface)
        .await
        .map_err(failed(iface))
}

/// Creates the session, records each of `connectors` and starts it. Input needs the
/// stream of the monitor it lands on; frames come from each stream's node.
pub async fn start(conn: &zbus::Connection, connectors: &[String]) -> Result<Session, DriverError> {
    let rd_root = zbus::Proxy::new(conn, RD_BUS, RD_PATH, RD_BUS)
        .await
        .map_err(failed(RD_BUS))?;
    let path: OwnedObjectPath = rd_root
        .call("CreateSession", &())
        .await
        .map_err(failed("RemoteDesktop.CreateSession"))?;
    let rd = proxy(conn, RD_BUS, path, RD_SESSION).await?;
    let id: String = rd
        .get_property("SessionId")
        .await
        .map_err(|e| DriverError::Failed(format!("RemoteDesktop SessionId: {e}")))?;
    let sc_root = zbus::Proxy::new(conn, SC_BUS, SC_PATH, SC_BUS)
        .await
        .map_err(failed(SC_BUS))?;
    let mut opts: HashMap<&str, Value> = HashMap::new();
    opts.insert("remote-desktop-session-id", Value::from(id.as_str()));
    let sc_path: OwnedObjectPath = sc_root
        .call("CreateSession", &(opts,))
        .await
        .map_err(failed("ScreenCast.CreateSession"))?;
    let sc = proxy(conn, SC_BUS, sc_path, SC_SESSION).await?;
    let mut pending = Vec::new();
    for connector in connectors {
        let mut o: HashMap<&str, Value> = HashMap::new();
        o.insert("cursor-mode", Value::from(CURSOR_HIDDEN));
        let stream_path: OwnedObjectPath = sc
            .call("RecordMonitor", &(connector.as_str(), o))
            .await
            .map_err(failed("ScreenCast.RecordMonitor"))?;
        let stream = proxy(conn, SC_BUS, stream_path.clone(), SC_STREAM).await?;
        // Subscribed before Start, which is what makes the node appear.
        let added = stream
            .receive_signal("PipeWireStreamAdded")
            .await
            .map_err(failed("PipeWireStreamAdded"))?;
        pending.push((connector.clone(), stream_path, added));
    }
    rd.call::<_, _, ()>("Start", &())
        .await
        .map_err(failed("RemoteDesktop.Session.Start"))?;
    let mut streams = Vec::new();
    for (connector, stream, mut added) in pending {
        let msg = tokio::time::timeout(NODE_TIMEOUT, added.next())
            .await
            .ok()
            .flatten()
            .ok_or_else(|| {
                DriverError::Failed(format!(
                    "the screen cast of {connector} announced no PipeWire node (is pipewire \
                     running in this session?)"
                ))
            })?;
        let (node,): (u32,) = msg
            .body()
            .deserialize()
            .map_err(|e| DriverError::Failed(format!("PipeWireStreamAdded: {e}")))?;
        streams.push(Recorded {
            connector,
            stream,
            node,
        });
    }
    Ok(Session { rd, streams })
}
