//! Top-level windows: the foreign-toplevel protocol lists them (title, app id, the
//! activated one); the compositor's IPC, where there is one (sway), adds what the
//! protocol lacks: rectangles, pids and container ids to focus by.
//!
//! Ids: a window the IPC knows has its container id; one only the protocol knows has
//! [`PROTOCOL_ID_BASE`] plus its protocol object id.

use cc_desktop::WindowInfo;
use cc_desktop_atspi::Toplevel;
use cc_protocol::PhysicalRect;

use crate::client::ForeignToplevel;
use crate::sway_ipc::View;

/// Ids at and above this belong to windows without an IPC container.
pub const PROTOCOL_ID_BASE: u64 = 1 << 40;

/// A window and what accessibility needs to place its nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub top: Toplevel,
    /// Its accessibility extents are relative to its surface (Wayland clients), not
    /// global (Xwayland clients).
    pub surface_extents: bool,
}

/// Stacking order as far as it is known: focused, then visible floating, visible
/// tiled, then the rest.
fn rank(v: &View) -> u8 {
    match (v.focused, v.visible, v.floating) {
        (true, _, _) => 0,
        (false, true, true) => 1,
        (false, true, false) => 2,
        _ => 3,
    }
}

/// Merges the protocol's toplevels with the IPC's views (when `views` is `Some`).
/// `output_rect` gives the rectangle of an output by `wl_output` id, for windows
/// only the protocol knows (their rectangle is the output they are on).
pub fn merge(
    toplevels: &[(u32, ForeignToplevel)],
    views: Option<Vec<View>>,
    output_rect: impl Fn(u32) -> Option<PhysicalRect>,
) -> Vec<Window> {
    let mut out = Vec::new();
    let mut used = vec![false; toplevels.len()];
    if let Some(mut views) = views {
        views.sort_by_key(rank);
        for v in views {
            // The protocol's entry for this view: same app id and title.
            if let Some(i) = toplevels
                .iter()
                .enumerate()
                .position(|(i, (_, t))| !used[i] && t.app_id == v.app_id && t.title == v.title)
            {
                used[i] = true;
            }
            out.push(Window {
                top: Toplevel {
                    info: view_info(&v),
                    client: v.content,
                },
                surface_extents: !v.xwayland,
            });
        }
    }
    for (i, (id, t)) in toplevels.iter().enumerate() {
        if used[i] || !t.ready {
            continue;
        }
        let rect = t
            .outputs
            .iter()
            .find_map(|&o| output_rect(o))
            .unwrap_or(PhysicalRect {
                x: 0,
                y: 0,
                width: 0,
                height: 0,
            });
        out.push(Window {
            top: Toplevel {
                info: protocol_info(*id, t, rect),
                client: rect,
            },
            surface_extents: true,
        });
    }
    out
}

/// A view as `windows()` reports it.
fn view_info(v: &View) -> WindowInfo {
    WindowInfo {
        id: v.id,
        app_id: v.app_id.clone(),
        pid: v.pid,
        title: v.title.clone(),
        rect: v.rect,
        focused: v.focused,
    }
}

/// Where a view is in the compositor's stacking: a fullscreen view above the
/// floating ones, the floating ones above the tiled.
fn layer(v: &View) -> u8 {
    match (v.fullscreen, v.floating) {
        (true, _) => 0,
        (false, true) => 1,
        (false, false) => 2,
    }
}

/// The window a pointer event at a layout point reaches, as far as the compositor
/// tells. With sway's tree (`views`, in tree order): the topmost *visible* view there
/// (a view on a hidden workspace, a background tab or one behind a fullscreen view is
/// never it, wherever its rectangle is), the last raised floating view on top. With
/// the protocol only, which has neither stacking nor rectangles: a toplevel on the
/// output there that is not minimized, the activated one first. Windows neither
/// lists (layer-shell panels, unmanaged Xwayland popups) are not seen.
pub fn at(
    toplevels: &[(u32, ForeignToplevel)],
    views: Option<Vec<View>>,
    output_rect: impl Fn(u32) -> Option<PhysicalRect>,
    x: i32,
    y: i32,
) -> Option<WindowInfo> {
    if let Some(views) = views {
        let mut shown: Vec<(usize, View)> = views
            .into_iter()
            .enumerate()
            .filter(|(_, v)| v.visible)
            .collect();
        shown.sort_by_key(|(i, v)| (layer(v), std::cmp::Reverse(*i)));
        return shown
            .iter()
            .find(|(_, v)| v.rect.contains(x, y))
            .map(|(_, v)| view_info(v));
    }
    let mut candidates: Vec<&(u32, ForeignToplevel)> = toplevels
        .iter()
        .filter(|(_, t)| t.ready && !t.minimized)
        .collect();
    candidates.sort_by_key(|(_, t)| !t.activated);
    candidates.into_iter().find_map(|(id, t)| {
        let rect = t
            .outputs
            .iter()
            .filter_map(|&o| output_rect(o))
            .find(|r| r.contains(x, y))?;
        Some(protocol_info(*id, t, rect))
    })
}

