//! A thread of the driver's own with a message queue: it holds the emergency hotkey
//! (`RegisterHotKey` posts `WM_HOTKEY` to the registering thread, which must pump
//! messages whatever the engine's worker is doing, so a real chord is heard in the
//! middle of an action) and the indicator banners (windows belong to the thread that
//! made them and are painted from its queue).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use cc_desktop::{DriverError, Indicator};
use cc_protocol::PhysicalRect;
use windows::Win32::Foundation::{COLORREF, HWND, LPARAM, LRESULT, WPARAM};
use windows::Win32::Graphics::Gdi::{CreateSolidBrush, HBRUSH};
use windows::Win32::System::LibraryLoader::GetModuleHandleW;
use windows::Win32::System::Threading::GetCurrentThreadId;
use windows::Win32::UI::Input::KeyboardAndMouse::{
    HOT_KEY_MODIFIERS, MOD_NOREPEAT, RegisterHotKey, UnregisterHotKey,
};
use windows::Win32::UI::WindowsAndMessaging::{
    CreateWindowExW, DefWindowProcW, DestroyWindow, DispatchMessageW, GetMessageW, LWA_ALPHA, MSG,
    PM_NOREMOVE, PeekMessageW, PostThreadMessageW, RegisterClassW, SW_SHOWNOACTIVATE,
    SetLayeredWindowAttributes, ShowWindow, TranslateMessage, WM_APP, WM_HOTKEY, WM_QUIT,
    WNDCLASSW, WS_EX_LAYERED, WS_EX_NOACTIVATE, WS_EX_TOOLWINDOW, WS_EX_TOPMOST, WS_EX_TRANSPARENT,
    WS_POPUP,
};
use windows::core::PCWSTR;

/// The indicator windows' class: the window list and hit tests leave them out.
pub const INDICATOR_CLASS: &str = "ComputerControlIndicator";
/// How tall a banner is, in physical pixels: a strip along each monitor's top edge.
const BANNER_HEIGHT: u32 = 6;
const HOTKEY_ID: i32 = 0xCC;
const WM_COMMAND_QUEUED: u32 = WM_APP + 1;

enum Command {
    Hotkey(u32, u16, mpsc::Sender<Result<(), String>>),
    Indicator(
        Indicator,
        Vec<PhysicalRect>,
        mpsc::Sender<Result<(), String>>,
    ),
}

/// The handle the driver keeps: commands in, the hotkey flag out.
pub struct DeskThread {
    thread_id: u32,
    commands: mpsc::Sender<Command>,
    pressed: Arc<AtomicBool>,
    join: Option<std::thread::JoinHandle<()>>,
}

impl DeskThread {
    pub fn start() -> Result<DeskThread, DriverError> {
        let (tx, rx) = mpsc::channel::<Command>();
        let (ready_tx, ready_rx) = mpsc::channel::<u32>();
        let pressed = Arc::new(AtomicBool::new(false));
        let flag = pressed.clone();
        let join = std::thread::Builder::new()
            .name("cc-desk".into())
            .spawn(move || run(rx, ready_tx, flag))
            .map_err(|e| DriverError::Failed(format!("cannot start the desk thread: {e}")))?;
        let thread_id = ready_rx
            .recv()
            .map_err(|_| DriverError::Failed("the desk thread ended at start".into()))?;
        Ok(DeskThread {
            thread_id,
            commands: tx,
            pressed,
            join: Some(join),
        })
    }

    fn ask(
        &self,
        make: impl FnOnce(mpsc::Sender<Result<(), String>>) -> Command,
    ) -> Result<(), String> {
        let (tx, rx) = mpsc::channel();
        self.commands
            .send(make(tx))
            .map_err(|_| "the desk thread has ended".to_string())?;
        // SAFETY: posting a message without pointers to a thread id we own.
        unsafe { PostThreadMessageW(self.thread_id, WM_COMMAND_QUEUED, WPARAM(0), LPARAM(0)) }
            .map_err(|e| format!("cannot reach the desk thread: {e}"))?;
        rx.recv()
            .map_err(|_| "the desk thread has ended".to_string())?
    }

    /// Registers the chord (`RegisterHotKey` modifier bits and virtual key) in place of
    /// the previous one.
    pub fn set_hotkey(&self, mods: u32, vk: u16) -> Result<(), String> {
        self.ask(|tx| Command::Hotkey(mods, vk, tx))
    }

    /// Shows the indicator state on these monitors.
    pub fn indicator(&self, state: Indicator, monitors: Vec<PhysicalRect>) -> Result<(), String> {
        self.ask(|tx| Command::Indicator(state, monitors, tx))
    }

    /// True once per press of the chord since the last call.
    pub fn take_pressed(&self) -> bool {
        self.pressed.swap(false, Ordering::SeqCst)
    }
}

impl Drop for DeskThread {
    fn drop(&mut self) {
        // SAFETY: posting WM_QUIT to our own thread; it unregisters and destroys its
        // windows on the way out.
        let _ = unsafe { PostThreadMessageW(self.thread_id, WM_QUIT, WPARAM(0), LPARAM(0)) };
        if let Some(j) = self.join.take() {
            let _ = j.join();
        }
    }
}

unsafe extern "system" fn banner_proc(h: HWND, msg: u32, w: WPARAM, l: LPARAM) -> LRESULT {
    // SAFETY: the default handling of a window's own message.
    unsafe { DefWindowProcW(h, msg, w, l) }
}

