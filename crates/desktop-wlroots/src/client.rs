//! The Wayland connection: the globals this driver binds, and the state their events
//! keep (outputs, toplevels, the screencopy frames in flight, the clipboard's offers).

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;

use wayland_client::globals::{GlobalList, GlobalListContents, registry_queue_init};
use wayland_client::protocol::{
    wl_buffer::WlBuffer, wl_output::WlOutput, wl_registry::WlRegistry, wl_seat::WlSeat,
    wl_shm::WlShm, wl_shm_pool::WlShmPool,
};
use wayland_client::{
    Connection, Dispatch, EventQueue, Proxy, QueueHandle, WEnum, event_created_child,
};
use wayland_protocols::xdg::xdg_output::zv1::client::{
    zxdg_output_manager_v1::ZxdgOutputManagerV1, zxdg_output_v1,
};
use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::{
    zwp_virtual_keyboard_manager_v1::ZwpVirtualKeyboardManagerV1,
    zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1,
};
use wayland_protocols_wlr::data_control::v1::client::{
    zwlr_data_control_device_v1::{self, ZwlrDataControlDeviceV1},
    zwlr_data_control_manager_v1::ZwlrDataControlManagerV1,
    zwlr_data_control_offer_v1::{self, ZwlrDataControlOfferV1},
    zwlr_data_control_source_v1::{self, ZwlrDataControlSourceV1},
};
use wayland_protocols_wlr::foreign_toplevel::v1::client::{
    zwlr_foreign_toplevel_handle_v1::{self, ZwlrForeignToplevelHandleV1},
    zwlr_foreign_toplevel_manager_v1::{self, ZwlrForeignToplevelManagerV1},
};
use wayland_protocols_wlr::screencopy::v1::client::{
    zwlr_screencopy_frame_v1::{self, ZwlrScreencopyFrameV1},
    zwlr_screencopy_manager_v1::ZwlrScreencopyManagerV1,
};
use wayland_protocols_wlr::virtual_pointer::v1::client::{
    zwlr_virtual_pointer_manager_v1::ZwlrVirtualPointerManagerV1,
    zwlr_virtual_pointer_v1::ZwlrVirtualPointerV1,
};

use cc_desktop::DriverError;

/// One output as `wl_output` and `xdg_output` describe it.
#[derive(Debug)]
pub struct Output {
    pub wl: WlOutput,
    pub xdg: Option<zxdg_output_v1::ZxdgOutputV1>,
    /// The connector name (`HEADLESS-1`, `DP-2`).
    pub name: String,
    /// Position and size in the compositor's layout (logical pixels).
    pub logical: Option<(i32, i32, i32, i32)>,
    /// The current mode (buffer pixels).
    pub mode: (i32, i32),
    pub scale: i32,
}

/// A toplevel as the foreign-toplevel protocol describes it.
#[derive(Debug, Default, Clone)]
pub struct ForeignToplevel {
    pub title: String,
    pub app_id: String,
    pub activated: bool,
    /// Minimized (the compositor says so; sway never minimizes).
    pub minimized: bool,
    /// `done` arrived at least once.
    pub ready: bool,
    /// Outputs it is on (by `wl_output` id).
    pub outputs: Vec<u32>,
}

/// What the compositor said about one screencopy frame.
#[derive(Debug, Default, Clone, Copy)]
pub struct FrameState {
    /// `wl_shm` format, width, height, stride.
    pub shm: Option<(u32, u32, u32, u32)>,
    /// Every buffer type was announced (version 3), or the version has no such event.
    pub buffers_done: bool,
    pub y_invert: bool,
    pub ready: bool,
    pub failed: bool,
}

