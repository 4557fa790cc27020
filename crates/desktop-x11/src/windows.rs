//! Top-level windows from the window manager's EWMH properties (client list in
//! stacking order, titles, classes, pids, frame extents, the active window), and
//! focusing one through `_NET_ACTIVE_WINDOW`.

use std::time::{Duration, Instant};

use cc_protocol::PhysicalRect;
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    AtomEnum, ClientMessageEvent, ConfigureWindowAux, ConnectionExt as _, EventMask,
    GetPropertyReply, InputFocus, StackMode, Window,
};

use super::connection::{Conn, cerr, xerr};
use cc_desktop::{DriverError, WindowInfo};
use cc_desktop_atspi::Toplevel;

fn prop(
    conn: &Conn,
    win: Window,
    atom: u32,
) -> Result<Option<x11rb::protocol::xproto::GetPropertyReply>, DriverError> {
    let reply = conn
        .conn
        .get_property(false, win, atom, AtomEnum::ANY, 0, 1 << 20)
        .map_err(cerr("GetProperty"))?
        .reply();
    match reply {
        Ok(r) if r.format != 0 => Ok(Some(r)),
        Ok(_) => Ok(None),
        // The window vanished between listing and reading: treat as absent.
        Err(x11rb::errors::ReplyError::X11Error(_)) => Ok(None),
        Err(e) => Err(xerr("GetProperty")(e)),
    }
}

fn prop32(conn: &Conn, win: Window, atom: u32) -> Result<Vec<u32>, DriverError> {
    Ok(words(prop(conn, win, atom)?))
}

/// A property's 32-bit values; none when it is unset or not of 32-bit format.
fn words(r: Option<GetPropertyReply>) -> Vec<u32> {
    r.and_then(|r| r.value32().map(|v| v.collect()))
        .unwrap_or_default()
}

/// What the root window says of its clients: the window manager's lists and its
/// active window, asked for together (one round trip where there were three).
pub(super) struct Root {
    stacking: Vec<u32>,
    list: Vec<u32>,
    active: Vec<u32>,
}

impl Root {
    fn read(conn: &Conn) -> Result<Root, DriverError> {
        Ok(Root::read_along(conn, || ())?.0)
    }

    /// Reads the root's lists with `along` sent ahead of them in the same round trip:
    /// its cookie comes back for the caller to read, its reply already there.
    pub(super) fn read_along<T>(
        conn: &Conn,
        along: impl FnOnce() -> T,
    ) -> Result<(Root, T), DriverError> {
        let ahead = along();
        let c = &conn.conn;
        let get = |atom: u32| c.get_property(false, conn.root, atom, AtomEnum::ANY, 0, 1 << 20);
        let stacking = get(conn.atoms._NET_CLIENT_LIST_STACKING);
        let list = get(conn.atoms._NET_CLIENT_LIST);
        let active = get(conn.atoms._NET_ACTIVE_WINDOW);
        let root = Root {
            stacking: words(prop_reply(stacking)?),
            list: words(prop_reply(list)?),
            active: words(prop_reply(active)?),
        };
        Ok((root, ahead))
    }

    /// Client windows, topmost first: `_NET_CLIENT_LIST_STACKING` reversed, else
    /// `_NET_CLIENT_LIST`, else the viewable children of the root that carry a name or
    /// class (no window manager).
    fn clients(&self, conn: &Conn) -> Result<Vec<Window>, DriverError> {
        if !self.stacking.is_empty() {
            return Ok(self.stacking.iter().rev().copied().collect());
        }
        if !self.list.is_empty() {
            return Ok(self.list.clone());
        }
        unmanaged_clients(conn)
    }

    /// The window with input focus per the window manager, else the X input focus
    /// (walked up to a listed client).
    fn focused(&self, conn: &Conn, clients: &[Window]) -> Result<Option<Window>, DriverError> {
        if let Some(&w) = self.active.first()
            && w != 0
        {
            return Ok(Some(w));
        }
        let mut w = conn
            .conn
            .get_input_focus()
            .map_err(cerr("GetInputFocus"))?
            .reply()
            .map_err(xerr("GetInputFocus"))?
            .focus;
        for _ in 0..32 {
            if w == 0 || w == conn.root || w == u32::from(InputFocus::POINTER_ROOT) {
                return Ok(None);
            }
            if clients.contains(&w) {
                return Ok(Some(w));
            }
            match conn.conn.query_tree(w).map_err(cerr("QueryTree"))?.reply() {
                Ok(t) => w = t.parent,
                Err(_) => return Ok(None),
            }
        }
        Ok(None)
    }
}

