//! sway's IPC (the i3 protocol on `$SWAYSOCK`): the tree gives each window's
//! rectangle, pid, shell and focus, which the foreign-toplevel protocol lacks, and
//! commands focus a window by its container id.
//!
//! A message is the magic `i3-ipc`, the payload length and the message type (both
//! 32-bit, native byte order), then the payload; the reply has the same framing.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use cc_protocol::PhysicalRect;
use serde_json::Value;

const MAGIC: &[u8; 6] = b"i3-ipc";
const RUN_COMMAND: u32 = 0;
const GET_TREE: u32 = 4;
/// Replies larger than this are refused (a tree of thousands of windows is far less).
const MAX_REPLY: usize = 64 << 20;
const TIMEOUT: Duration = Duration::from_secs(5);

/// One window (view) of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// The container id (what `[con_id=…]` selects).
    pub id: u64,
    pub title: String,
    /// The Wayland app id, or the X11 class under Xwayland.
    pub app_id: String,
    pub pid: Option<u32>,
    /// The container, borders included, in layout coordinates.
    pub rect: PhysicalRect,
    /// The window's content in layout coordinates.
    pub content: PhysicalRect,
    pub focused: bool,
    /// Shown now: on a visible workspace, not hidden behind a fullscreen view, not a
    /// tab in the background, not in the scratchpad.
    pub visible: bool,
    pub floating: bool,
    /// Fullscreen on its workspace or globally (above every other view there).
    pub fullscreen: bool,
    /// An X11 client under Xwayland (its accessibility extents are global).
    pub xwayland: bool,
}

/// A connection target: the socket path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwayIpc {
    path: PathBuf,
}

fn err(what: impl std::fmt::Display) -> String {
    format!("sway IPC: {what}")
}

impl SwayIpc {
    /// The socket `$SWAYSOCK` names, if set.
    pub fn from_env() -> Option<SwayIpc> {
        std::env::var_os("SWAYSOCK")
            .filter(|s| !s.is_empty())
            .map(|s| SwayIpc { path: s.into() })
    }

    /// The socket at `path`.
    pub fn at(path: PathBuf) -> SwayIpc {
        SwayIpc { path }
    }

    /// One request and its reply.
    fn request(&self, ty: u32, payload: &str) -> Result<Value, String> {
        let mut s = UnixStream::connect(&self.path)
            .map_err(|e| err(format!("{}: {e}", self.path.display())))?;
        s.set_read_timeout(Some(TIMEOUT)).map_err(err)?;
        s.set_write_timeout(Some(TIMEOUT)).map_err(err)?;
        let len = u32::try_from(payload.len()).map_err(|_| err("payload too long"))?;
        let mut msg = Vec::with_capacity(14 + payload.len());
        msg.extend_from_slice(MAGIC);
        msg.extend_from_slice(&len.to_ne_bytes());
        msg.extend_from_slice(&ty.to_ne_bytes());
        msg.extend_from_slice(payload.as_bytes());
        s.write_all(&msg).map_err(err)?;
        let mut head = [0u8; 14];
        s.read_exact(&mut head).map_err(err)?;
        let body = parse_header(&head, ty)?;
        let mut buf = vec![0u8; body];
        s.read_exact(&mut buf).map_err(err)?;
        serde_json::from_slice(&buf).map_err(err)
    }

    /// Every window of the tree, in tree order: on each workspace its tiled views,
    /// then its floating ones from the bottom of their stack up (sway moves a raised
    /// floating view to the end).
    pub fn views(&self) -> Result<Vec<View>, String> {
        let tree = self.request(GET_TREE, "")?;
        let mut out = Vec::new();
        walk(&tree, false, &mut out);
        Ok(out)
    }

    /// Runs a command; fails with sway's own error when it refuses.
    pub fn command(&self, cmd: &str) -> Result<(), String> {
        let reply = self.request(RUN_COMMAND, cmd)?;
        let results = reply.as_array().cloned().unwrap_or_default();
        if results.is_empty() {
            return Err(err(format!("no reply to {cmd:?}")));
        }
        for r in results {
            if r.get("success").and_then(Value::as_bool) != Some(true) {
                let why = r
                    .get("error")
                    .and_then(Value::as_str)
                    .unwrap_or("refused")
                    .to_string();
                return Err(err(format!("{cmd:?}: {why}")));
            }
        }
        Ok(())
    }
}

/// Checks a reply header and returns the payload length.
fn parse_header(head: &[u8; 14], ty: u32) -> Result<usize, String> {
    if &head[..6] != MAGIC {
        return Err(err("not an i3-ipc reply"));
    }
    let len = u32::from_ne_bytes([head[6], head[7], head[8], head[9]]) as usize;
    let rty = u32::from_ne_bytes([head[10], head[11], head[12], head[13]]);
    if rty != ty {
        return Err(err(format!("reply type {rty} to request {ty}")));
    }
    if len > MAX_REPLY {
        return Err(err(format!("reply of {len} bytes")));
    }
    Ok(len)
}