/// Everything the events keep.
#[derive(Debug, Default)]
pub struct State {
    /// Outputs by registry name.
    pub outputs: BTreeMap<u32, Output>,
    /// Toplevels by protocol object id.
    pub toplevels: BTreeMap<u32, (ZwlrForeignToplevelHandleV1, ForeignToplevel)>,
    /// Something about the outputs changed since the layout was last read.
    pub outputs_changed: bool,
    /// Screencopy frames by protocol object id (removed when the frame is destroyed).
    pub frames: BTreeMap<u32, FrameState>,
    pub xdg_manager: Option<ZxdgOutputManagerV1>,
    /// Data offers announced to the clipboard device, by object id, with their MIME
    /// types (destroyed once they are neither the selection nor still arriving).
    pub offers: BTreeMap<u32, (ZwlrDataControlOfferV1, Vec<String>)>,
    /// The clipboard's current content as an offer; `None`: the clipboard is empty.
    pub selection: Option<u32>,
    /// The clipboard device was taken away (`finished`): it serves nothing any more.
    pub device_finished: bool,
    /// Paste requests for what this driver put on the clipboard: the source's object
    /// id, a MIME type and the pipe to write it into.
    pub source_sends: Vec<(u32, String, OwnedFd)>,
    /// Sources of this driver whose clipboard another client took, by object id.
    pub cancelled_sources: Vec<u32>,
}

/// The bound globals.
pub struct Client {
    pub conn: Connection,
    pub queue: EventQueue<State>,
    pub qh: QueueHandle<State>,
    pub state: State,
    pub seat: Option<WlSeat>,
    pub shm: Option<WlShm>,
    pub pointer_manager: Option<ZwlrVirtualPointerManagerV1>,
    pub keyboard_manager: Option<ZwpVirtualKeyboardManagerV1>,
    pub screencopy: Option<ZwlrScreencopyManagerV1>,
    pub toplevel_manager: Option<ZwlrForeignToplevelManagerV1>,
    pub data_control: Option<ZwlrDataControlManagerV1>,
    /// The seat's clipboard, through the data-control protocol.
    pub data_device: Option<ZwlrDataControlDeviceV1>,
    /// The compositor's own name for the display socket.
    pub display: String,
}

/// How long a full socket is waited on before the compositor counts as stuck.
const FLUSH_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

fn werr(what: &'static str) -> impl Fn(String) -> DriverError {
    move |e| DriverError::Failed(format!("wayland {what}: {e}"))
}

fn bind<I: Proxy + 'static>(
    globals: &GlobalList,
    qh: &QueueHandle<State>,
    versions: std::ops::RangeInclusive<u32>,
) -> Option<I>
where
    State: Dispatch<I, ()>,
{
    globals.bind::<I, State, ()>(qh, versions, ()).ok()
}

impl Client {
    /// Connects to `$WAYLAND_DISPLAY` (or `display`), binds what is offered and reads
    /// the outputs and toplevels once.
    pub fn connect(display: Option<&str>) -> Result<Client, DriverError> {
        let name = display
            .map(str::to_string)
            .or_else(|| std::env::var("WAYLAND_DISPLAY").ok())
            .filter(|d| !d.trim().is_empty())
            .ok_or_else(|| DriverError::Unavailable("no $WAYLAND_DISPLAY".into()))?;
        let conn = if display.is_some() {
            let path = if name.starts_with('/') {
                std::path::PathBuf::from(&name)
            } else {
                let dir = std::env::var_os("XDG_RUNTIME_DIR").ok_or_else(|| {
                    DriverError::Unavailable("no $XDG_RUNTIME_DIR for the Wayland socket".into())
                })?;
                std::path::Path::new(&dir).join(&name)
            };
            let stream = std::os::unix::net::UnixStream::connect(&path).map_err(|e| {
                DriverError::Unavailable(format!("wayland display {}: {e}", path.display()))
            })?;
            Connection::from_socket(stream)
                .map_err(|e| DriverError::Unavailable(format!("wayland display {name}: {e}")))?
        } else {
            Connection::connect_to_env()
                .map_err(|e| DriverError::Unavailable(format!("wayland display {name}: {e}")))?
        };
        let (globals, queue) = registry_queue_init::<State>(&conn)
            .map_err(|e| DriverError::Unavailable(format!("wayland display {name}: {e}")))?;
        let qh = queue.handle();
        let mut state = State {
            xdg_manager: bind(&globals, &qh, 1..=3),
            ..State::default()
        };
        let outputs: Vec<(u32, u32)> = globals.contents().with_list(|l| {
            l.iter()
                .filter(|g| g.interface == WlOutput::interface().name)
                .map(|g| (g.name, g.version))
                .collect()
        });
        for (gname, version) in outputs {
            let wl =
                globals
                    .registry()
                    .bind::<WlOutput, _, State>(gname, version.min(4), &qh, gname);
            state.add_output(gname, wl, &qh);
        }
        let mut client = Client {
            seat: bind(&globals, &qh, 1..=7),
            shm: bind(&globals, &qh, 1..=1),
            pointer_manager: bind(&globals, &qh, 1..=2),
            keyboard_manager: bind(&globals, &qh, 1..=1),
            screencopy: bind(&globals, &qh, 1..=3),
            toplevel_manager: bind(&globals, &qh, 1..=3),
            data_control: bind(&globals, &qh, 1..=2),
            data_device: None,
            conn,
            queue,
            qh,
            state,
            display: name,
        };
        if let (Some(m), Some(seat)) = (&client.data_control, &client.seat) {
            client.data_device = Some(m.get_data_device(seat, &client.qh, ()));
        }
        client.roundtrip()?;
        client.roundtrip()?;
        client.state.outputs_changed = false;
        Ok(client)
    }

