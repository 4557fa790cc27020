//! The driver for GNOME on Wayland: input through Mutter's `RemoteDesktop` session,
//! frames from its `ScreenCast` of every monitor over PipeWire (one stream per monitor
//! kept open for the session), the layout from `DisplayConfig`, windows and their
//! rectangles from the project's shell extension (`extension/`), accessibility through
//! `cc-desktop-atspi`. All of Mutter's interfaces are used on one D-Bus connection
//! kept for the driver's life: a session ends with the connection that made it.
//!
//! PipeWire's client library is loaded at run time, when a driver first needs frames
//! (`libpipewire.rs`): a binary with this driver starts, and serves its other drivers,
//! on a machine without PipeWire, and `check` names the package that provides it.
//!
//! Mutter's interfaces need no consent, so this serves a user's own session (an agent
//! the user runs). A sandboxed application goes through the desktop portal instead.
//!
//! Keys are keysyms (Mutter finds the key and Shift level in the current layout); a
//! character the layout has no key for is pasted through the session's clipboard, and
//! the user's clipboard text is offered again right after. There is no global key grab:
//! the emergency stop is a GNOME keyboard shortcut that creates the panic file.

pub mod frames;
mod keysyms;
mod libpipewire;
mod monitors;
mod mutter;
mod paste;
mod placing;
mod pod;
pub mod portal;
mod reach;
pub mod shell;

use std::time::Duration;

use cc_desktop::{
    Axis, Button, Capabilities, ClipboardContent, Driver, DriverError, DriverEvent, ElementHandle,
    ElementInfo, HeldInputs, Launched, Layout, Platform, RawNode, RgbImage, SemanticAction,
    WindowInfo,
};
use cc_desktop_atspi::{A11y, Toplevel};
use cc_protocol::{Key, PhysicalRect};
use tokio::runtime::Runtime;

use shell::ShellWindow;

/// The GNOME backend for the binary's platform selection.
pub const PLATFORM: Platform = Platform {
    name: "gnome",
    open: open_env,
    detect: detect_env,
    reach: reach::reach_env,
};

/// What installs PipeWire's client library (Debian/Ubuntu and Fedora packages), for a
/// person to act on when [`pipewire_library`] fails.
pub use libpipewire::INSTALL as INSTALL_PIPEWIRE_LIBRARY;

/// PipeWire's client library: its version, or why it cannot be loaded. GNOME and portal
/// capture need it; nothing else does.
pub fn pipewire_library() -> Result<String, String> {
    libpipewire::library().map(|l| format!("libpipewire {}", l.version()))
}

/// The owner reported for clipboard text this driver put there.
const SELF_OWNER: &str = "computer-control";
/// How long after `Start` the seat takes to deliver keys: the first key before that is
/// lost, so a Shift press and release goes first.
const WARM_UP: Duration = Duration::from_millis(200);
/// How long a paste waits for the application to take the text before the user's
/// clipboard is offered again.
const PASTE_TAKEN: Duration = Duration::from_secs(2);

/// How long an application is given to read pasted text before the next key.
const PASTE_SETTLE: Duration = Duration::from_millis(80);
/// How long Mutter's clipboard manager may take to copy a new selection.
const MANAGER_COPY: Duration = Duration::from_millis(300);

/// Linux input event codes of the buttons.
const BTN_LEFT: i32 = 0x110;
const BTN_RIGHT: i32 = 0x111;
const BTN_MIDDLE: i32 = 0x112;

/// Applications that paste with Ctrl+Shift+V (terminals take Ctrl+V as a control
/// character), matched against the focused window's application id.
const TERMINALS: &[&str] = &[
    "terminal",
    "foot",
    "kgx",
    "console",
    "xterm",
    "konsole",
    "alacritty",
    "kitty",
    "tilix",
    "ptyxis",
    "wezterm",
    "terminator",
];

