//! The contract between the engine and a desktop backend.

use cc_protocol::{Key, PhysicalRect, Role, StateFlag};

use crate::RgbImage;

/// Failures a backend can report. The engine maps `Unavailable` to
/// `backend_unavailable` and `Failed` to `driver_failed`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DriverError {
    /// The platform has no such facility (no accessibility bus, no capture…).
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// The platform call failed.
    #[error("{0}")]
    Failed(String),
}

/// What a backend can do; reported in `session.started.capabilities` and used for
/// `tools.list`'s `available` flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Pixels can be read ([`Driver::capture`]).
    pub capture: bool,
    /// Pointer and keyboard input can be injected.
    pub input: bool,
    /// The accessibility tree can be read and acted on.
    pub accessibility: bool,
    /// Top-level windows can be listed and focused.
    pub windows: bool,
    /// The emergency hotkey is grabbed and will reach the engine.
    pub hotkey: bool,
    /// The clipboard can be read and written ([`Driver::clipboard_read`]).
    pub clipboard: bool,
    /// Applications can be started in this desktop ([`Driver::launch`]).
    pub launch: bool,
}

/// One monitor in physical pixels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhysicalDisplay {
    /// Stable for the monitor while it stays connected: what `display` arguments name.
    pub id: String,
    /// The platform's output name (`HDMI-1`), for people.
    pub name: String,
    /// Where it is in the physical desktop.
    pub rect: PhysicalRect,
    /// The platform's primary monitor.
    pub primary: bool,
}

/// The monitor layout. `generation` changes whenever the layout does, so the engine can
/// tell a frame taken before a change from one taken after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Every monitor, primary or not.
    pub displays: Vec<PhysicalDisplay>,
    /// Changes with every layout change; compared, never interpreted.
    pub generation: u64,
}

/// Pointer buttons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Button {
    /// The primary button.
    Left,
    /// The middle button (often the wheel).
    Middle,
    /// The secondary button (context menus).
    Right,
}

/// Scroll axes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Axis {
    /// Up and down.
    Vertical,
    /// Left and right.
    Horizontal,
}

/// How announced characters follow each other. Back-to-back ones may be sent to the
/// desktop together (a Wayland compositor then forwards them to the focused client in
/// a few large writes, which a busy client's socket holds, instead of one per key,
/// which overflows it); spaced ones must each arrive before the wait that follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pace {
    /// Typed without pauses: may be batched.
    BackToBack,
    /// Typed with pauses between: each must arrive before the pause.
    Spaced,
}

/// Semantic actions an element may offer (AT-SPI Action, UIA patterns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SemanticAction {
    /// Press, click or activate.
    Invoke,
    /// Flip a check box or toggle button.
    Toggle,
    /// Select an item of a list, tree, tab list or menu.
    Select,
}

/// An opaque, driver-specific reference to an accessible element. It stays valid while
/// the element lives; the engine never interprets it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ElementHandle(pub String);

/// A node as the platform reports it, before the engine applies levels, caps and the
/// canvas mapping. A password field's `value` is always `None`: drivers never read it.
#[derive(Debug, Clone, PartialEq)]
pub struct RawNode {
    /// How to reach the element again.
    pub handle: ElementHandle,
    /// Its role, mapped to the platform-neutral set.
    pub role: Role,
    /// Its accessible name.
    pub name: String,
    /// Its value; `None` for a password field.
    pub value: Option<String>,
    /// Its states.
    pub states: Vec<StateFlag>,
    /// Where it is, in physical pixels, when the platform says.
    pub rect: Option<PhysicalRect>,
    /// Set on top-level windows: the id `windows()` reports for them.
    pub window_id: Option<u64>,
    /// Its children, in the platform's order.
    pub children: Vec<RawNode>,
}