    /// Sends what is queued and waits until the compositor has handled it.
    pub fn roundtrip(&mut self) -> Result<(), DriverError> {
        self.queue
            .roundtrip(&mut self.state)
            .map(|_| ())
            .map_err(|e| werr("roundtrip")(e.to_string()))
    }

    /// Sends what is queued. A full socket (fast typing outruns the compositor) is
    /// waited on until it drains, at most [`FLUSH_WAIT`].
    pub fn flush(&self) -> Result<(), DriverError> {
        let deadline = std::time::Instant::now() + FLUSH_WAIT;
        loop {
            match self.conn.flush() {
                Ok(()) => return Ok(()),
                Err(wayland_client::backend::WaylandError::Io(e))
                    if e.kind() == std::io::ErrorKind::WouldBlock
                        && std::time::Instant::now() < deadline =>
                {
                    let backend = self.conn.backend();
                    let _ = crate::ready::ready(
                        backend.poll_fd(),
                        rustix::event::PollFlags::OUT,
                        std::time::Duration::from_millis(50),
                    );
                }
                Err(e) => return Err(werr("flush")(e.to_string())),
            }
        }
    }

    /// Handles whatever events arrived, without waiting.
    pub fn dispatch_ready(&mut self) -> Result<(), DriverError> {
        self.flush()?;
        if let Some(guard) = self.queue.prepare_read() {
            match guard.read() {
                Ok(_) => {}
                Err(wayland_client::backend::WaylandError::Io(e))
                    if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(werr("read")(e.to_string())),
            }
        }
        self.queue
            .dispatch_pending(&mut self.state)
            .map(|_| ())
            .map_err(|e| werr("dispatch")(e.to_string()))
    }

    /// Waits for the next events and handles them.
    pub fn dispatch_blocking(&mut self) -> Result<(), DriverError> {
        self.queue
            .blocking_dispatch(&mut self.state)
            .map(|_| ())
            .map_err(|e| werr("dispatch")(e.to_string()))
    }

    /// A virtual pointer on the seat.
    pub fn new_pointer(&self) -> Option<ZwlrVirtualPointerV1> {
        let m = self.pointer_manager.as_ref()?;
        Some(m.create_virtual_pointer(self.seat.as_ref(), &self.qh, ()))
    }

    /// A virtual keyboard on the seat.
    pub fn new_keyboard(&self) -> Option<ZwpVirtualKeyboardV1> {
        let m = self.keyboard_manager.as_ref()?;
        let seat = self.seat.as_ref()?;
        Some(m.create_virtual_keyboard(seat, &self.qh, ()))
    }
}

impl State {
    fn add_output(&mut self, gname: u32, wl: WlOutput, qh: &QueueHandle<State>) {
        let xdg = self
            .xdg_manager
            .as_ref()
            .map(|m| m.get_xdg_output(&wl, qh, gname));
        self.outputs.insert(
            gname,
            Output {
                wl,
                xdg,
                name: String::new(),
                logical: None,
                mode: (0, 0),
                scale: 1,
            },
        );
        self.outputs_changed = true;
    }
}