/// A terminal, by its application id or title: it pastes with Ctrl+Shift+V.
fn is_terminal(w: &WindowInfo) -> bool {
    let app = w.app_id.to_ascii_lowercase();
    let title = w.title.to_ascii_lowercase();
    TERMINALS
        .iter()
        .any(|t| app.contains(t) || title.split_whitespace().next() == Some(*t))
}

fn open_env() -> Result<Box<dyn Driver>, DriverError> {
    GnomeDesktop::connect_with(GnomeOptions::default()).map(|d| Box::new(d) as Box<dyn Driver>)
}

/// GNOME when the session bus has Mutter's remote-desktop and screen-cast services.
fn detect_env() -> Result<Box<dyn Driver>, String> {
    let r = GnomeDesktop::probe(&GnomeOptions::default()).map_err(|e| e.to_string())?;
    if let Some(why) = r.unusable() {
        return Err(why);
    }
    GnomeDesktop::connect_with(GnomeOptions::default())
        .map(|d| Box::new(d) as Box<dyn Driver>)
        .map_err(|e| e.to_string())
}

/// Where to connect. `None` means the environment's session bus.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GnomeOptions {
    /// The session bus of the GNOME session (Mutter's services and the accessibility
    /// bus are found there).
    pub session_bus: Option<String>,
    /// PipeWire's socket (else `pipewire-0` in `$XDG_RUNTIME_DIR`).
    pub pipewire: Option<std::path::PathBuf>,
}

/// What `computer-control check` reports about a GNOME session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GnomeReport {
    /// `org.gnome.Mutter.RemoteDesktop` is on the session bus (input).
    pub remote_desktop: bool,
    /// `org.gnome.Mutter.ScreenCast` is on the session bus (capture).
    pub screen_cast: bool,
    /// PipeWire's socket, or why frames cannot arrive.
    pub pipewire: Result<String, String>,
    /// PipeWire's client library (its version), or why it cannot be loaded.
    pub pipewire_library: Result<String, String>,
    /// Monitors in the layout.
    pub outputs: usize,
    /// The shell extension's version, or why windows have no rectangles.
    pub extension: Result<u32, String>,
    /// The accessibility bus, or why it is unavailable.
    pub accessibility: Result<(), String>,
}

impl GnomeReport {
    /// Why this session cannot be driven (input or capture would go nowhere).
    pub fn unusable(&self) -> Option<String> {
        let mut missing = Vec::new();
        if !self.remote_desktop {
            missing.push("org.gnome.Mutter.RemoteDesktop (input)");
        }
        if !self.screen_cast {
            missing.push("org.gnome.Mutter.ScreenCast (capture)");
        }
        if self.pipewire.is_err() {
            missing.push("PipeWire (the screen cast's frames)");
        }
        if !missing.is_empty() {
            return Some(format!(
                "the session bus lacks {}: not a GNOME (Mutter) session, or Mutter is too old",
                missing.join(", ")
            ));
        }
        self.pipewire_library.clone().err()
    }
}

/// The driver for a GNOME Shell (Mutter) session.
pub struct GnomeDesktop {
    // Declared before the runtime and connection they use, so dropped first.
    frames: Option<frames::Frames>,
    session: Option<mutter::Session>,
    clipboard: Option<paste::Clipboard>,
    monitors: InRuntime<monitors::Monitors>,
    conn: InRuntime<zbus::Connection>,
    rt: Runtime,
    a11y: A11y,
    session_bus: Option<String>,
    pipewire: Option<std::path::PathBuf>,
    pointer: (i32, i32),
    held_keys: Vec<(String, u32)>,
    held_buttons: Vec<Button>,
    /// The layout changed while read outside `poll_events`: the event is still owed.
    layout_event_due: bool,
    /// The layout changed while something was held: the session is re-made (with a
    /// stream per new monitor) once nothing is.
    remake_due: bool,
    /// The shell extension answered last time it was asked.
    extension: bool,
    /// The session's pointer has moved once: the seat drops the first motion of a new
    /// session (a click right after would land where the pointer was).
    pointer_warm: bool,
}