/// The current facts about one element, re-read before acting on it.
#[derive(Debug, Clone, PartialEq)]
pub struct ElementInfo {
    /// Its role now.
    pub role: Role,
    /// Its accessible name now.
    pub name: String,
    /// The top-level window that owns the element.
    pub window_id: Option<u64>,
    /// Where it is now, in physical pixels.
    pub rect: Option<PhysicalRect>,
    /// Its states now (a disabled element is not acted on).
    pub states: Vec<StateFlag>,
    /// `None` for password fields and elements without a value.
    pub value: Option<String>,
    /// The semantic actions it offers.
    pub actions: Vec<SemanticAction>,
    /// The element takes text through a value interface (EditableText / Value).
    pub settable_text: bool,
}

/// A top-level window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowInfo {
    /// The backend's window id: what `window` arguments name.
    pub id: u64,
    /// The application (X11 `WM_CLASS`, Wayland `app_id`): what rules match.
    pub app_id: String,
    /// The owning process, when the platform tells.
    pub pid: Option<u32>,
    /// Its title.
    pub title: String,
    /// Its frame in physical pixels.
    pub rect: PhysicalRect,
    /// It has the keyboard focus.
    pub focused: bool,
}

/// Keys and buttons the backend currently holds down (what injection pressed and has
/// not released). After any action, and always after a panic, both are empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeldInputs {
    /// Held keys, by their canonical names.
    pub keys: Vec<String>,
    /// Held pointer buttons.
    pub buttons: Vec<Button>,
}

/// Things that happen on the desktop outside an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverEvent {
    /// The monitor layout changed (RandR notify, or the virtual display settings).
    LayoutChanged,
    /// The emergency hotkey was pressed.
    Hotkey,
}

/// What the person at the desk is shown (`safety.visual_indicator`): nothing, that an
/// agent's input is being injected now, or that the emergency stop is on and only the
/// operator can release it. A backend draws it where the person looks, never where it
/// could take input meant for the desktop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Indicator {
    /// No agent is acting.
    #[default]
    Off,
    /// An agent's input is being injected now.
    Acting,
    /// The emergency stop is on; only the operator can release it.
    Stopped,
}

/// Which desktop changes a backend reports as events while it watches (the rest the
/// engine learns by looking again: polling).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Watching {
    /// Repainted screen areas (X11 Damage).
    pub pixels: bool,
    /// Accessibility tree changes (AT-SPI object and window events).
    pub a11y: bool,
    /// Top-level windows created, destroyed, renamed or focused.
    pub windows: bool,
    /// Nothing changes but through this driver's own calls (the virtual desktop): the
    /// screen is stable the moment a call returns, and a wait can only time out.
    pub still: bool,
}

/// What changed on the desktop while the engine waited. Only the kinds the backend
/// watches are reported; for the others the engine looks again at every wake-up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// Physical rectangles repainted since the last call.
    pub damaged: Vec<PhysicalRect>,
    /// Some accessible object changed (children, name, states) or a window opened.
    pub a11y: bool,
    /// The top-level window list, a title or the focus changed.
    pub windows: bool,
}

impl Changes {
    /// True when nothing was reported.
    pub fn is_empty(&self) -> bool {
        self.damaged.is_empty() && !self.a11y && !self.windows
    }
}

/// What the clipboard holds, as a backend read it.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct ClipboardContent {
    /// Its text; `None` when the clipboard is empty, holds no text, or is `secret`.
    pub text: Option<String>,
    /// Who put it there, as the desktop can tell (an application id, or the owning
    /// window's id); `None` when nobody owns the clipboard.
    pub owner: Option<String>,
    /// Its owner marked it as a password (the desktop can tell; the text was not read).
    pub secret: bool,
}

impl std::fmt::Debug for ClipboardContent {
    /// Never prints the text: a debug print or log line must not leak the clipboard.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClipboardContent")
            .field("text", &self.text.as_ref().map(|t| t.chars().count()))
            .field("owner", &self.owner)
            .field("secret", &self.secret)
            .finish()
    }
}

/// What asking a backend to launch an application came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launched {
    /// It runs (or its window was opened or raised): its process id, and its window
    /// where the backend knows it at once.
    Started {
        /// Its process id.
        pid: u32,
        /// Its window, when the backend knows it without waiting.
        window: Option<u64>,
    },
    /// There is no such application here, or it cannot be started as asked: why.
    Refused(String),
}

