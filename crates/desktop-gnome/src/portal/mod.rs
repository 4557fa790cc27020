//! The desktop portal driver: remote desktop and screen cast through
//! `xdg-desktop-portal`, for sandboxed applications and for desktops whose compositor
//! has no interface of its own for them (KDE Plasma). It uses only the portal's public
//! interfaces (never gnome-shell's), and shares the PipeWire frame reader and the
//! keysyms with the GNOME driver.
//!
//! The portal asks the user before a session starts (a dialog on the screen): the
//! driver says so in the log before it waits, and waits up to the consent timeout.
//! Where the portal remembers consent (RemoteDesktop version 2 and later) the restore
//! token it returns is kept in a file of the user's, and the next start passes it, so
//! the user is asked once. The portal gives no window list and no window positions,
//! so windows and accessibility rectangles are not offered; the password check still
//! reads the focused accessible.

pub mod session;

use std::path::PathBuf;
use std::time::Duration;

use cc_desktop::{
    Axis, Button, Capabilities, Driver, DriverError, DriverEvent, ElementHandle, ElementInfo,
    HeldInputs, Launched, Layout, PhysicalDisplay, Platform, RawNode, RgbImage, SemanticAction,
    WindowInfo,
};
use cc_desktop_atspi::A11y;
use cc_protocol::{Key, PhysicalRect};
use tokio::runtime::Runtime;

use crate::frames::{Frames, Remote};
use crate::{keysyms, mutter};

/// The portal backend for the binary's platform selection.
pub const PLATFORM: Platform = Platform {
    name: "portal",
    open: open_env,
    detect: detect_env,
    reach: crate::reach::reach_env,
};

/// How long the user has to answer the consent dialog by default.
pub const CONSENT_TIMEOUT: Duration = Duration::from_secs(120);

/// How long after `Start` the seat takes to deliver keys (as with Mutter's own
/// session: the first key before that is lost).
const WARM_UP: Duration = Duration::from_millis(200);

const BTN_LEFT: i32 = 0x110;
const BTN_RIGHT: i32 = 0x111;
const BTN_MIDDLE: i32 = 0x112;

fn open_env() -> Result<Box<dyn Driver>, DriverError> {
    PortalDesktop::connect_with(PortalOptions::default()).map(|d| Box::new(d) as Box<dyn Driver>)
}

/// The portal when the session bus has a portal offering RemoteDesktop and ScreenCast
/// (the user will be asked, unless consent was remembered).
fn detect_env() -> Result<Box<dyn Driver>, String> {
    if !wayland_session() {
        return Err("not a Wayland session (WAYLAND_DISPLAY is not set)".into());
    }
    let r = PortalDesktop::probe(&PortalOptions::default()).map_err(|e| e.to_string())?;
    if let Some(why) = r.unusable() {
        return Err(why);
    }
    PortalDesktop::connect_with(PortalOptions::default())
        .map(|d| Box::new(d) as Box<dyn Driver>)
        .map_err(|e| e.to_string())
}

/// Whether the environment names a Wayland session: `auto` considers the portal only
/// there (on X11 the X11 driver needs no consent, and asking the bus would start the
/// portal for nothing).
pub fn wayland_session() -> bool {
    std::env::var_os("WAYLAND_DISPLAY").is_some_and(|v| !v.is_empty())
}

/// Where to connect and where consent is remembered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortalOptions {
    /// The session bus (else the environment's).
    pub session_bus: Option<String>,
    /// The file the restore token is kept in (else [`default_token_file`]).
    pub token_file: Option<PathBuf>,
    /// How long the user has to answer the dialog.
    pub consent_timeout: Duration,
}

impl Default for PortalOptions {
    fn default() -> Self {
        PortalOptions {
            session_bus: None,
            token_file: None,
            consent_timeout: CONSENT_TIMEOUT,
        }
    }
}