impl GnomeDesktop {
    /// Joins the session bus, starts a remote-desktop session recording every monitor,
    /// opens their PipeWire streams and joins the accessibility bus. Fails when Mutter's
    /// services are missing: a driver whose input would go nowhere is never made.
    pub fn connect_with(opts: GnomeOptions) -> Result<GnomeDesktop, DriverError> {
        // No session is started that could not show its frames.
        frames::library()?;
        let rt = mutter::runtime()?;
        let bus = opts.session_bus.clone();
        let (conn, monitors) = rt.block_on(async {
            let conn = mutter::connect(bus.as_deref()).await?;
            let monitors = monitors::Monitors::new(&conn).await?;
            Ok::<_, DriverError>((conn, monitors))
        })?;
        let extension = rt.block_on(shell::version(&conn)).is_ok();
        let mut d = GnomeDesktop {
            frames: None,
            session: None,
            clipboard: None,
            monitors: InRuntime::new(monitors, &rt),
            conn: InRuntime::new(conn, &rt),
            rt,
            a11y: A11y::new(opts.session_bus.clone(), None, false),
            session_bus: opts.session_bus,
            pipewire: opts.pipewire,
            pointer: (0, 0),
            held_keys: Vec::new(),
            held_buttons: Vec::new(),
            layout_event_due: false,
            remake_due: false,
            extension,
            pointer_warm: false,
        };
        d.make_session()?;
        Ok(d)
    }

    /// [`GnomeDesktop::report`] without starting a session.
    pub fn probe(opts: &GnomeOptions) -> Result<GnomeReport, DriverError> {
        let rt = mutter::runtime()?;
        let session_bus = opts.session_bus.as_deref();
        rt.block_on(async {
            let conn = mutter::connect(session_bus).await?;
            let outputs = match monitors::Monitors::new(&conn).await {
                Ok(m) => m.layout().displays.len(),
                Err(_) => 0,
            };
            Ok(GnomeReport {
                remote_desktop: mutter::has_owner(&conn, mutter::RD_BUS).await,
                screen_cast: mutter::has_owner(&conn, mutter::SC_BUS).await,
                pipewire: match &opts.pipewire {
                    Some(p) if p.exists() => Ok(p.display().to_string()),
                    Some(p) => Err(format!("no PipeWire at {}", p.display())),
                    None => reach::pipewire_socket(|k| std::env::var(k).ok()),
                },
                pipewire_library: pipewire_library(),
                outputs,
                extension: shell::version(&conn).await.map_err(|e| e.to_string()),
                accessibility: Ok(()),
            })
        })
        .map(|mut r| {
            // Not GNOME: no accessibility bus is joined (`auto` asks on every desktop).
            if !r.remote_desktop && !r.screen_cast {
                r.accessibility = Err("not a GNOME session".into());
                return r;
            }
            let a = A11y::new(opts.session_bus.clone(), None, false);
            if !a.available() {
                r.accessibility = Err(a.error.unwrap_or_else(|| "no accessibility bus".into()));
            }
            r
        })
    }

    /// Starts (or re-starts, after a layout change) the remote-desktop session with a
    /// stream per monitor, and warms the seat up.
    fn make_session(&mut self) -> Result<(), DriverError> {
        self.frames = None;
        {
            let _g = self.rt.enter();
            self.clipboard = None;
        }
        if let Some(old) = self.session.take() {
            let _ = self.rt.block_on(old.rd.call::<_, _, ()>("Stop", &()));
            let _g = self.rt.enter();
            drop(old);
        }
        let connectors = self.monitors.connectors();
        let session = self.rt.block_on(mutter::start(&self.conn, &connectors))?;
        let recorded: Vec<(String, u32)> = session
            .streams
            .iter()
            .map(|s| (s.connector.clone(), s.node))
            .collect();
        self.clipboard = self.rt.block_on(paste::Clipboard::enable(&session.rd)).ok();
        self.session = Some(session);
        self.pointer_warm = false;
        self.frames = Some(frames::Frames::open(&recorded, self.pipewire.as_deref())?);
        // The seat drops the first key after Start.
        self.keysym(keysyms::SHIFT_L, true)?;
        self.keysym(keysyms::SHIFT_L, false)?;
        std::thread::sleep(WARM_UP);
        Ok(())
    }