/// The viewable children of the root that carry a name or class, topmost first: the
/// clients when no window manager lists them. Every child's attributes are asked for
/// at once, then every viewable one's names: three round trips, not two per child.
fn unmanaged_clients(conn: &Conn) -> Result<Vec<Window>, DriverError> {
    let c = &conn.conn;
    let tree = c
        .query_tree(conn.root)
        .map_err(cerr("QueryTree"))?
        .reply()
        .map_err(xerr("QueryTree"))?;
    let mut attrs = Vec::with_capacity(tree.children.len());
    for &w in tree.children.iter().rev() {
        attrs.push((w, c.get_window_attributes(w).map_err(cerr("attrs"))?));
    }
    let mut viewable = Vec::new();
    for (w, cookie) in attrs {
        // A child gone meanwhile answers an error: it is no client.
        let Ok(a) = cookie.reply() else {
            continue;
        };
        if !a.override_redirect && a.map_state == x11rb::protocol::xproto::MapState::VIEWABLE {
            viewable.push(w);
        }
    }
    // Whether a name is set, not the name: no value is fetched.
    let set = |w: Window, atom: AtomEnum| c.get_property(false, w, atom, AtomEnum::ANY, 0, 0);
    let names: Vec<_> = viewable
        .into_iter()
        .map(|w| (w, set(w, AtomEnum::WM_CLASS), set(w, AtomEnum::WM_NAME)))
        .collect();
    let mut out = Vec::new();
    for (w, class, name) in names {
        let (class, name) = (prop_reply(class)?, prop_reply(name)?);
        if class.is_some() || name.is_some() {
            out.push(w);
        }
    }
    Ok(out)
}

/// A property reply as `prop` reads it: `None` when unset or the window is gone.
pub(super) fn prop_reply(
    cookie: Result<
        x11rb::cookie::Cookie<'_, x11rb::rust_connection::RustConnection, GetPropertyReply>,
        x11rb::errors::ConnectionError,
    >,
) -> Result<Option<GetPropertyReply>, DriverError> {
    match cookie.map_err(cerr("GetProperty"))?.reply() {
        Ok(r) if r.format != 0 => Ok(Some(r)),
        Ok(_) => Ok(None),
        Err(x11rb::errors::ReplyError::X11Error(_)) => Ok(None),
        Err(e) => Err(xerr("GetProperty")(e)),
    }
}

/// A title from `_NET_WM_NAME` (UTF-8), else `WM_NAME` (UTF-8 or Latin-1).
pub(super) fn title_of(
    conn: &Conn,
    net: Option<GetPropertyReply>,
    wm: Option<GetPropertyReply>,
) -> String {
    if let Some(r) = net
        && r.format == 8
        && !r.value.is_empty()
    {
        return String::from_utf8_lossy(&r.value).into_owned();
    }
    wm.filter(|r| r.format == 8)
        .map(|r| {
            if r.type_ == conn.atoms.UTF8_STRING {
                String::from_utf8_lossy(&r.value).into_owned()
            } else {
                // STRING is Latin-1.
                r.value.iter().map(|&b| char::from(b)).collect()
            }
        })
        .unwrap_or_default()
}

/// The class part of a `WM_CLASS` value.
pub(super) fn class_of(r: Option<GetPropertyReply>) -> String {
    let Some(r) = r else {
        return String::new();
    };
    let parts: Vec<&[u8]> = r
        .value
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .collect();
    parts
        .get(1)
        .or(parts.first())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .unwrap_or_default()
}

/// Every top-level window, topmost first. All windows' requests are sent before any
/// reply is read: two round trips in all under a window manager instead of about
/// seven per window.
pub(super) fn list(conn: &Conn) -> Result<Vec<Toplevel>, DriverError> {
    list_from(conn, Root::read(conn)?)
}

