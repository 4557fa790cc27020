//! The Wayland driver for wlroots compositors (sway, Hyprland, river, labwc…): input
//! through one virtual pointer (`zwlr_virtual_pointer_v1`) and one virtual keyboard
//! (`zwp_virtual_keyboard_v1`), capture through `zwlr_screencopy_v1` into shared
//! memory, the layout from `wl_output` and `xdg_output`, windows from
//! `zwlr_foreign_toplevel_v1` with rectangles, pids and focus from sway's IPC, and
//! accessibility through `cc-desktop-atspi`.
//!
//! Physical pixels here are the compositor's layout coordinates (what the virtual
//! pointer moves in); an output with a scale factor is captured at its buffer
//! resolution and resampled to its layout size.
//!
//! There is no global key grab on Wayland: the emergency stop is a compositor key
//! binding that creates the panic file (`safety.panic_file`), e.g. in sway's config
//! `bindsym Ctrl+Alt+F12 exec touch $XDG_RUNTIME_DIR/computer-control.panic`.

#![warn(missing_docs)]

mod capture;
mod client;
mod clipboard;
mod extents;
mod input;
mod keymap;
mod outputs;
mod pacing;
mod reach;
mod ready;
mod sway_ipc;
mod windows;

use cc_desktop::{
    Axis, Button, Capabilities, ClipboardContent, Driver, DriverError, DriverEvent, ElementHandle,
    ElementInfo, HeldInputs, Launched, Layout, Pace, Platform, RawNode, RgbImage, SemanticAction,
    WindowInfo,
};
use cc_desktop_atspi::{A11y, Toplevel};
use cc_protocol::{Key, PhysicalRect};
use wayland_client::Proxy as _;

use client::Client;
use sway_ipc::SwayIpc;
use windows::{PROTOCOL_ID_BASE, Window};

/// The wlroots backend for the binary's platform selection.
pub const PLATFORM: Platform = Platform {
    name: "wlroots",
    open: open_env,
    detect: detect_env,
    reach: reach::reach_env,
};

fn open_env() -> Result<Box<dyn Driver>, DriverError> {
    WlrootsDesktop::connect(None).map(|d| Box::new(d) as Box<dyn Driver>)
}

/// wlroots when `$WAYLAND_DISPLAY` names a compositor offering virtual input and
/// screencopy.
fn detect_env() -> Result<Box<dyn Driver>, String> {
    let display = std::env::var("WAYLAND_DISPLAY").unwrap_or_default();
    if display.trim().is_empty() {
        return Err("no $WAYLAND_DISPLAY".into());
    }
    let d = WlrootsDesktop::connect(None).map_err(|e| e.to_string())?;
    let missing: Vec<&str> = d
        .report()
        .protocols
        .iter()
        .filter(|p| p.required && !p.present)
        .map(|p| p.name)
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "$WAYLAND_DISPLAY={display} lacks {}",
            missing.join(", ")
        ));
    }
    Ok(Box::new(d))
}

/// One Wayland protocol the driver uses, whether the compositor offers it, and what
/// its absence disables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolStatus {
    /// The Wayland interface name (`zwlr_screencopy_manager_v1`).
    pub name: &'static str,
    /// The compositor offers it.
    pub present: bool,
    /// Without it `--platform auto` does not pick this driver.
    pub required: bool,
    /// What does not work without it, for `check`.
    pub without: &'static str,
}

/// What `computer-control check` reports about a Wayland compositor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WlrootsReport {
    /// The display socket connected to.
    pub display: String,
    /// Every protocol the driver uses, offered or not.
    pub protocols: Vec<ProtocolStatus>,
    /// Outputs in the layout now.
    pub outputs: usize,
    /// sway's IPC (window rectangles, pids, focus by container), or why not.
    pub sway_ipc: Result<(), String>,
    /// The accessibility bus, or why it is unavailable.
    pub accessibility: Result<(), String>,
}

/// Where to connect. `None` means the environment (`$WAYLAND_DISPLAY`, `$SWAYSOCK`,
/// `$DBUS_SESSION_BUS_ADDRESS`); several desktops in one process (tests) name them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WlrootsOptions {
    /// A socket name in `$XDG_RUNTIME_DIR`, or a path.
    pub display: Option<String>,
    /// sway's IPC socket.
    pub swaysock: Option<std::path::PathBuf>,
    /// The session bus that leads to the accessibility bus.
    pub session_bus: Option<String>,
}

/// The driver for a wlroots compositor.
pub struct WlrootsDesktop {
    client: Client,
    input: input::Input,
    capture: capture::Capture,
    monitors: outputs::Monitors,
    ipc: Option<SwayIpc>,
    a11y: A11y,
    origins: extents::Origins,
    /// The layout changed while read outside `poll_events`: the event is still owed.
    layout_event_due: bool,
    /// The session bus named explicitly, handed to launched applications so that
    /// their accessibility tree is on the bus this driver reads.
    session_bus: Option<String>,
    clipboard: clipboard::Clipboard,
}