    fn session(&self) -> Result<&mutter::Session, DriverError> {
        self.session
            .as_ref()
            .ok_or_else(|| DriverError::Unavailable("no remote-desktop session".into()))
    }

    fn rd_call(
        &self,
        method: &str,
        args: &(impl serde::Serialize + zbus::zvariant::DynamicType),
    ) -> Result<(), DriverError> {
        let s = self.session()?;
        self.rt
            .block_on(s.rd.call::<_, _, ()>(method, args))
            .map_err(mutter::failed(method))
    }

    fn keysym(&self, sym: u32, down: bool) -> Result<(), DriverError> {
        self.rd_call("NotifyKeyboardKeysym", &(sym, down))
    }

    /// Presses and releases `sym` in one burst: the press goes without waiting for
    /// Mutter's answer, so both reach the shell together. An application repeats a key
    /// from its press until its release; a release sent only after the press's round
    /// trip can come later than the repeat delay on a busy shell, and the character is
    /// typed several times.
    fn tap(&self, sym: u32) -> Result<(), DriverError> {
        const METHOD: &str = "NotifyKeyboardKeysym";
        let s = self.session()?;
        self.rt
            .block_on(async {
                s.rd.call_noreply(METHOD, &(sym, true)).await?;
                s.rd.call::<_, _, ()>(METHOD, &(sym, false)).await
            })
            .map_err(mutter::failed(METHOD))
    }

    /// Reads the layout again; a change re-makes the session (now, or once nothing is
    /// held) so every monitor has its stream.
    fn refresh_layout(&mut self) -> Result<(), DriverError> {
        if self.rt.block_on(self.monitors.refresh())? {
            self.layout_event_due = true;
            self.remake_due = true;
        }
        if self.remake_due && self.held_keys.is_empty() && self.held_buttons.is_empty() {
            self.remake_due = false;
            self.make_session()?;
        }
        Ok(())
    }

    fn shell_windows(&mut self) -> Result<Vec<ShellWindow>, DriverError> {
        let r = self.rt.block_on(shell::windows(&self.conn));
        self.extension = r.is_ok();
        r
    }

    fn toplevels(wins: &[ShellWindow]) -> Vec<Toplevel> {
        wins.iter()
            .map(|w| Toplevel {
                info: w.info.clone(),
                client: w.info.rect,
            })
            .collect()
    }