/// A desktop backend. Blocking; owned by one worker thread, so `&mut self` everywhere.
pub trait Driver: Send {
    /// The backend's `--platform` name (its [`Platform::name`](crate::Platform::name)):
    /// what `system.status`, events and `check` call it.
    fn platform(&self) -> &'static str;
    /// What works on this backend.
    fn capabilities(&self) -> Capabilities;
    /// The current monitor layout.
    fn layout(&mut self) -> Result<Layout, DriverError>;
    /// Pixels of a physical rectangle (inside the layout's bounding box).
    fn capture(&mut self, rect: PhysicalRect) -> Result<RgbImage, DriverError>;

    /// Where the pointer is, in physical pixels.
    fn pointer_position(&mut self) -> Result<(i32, i32), DriverError>;
    /// Moves the pointer to a physical point.
    fn pointer_move(&mut self, x: i32, y: i32) -> Result<(), DriverError>;
    /// Presses or releases a button at the current pointer position.
    fn button(&mut self, button: Button, down: bool) -> Result<(), DriverError>;
    /// One notch of scroll; `positive` is up or right.
    fn scroll(&mut self, axis: Axis, positive: bool) -> Result<(), DriverError>;
    /// Presses or releases one key.
    fn key(&mut self, key: Key, down: bool) -> Result<(), DriverError>;
    /// Types one character, whatever the keyboard layout (`'\n'` is Enter, `'\t'` Tab).
    fn type_char(&mut self, c: char) -> Result<(), DriverError>;
    /// Announces the text the next `type_char` calls will type, so a backend that must
    /// prepare its keyboard for characters the layout lacks (a Wayland keymap upload,
    /// which the compositor and the focused client each compile) does it once for the
    /// whole text instead of once per new character. With [`Pace::BackToBack`] a
    /// backend may hold typed characters back until the last announced one or until it
    /// has a batch; every one is sent by the time the last returns. Typing stays correct
    /// without it, and with characters it did not announce; backends with nothing to
    /// prepare keep the default.
    fn prepare_typing(&mut self, text: &str, pace: Pace) -> Result<(), DriverError> {
        let _ = (text, pace);
        Ok(())
    }
    /// Releases every key and button this driver holds; used after a failure or panic.
    fn release_all(&mut self) -> Result<(), DriverError>;
    /// What this driver holds down right now.
    fn held_inputs(&mut self) -> HeldInputs;

    /// Top-level windows, topmost first, as the window manager lists them: a minimized
    /// window or one on another workspace may stay listed at its place, so where a
    /// point lands is [`Driver::window_at`]'s to say.
    fn windows(&mut self) -> Result<Vec<WindowInfo>, DriverError>;
    /// Raises and focuses a window.
    fn focus_window(&mut self, id: u64) -> Result<(), DriverError>;
    /// A window as it is on screen now: `None` when it is closed or minimized (a
    /// window manager may still list a minimized window), so window-scoped captures and
    /// coordinates are refused rather than aimed at where it would be. The default
    /// knows no minimized state beyond the window list.
    fn window_shown(&mut self, id: u64) -> Result<Option<WindowInfo>, DriverError> {
        Ok(self.windows()?.into_iter().find(|w| w.id == id))
    }
    /// The window a pointer event at a physical point would reach now: the topmost
    /// window shown there, in the display server's own stacking order. A minimized
    /// window, one on another workspace or one the pointer passes through is not
    /// there; a menu, tooltip or other window no window manager lists is (with the
    /// class and title it carries). `None` when the point reaches no window (the
    /// desktop background). The gate judges where a pointer action lands by this,
    /// never by `windows()`, whose order and rectangles may include windows not on
    /// screen. The default takes the first window of `windows()` that contains the
    /// point and that [`Driver::window_shown`] says is on screen: right only for a
    /// backend whose window list is its true stacking order.
    fn window_at(&mut self, x: i32, y: i32) -> Result<Option<WindowInfo>, DriverError> {
        for w in self.windows()? {
            if w.rect.contains(x, y) && self.window_shown(w.id)?.is_some() {
                return Ok(Some(w));
            }
        }
        Ok(None)
    }
    /// True when the element with keyboard focus is a password field.
    fn focused_is_password(&mut self) -> Result<bool, DriverError>;