/// A toplevel only the protocol knows, placed on `rect` (the output it is on).
fn protocol_info(id: u32, t: &ForeignToplevel, rect: PhysicalRect) -> WindowInfo {
    WindowInfo {
        id: PROTOCOL_ID_BASE + u64::from(id),
        app_id: t.app_id.clone(),
        pid: None,
        title: t.title.clone(),
        rect,
        focused: t.activated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(x: i32, y: i32, width: u32, height: u32) -> PhysicalRect {
        PhysicalRect {
            x,
            y,
            width,
            height,
        }
    }

    fn view(id: u64, title: &str, focused: bool, floating: bool) -> View {
        View {
            id,
            title: title.into(),
            app_id: "app".into(),
            pid: Some(7),
            rect: r(0, 0, 100, 100),
            content: r(0, 0, 100, 100),
            focused,
            visible: true,
            floating,
            fullscreen: false,
            xwayland: false,
        }
    }

    fn top(title: &str) -> ForeignToplevel {
        ForeignToplevel {
            title: title.into(),
            app_id: "app".into(),
            activated: false,
            minimized: false,
            ready: true,
            outputs: vec![3],
        }
    }

    #[test]
    fn ipc_views_come_first_focused_on_top_and_protocol_only_windows_follow() {
        let tops = [(10, top("a")), (11, top("b")), (12, top("only here"))];
        let views = vec![view(1, "a", false, false), view(2, "b", true, false)];
        let out = merge(&tops, Some(views), |_| Some(r(0, 0, 1920, 1080)));
        let ids: Vec<u64> = out.iter().map(|w| w.top.info.id).collect();
        assert_eq!(ids, [2, 1, PROTOCOL_ID_BASE + 12]);
        assert_eq!(out[2].top.info.rect, r(0, 0, 1920, 1080));
    }

    #[test]
    fn without_ipc_every_ready_toplevel_is_listed() {
        let mut pending = top("pending");
        pending.ready = false;
        let tops = [(10, top("a")), (11, pending)];
        let out = merge(&tops, None, |_| None);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].top.info.id, PROTOCOL_ID_BASE + 10);
    }

    #[test]
    fn the_window_at_a_point_is_the_topmost_visible_view() {
        let mut tiled = view(1, "tiled", true, false);
        tiled.rect = r(0, 0, 960, 1080);
        let mut low = view(2, "low", false, true);
        low.rect = r(100, 100, 400, 300);
        let mut high = view(3, "high", false, true);
        high.rect = r(200, 200, 400, 300);
        let mut hidden = view(4, "other workspace", false, true);
        hidden.rect = r(0, 0, 1920, 1080);
        hidden.visible = false;
        let views = vec![tiled.clone(), low, high, hidden];
        let at =
            |views: &[View], x, y| at(&[], Some(views.to_vec()), |_| None, x, y).map(|w| w.title);
        // The focused tiled view is below every floating one; the last raised
        // floating one is on top; a view not shown is never hit.
        assert_eq!(at(&views, 150, 150).as_deref(), Some("low"));
        assert_eq!(at(&views, 250, 250).as_deref(), Some("high"));
        assert_eq!(at(&views, 50, 50).as_deref(), Some("tiled"));
        assert_eq!(at(&views, 1500, 50), None);
        let mut full = tiled;
        full.fullscreen = true;
        assert_eq!(at(&[full], 250, 250).as_deref(), Some("tiled"));
        let mut with_full = views.clone();
        with_full[0].fullscreen = true;
        assert_eq!(at(&with_full, 250, 250).as_deref(), Some("tiled"));
    }

    #[test]
    fn without_ipc_a_minimized_toplevel_is_never_the_window_at_a_point() {
        let mut minimized = top("minimized");
        minimized.activated = true;
        minimized.minimized = true;
        let mut other = top("other");
        other.activated = false;
        let screen = |_| Some(r(0, 0, 1920, 1080));
        let tops = [(10, minimized), (11, other)];
        let w = at(&tops, None, screen, 50, 50).expect("a window");
        assert_eq!(w.title, "other");
        assert_eq!(w.id, PROTOCOL_ID_BASE + 11);
        assert_eq!(at(&tops, None, screen, 5000, 50), None, "off every output");
        let mut active = top("active");
        active.activated = true;
        let tops = [(11, top("other")), (12, active)];
        assert_eq!(at(&tops, None, screen, 50, 50).unwrap().title, "active");
    }
}