    /// Types `text` by pasting it through the session's clipboard, then offers the
    /// user's clipboard text again.
    fn paste(&mut self, text: &str) -> Result<(), DriverError> {
        let terminal = self
            .shell_windows()
            .ok()
            .and_then(|ws| ws.into_iter().find(|w| w.info.focused))
            .is_some_and(|w| is_terminal(&w.info));
        let clip = self.clipboard.as_ref().ok_or_else(|| {
            DriverError::Unavailable(
                "characters outside the keyboard layout need the remote-desktop clipboard, \
                 which Mutter refused"
                    .into(),
            )
        })?;
        // A password manager's copy is never read, so it cannot be offered again.
        let saved = self.rt.block_on(clip.read()).ok().and_then(|s| s.text);
        let offered = clip.served();
        self.rt.block_on(clip.offer(text))?;
        // Mutter's clipboard manager copies a new selection at once (to keep it after
        // its owner leaves): that transfer is not the paste.
        self.rt.block_on(clip.wait_served(offered, MANAGER_COPY));
        let before = clip.served();
        let mut chord = vec![keysyms::CONTROL_L];
        if terminal {
            chord.push(keysyms::SHIFT_L);
        }
        let mut result = Ok(());
        let mut pressed = Vec::new();
        for &k in &chord {
            result = self.keysym(k, true);
            if result.is_err() {
                break;
            }
            pressed.push(k);
        }
        // V tapped in one burst: a repeated V would paste twice.
        if result.is_ok() {
            result = self.tap(keysyms::V);
        }
        for &k in pressed.iter().rev() {
            let r = self.keysym(k, false);
            result = result.and(r);
        }
        result?;
        let Some(clip) = self.clipboard.as_ref() else {
            return Ok(());
        };
        let taken = self.rt.block_on(clip.wait_served(before, PASTE_TAKEN));
        // The application reads the text from a pipe after the transfer ends: a key
        // sent at once could overtake it.
        std::thread::sleep(PASTE_SETTLE);
        if let Some(s) = saved {
            self.rt.block_on(clip.offer(&s))?;
        }
        if !taken {
            return Err(DriverError::Failed(
                "the focused application did not take the pasted text (it may not accept \
                 pasting)"
                    .into(),
            ));
        }
        Ok(())
    }
}

