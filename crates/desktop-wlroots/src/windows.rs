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
                    info: WindowInfo {
                        id: v.id,
                        app_id: v.app_id,
                        pid: v.pid,
                        title: v.title,
                        rect: v.rect,
                        focused: v.focused,
                    },
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
                info: WindowInfo {
                    id: PROTOCOL_ID_BASE + u64::from(*id),
                    app_id: t.app_id.clone(),
                    pid: None,
                    title: t.title.clone(),
                    rect,
                    focused: t.activated,
                },
                client: rect,
            },
            surface_extents: true,
        });
    }
    out
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
            xwayland: false,
        }
    }

    fn top(title: &str) -> ForeignToplevel {
        ForeignToplevel {
            title: title.into(),
            app_id: "app".into(),
            activated: false,
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
}