/// `$XDG_STATE_HOME/computer-control/portal-restore-token` (`~/.local/state` when
/// unset): the user's own, never shared between users.
pub fn default_token_file() -> Option<PathBuf> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let state = env("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".local/state")))?;
    Some(state.join("computer-control").join("portal-restore-token"))
}

/// What `computer-control check` reports about the portal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortalReport {
    /// The interfaces' versions.
    pub offer: session::Offer,
    /// The restore token file, when one is kept.
    pub token_file: Option<PathBuf>,
    /// A token from an earlier session is there (the next start may need no dialog).
    pub has_token: bool,
    /// PipeWire's client library (its version), or why it cannot be loaded.
    pub pipewire_library: Result<String, String>,
}

impl PortalReport {
    /// Why the portal cannot serve here.
    pub fn unusable(&self) -> Option<String> {
        let mut missing = Vec::new();
        if self.offer.remote_desktop == 0 {
            missing.push("org.freedesktop.portal.RemoteDesktop (input)");
        }
        if self.offer.screen_cast == 0 {
            missing.push("org.freedesktop.portal.ScreenCast (capture)");
        }
        if !missing.is_empty() {
            return Some(format!(
                "the desktop portal lacks {}: no xdg-desktop-portal, or no backend for this \
                 desktop (xdg-desktop-portal-gnome, xdg-desktop-portal-kde)",
                missing.join(", ")
            ));
        }
        self.pipewire_library.clone().err()
    }

    /// What the user will be asked, in one sentence.
    pub fn consent(&self) -> String {
        if self.offer.remembers_consent() {
            "the user is asked once (a dialog: allow remote interaction, then Share); the \
             answer is remembered with a restore token"
                .into()
        } else {
            format!(
                "the user is asked at every start (a dialog: allow remote interaction, then \
                 Share): this portal's RemoteDesktop (version {}) cannot remember consent",
                self.offer.remote_desktop
            )
        }
    }
}

/// The driver for a session reached through the desktop portal.
pub struct PortalDesktop {
    // Declared before the runtime they use, so dropped first.
    frames: Option<Frames>,
    session: Option<session::Session>,
    rt: Runtime,
    a11y: A11y,
    session_bus: Option<String>,
    displays: Vec<(PhysicalDisplay, u32)>,
    pointer: (i32, i32),
    pointer_warm: bool,
    held_keys: Vec<(String, u32)>,
    held_buttons: Vec<Button>,
    /// GNOME's compositor drops keysyms its layout lacks (and this portal has no
    /// clipboard): such characters are refused rather than lost.
    layout_keysyms_only: bool,
}

fn token_file(opts: &PortalOptions) -> Option<PathBuf> {
    opts.token_file.clone().or_else(default_token_file)
}

