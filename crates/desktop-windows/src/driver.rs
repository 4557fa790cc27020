//! `WindowsDesktop`: the `Driver` over the Win32 modules.

use cc_desktop::{
    Axis, Button, Capabilities, ClipboardContent, Driver, DriverError, DriverEvent, ElementHandle,
    ElementInfo, HeldInputs, Indicator, Launched, Layout, RawNode, RgbImage, SemanticAction,
    WindowInfo,
};
use cc_protocol::{Key, PhysicalRect};

use crate::report::WindowsReport;
use crate::tree_source::TreeSource;
use crate::win::{
    a11y, capture, clipboard, desk_thread::DeskThread, input, monitors, toplevel, uia,
};

/// The Windows backend for the binary's platform selection.
pub const PLATFORM: cc_desktop::Platform = cc_desktop::Platform {
    name: "windows",
    open: open_env,
    detect: detect_env,
    reach: reach_env,
};

fn open_env() -> Result<Box<dyn Driver>, DriverError> {
    WindowsDesktop::open().map(|d| Box::new(d) as Box<dyn Driver>)
}

fn detect_env() -> Result<Box<dyn Driver>, String> {
    WindowsDesktop::open()
        .map(|d| Box::new(d) as Box<dyn Driver>)
        .map_err(|e| e.to_string())
}

/// The interactive desktop answers when it has at least one monitor.
fn reach_env() -> Result<String, String> {
    monitors::read()
        .map(|m| format!("the desktop shows {} monitor(s)", m.len()))
        .map_err(|e| e.to_string())
}

/// The driver for the interactive Windows desktop of this session.
pub struct WindowsDesktop {
    monitors: monitors::Monitors,
    held: input::Held,
    desk: DeskThread,
    hotkey: Result<(), String>,
    dpi_aware: bool,
    indicator: Indicator,
    capturer: capture::Capturer,
    tree_source: TreeSource,
}

impl WindowsDesktop {
    /// Declares DPI awareness, reads the monitors, starts the desk thread and registers
    /// the default hotkey. Fails only when there is no desktop to read.
    pub fn open() -> Result<WindowsDesktop, DriverError> {
        let dpi_aware = monitors::declare_dpi_awareness();
        let mut m = monitors::Monitors::default();
        m.refresh()?;
        let desk = DeskThread::start()?;
        let capturer = capture::Capturer::open(&monitor_rects(&m));
        let mut d = WindowsDesktop {
            capturer,
            monitors: m,
            held: input::Held::default(),
            desk,
            hotkey: Err("not registered".into()),
            dpi_aware,
            indicator: Indicator::Off,
            tree_source: uia::probe(),
        };
        let keys: Vec<Key> = Key::split_combo(crate::DEFAULT_HOTKEY)
            .iter()
            .filter_map(|k| Key::parse(k).ok())
            .collect();
        let _ = d.set_hotkey(&keys);
        Ok(d)
    }

    /// The accessibility API windows are read through (UI Automation, or MSAA and why).
    pub fn tree_source(&self) -> &TreeSource {
        &self.tree_source
    }

    /// A UI Automation client when the system has one.
    fn uia(&self) -> Option<windows::Win32::UI::Accessibility::IUIAutomation> {
        match self.tree_source {
            TreeSource::UiAutomation => uia::client().ok(),
            TreeSource::Msaa { .. } => None,
        }
    }

    /// Everything `computer-control check` prints about this desktop.
    pub fn report(&mut self) -> WindowsReport {
        WindowsReport {
            dpi_aware: self.dpi_aware,
            monitors: self.monitors.monitors().len(),
            hotkey: self.hotkey.clone(),
            tree_source: self.tree_source.clone(),
            capture: self.capturer.choice().clone(),
        }
    }
}

/// An element read through UI Automation (`uia:`), not MSAA (`hwnd:`).
fn is_uia(handle: &ElementHandle) -> bool {
    handle.0.starts_with(crate::uia_model::HANDLE_PREFIX)
}

fn monitor_rects(m: &monitors::Monitors) -> Vec<PhysicalRect> {
    m.monitors().iter().map(|m| m.rect).collect()
}

