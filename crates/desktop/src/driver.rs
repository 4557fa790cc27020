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
    pub capture: bool,
    pub input: bool,
    pub accessibility: bool,
    pub windows: bool,
    /// The emergency hotkey is grabbed and will reach the engine.
    pub hotkey: bool,
}

/// One monitor in physical pixels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhysicalDisplay {
    pub id: String,
    pub name: String,
    pub rect: PhysicalRect,
    pub primary: bool,
}

/// The monitor layout. `generation` changes whenever the layout does, so the engine can
/// tell a frame taken before a change from one taken after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub displays: Vec<PhysicalDisplay>,
    pub generation: u64,
}

/// Pointer buttons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Button {
    Left,
    Middle,
    Right,
}

/// Scroll axes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Axis {
    Vertical,
    Horizontal,
}

/// Semantic actions an element may offer (AT-SPI Action, UIA patterns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SemanticAction {
    Invoke,
    Toggle,
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
    pub handle: ElementHandle,
    pub role: Role,
    pub name: String,
    pub value: Option<String>,
    pub states: Vec<StateFlag>,
    pub rect: Option<PhysicalRect>,
    /// Set on top-level windows: the id `windows()` reports for them.
    pub window_id: Option<u64>,
    pub children: Vec<RawNode>,
}

/// The current facts about one element, re-read before acting on it.
#[derive(Debug, Clone, PartialEq)]
pub struct ElementInfo {
    pub role: Role,
    pub name: String,
    /// The top-level window that owns the element.
    pub window_id: Option<u64>,
    pub rect: Option<PhysicalRect>,
    pub states: Vec<StateFlag>,
    /// `None` for password fields and elements without a value.
    pub value: Option<String>,
    pub actions: Vec<SemanticAction>,
    /// The element takes text through a value interface (EditableText / Value).
    pub settable_text: bool,
}

/// A top-level window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowInfo {
    pub id: u64,
    pub app_id: String,
    pub pid: Option<u32>,
    pub title: String,
    pub rect: PhysicalRect,
    pub focused: bool,
}

/// Keys and buttons the backend currently holds down (what injection pressed and has
/// not released). After any action, and always after a panic, both are empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeldInputs {
    pub keys: Vec<String>,
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
    #[default]
    Off,
    Acting,
    Stopped,
}

/// A desktop backend. Blocking; owned by one worker thread, so `&mut self` everywhere.
pub trait Driver: Send {
    /// `"virtual"` or `"x11"`.
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
    /// whole text instead of once per new character. Typing stays correct without it,
    /// and with characters it did not announce; backends with nothing to prepare keep
    /// the default.
    fn prepare_typing(&mut self, text: &str) -> Result<(), DriverError> {
        let _ = text;
        Ok(())
    }
    /// Releases every key and button this driver holds; used after a failure or panic.
    fn release_all(&mut self) -> Result<(), DriverError>;
    /// What this driver holds down right now.
    fn held_inputs(&mut self) -> HeldInputs;

    /// Top-level windows, topmost first.
    fn windows(&mut self) -> Result<Vec<WindowInfo>, DriverError>;
    /// Raises and focuses a window.
    fn focus_window(&mut self, id: u64) -> Result<(), DriverError>;
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
}