fn read_token(file: Option<&PathBuf>) -> Option<String> {
    let t = std::fs::read_to_string(file?).ok()?;
    let t = t.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// Keeps the token readable by the user only (it stands for the user's consent).
fn write_token(file: &PathBuf, token: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(file)?;
    f.write_all(token.as_bytes())
}

fn button_code(b: Button) -> i32 {
    match b {
        Button::Left => BTN_LEFT,
        Button::Right => BTN_RIGHT,
        Button::Middle => BTN_MIDDLE,
    }
}

/// The keysym of a character: ASCII as on every layout, Latin-1 as itself, anything
/// else as a Unicode keysym.
fn unicode_keysym(c: char) -> u32 {
    let cp = u32::from(c);
    if (0xa0..=0xff).contains(&cp) {
        cp
    } else {
        0x0100_0000 | cp
    }
}

impl PortalDesktop {
    /// Joins the session bus, starts a portal session for keyboard, pointer and every
    /// monitor (the user answers the dialog unless consent was remembered), opens the
    /// streams and warms the seat up. Fails when the user declines or does not answer
    /// in time: a driver whose input would go nowhere is never made.
    pub fn connect_with(opts: PortalOptions) -> Result<PortalDesktop, DriverError> {
        // The user is not asked for a session whose frames could not be read.
        crate::frames::library()?;
        let rt = mutter::runtime()?;
        let file = token_file(&opts);
        let token = read_token(file.as_ref());
        let told = |what: &str| tracing::warn!("desktop portal: {what}");
        let s = rt.block_on(async {
            let conn = mutter::connect(opts.session_bus.as_deref()).await?;
            let offer = session::offer(&conn).await;
            if !offer.remembers_consent() && offer.remote_desktop > 0 {
                tracing::info!(
                    "desktop portal: RemoteDesktop version {} cannot remember consent; the \
                     user is asked at every start",
                    offer.remote_desktop
                );
            }
            session::start(
                &conn,
                &offer,
                session::StartOptions {
                    restore_token: token.as_deref(),
                    consent_timeout: opts.consent_timeout,
                    on_dialog: &told,
                },
            )
            .await
        })?;
        if let (Some(file), Some(t)) = (file.as_ref(), s.restore_token.as_deref())
            && let Err(e) = write_token(file, t)
        {
            tracing::warn!(
                "desktop portal: could not keep the restore token in {}: {e}",
                file.display()
            );
        }
        let displays: Vec<(PhysicalDisplay, u32)> = s
            .streams
            .iter()
            .enumerate()
            .map(|(i, st)| {
                (
                    PhysicalDisplay {
                        id: format!("portal-{i}"),
                        name: format!("portal-{i}"),
                        rect: PhysicalRect {
                            x: st.position.0,
                            y: st.position.1,
                            width: u32::try_from(st.size.0).unwrap_or(0),
                            height: u32::try_from(st.size.1).unwrap_or(0),
                        },
                        primary: i == 0,
                    },
                    st.node,
                )
            })
            .collect();
        let fd = rt.block_on(s.pipewire())?;
        let recorded: Vec<(String, u32)> =
            displays.iter().map(|(d, n)| (d.id.clone(), *n)).collect();
        let frames = Frames::open_remote(&recorded, Remote::Fd(fd))?;
        let gnome = std::env::var("XDG_CURRENT_DESKTOP")
            .unwrap_or_default()
            .split(':')
            .any(|d| d.eq_ignore_ascii_case("gnome"));
        let d = PortalDesktop {
            frames: Some(frames),
            session: Some(s),
            rt,
            a11y: A11y::new(opts.session_bus.clone(), None, false),
            session_bus: opts.session_bus,
            displays,
            pointer: (0, 0),
            pointer_warm: false,
            held_keys: Vec::new(),
            held_buttons: Vec::new(),
            layout_keysyms_only: gnome,
        };
        // The seat drops the first key after Start.
        d.keysym(keysyms::SHIFT_L, true)?;
        d.keysym(keysyms::SHIFT_L, false)?;
        std::thread::sleep(WARM_UP);
        Ok(d)
    }

    /// What the portal offers, without starting a session (no dialog).
    pub fn probe(opts: &PortalOptions) -> Result<PortalReport, DriverError> {
        let rt = mutter::runtime()?;
        let offer = rt.block_on(async {
            let conn = mutter::connect(opts.session_bus.as_deref()).await?;
            Ok::<_, DriverError>(session::offer(&conn).await)
        })?;
        let file = token_file(opts);
        Ok(PortalReport {
            offer,
            has_token: read_token(file.as_ref()).is_some(),
            token_file: file,
            pipewire_library: crate::pipewire_library(),
        })
    }

    fn session(&self) -> Result<&session::Session, DriverError> {
        self.session
            .as_ref()
            .ok_or_else(|| DriverError::Unavailable("no portal session".into()))
    }

    fn keysym(&self, sym: u32, down: bool) -> Result<(), DriverError> {
        let s = self.session()?;
        self.rt.block_on(s.keysym(sym, down))
    }

    /// The keysym that types `c`, or why it cannot be typed here.
    fn char_keysym(&self, c: char) -> Result<u32, DriverError> {
        match keysyms::typed(c) {
            Some(sym) => Ok(sym),
            None if c.is_control() => Err(DriverError::Failed(format!(
                "no key types the control character {c:?}"
            ))),
            None if self.layout_keysyms_only => Err(DriverError::Unavailable(format!(
                "{c:?} is not on the keyboard layout: GNOME's compositor drops such keys and \
                 this desktop portal has no clipboard to paste it; use --platform gnome for \
                 any Unicode text"
            ))),
            None => Ok(unicode_keysym(c)),
        }
    }

    fn no_windows() -> DriverError {
        DriverError::Unavailable(
            "the desktop portal gives no window list or window positions".into(),
        )
    }
}

impl Driver for PortalDesktop {
    fn platform(&self) -> &'static str {
        "portal"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            capture: self.frames.is_some(),
            input: self.session.is_some(),
            accessibility: false,
            windows: false,
            hotkey: false,
            clipboard: false,
            launch: true,
        }
    }

    fn layout(&mut self) -> Result<Layout, DriverError> {
        Ok(Layout {
            displays: self.displays.iter().map(|(d, _)| d.clone()).collect(),
            generation: 0,
        })
    }

    fn capture(&mut self, rect: PhysicalRect) -> Result<RgbImage, DriverError> {
        let frames = self
            .frames
            .as_ref()
            .ok_or_else(|| DriverError::Unavailable("no screen cast".into()))?;
        let displays: Vec<PhysicalDisplay> = self.displays.iter().map(|(d, _)| d.clone()).collect();
        frames.capture(&displays, rect)
    }

    fn pointer_position(&mut self) -> Result<(i32, i32), DriverError> {
        Ok(self.pointer)
    }

    fn pointer_move(&mut self, x: i32, y: i32) -> Result<(), DriverError> {
        let (d, node) = self
            .displays
            .iter()
            .find(|(d, _)| d.rect.contains(x, y))
            .cloned()
            .ok_or_else(|| DriverError::Failed(format!("({x}, {y}) is on no shared monitor")))?;
        let (sx, sy) = (f64::from(x - d.rect.x), f64::from(y - d.rect.y));
        let s = self.session()?;
        if !self.pointer_warm {
            // The seat drops the first motion of a new session: it goes twice.
            self.rt.block_on(s.pointer_to(node, sx, sy))?;
            std::thread::sleep(WARM_UP);
            self.pointer_warm = true;
        }
        let s = self.session()?;
        self.rt.block_on(s.pointer_to(node, sx, sy))?;
        self.pointer = (x, y);
        Ok(())
    }

    fn button(&mut self, button: Button, down: bool) -> Result<(), DriverError> {
        let s = self.session()?;
        self.rt.block_on(s.button(button_code(button), down))?;
        self.held_buttons.retain(|b| *b != button);
        if down {
            self.held_buttons.push(button);
        }
        Ok(())
    }

    fn scroll(&mut self, axis: Axis, positive: bool) -> Result<(), DriverError> {
        // Steps: positive is down (vertical) or right (horizontal).
        let (a, steps): (u32, i32) = match axis {
            Axis::Vertical => (0, if positive { -1 } else { 1 }),
            Axis::Horizontal => (1, if positive { 1 } else { -1 }),
        };
        let s = self.session()?;
        self.rt.block_on(s.axis(a, steps))
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
        let sym = self.char_keysym(c)?;
        self.keysym(sym, true)?;
        self.keysym(sym, false)
    }

    /// Refuses a text with a character that would be lost before any of it is typed
    /// (no half-typed text).
    fn prepare_typing(&mut self, text: &str, _pace: cc_desktop::Pace) -> Result<(), DriverError> {
        text.chars()
            .try_for_each(|c| self.char_keysym(c).map(|_| ()))
    }

    fn release_all(&mut self) -> Result<(), DriverError> {
        let mut result = Ok(());
        for (_, sym) in std::mem::take(&mut self.held_keys).into_iter().rev() {
            result = result.and(self.keysym(sym, false));
        }
        for b in std::mem::take(&mut self.held_buttons) {
            let r = self
                .session()
                .and_then(|s| self.rt.block_on(s.button(button_code(b), false)));
            result = result.and(r);
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
        Err(Self::no_windows())
    }

    fn focus_window(&mut self, _id: u64) -> Result<(), DriverError> {
        Err(Self::no_windows())
    }

    fn focused_is_password(&mut self) -> Result<bool, DriverError> {
        self.a11y.focused_is_password(&[])
    }

    fn a11y_tree(
        &mut self,
        _window: Option<u64>,
        _max_nodes: usize,
    ) -> Result<Vec<RawNode>, DriverError> {
        Err(DriverError::Unavailable(
            "accessibility rectangles need window positions, which the desktop portal does \
             not give"
                .into(),
        ))
    }

    fn a11y_element(
        &mut self,
        _handle: &ElementHandle,
    ) -> Result<Option<ElementInfo>, DriverError> {
        Err(Self::no_windows())
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
        Vec::new()
    }
}