/// [`list`] from the root's lists already read.
pub(super) fn list_from(conn: &Conn, root: Root) -> Result<Vec<Toplevel>, DriverError> {
    let clients = root.clients(conn)?;
    let focused = root.focused(conn, &clients)?;
    let c = &conn.conn;
    let get = |w: Window, atom: u32| c.get_property(false, w, atom, AtomEnum::ANY, 0, 1 << 20);
    let mut pending = Vec::with_capacity(clients.len());
    for &w in &clients {
        pending.push((
            w,
            c.get_geometry(w).map_err(cerr("GetGeometry"))?,
            c.translate_coordinates(w, conn.root, 0, 0)
                .map_err(cerr("TranslateCoordinates"))?,
            get(w, conn.atoms._NET_FRAME_EXTENTS),
            get(w, conn.atoms._NET_WM_PID),
            get(w, AtomEnum::WM_CLASS.into()),
            get(w, conn.atoms._NET_WM_NAME),
            get(w, AtomEnum::WM_NAME.into()),
        ));
    }
    let mut out = Vec::with_capacity(clients.len());
    for (w, geo, tr, extents, pid, class, net_name, wm_name) in pending {
        // Read every reply (a vanished window answers errors) before deciding.
        let (geo, tr) = (geo.reply(), tr.reply());
        let extents = prop_reply(extents)?;
        let pid = prop_reply(pid)?;
        let class = prop_reply(class)?;
        let (net_name, wm_name) = (prop_reply(net_name)?, prop_reply(wm_name)?);
        let (Ok(geo), Ok(tr)) = (geo, tr) else {
            continue;
        };
        let client = PhysicalRect {
            x: i32::from(tr.dst_x),
            y: i32::from(tr.dst_y),
            width: u32::from(geo.width),
            height: u32::from(geo.height),
        };
        let extents: Vec<u32> = extents
            .and_then(|r| r.value32().map(|v| v.collect()))
            .unwrap_or_default();
        let rect = match extents.as_slice() {
            [l, r, t, b] if *l < 10_000 && *r < 10_000 && *t < 10_000 && *b < 10_000 => {
                PhysicalRect {
                    x: client.x - *l as i32,
                    y: client.y - *t as i32,
                    width: client.width + l + r,
                    height: client.height + t + b,
                }
            }
            _ => client,
        };
        let pid = pid.and_then(|r| r.value32().and_then(|mut v| v.next()));
        out.push(Toplevel {
            info: WindowInfo {
                id: u64::from(w),
                app_id: class_of(class),
                pid,
                title: title_of(conn, net_name, wm_name),
                rect,
                focused: focused == Some(w),
            },
            client,
        });
    }
    Ok(out)
}

/// Whether a client window is mapped and all its ancestors are (an iconic window is
/// unmapped by its window manager, yet stays in its client list). A window that has
/// gone answers `false`.
pub(super) fn viewable(conn: &Conn, w: u64) -> Result<bool, DriverError> {
    let Ok(w) = Window::try_from(w) else {
        return Ok(false);
    };
    let attrs = conn
        .conn
        .get_window_attributes(w)
        .map_err(cerr("GetWindowAttributes"))?
        .reply();
    Ok(attrs.is_ok_and(|a| a.map_state == x11rb::protocol::xproto::MapState::VIEWABLE))
}

/// True when an EWMH window manager runs (`_NET_SUPPORTING_WM_CHECK` on the root).
pub(super) fn has_window_manager(conn: &Conn) -> bool {
    prop32(conn, conn.root, conn.atoms._NET_SUPPORTING_WM_CHECK).is_ok_and(|v| !v.is_empty())
}

/// Activates and raises a listed window, then waits briefly until the window manager
/// reports it active (so the next keystroke goes there).
pub(super) fn focus(conn: &Conn, id: u64) -> Result<(), DriverError> {
    let known = Root::read(conn)?.clients(conn)?;
    let win = u32::try_from(id)
        .ok()
        .filter(|w| known.contains(w))
        .ok_or_else(|| DriverError::Failed(format!("no window {id:#x}")))?;
    let has_wm = has_window_manager(conn);
    if has_wm {
        let ev =
            ClientMessageEvent::new(32, win, conn.atoms._NET_ACTIVE_WINDOW, [2u32, 0, 0, 0, 0]);
        conn.conn
            .send_event(
                false,
                conn.root,
                EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
                ev,
            )
            .map_err(cerr("send _NET_ACTIVE_WINDOW"))?;
    }
    conn.conn
        .configure_window(win, &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE))
        .map_err(cerr("raise window"))?;
    if !has_wm {
        conn.conn
            .set_input_focus(InputFocus::PARENT, win, x11rb::CURRENT_TIME)
            .map_err(cerr("SetInputFocus"))?;
    }
    conn.conn.flush().map_err(cerr("flush"))?;
    if has_wm {
        let deadline = Instant::now() + Duration::from_millis(500);
        while Instant::now() < deadline {
            if prop32(conn, conn.root, conn.atoms._NET_ACTIVE_WINDOW)?.first() == Some(&win) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    } else {
        conn.sync()?;
    }
    Ok(())
}