impl Dispatch<WlRegistry, GlobalListContents> for State {
    fn event(
        state: &mut Self,
        registry: &WlRegistry,
        event: <WlRegistry as Proxy>::Event,
        _: &GlobalListContents,
        _: &Connection,
        qh: &QueueHandle<Self>,
    ) {
        use wayland_client::protocol::wl_registry::Event;
        match event {
            Event::Global {
                name,
                interface,
                version,
            } if interface == WlOutput::interface().name => {
                let wl = registry.bind::<WlOutput, _, State>(name, version.min(4), qh, name);
                state.add_output(name, wl, qh);
            }
            Event::GlobalRemove { name } => {
                if let Some(o) = state.outputs.remove(&name) {
                    if let Some(x) = o.xdg {
                        x.destroy();
                    }
                    if o.wl.version() >= 3 {
                        o.wl.release();
                    }
                    state.outputs_changed = true;
                }
            }
            _ => {}
        }
    }
}

impl Dispatch<WlOutput, u32> for State {
    fn event(
        state: &mut Self,
        _: &WlOutput,
        event: <WlOutput as Proxy>::Event,
        gname: &u32,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use wayland_client::protocol::wl_output::Event;
        let Some(o) = state.outputs.get_mut(gname) else {
            return;
        };
        match event {
            Event::Mode { width, height, .. } => o.mode = (width, height),
            Event::Scale { factor } => o.scale = factor,
            Event::Name { name } if o.name.is_empty() => o.name = name,
            Event::Done => state.outputs_changed = true,
            _ => {}
        }
    }
}

impl Dispatch<zxdg_output_v1::ZxdgOutputV1, u32> for State {
    fn event(
        state: &mut Self,
        _: &zxdg_output_v1::ZxdgOutputV1,
        event: zxdg_output_v1::Event,
        gname: &u32,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use zxdg_output_v1::Event;
        let Some(o) = state.outputs.get_mut(gname) else {
            return;
        };
        match event {
            Event::LogicalPosition { x, y } => {
                let (_, _, w, h) = o.logical.unwrap_or_default();
                o.logical = Some((x, y, w, h));
            }
            Event::LogicalSize { width, height } => {
                let (x, y, _, _) = o.logical.unwrap_or_default();
                o.logical = Some((x, y, width, height));
            }
            Event::Name { name } => o.name = name,
            Event::Done => state.outputs_changed = true,
            _ => {}
        }
    }
}

impl Dispatch<ZwlrForeignToplevelManagerV1, ()> for State {
    fn event(
        state: &mut Self,
        _: &ZwlrForeignToplevelManagerV1,
        event: zwlr_foreign_toplevel_manager_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let zwlr_foreign_toplevel_manager_v1::Event::Toplevel { toplevel } = event {
            let id = toplevel.id().protocol_id();
            state
                .toplevels
                .insert(id, (toplevel, ForeignToplevel::default()));
        }
    }

    event_created_child!(State, ZwlrForeignToplevelManagerV1, [
        zwlr_foreign_toplevel_manager_v1::EVT_TOPLEVEL_OPCODE => (ZwlrForeignToplevelHandleV1, ()),
    ]);
}

impl Dispatch<ZwlrForeignToplevelHandleV1, ()> for State {
    fn event(
        state: &mut Self,
        handle: &ZwlrForeignToplevelHandleV1,
        event: zwlr_foreign_toplevel_handle_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use zwlr_foreign_toplevel_handle_v1::Event;
        let id = handle.id().protocol_id();
        if let Event::Closed = event {
            if let Some((h, _)) = state.toplevels.remove(&id) {
                h.destroy();
            }
            return;
        }
        let Some((_, t)) = state.toplevels.get_mut(&id) else {
            return;
        };
        match event {
            Event::Title { title } => t.title = title,
            Event::AppId { app_id } => t.app_id = app_id,
            Event::State { state: bytes } => {
                let has = |s: zwlr_foreign_toplevel_handle_v1::State| {
                    bytes
                        .chunks_exact(4)
                        .any(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]) == s as u32)
                };
                t.activated = has(zwlr_foreign_toplevel_handle_v1::State::Activated);
                t.minimized = has(zwlr_foreign_toplevel_handle_v1::State::Minimized);
            }
            Event::OutputEnter { output } => t.outputs.push(output.id().protocol_id()),
            Event::OutputLeave { output } => {
                let o = output.id().protocol_id();
                t.outputs.retain(|&x| x != o);
            }
            Event::Done => t.ready = true,
            _ => {}
        }
    }
}