impl WlrootsDesktop {
    /// Connects to `display` (a socket name in `$XDG_RUNTIME_DIR` or a path; `None`:
    /// `$WAYLAND_DISPLAY`), creates the session's virtual pointer and keyboard, and
    /// joins the accessibility bus (the session bus of the environment). Fails only
    /// when no compositor answers; what is missing is reported by
    /// [`Driver::capabilities`] and [`WlrootsDesktop::report`].
    pub fn connect(display: Option<&str>) -> Result<WlrootsDesktop, DriverError> {
        WlrootsDesktop::connect_with(WlrootsOptions {
            display: display.map(str::to_string),
            ..WlrootsOptions::default()
        })
    }

    /// Like [`WlrootsDesktop::connect`], with every endpoint given explicitly.
    pub fn connect_with(opts: WlrootsOptions) -> Result<WlrootsDesktop, DriverError> {
        let mut client = Client::connect(opts.display.as_deref())?;
        let input = input::Input::new(&mut client)?;
        let mut monitors = outputs::Monitors::default();
        monitors.update(&client.state);
        Ok(WlrootsDesktop {
            ipc: match opts.swaysock {
                Some(p) => Some(SwayIpc::at(p)),
                None => SwayIpc::from_env(),
            },
            a11y: A11y::new(opts.session_bus.clone(), None, false),
            session_bus: opts.session_bus,
            clipboard: clipboard::Clipboard::default(),
            client,
            input,
            capture: capture::Capture::default(),
            monitors,
            origins: extents::Origins::default(),
            layout_event_due: false,
        })
    }

    /// What the compositor offers and what is missing.
    pub fn report(&self) -> WlrootsReport {
        report_of(&self.client, &self.monitors, self.ipc.as_ref(), &self.a11y)
    }

    /// [`WlrootsDesktop::report`] without becoming a driver: no virtual pointer or
    /// keyboard is created, so a running server's seat is left as it is (what
    /// `computer-control check` needs while that server serves the same compositor).
    pub fn probe(display: Option<&str>) -> Result<WlrootsReport, DriverError> {
        let client = Client::connect(display)?;
        let mut monitors = outputs::Monitors::default();
        monitors.update(&client.state);
        let ipc = SwayIpc::from_env();
        let a11y = A11y::new(None, None, false);
        Ok(report_of(&client, &monitors, ipc.as_ref(), &a11y))
    }

    /// Waits until the compositor has handled every request sent so far: input is only
    /// handed over (queued on the socket) when a call returns, so a caller that must
    /// know it was processed (a benchmark sample, a read-back) syncs first.
    pub fn sync(&mut self) -> Result<(), DriverError> {
        self.client.roundtrip()
    }

    fn bounds(&self) -> Result<PhysicalRect, DriverError> {
        self.monitors
            .bounds()
            .ok_or_else(|| DriverError::Failed("the compositor reports no outputs".into()))
    }

    /// What the protocol and the IPC say about the windows now.
    fn window_sources(&mut self) -> Result<WindowSources, DriverError> {
        self.client.dispatch_ready()?;
        let tops: Vec<(u32, client::ForeignToplevel)> = self
            .client
            .state
            .toplevels
            .iter()
            .map(|(id, (_, t))| (*id, t.clone()))
            .collect();
        let views = match &self.ipc {
            Some(ipc) => Some(ipc.views().map_err(DriverError::Failed)?),
            None => None,
        };
        if views.is_none() && self.client.toplevel_manager.is_none() {
            return Err(DriverError::Unavailable(
                "no window list: neither zwlr_foreign_toplevel_manager_v1 nor sway IPC".into(),
            ));
        }
        Ok((tops, views))
    }

    fn windows_now(&mut self) -> Result<Vec<Window>, DriverError> {
        let (tops, views) = self.window_sources()?;
        let outputs = &self.client.state.outputs;
        Ok(windows::merge(&tops, views, |oid| {
            output_rect(outputs, oid)
        }))
    }

    fn toplevels(wins: &[Window]) -> Vec<Toplevel> {
        wins.iter().map(|w| w.top.clone()).collect()
    }
}

/// The protocol's toplevels (by object id) and sway's views, when there is an IPC.
type WindowSources = (
    Vec<(u32, client::ForeignToplevel)>,
    Option<Vec<sway_ipc::View>>,
);