impl Driver for GnomeDesktop {
    fn platform(&self) -> &'static str {
        "gnome"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            capture: self.frames.is_some(),
            input: self.session.is_some(),
            accessibility: self.a11y.available(),
            windows: self.extension,
            hotkey: false,
            clipboard: self.clipboard.is_some(),
            launch: true,
        }
    }

    fn layout(&mut self) -> Result<Layout, DriverError> {
        self.refresh_layout()?;
        Ok(self.monitors.layout())
    }

    fn capture(&mut self, rect: PhysicalRect) -> Result<RgbImage, DriverError> {
        if self
            .monitors
            .changed
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            self.refresh_layout()?;
        }
        let frames = self
            .frames
            .as_ref()
            .ok_or_else(|| DriverError::Unavailable("no screen cast".into()))?;
        frames.capture(&self.monitors.layout().displays, rect)
    }

    fn pointer_position(&mut self) -> Result<(i32, i32), DriverError> {
        Ok(self.pointer)
    }

    fn pointer_move(&mut self, x: i32, y: i32) -> Result<(), DriverError> {
        let d = self
            .monitors
            .at(x, y)
            .cloned()
            .ok_or_else(|| DriverError::Failed(format!("({x}, {y}) is on no monitor")))?;
        let s = self.session()?;
        let stream = s
            .streams
            .iter()
            .find(|r| r.connector == d.id)
            .map(|r| r.stream.clone())
            .ok_or_else(|| DriverError::Failed(format!("monitor {} has no stream", d.id)))?;
        let (sx, sy) = (f64::from(x - d.rect.x), f64::from(y - d.rect.y));
        if !self.pointer_warm {
            // Absolute motion is idempotent: the first goes twice, with the warm-up
            // between.
            self.rd_call("NotifyPointerMotionAbsolute", &(stream.as_str(), sx, sy))?;
            std::thread::sleep(WARM_UP);
            self.pointer_warm = true;
        }
        self.rd_call("NotifyPointerMotionAbsolute", &(stream.as_str(), sx, sy))?;
        self.pointer = (x, y);
        Ok(())
    }

    fn button(&mut self, button: Button, down: bool) -> Result<(), DriverError> {
        let code = match button {
            Button::Left => BTN_LEFT,
            Button::Right => BTN_RIGHT,
            Button::Middle => BTN_MIDDLE,
        };
        self.rd_call("NotifyPointerButton", &(code, down))?;
        self.held_buttons.retain(|b| *b != button);
        if down {
            self.held_buttons.push(button);
        }
        Ok(())
    }

    fn scroll(&mut self, axis: Axis, positive: bool) -> Result<(), DriverError> {
        // Mutter's steps: positive is down (vertical) or right (horizontal).
        let (a, steps): (u32, i32) = match axis {
            Axis::Vertical => (0, if positive { -1 } else { 1 }),
            Axis::Horizontal => (1, if positive { 1 } else { -1 }),
        };
        self.rd_call("NotifyPointerAxisDiscrete", &(a, steps))
    }

    fn key(&mut self, key: Key, down: bool) -> Result<(), DriverError> {
        let sym = keysyms::of_key(key)
            .ok_or_else(|| DriverError::Failed(format!("no keysym for the key {}", key.name())))?;
        self.keysym(sym, down)?;
        let name = key.name();
        self.held_keys.retain(|(n, _)| *n != name);
        if down {
            self.held_keys.push((name, sym));
        }
        Ok(())
    }

    fn type_char(&mut self, c: char) -> Result<(), DriverError> {
        match keysyms::typed(c) {
            Some(sym) => self.tap(sym),
            None if c.is_control() => Err(DriverError::Failed(format!(
                "no key types the control character {:?}",
                c
            ))),
            None => self.paste(&c.to_string()),
        }
    }

    fn release_all(&mut self) -> Result<(), DriverError> {
        let mut result = Ok(());
        for (_, sym) in std::mem::take(&mut self.held_keys).into_iter().rev() {
            result = result.and(self.keysym(sym, false));
        }
        for b in std::mem::take(&mut self.held_buttons) {
            let code = match b {
                Button::Left => BTN_LEFT,
                Button::Right => BTN_RIGHT,
                Button::Middle => BTN_MIDDLE,
            };
            result = result.and(self.rd_call("NotifyPointerButton", &(code, false)));
        }
        result
    }

    fn held_inputs(&mut self) -> HeldInputs {
        HeldInputs {
            keys: self.held_keys.iter().map(|(n, _)| n.clone()).collect(),
            buttons: self.held_buttons.clone(),
        }
    }

    fn windows(&mut self) -> Result<Vec<WindowInfo>, DriverError> {
        Ok(self.shell_windows()?.into_iter().map(|w| w.info).collect())
    }

    fn window_shown(&mut self, id: u64) -> Result<Option<WindowInfo>, DriverError> {
        Ok(self
            .shell_windows()?
            .into_iter()
            .find(|w| w.info.id == id && w.shown)
            .map(|w| w.info))
    }

    /// The topmost shown window containing the point, in the shell's own stacking order
    /// (menus and popups included, as the shell lists them).
    fn window_at(&mut self, x: i32, y: i32) -> Result<Option<WindowInfo>, DriverError> {
        Ok(self
            .shell_windows()?
            .into_iter()
            .find(|w| w.shown && w.info.rect.contains(x, y))
            .map(|w| w.info))
    }

    fn focus_window(&mut self, id: u64) -> Result<(), DriverError> {
        if self.rt.block_on(shell::activate(&self.conn, id))? {
            Ok(())
        } else {
            Err(DriverError::Failed(format!("no window {id:#x}")))
        }
    }

    fn focused_is_password(&mut self) -> Result<bool, DriverError> {
        let wins = Self::toplevels(&self.shell_windows().unwrap_or_default());
        self.a11y.focused_is_password(&wins)
    }

    fn a11y_tree(
        &mut self,
        window: Option<u64>,
        max_nodes: usize,
    ) -> Result<Vec<RawNode>, DriverError> {
        let wins = match self.shell_windows() {
            Ok(w) => w,
            Err(DriverError::Unavailable(_)) if window.is_none() => Vec::new(),
            Err(e) => return Err(e),
        };
        if let Some(id) = window
            && !wins.iter().any(|w| w.info.id == id)
        {
            return Err(DriverError::Failed(format!("no window {id:#x}")));
        }
        let mut nodes = self.a11y.tree(&Self::toplevels(&wins), window, max_nodes)?;
        placing::place_tree(&wins, &mut nodes);
        Ok(nodes)
    }

    fn a11y_element(&mut self, handle: &ElementHandle) -> Result<Option<ElementInfo>, DriverError> {
        let wins = self.shell_windows().unwrap_or_default();
        let mut info = self.a11y.element(&Self::toplevels(&wins), handle)?;
        if let Some(i) = info.as_mut() {
            i.rect = placing::place(&wins, i.window_id, i.rect);
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
        let clip = self
            .clipboard
            .as_ref()
            .ok_or_else(|| DriverError::Unavailable("no remote-desktop clipboard".into()))?;
        let sel = self.rt.block_on(clip.read())?;
        // Mutter does not say which client owns the clipboard, only whether it is ours.
        Ok(ClipboardContent {
            owner: sel.ours.then(|| SELF_OWNER.to_string()),
            text: sel.text,
            secret: sel.secret,
        })
    }

    fn clipboard_write(&mut self, text: &str) -> Result<(), DriverError> {
        let clip = self
            .clipboard
            .as_ref()
            .ok_or_else(|| DriverError::Unavailable("no remote-desktop clipboard".into()))?;
        self.rt.block_on(clip.offer(text))
    }

    /// Starts the program in this session (its session bus when one was named),
    /// detached.
    fn launch(&mut self, app: &str, args: &[String]) -> Result<Launched, DriverError> {
        let cmd = match cc_desktop::launch::resolve(app, args) {
            Ok(c) => c,
            Err(why) => return Ok(Launched::Refused(why)),
        };
        let mut env = Vec::new();
        if let Some(bus) = &self.session_bus {
            env.push(("DBUS_SESSION_BUS_ADDRESS", bus.as_str()));
        }
        let pid = cc_desktop::launch::spawn(&cmd, &env)?;
        Ok(Launched::Started { pid, window: None })
    }

    fn poll_events(&mut self) -> Vec<DriverEvent> {
        if self
            .monitors
            .changed
            .load(std::sync::atomic::Ordering::SeqCst)
            || self.remake_due
        {
            let _ = self.refresh_layout();
        }
        if std::mem::take(&mut self.layout_event_due) {
            vec![DriverEvent::LayoutChanged]
        } else {
            Vec::new()
        }
    }
}