impl Drop for PortalDesktop {
    /// Lets go of everything held and closes the session (the streams end with it).
    fn drop(&mut self) {
        let _ = self.release_all();
        self.frames = None;
        if let Some(s) = self.session.take() {
            self.rt.block_on(s.close());
            let _g = self.rt.enter();
            drop(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_map_to_latin1_or_unicode_keysyms() {
        assert_eq!(unicode_keysym('é'), 0xe9);
        assert_eq!(unicode_keysym('世'), 0x0100_4e16);
        assert_eq!(unicode_keysym('✓'), 0x0100_2713);
    }

    #[test]
    fn a_portal_without_remote_desktop_is_unusable_and_says_what_to_install() {
        let r = PortalReport {
            offer: session::Offer {
                remote_desktop: 0,
                screen_cast: 4,
            },
            token_file: None,
            has_token: false,
            pipewire_library: Ok("libpipewire 0.3.65".into()),
        };
        let why = r.unusable().expect("unusable");
        assert!(why.contains("RemoteDesktop"), "{why}");
        assert!(why.contains("xdg-desktop-portal-kde"), "{why}");
    }

    #[test]
    fn a_portal_without_pipewire_s_library_is_unusable() {
        let r = PortalReport {
            offer: session::Offer {
                remote_desktop: 2,
                screen_cast: 4,
            },
            token_file: None,
            has_token: false,
            pipewire_library: Err("libpipewire-0.3.so.0 cannot be loaded".into()),
        };
        let why = r.unusable().expect("unusable");
        assert!(why.contains("libpipewire-0.3.so.0"), "{why}");
        let ok = PortalReport {
            pipewire_library: Ok("libpipewire 0.3.65".into()),
            ..r
        };
        assert_eq!(ok.unusable(), None);
    }

    #[test]
    fn consent_is_remembered_only_from_remote_desktop_version_2() {
        let r = |v| PortalReport {
            offer: session::Offer {
                remote_desktop: v,
                screen_cast: 4,
            },
            token_file: None,
            has_token: false,
            pipewire_library: Ok("libpipewire 0.3.65".into()),
        };
        assert!(r(1).consent().contains("every start"));
        assert!(r(2).consent().contains("remembered"));
    }

    #[test]
    fn the_restore_token_is_kept_for_the_user_only() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = std::env::temp_dir().join(format!("cc-portal-token-{}", std::process::id()));
        let file = dir.join("state/portal-restore-token");
        write_token(&file, "4f8a0c1e-token").expect("write");
        assert_eq!(read_token(Some(&file)).as_deref(), Some("4f8a0c1e-token"));
        let mode = std::fs::metadata(&file).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::write(&file, "  \n").expect("blank");
        assert_eq!(read_token(Some(&file)), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