    /// The accessibility tree: top-level windows (or only `window`), walking at most
    /// `max_nodes` nodes in total.
    fn a11y_tree(
        &mut self,
        window: Option<u64>,
        max_nodes: usize,
    ) -> Result<Vec<RawNode>, DriverError>;
    /// Re-reads one element; `None` when it is gone.
    fn a11y_element(&mut self, handle: &ElementHandle) -> Result<Option<ElementInfo>, DriverError>;
    /// Performs a semantic action on an element.
    fn a11y_perform(
        &mut self,
        handle: &ElementHandle,
        action: SemanticAction,
    ) -> Result<(), DriverError>;
    /// Replaces an element's text through its value interface.
    fn a11y_set_text(&mut self, handle: &ElementHandle, text: &str) -> Result<(), DriverError>;

    /// Events since the last poll; called between actions and periodically when idle.
    fn poll_events(&mut self) -> Vec<DriverEvent>;

    /// Starts (`on`) or stops watching for desktop changes, for a wait on a condition.
    /// Returns the kinds that will arrive as events from now on; the default watches
    /// nothing, so the engine polls.
    fn watch_changes(&mut self, _on: bool) -> Watching {
        Watching::default()
    }

    /// Blocks until a watched change arrives or `timeout` passes, whichever is first,
    /// and returns what changed since the last call. Desktop events that are not
    /// changes (the hotkey, a layout change) stay queued for `poll_events`. The default
    /// has no events: it sleeps the timeout and reports nothing.
    fn wait_changes(&mut self, timeout: std::time::Duration) -> Changes {
        std::thread::sleep(timeout);
        Changes::default()
    }

    /// Gives a wrapper the chance to notice desktop events (the emergency hotkey) while
    /// an action only waits (`wait.pause`, `hold_ms`, `interval_ms`). Events stay
    /// queued for `poll_events`; a plain backend has nothing to do here.
    fn pump(&mut self) {}

    /// Sets the emergency hotkey (`safety.emergency_hotkey`, e.g. ctrl+alt+f12): one
    /// non-modifier key plus modifiers. Backends without a global hotkey keep the
    /// default, which says so; on failure `capabilities().hotkey` is false.
    fn set_hotkey(&mut self, keys: &[Key]) -> Result<(), DriverError> {
        let names: Vec<String> = keys.iter().map(Key::name).collect();
        Err(DriverError::Unavailable(format!(
            "the {} backend has no global hotkey ({})",
            self.platform(),
            names.join("+")
        )))
    }

    /// Shows `state` to the person at the desk. Backends that cannot draw on the
    /// desktop say so; the engine then shows nothing and carries on.
    fn set_indicator(&mut self, state: Indicator) -> Result<(), DriverError> {
        match state {
            Indicator::Off => Ok(()),
            _ => Err(DriverError::Unavailable(format!(
                "the {} backend draws no indicator",
                self.platform()
            ))),
        }
    }

    /// The clipboard's text (the CLIPBOARD selection on X11). Backends without a
    /// clipboard say so.
    fn clipboard_read(&mut self) -> Result<ClipboardContent, DriverError> {
        Err(DriverError::Unavailable(format!(
            "the {} backend cannot read the clipboard",
            self.platform()
        )))
    }

    /// Puts text on the clipboard, for every application to paste, until another
    /// application takes it.
    fn clipboard_write(&mut self, text: &str) -> Result<(), DriverError> {
        let _ = text;
        Err(DriverError::Unavailable(format!(
            "the {} backend cannot write the clipboard",
            self.platform()
        )))
    }

    /// Starts an application in this desktop, detached: `app` is a desktop-file id or
    /// an executable name on `PATH` (never a shell string), `args` its arguments.
    fn launch(&mut self, app: &str, args: &[String]) -> Result<Launched, DriverError> {
        let _ = (app, args);
        Err(DriverError::Unavailable(format!(
            "the {} backend cannot launch applications",
            self.platform()
        )))
    }
}