impl Driver for WindowsDesktop {
    fn platform(&self) -> &'static str {
        "windows"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            capture: true,
            input: true,
            accessibility: true,
            windows: true,
            hotkey: self.hotkey.is_ok(),
            clipboard: true,
            launch: true,
        }
    }

    fn layout(&mut self) -> Result<Layout, DriverError> {
        Ok(self.monitors.refresh()?.0)
    }

    fn capture(&mut self, rect: PhysicalRect) -> Result<RgbImage, DriverError> {
        self.capturer.capture(rect)
    }

    fn pointer_position(&mut self) -> Result<(i32, i32), DriverError> {
        input::pointer()
    }

    fn pointer_move(&mut self, x: i32, y: i32) -> Result<(), DriverError> {
        input::motion(x, y)
    }

    fn button(&mut self, button: Button, down: bool) -> Result<(), DriverError> {
        self.held.button(button, down)
    }

    fn scroll(&mut self, axis: Axis, positive: bool) -> Result<(), DriverError> {
        self.held.scroll(axis, positive)
    }

    fn key(&mut self, key: Key, down: bool) -> Result<(), DriverError> {
        self.held.key(key, down)
    }

    fn type_char(&mut self, c: char) -> Result<(), DriverError> {
        self.held.type_char(c)
    }

    fn release_all(&mut self) -> Result<(), DriverError> {
        self.held.release_all()
    }

    fn held_inputs(&mut self) -> HeldInputs {
        self.held.snapshot()
    }

    fn windows(&mut self) -> Result<Vec<WindowInfo>, DriverError> {
        toplevel::list()
    }

    fn focus_window(&mut self, id: u64) -> Result<(), DriverError> {
        toplevel::focus(id)
    }

    fn window_shown(&mut self, id: u64) -> Result<Option<WindowInfo>, DriverError> {
        Ok(toplevel::shown(id))
    }

    fn window_at(&mut self, x: i32, y: i32) -> Result<Option<WindowInfo>, DriverError> {
        Ok(toplevel::at(x, y))
    }

    fn focused_is_password(&mut self) -> Result<bool, DriverError> {
        let through_uia = self
            .uia()
            .and_then(|u| uia::focused_is_password(&u))
            .unwrap_or(false);
        Ok(through_uia || a11y::focused_is_password())
    }

    fn a11y_tree(
        &mut self,
        window: Option<u64>,
        max_nodes: usize,
    ) -> Result<Vec<RawNode>, DriverError> {
        let all: Vec<u64> = toplevel::list()?.into_iter().map(|w| w.id).collect();
        let ids = match window {
            Some(id) if all.contains(&id) => vec![id],
            Some(id) => return Err(DriverError::Failed(format!("no window {id:#x}"))),
            None => all,
        };
        // Each window through UI Automation where the system has it; a window it
        // cannot read (and every window on a system without it) through MSAA.
        let client = self.uia();
        let mut budget = max_nodes;
        Ok(crate::tree_source::read_windows(
            &ids,
            &mut budget,
            client.map(|u| move |w, b: &mut usize| uia::window_tree(&u, w, b)),
            a11y::window_tree,
        ))
    }

    fn a11y_element(&mut self, handle: &ElementHandle) -> Result<Option<ElementInfo>, DriverError> {
        if is_uia(handle) {
            uia::element(handle)
        } else {
            Ok(a11y::element(handle))
        }
    }

    fn a11y_perform(
        &mut self,
        handle: &ElementHandle,
        action: SemanticAction,
    ) -> Result<(), DriverError> {
        if is_uia(handle) {
            uia::perform(handle, action)
        } else {
            a11y::perform(handle, action)
        }
    }

    fn a11y_set_text(&mut self, handle: &ElementHandle, text: &str) -> Result<(), DriverError> {
        if is_uia(handle) {
            uia::set_text(handle, text)
        } else {
            a11y::set_text(handle, text)
        }
    }

    fn poll_events(&mut self) -> Vec<DriverEvent> {
        let mut out = Vec::new();
        if self.desk.take_pressed() {
            out.push(DriverEvent::Hotkey);
        }
        if let Ok((_, true)) = self.monitors.refresh() {
            out.push(DriverEvent::LayoutChanged);
            // A duplication belongs to one mode of one monitor: open afresh.
            self.capturer = capture::Capturer::open(&monitor_rects(&self.monitors));
            let state = self.indicator;
            if state != Indicator::Off {
                self.indicator = Indicator::Off;
                let _ = self.set_indicator(state);
            }
        }
        out
    }

    fn pump(&mut self) {
        // The desk thread hears the chord by itself; nothing to pump here.
    }

    fn set_hotkey(&mut self, keys: &[Key]) -> Result<(), DriverError> {
        let (mods, vk) = crate::keys::hotkey(keys).map_err(DriverError::Failed)?;
        self.hotkey = self.desk.set_hotkey(mods, vk);
        self.hotkey.clone().map_err(DriverError::Unavailable)
    }

    fn set_indicator(&mut self, state: Indicator) -> Result<(), DriverError> {
        if state == self.indicator {
            return Ok(());
        }
        let rects = monitor_rects(&self.monitors);
        self.desk
            .indicator(state, rects)
            .map_err(DriverError::Failed)?;
        self.indicator = state;
        Ok(())
    }

    fn clipboard_read(&mut self) -> Result<ClipboardContent, DriverError> {
        clipboard::read()
    }

    fn clipboard_write(&mut self, text: &str) -> Result<(), DriverError> {
        clipboard::write(text)
    }

    /// Starts an executable on `PATH` (`.exe` added), detached, its streams closed.
    fn launch(&mut self, app: &str, args: &[String]) -> Result<Launched, DriverError> {
        use std::os::windows::process::CommandExt;
        let path = std::env::var("PATH").unwrap_or_default();
        let program =
            match crate::app_id::resolve(app, &path, |p| std::path::Path::new(p).is_file()) {
                Ok(p) => p,
                Err(why) => return Ok(Launched::Refused(why)),
            };
        // DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP: no console shared with the
        // server, and no Ctrl+C of the server's console reaches it.
        let child = std::process::Command::new(&program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .creation_flags(0x0000_0008 | 0x0000_0200)
            .spawn()
            .map_err(|e| DriverError::Failed(format!("cannot start {program}: {e}")))?;
        Ok(Launched::Started {
            pid: child.id(),
            window: None,
        })
    }
}

impl Drop for WindowsDesktop {
    /// Lets go of every key and button this driver holds; the desk thread's drop
    /// unregisters the hotkey and removes the banners.
    fn drop(&mut self) {
        let _ = self.held.release_all();
    }
}