fn rect(v: &Value) -> Option<PhysicalRect> {
    let n = |k: &str| v.get(k).and_then(Value::as_i64);
    Some(PhysicalRect {
        x: i32::try_from(n("x")?).ok()?,
        y: i32::try_from(n("y")?).ok()?,
        width: u32::try_from(n("width")?).ok()?,
        height: u32::try_from(n("height")?).ok()?,
    })
}

fn walk(node: &Value, floating: bool, out: &mut Vec<View>) {
    let is_view = node.get("pid").is_some_and(|p| !p.is_null())
        && matches!(
            node.get("type").and_then(Value::as_str),
            Some("con" | "floating_con")
        );
    if is_view && let Some(v) = view(node, floating) {
        out.push(v);
    }
    for (key, fl) in [("nodes", floating), ("floating_nodes", true)] {
        for child in node
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            walk(child, fl, out);
        }
    }
}

fn view(node: &Value, floating: bool) -> Option<View> {
    let s = |k: &str| node.get(k).and_then(Value::as_str).map(str::to_string);
    let outer = rect(node.get("rect")?)?;
    let inner = node
        .get("window_rect")
        .and_then(rect)
        .unwrap_or(PhysicalRect {
            x: 0,
            y: 0,
            width: outer.width,
            height: outer.height,
        });
    let xwayland = s("shell").as_deref() == Some("xwayland");
    let app_id = s("app_id").filter(|a| !a.is_empty()).or_else(|| {
        node.get("window_properties")
            .and_then(|p| p.get("class"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    Some(View {
        id: node.get("id")?.as_u64()?,
        title: s("name").unwrap_or_default(),
        app_id: app_id.unwrap_or_default(),
        pid: node
            .get("pid")
            .and_then(Value::as_u64)
            .and_then(|p| u32::try_from(p).ok()),
        rect: outer,
        content: PhysicalRect {
            x: outer.x + inner.x,
            y: outer.y + inner.y,
            width: inner.width,
            height: inner.height,
        },
        focused: node.get("focused").and_then(Value::as_bool) == Some(true),
        visible: node.get("visible").and_then(Value::as_bool) != Some(false),
        floating,
        fullscreen: node
            .get("fullscreen_mode")
            .and_then(Value::as_u64)
            .is_some_and(|m| m != 0),
        xwayland,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_tree_yields_views_with_content_rectangles() {
        let tree = json!({
            "id": 1, "type": "root", "nodes": [{
                "id": 2, "type": "output", "nodes": [{
                    "id": 3, "type": "workspace",
                    "nodes": [{
                        "id": 4, "type": "con", "name": "foot", "app_id": "foot",
                        "pid": 42, "shell": "xdg_shell", "focused": true, "visible": true,
                        "rect": {"x": 0, "y": 0, "width": 960, "height": 1080},
                        "window_rect": {"x": 2, "y": 3, "width": 956, "height": 1075}
                    }],
                    "floating_nodes": [{
                        "id": 5, "type": "floating_con", "name": "xterm", "app_id": null,
                        "pid": 43, "shell": "xwayland", "window": 2097162,
                        "window_properties": {"class": "XTerm"},
                        "rect": {"x": -100, "y": 50, "width": 400, "height": 300}
                    }]
                }]
            }]
        });
        let mut out = Vec::new();
        walk(&tree, false, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].id, 4);
        assert!(out[0].focused && !out[0].floating && !out[0].xwayland);
        assert_eq!(
            out[0].content,
            PhysicalRect {
                x: 2,
                y: 3,
                width: 956,
                height: 1075
            }
        );
        assert_eq!(out[1].app_id, "XTerm");
        assert!(out[1].floating && out[1].xwayland);
        assert_eq!(out[1].content, out[1].rect);
    }

    #[test]
    fn a_bad_reply_header_is_an_error() {
        let mut head = *b"i3-ipc\0\0\0\0\0\0\0\0";
        head[10] = 4;
        assert_eq!(parse_header(&head, GET_TREE), Ok(0));
        assert!(parse_header(&head, RUN_COMMAND).is_err(), "wrong type");
        let mut bad = head;
        bad[0] = b'x';
        assert!(parse_header(&bad, GET_TREE).is_err(), "wrong magic");
        let mut huge = head;
        huge[6..10].copy_from_slice(&u32::MAX.to_ne_bytes());
        assert!(parse_header(&huge, GET_TREE).is_err(), "oversized");
    }
}