/// The layout rectangle of the output with `wl_output` id `oid`.
fn output_rect(
    outputs: &std::collections::BTreeMap<u32, client::Output>,
    oid: u32,
) -> Option<PhysicalRect> {
    outputs.values().find_map(|o| {
        if o.wl.id().protocol_id() != oid {
            return None;
        }
        let (x, y, w, h) = o.logical?;
        Some(PhysicalRect {
            x,
            y,
            width: u32::try_from(w).ok()?,
            height: u32::try_from(h).ok()?,
        })
    })
}

impl Driver for WlrootsDesktop {
    fn platform(&self) -> &'static str {
        "wlroots"
    }

    fn capabilities(&self) -> Capabilities {
        let (pointer, keyboard) = self.input.available();
        Capabilities {
            capture: self.client.screencopy.is_some() && self.client.shm.is_some(),
            input: pointer && keyboard,
            accessibility: self.a11y.available(),
            windows: self.ipc.is_some() || self.client.toplevel_manager.is_some(),
            hotkey: false,
            clipboard: clipboard::Clipboard::available(&self.client),
            launch: true,
        }
    }

    fn layout(&mut self) -> Result<Layout, DriverError> {
        self.client.dispatch_ready()?;
        if self.monitors.update(&self.client.state) {
            self.layout_event_due = true;
        }
        self.client.state.outputs_changed = false;
        Ok(self.monitors.layout())
    }

    fn capture(&mut self, rect: PhysicalRect) -> Result<RgbImage, DriverError> {
        self.capture.capture(&mut self.client, rect)
    }

    fn pointer_position(&mut self) -> Result<(i32, i32), DriverError> {
        Ok(self.input.position)
    }

    fn pointer_move(&mut self, x: i32, y: i32) -> Result<(), DriverError> {
        let b = self.bounds()?;
        self.input.motion(&self.client, b, x, y)
    }

    fn button(&mut self, button: Button, down: bool) -> Result<(), DriverError> {
        self.input.button(&self.client, button, down)
    }

    fn scroll(&mut self, axis: Axis, positive: bool) -> Result<(), DriverError> {
        self.input.scroll(&self.client, axis, positive)
    }

    fn key(&mut self, key: Key, down: bool) -> Result<(), DriverError> {
        self.input.key(&self.client, key, down)
    }

    fn type_char(&mut self, c: char) -> Result<(), DriverError> {
        self.input.type_char(&self.client, c)
    }

    fn prepare_typing(&mut self, text: &str, pace: Pace) -> Result<(), DriverError> {
        self.input.prepare(&self.client, text, pace)
    }

    fn release_all(&mut self) -> Result<(), DriverError> {
        let released = self.input.release_all(&self.client);
        let restored = self.input.restore_layout(&self.client, true);
        released.and(restored)
    }

    fn held_inputs(&mut self) -> HeldInputs {
        self.input.held()
    }

    fn windows(&mut self) -> Result<Vec<WindowInfo>, DriverError> {
        Ok(self
            .windows_now()?
            .into_iter()
            .map(|w| w.top.info)
            .collect())
    }

    fn window_at(&mut self, x: i32, y: i32) -> Result<Option<WindowInfo>, DriverError> {
        let (tops, views) = self.window_sources()?;
        let outputs = &self.client.state.outputs;
        Ok(windows::at(
            &tops,
            views,
            |oid| output_rect(outputs, oid),
            x,
            y,
        ))
    }

    fn focus_window(&mut self, id: u64) -> Result<(), DriverError> {
        if id < PROTOCOL_ID_BASE
            && let Some(ipc) = &self.ipc
        {
            return ipc
                .command(&format!("[con_id={id}] focus"))
                .map_err(DriverError::Failed);
        }
        let pid = u32::try_from(id.saturating_sub(PROTOCOL_ID_BASE)).ok();
        let handle = pid.and_then(|p| self.client.state.toplevels.get(&p).map(|(h, _)| h.clone()));
        let (Some(h), Some(seat)) = (handle, self.client.seat.clone()) else {
            return Err(DriverError::Failed(format!("no window {id:#x}")));
        };
        h.activate(&seat);
        self.client.roundtrip()
    }

    fn focused_is_password(&mut self) -> Result<bool, DriverError> {
        let wins = Self::toplevels(&self.windows_now()?);
        self.a11y.focused_is_password(&wins)
    }

    fn a11y_tree(
        &mut self,
        window: Option<u64>,
        max_nodes: usize,
    ) -> Result<Vec<RawNode>, DriverError> {
        let wins = self.windows_now()?;
        if let Some(id) = window
            && !wins.iter().any(|w| w.top.info.id == id)
        {
            return Err(DriverError::Failed(format!("no window {id:#x}")));
        }
        let mut nodes = self.a11y.tree(&Self::toplevels(&wins), window, max_nodes)?;
        self.origins.map_tree(&wins, &mut nodes);
        Ok(nodes)
    }

    fn a11y_element(&mut self, handle: &ElementHandle) -> Result<Option<ElementInfo>, DriverError> {
        let wins = self.windows_now()?;
        let mut info = self.a11y.element(&Self::toplevels(&wins), handle)?;
        if let Some(i) = info.as_mut() {
            match self.origins.offset(&wins, i.window_id) {
                Some((dx, dy)) => {
                    i.rect = i.rect.map(|r| PhysicalRect {
                        x: r.x.saturating_add(dx),
                        y: r.y.saturating_add(dy),
                        ..r
                    });
                }
                None if i.window_id.is_none() => i.rect = None,
                None => {}
            }
        }
        Ok(info)
    }

    fn a11y_perform(
        &mut self,
        handle: &ElementHandle,
        action: SemanticAction,
    ) -> Result<(), DriverError> {
        self.a11y.perform(handle, action)
    }

    fn a11y_set_text(&mut self, handle: &ElementHandle, text: &str) -> Result<(), DriverError> {
        self.a11y.set_text(handle, text)
    }

    fn clipboard_read(&mut self) -> Result<ClipboardContent, DriverError> {
        self.clipboard.read(&mut self.client)
    }

    fn clipboard_write(&mut self, text: &str) -> Result<(), DriverError> {
        self.clipboard.write(&mut self.client, text)
    }

    /// Starts the program on this compositor (`WAYLAND_DISPLAY` set to the display
    /// this driver is connected to), detached.
    fn launch(&mut self, app: &str, args: &[String]) -> Result<Launched, DriverError> {
        let cmd = match cc_desktop::launch::resolve(app, args) {
            Ok(c) => c,
            Err(why) => return Ok(Launched::Refused(why)),
        };
        let mut env = vec![("WAYLAND_DISPLAY", self.client.display.as_str())];
        if let Some(bus) = &self.session_bus {
            env.push(("DBUS_SESSION_BUS_ADDRESS", bus.as_str()));
        }
        let pid = cc_desktop::launch::spawn(&cmd, &env)?;
        Ok(Launched::Started { pid, window: None })
    }

    fn poll_events(&mut self) -> Vec<DriverEvent> {
        let mut out = Vec::new();
        if self.client.dispatch_ready().is_ok() && self.client.state.outputs_changed {
            self.client.state.outputs_changed = false;
            if self.monitors.update(&self.client.state) {
                self.layout_event_due = true;
            }
        }
        if std::mem::take(&mut self.layout_event_due) {
            out.push(DriverEvent::LayoutChanged);
        }
        self.clipboard.serve(&mut self.client);
        let _ = self.input.restore_layout(&self.client, false);
        out
    }
}