fn register_class(name: &str, color: COLORREF) -> Vec<u16> {
    let wide = super::wide(name);
    // SAFETY: the class name outlives the registration (it is kept by the caller for
    // the thread's life); the brush is owned by the class from here on.
    unsafe {
        let instance = GetModuleHandleW(None).unwrap_or_default();
        let class = WNDCLASSW {
            lpfnWndProc: Some(banner_proc),
            hInstance: instance.into(),
            lpszClassName: PCWSTR(wide.as_ptr()),
            hbrBackground: HBRUSH(CreateSolidBrush(color).0),
            ..Default::default()
        };
        RegisterClassW(&class);
    }
    wide
}

struct Banners {
    windows: Vec<HWND>,
    state: Indicator,
}

impl Banners {
    fn clear(&mut self) {
        for h in self.windows.drain(..) {
            // SAFETY: our own windows, destroyed on the thread that made them.
            let _ = unsafe { DestroyWindow(h) };
        }
        self.state = Indicator::Off;
    }

    fn show(
        &mut self,
        class: &[u16],
        state: Indicator,
        monitors: &[PhysicalRect],
    ) -> Result<(), String> {
        self.clear();
        if state == Indicator::Off {
            return Ok(());
        }
        for m in monitors {
            // SAFETY: a window of our registered class, owned by this thread; the title
            // is a NUL-terminated buffer alive for the call.
            let h = unsafe {
                let title = super::wide("computer-control");
                CreateWindowExW(
                    WS_EX_LAYERED
                        | WS_EX_TRANSPARENT
                        | WS_EX_TOPMOST
                        | WS_EX_TOOLWINDOW
                        | WS_EX_NOACTIVATE,
                    PCWSTR(class.as_ptr()),
                    PCWSTR(title.as_ptr()),
                    WS_POPUP,
                    m.x,
                    m.y,
                    m.width as i32,
                    BANNER_HEIGHT as i32,
                    None,
                    None,
                    None,
                    None,
                )
            };
            let h = match h {
                Ok(h) => h,
                Err(e) => {
                    self.clear();
                    return Err(format!("cannot create the indicator window: {e}"));
                }
            };
            // SAFETY: our own window.
            unsafe {
                let _ = SetLayeredWindowAttributes(h, COLORREF(0), 220, LWA_ALPHA);
                let _ = ShowWindow(h, SW_SHOWNOACTIVATE);
            }
            self.windows.push(h);
        }
        self.state = state;
        Ok(())
    }
}

fn run(rx: mpsc::Receiver<Command>, ready: mpsc::Sender<u32>, pressed: Arc<AtomicBool>) {
    let mut msg = MSG::default();
    // SAFETY: creates this thread's message queue before anyone posts to it.
    unsafe {
        let _ = PeekMessageW(&mut msg, None, 0, 0, PM_NOREMOVE);
    }
    // Amber while acting, red while stopped (COLORREF is 0x00BBGGRR).
    let acting = register_class(INDICATOR_CLASS, COLORREF(0x0000_A5FF));
    let stopped_name = format!("{INDICATOR_CLASS}Stopped");
    let stopped = register_class(&stopped_name, COLORREF(0x0000_00E0));
    // SAFETY: a plain query.
    let _ = ready.send(unsafe { GetCurrentThreadId() });
    let mut registered = false;
    let mut banners = Banners {
        windows: Vec::new(),
        state: Indicator::Off,
    };
    loop {
        // SAFETY: `msg` is ours; GetMessageW returns 0 on WM_QUIT and -1 on error.
        let got = unsafe { GetMessageW(&mut msg, None, 0, 0) };
        if got.0 <= 0 {
            break;
        }
        match msg.message {
            WM_HOTKEY if msg.wParam.0 == HOTKEY_ID as usize => {
                pressed.store(true, Ordering::SeqCst);
            }
            WM_COMMAND_QUEUED => {
                while let Ok(cmd) = rx.try_recv() {
                    match cmd {
                        Command::Hotkey(mods, vk, reply) => {
                            // SAFETY: the id is ours on this thread.
                            unsafe {
                                if registered {
                                    let _ = UnregisterHotKey(None, HOTKEY_ID);
                                }
                                let r = RegisterHotKey(
                                    None,
                                    HOTKEY_ID,
                                    HOT_KEY_MODIFIERS(mods) | MOD_NOREPEAT,
                                    vk as u32,
                                );
                                registered = r.is_ok();
                                let _ = reply.send(r.map_err(|e| {
                                    format!("RegisterHotKey: {e} (another program holds the chord)")
                                }));
                            }
                        }
                        Command::Indicator(state, monitors, reply) => {
                            let class: &[u16] = if state == Indicator::Stopped {
                                &stopped
                            } else {
                                &acting
                            };
                            let _ = reply.send(banners.show(class, state, &monitors));
                        }
                    }
                }
            }
            _ => {
                // SAFETY: the message came from this thread's queue.
                unsafe {
                    let _ = TranslateMessage(&msg);
                    DispatchMessageW(&msg);
                }
            }
        }
    }
    banners.clear();
    if registered {
        // SAFETY: our own registration on this thread.
        let _ = unsafe { UnregisterHotKey(None, HOTKEY_ID) };
    }
}
