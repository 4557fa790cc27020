//! Windows with their rectangles, from the project's GNOME Shell extension
//! (`extension/`, installed by `computer-control setup --gnome-extension`). The shell keeps its own
//! window list (`Introspect`, `Eval`) to allow-listed callers, and that list carries no
//! positions; the extension exports exactly what the driver needs on the shell's own
//! bus name: every window in stacking order (topmost first) with its frame and buffer
//! rectangles, and a way to activate one.

use cc_desktop::{DriverError, WindowInfo};
use cc_protocol::PhysicalRect;
use serde_json::Value;

/// The extension's uuid (its directory name under `gnome-shell/extensions`).
pub const UUID: &str = "computer-control@computer-control.github.io";
const DEST: &str = "org.gnome.Shell";
const PATH: &str = "/org/computercontrol/Shell";
const IFACE: &str = "org.computercontrol.Shell";

/// The files of the extension, as shipped (what `setup` writes).
pub const FILES: &[(&str, &str)] = &[
    ("metadata.json", include_str!("../extension/metadata.json")),
    ("extension.js", include_str!("../extension/extension.js")),
];

/// Why windows are unavailable without the extension, and what to do.
pub const MISSING: &str = "the computer-control GNOME Shell extension is not running: \
run `computer-control setup --gnome-extension`, then log out and in (GNOME on Wayland loads new \
extensions at login). Without it there are no window rectangles: no window list, no \
window-scoped capture or coordinates, accessibility rectangles unplaced";

/// One window as the extension reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellWindow {
    pub info: WindowInfo,
    /// The surface: where a Wayland client's accessibility extents start.
    pub buffer: PhysicalRect,
    /// Shown on screen now (not minimized, on the active workspace).
    pub shown: bool,
    /// An X11 client (Xwayland): its accessibility extents are global already.
    pub x11: bool,
}

fn rect(v: &Value) -> Option<PhysicalRect> {
    let a = v.as_array()?;
    let n = |i: usize| a.get(i).and_then(Value::as_i64);
    Some(PhysicalRect {
        x: i32::try_from(n(0)?).ok()?,
        y: i32::try_from(n(1)?).ok()?,
        width: u32::try_from(n(2)?).ok()?,
        height: u32::try_from(n(3)?).ok()?,
    })
}

/// Parses the extension's `Windows` answer; entries it cannot read are left out.
pub fn parse(json: &str) -> Result<Vec<ShellWindow>, DriverError> {
    let v: Value = serde_json::from_str(json)
        .map_err(|e| DriverError::Failed(format!("the shell extension's window list: {e}")))?;
    let list = v.as_array().ok_or_else(|| {
        DriverError::Failed("the shell extension's window list is not an array".into())
    })?;
    Ok(list
        .iter()
        .filter_map(|w| {
            let frame = rect(&w["frame"])?;
            Some(ShellWindow {
                info: WindowInfo {
                    id: w["id"].as_u64()?,
                    app_id: w["app_id"].as_str().unwrap_or_default().to_string(),
                    pid: w["pid"]
                        .as_u64()
                        .and_then(|p| u32::try_from(p).ok())
                        .filter(|p| *p > 0),
                    title: w["title"].as_str().unwrap_or_default().to_string(),
                    rect: frame,
                    focused: w["focused"].as_bool().unwrap_or(false),
                },
                buffer: rect(&w["buffer"]).unwrap_or(frame),
                shown: w["shown"].as_bool().unwrap_or(true),
                x11: w["x11"].as_bool().unwrap_or(false),
            })
        })
        .collect())
}

fn missing(e: zbus::Error) -> DriverError {
    match e {
        zbus::Error::MethodError(..) | zbus::Error::InterfaceNotFound => {
            DriverError::Unavailable(MISSING.into())
        }
        e => DriverError::Failed(format!("the shell extension: {e}")),
    }
}

async fn proxy(conn: &zbus::Connection) -> Result<zbus::Proxy<'static>, DriverError> {
    zbus::Proxy::new(conn, DEST, PATH, IFACE)
        .await
        .map_err(|e| DriverError::Failed(format!("the shell extension: {e}")))
}

/// Every window, topmost first.
pub async fn windows(conn: &zbus::Connection) -> Result<Vec<ShellWindow>, DriverError> {
    let json: String = proxy(conn)
        .await?
        .call("Windows", &())
        .await
        .map_err(missing)?;
    parse(&json)
}

/// Activates (raises and focuses) a window; false when there is no such window.
pub async fn activate(conn: &zbus::Connection, id: u64) -> Result<bool, DriverError> {
    proxy(conn)
        .await?
        .call("Activate", &(id,))
        .await
        .map_err(missing)
}

/// The running extension's version, or why there is none.
pub async fn version(conn: &zbus::Connection) -> Result<u32, DriverError> {
    proxy(conn)
        .await?
        .call("Version", &())
        .await
        .map_err(missing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_answer_is_read_and_bad_entries_left_out() {
        let w = parse(
            r#"[{"id": 7, "title": "T", "app_id": "org.gnome.Foo", "pid": 42,
                 "frame": [10, 20, 300, 200], "buffer": [-16, -6, 352, 252],
                 "focused": true, "shown": true, "x11": false},
                {"id": 8, "frame": "nope"},
                {"id": 9, "title": "X", "pid": 0, "frame": [0, 0, 5, 5], "shown": false, "x11": true}]"#,
        )
        .unwrap();
        assert_eq!(w.len(), 2);
        assert_eq!(w[0].info.id, 7);
        assert_eq!(w[0].info.pid, Some(42));
        assert!(w[0].info.focused);
        assert_eq!(w[0].buffer.x, -16);
        assert_eq!(w[1].info.pid, None);
        assert!(!w[1].shown && w[1].x11);
        assert_eq!(w[1].buffer, w[1].info.rect);
        assert!(parse("{}").is_err());
        assert!(parse("not json").is_err());
    }
}
