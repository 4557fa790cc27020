//! A monitor added to a GNOME desk while it runs: Mutter's `ScreenCast.RecordVirtual`
//! makes a virtual monitor that lives as long as the screen-cast session, which lives
//! as long as the D-Bus connection that made it, so the returned guard holds both.

use std::collections::HashMap;
use std::time::Duration;

use futures_util::StreamExt as _;
use zbus::zvariant::{OwnedObjectPath, Value};

/// A virtual monitor; it is unplugged when dropped.
pub struct VirtualMonitor {
    // The stream's reader, then the connection, then the runtime it runs on.
    _frames: cc_desktop_gnome::frames::Frames,
    conn: Option<zbus::Connection>,
    rt: tokio::runtime::Runtime,
    /// The PipeWire node of its stream.
    pub node: u32,
}

impl VirtualMonitor {
    /// Adds a monitor on the session bus at `bus` (its size is what the stream's
    /// consumer negotiates; Mutter's default is 1280×720).
    pub fn add(bus: &str, pipewire: &std::path::Path) -> Result<VirtualMonitor, String> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let (conn, node) = rt.block_on(async {
            let e = |e: zbus::Error| e.to_string();
            let conn = zbus::connection::Builder::address(bus)
                .map_err(e)?
                .build()
                .await
                .map_err(e)?;
            let sc = zbus::Proxy::new(
                &conn,
                "org.gnome.Mutter.ScreenCast",
                "/org/gnome/Mutter/ScreenCast",
                "org.gnome.Mutter.ScreenCast",
            )
            .await
            .map_err(e)?;
            let none: HashMap<&str, Value> = HashMap::new();
            let path: OwnedObjectPath = sc.call("CreateSession", &(none,)).await.map_err(e)?;
            let session = zbus::Proxy::new(
                &conn,
                "org.gnome.Mutter.ScreenCast",
                path,
                "org.gnome.Mutter.ScreenCast.Session",
            )
            .await
            .map_err(e)?;
            let mut opts: HashMap<&str, Value> = HashMap::new();
            opts.insert("cursor-mode", Value::from(0u32));
            let stream_path: OwnedObjectPath =
                session.call("RecordVirtual", &(opts,)).await.map_err(e)?;
            let stream = zbus::Proxy::new(
                &conn,
                "org.gnome.Mutter.ScreenCast",
                stream_path,
                "org.gnome.Mutter.ScreenCast.Stream",
            )
            .await
            .map_err(e)?;
            let mut added = stream
                .receive_signal("PipeWireStreamAdded")
                .await
                .map_err(e)?;
            session.call::<_, _, ()>("Start", &()).await.map_err(e)?;
            let msg = tokio::time::timeout(Duration::from_secs(10), added.next())
                .await
                .ok()
                .flatten()
                .ok_or("no PipeWire node for the virtual monitor")?;
            let (node,): (u32,) = msg.body().deserialize().map_err(e)?;
            Ok::<_, String>((conn, node))
        })?;
        // Mutter makes the monitor once a consumer reads the stream.
        let frames =
            cc_desktop_gnome::frames::Frames::open(&[("virtual".into(), node)], Some(pipewire))
                .map_err(|e| e.to_string())?;
        Ok(VirtualMonitor {
            _frames: frames,
            conn: Some(conn),
            rt,
            node,
        })
    }
}

impl Drop for VirtualMonitor {
    fn drop(&mut self) {
        let _g = self.rt.enter();
        self.conn = None;
    }
}