impl Dispatch<ZwlrScreencopyFrameV1, ()> for State {
    fn event(
        state: &mut Self,
        frame: &ZwlrScreencopyFrameV1,
        event: zwlr_screencopy_frame_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use zwlr_screencopy_frame_v1::Event;
        let f = state.frames.entry(frame.id().protocol_id()).or_default();
        match event {
            Event::Buffer {
                format,
                width,
                height,
                stride,
            } => {
                let format = match format {
                    WEnum::Value(v) => v as u32,
                    WEnum::Unknown(v) => v,
                };
                f.shm = Some((format, width, height, stride));
                if frame.version() < 3 {
                    f.buffers_done = true;
                }
            }
            Event::BufferDone => f.buffers_done = true,
            Event::Flags { flags } => {
                f.y_invert = match flags {
                    WEnum::Value(v) => v.contains(zwlr_screencopy_frame_v1::Flags::YInvert),
                    WEnum::Unknown(v) => v & 1 == 1,
                };
            }
            Event::Ready { .. } => f.ready = true,
            Event::Failed => f.failed = true,
            _ => {}
        }
    }
}

impl Dispatch<ZwlrDataControlDeviceV1, ()> for State {
    fn event(
        state: &mut Self,
        _: &ZwlrDataControlDeviceV1,
        event: zwlr_data_control_device_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use zwlr_data_control_device_v1::Event;
        match event {
            Event::DataOffer { id } => {
                state.offers.insert(id.id().protocol_id(), (id, Vec::new()));
            }
            Event::Selection { id } => {
                let new = id.map(|o| o.id().protocol_id());
                if let Some(old) = state.selection.take()
                    && Some(old) != new
                {
                    state.drop_offer(old);
                }
                state.selection = new;
            }
            // The primary selection is not the clipboard: its offers are let go.
            Event::PrimarySelection { id: Some(o) } => {
                let id = o.id().protocol_id();
                if state.selection != Some(id) {
                    state.drop_offer(id);
                }
            }
            Event::Finished => state.device_finished = true,
            _ => {}
        }
    }

    event_created_child!(State, ZwlrDataControlDeviceV1, [
        zwlr_data_control_device_v1::EVT_DATA_OFFER_OPCODE => (ZwlrDataControlOfferV1, ()),
    ]);
}

impl Dispatch<ZwlrDataControlOfferV1, ()> for State {
    fn event(
        state: &mut Self,
        offer: &ZwlrDataControlOfferV1,
        event: zwlr_data_control_offer_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let zwlr_data_control_offer_v1::Event::Offer { mime_type } = event
            && let Some((_, types)) = state.offers.get_mut(&offer.id().protocol_id())
        {
            types.push(mime_type);
        }
    }
}

impl Dispatch<ZwlrDataControlSourceV1, ()> for State {
    fn event(
        state: &mut Self,
        source: &ZwlrDataControlSourceV1,
        event: zwlr_data_control_source_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        let id = source.id().protocol_id();
        match event {
            zwlr_data_control_source_v1::Event::Send { mime_type, fd } => {
                state.source_sends.push((id, mime_type, fd));
            }
            zwlr_data_control_source_v1::Event::Cancelled => state.cancelled_sources.push(id),
            _ => {}
        }
    }
}

impl State {
    /// Destroys an offer nobody will read.
    fn drop_offer(&mut self, id: u32) {
        if let Some((offer, _)) = self.offers.remove(&id) {
            offer.destroy();
        }
    }
}

/// Objects whose events this driver ignores.
macro_rules! ignore_events {
    ($($t:ty),* $(,)?) => {$(
        impl Dispatch<$t, ()> for State {
            fn event(
                _: &mut Self,
                _: &$t,
                _: <$t as Proxy>::Event,
                _: &(),
                _: &Connection,
                _: &QueueHandle<Self>,
            ) {
            }
        }
    )*};
}

ignore_events!(
    WlSeat,
    WlShm,
    WlShmPool,
    WlBuffer,
    ZxdgOutputManagerV1,
    ZwlrVirtualPointerManagerV1,
    ZwlrVirtualPointerV1,
    ZwpVirtualKeyboardManagerV1,
    ZwpVirtualKeyboardV1,
    ZwlrScreencopyManagerV1,
    ZwlrDataControlManagerV1,
);
