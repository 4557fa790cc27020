//! The window a pointer event at a point reaches, as the X server itself decides it.
//!
//! `TranslateCoordinates` from the root to the root names the topmost *mapped* child
//! of the root whose bounding and input shapes hold the point: the server's true
//! stacking order, override-redirect windows (menus, tooltips) included. A minimized
//! client or one on another workspace is unmapped by its window manager and is never
//! it, though the window manager keeps it in its client list at its old place; a
//! click-through window (an empty input shape, like the indicator's banners) is
//! passed through, as the pointer passes through it. A window manager's frame stands
//! for the client it holds.

use cc_desktop::{DriverError, WindowInfo};
use cc_desktop_atspi::Toplevel;
use cc_protocol::PhysicalRect;
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _, Window};

use super::connection::{Conn, cerr, xerr};
use super::windows;

/// How many parents up a client's frame may be (a reparenting window manager puts
/// a client one or two levels below the root).
const MAX_DEPTH: usize = 8;

/// The window under root point `(x, y)`; `None` over the bare root or off the
/// screen. A listed client (or its frame) is reported as `windows()` lists it; any
/// other window with what it carries itself, except that a popup naming a listed
/// owner (`WM_TRANSIENT_FOR`) stands for its owner's application and title.
pub(super) fn window_at(conn: &Conn, x: i32, y: i32) -> Result<Option<WindowInfo>, DriverError> {
    let (Ok(x), Ok(y)) = (i16::try_from(x), i16::try_from(y)) else {
        return Ok(None);
    };
    // The point's window and the root's client lists in one round trip.
    let (root, top) = windows::Root::read_along(conn, || {
        conn.conn.translate_coordinates(conn.root, conn.root, x, y)
    })?;
    let top = top
        .map_err(cerr("TranslateCoordinates"))?
        .reply()
        .map_err(xerr("TranslateCoordinates"))?
        .child;
    if top == x11rb::NONE {
        return Ok(None);
    }
    // Its children go out with the clients' details: a frame holds its client.
    let children = conn.conn.query_tree(top).map_err(cerr("QueryTree"))?;
    let clients = windows::list_from(conn, root)?;
    // A window gone meanwhile answers an error: it holds nothing.
    let children = children.reply().map(|t| t.children).unwrap_or_default();
    if let Some(c) = client_in(conn, &clients, top, &children)? {
        return Ok(Some(c.info.clone()));
    }
    unlisted(conn, top, (x, y), &clients).map(Some)
}

/// The listed client that is `top` or that `top` frames (`children`: `top`'s own,
/// where a reparenting window manager puts the client it frames).
fn client_in<'a>(
    conn: &Conn,
    clients: &'a [Toplevel],
    top: Window,
    children: &[Window],
) -> Result<Option<&'a Toplevel>, DriverError> {
    if let Some(c) = clients.iter().find(|c| c.info.id == u64::from(top)) {
        return Ok(Some(c));
    }
    if let Some(c) = clients
        .iter()
        .find(|c| children.iter().any(|&w| u64::from(w) == c.info.id))
    {
        return Ok(Some(c));
    }
    // Walk every client up to its child of the root, one level for all at a time.
    let mut walking: Vec<(usize, Window)> = clients
        .iter()
        .enumerate()
        .filter_map(|(i, c)| Window::try_from(c.info.id).ok().map(|w| (i, w)))
        .collect();
    for _ in 0..MAX_DEPTH {
        if walking.is_empty() {
            break;
        }
        let mut pending = Vec::with_capacity(walking.len());
        for &(i, w) in &walking {
            pending.push((i, w, conn.conn.query_tree(w).map_err(cerr("QueryTree"))?));
        }
        let mut next = Vec::new();
        for (i, w, cookie) in pending {
            // A client that vanished meanwhile answers an error: it frames nothing.
            let Ok(tree) = cookie.reply() else {
                continue;
            };
            if tree.parent == conn.root {
                if w == top {
                    return Ok(clients.get(i));
                }
            } else if tree.parent != x11rb::NONE {
                next.push((i, tree.parent));
            }
        }
        walking = next;
    }
    Ok(None)
}

/// A window no window manager lists (override-redirect, or unmanaged), described by
/// its own properties; a popup transient for a listed client takes its owner's
/// application and title.
fn unlisted(
    conn: &Conn,
    w: Window,
    (x, y): (i16, i16),
    clients: &[Toplevel],
) -> Result<WindowInfo, DriverError> {
    let c = &conn.conn;
    let get = |atom: u32| c.get_property(false, w, atom, AtomEnum::ANY, 0, 1 << 16);
    let geo = c.get_geometry(w).map_err(cerr("GetGeometry"))?;
    let class = get(AtomEnum::WM_CLASS.into());
    let net_name = get(conn.atoms._NET_WM_NAME);
    let wm_name = get(AtomEnum::WM_NAME.into());
    let pid = get(conn.atoms._NET_WM_PID);
    let owner = get(AtomEnum::WM_TRANSIENT_FOR.into());
    let geo = geo.reply();
    let class = windows::prop_reply(class)?;
    let (net_name, wm_name) = (
        windows::prop_reply(net_name)?,
        windows::prop_reply(wm_name)?,
    );
    let pid = windows::prop_reply(pid)?.and_then(|r| r.value32().and_then(|mut v| v.next()));
    let owner = windows::prop_reply(owner)?
        .and_then(|r| r.value32().and_then(|mut v| v.next()))
        .and_then(|o| clients.iter().find(|c| c.info.id == u64::from(o)));
    // A window gone since the server named it was there a moment ago: an empty
    // rectangle at the point.
    let rect = geo.map_or(
        PhysicalRect {
            x: i32::from(x),
            y: i32::from(y),
            width: 0,
            height: 0,
        },
        |g| PhysicalRect {
            x: i32::from(g.x),
            y: i32::from(g.y),
            width: u32::from(g.width) + 2 * u32::from(g.border_width),
            height: u32::from(g.height) + 2 * u32::from(g.border_width),
        },
    );
    let (app_id, title) = match owner {
        Some(o) => (o.info.app_id.clone(), o.info.title.clone()),
        None => (
            windows::class_of(class),
            windows::title_of(conn, net_name, wm_name),
        ),
    };
    Ok(WindowInfo {
        id: u64::from(w),
        app_id,
        pid,
        title,
        rect,
        focused: false,
    })
}