impl Drop for GnomeDesktop {
    /// Lets go of everything held and stops the session (the streams close with it).
    fn drop(&mut self) {
        let _ = self.release_all();
        self.frames = None;
        if let Some(s) = self.session.take() {
            let _ = self.rt.block_on(s.rd.call::<_, _, ()>("Stop", &()));
            let _g = self.rt.enter();
            drop(s);
        }
        let _g = self.rt.enter();
        self.clipboard = None;
    }
}

/// A D-Bus object dropped inside the driver's runtime: zbus spawns a task when a
/// proxy or connection is dropped, which needs the runtime's context.
struct InRuntime<T> {
    value: Option<T>,
    rt: tokio::runtime::Handle,
}

impl<T> InRuntime<T> {
    fn new(value: T, rt: &Runtime) -> InRuntime<T> {
        InRuntime {
            value: Some(value),
            rt: rt.handle().clone(),
        }
    }
}

impl<T> std::ops::Deref for InRuntime<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // Only `drop` takes the value.
        self.value
            .as_ref()
            .expect("an InRuntime value is present until dropped")
    }
}

impl<T> std::ops::DerefMut for InRuntime<T> {
    fn deref_mut(&mut self) -> &mut T {
        self.value
            .as_mut()
            .expect("an InRuntime value is present until dropped")
    }
}

impl<T> Drop for InRuntime<T> {
    fn drop(&mut self) {
        let _g = self.rt.enter();
        self.value = None;
    }
}