impl Drop for WlrootsDesktop {
    /// Lets go of everything held, restores the plain layout and destroys the devices.
    fn drop(&mut self) {
        let _ = self.input.release_all(&self.client);
        let _ = self.input.restore_layout(&self.client, true);
        self.input.close();
        self.clipboard.close();
        self.capture.close(&mut self.client);
        let _ = self.client.roundtrip();
    }
}

/// The report of a connected compositor (for a driver and for a probe alike).
fn report_of(
    c: &Client,
    monitors: &outputs::Monitors,
    ipc: Option<&SwayIpc>,
    a11y: &A11y,
) -> WlrootsReport {
    let p = |name, present, required, without| ProtocolStatus {
        name,
        present,
        required,
        without,
    };
    WlrootsReport {
        display: c.display.clone(),
        protocols: vec![
            p(
                "zwlr_virtual_pointer_manager_v1",
                c.pointer_manager.is_some(),
                true,
                "no pointer input",
            ),
            p(
                "zwp_virtual_keyboard_manager_v1",
                c.keyboard_manager.is_some() && c.seat.is_some(),
                true,
                "no keyboard input",
            ),
            p(
                "zwlr_screencopy_manager_v1",
                c.screencopy.is_some() && c.shm.is_some(),
                true,
                "no capture",
            ),
            p(
                "zxdg_output_manager_v1",
                c.state.xdg_manager.is_some(),
                false,
                "outputs placed by mode only: wrong for scaled or moved outputs",
            ),
            p(
                "zwlr_foreign_toplevel_manager_v1",
                c.toplevel_manager.is_some(),
                false,
                "windows only from the compositor's IPC",
            ),
            p(
                "zwlr_data_control_manager_v1",
                c.data_control.is_some(),
                false,
                "no clipboard",
            ),
        ],
        outputs: monitors.layout().displays.len(),
        sway_ipc: match ipc {
            None => Err("no $SWAYSOCK: no window rectangles or pids".into()),
            Some(ipc) => ipc.views().map(|_| ()),
        },
        accessibility: if a11y.available() {
            Ok(())
        } else {
            Err(a11y
                .error
                .clone()
                .unwrap_or_else(|| "no accessibility bus".into()))
        },
    }
}
