//! Answers the desktop portal's consent dialog the way a person would, through the
//! dialog's own accessibility tree: `xdg-desktop-portal-gnome` shows a GTK 4 window,
//! which is found on the desk's accessibility bus; its "Allow remote interaction"
//! switch is turned on, a monitor chosen when none is, and its Share button pressed,
//! each through the element's AT-SPI `Action`. Nothing goes through the server under
//! test.

use std::time::{Duration, Instant};

use zbus::zvariant::{OwnedObjectPath, OwnedValue};

type Ref = (String, OwnedObjectPath);

const ACCESSIBLE: &str = "org.a11y.atspi.Accessible";
const ACTION: &str = "org.a11y.atspi.Action";
const STATE_CHECKED: u32 = 4;
const STATE_SELECTED: u32 = 23;
const STATE_SENSITIVE: u32 = 24;

/// Publishes the desk's display to services the bus starts, as a real session's
/// manager does at login: the portal's GNOME backend is a Wayland client started on
/// demand, and without `WAYLAND_DISPLAY` it cannot open its dialog (nor start at all).
pub fn enable_portal(desk: &crate::gnome::GnomeDesk) {
    let st = desk
        .command("dbus-update-activation-environment")
        .args([
            &format!("WAYLAND_DISPLAY={}", crate::gnome::WAYLAND_DISPLAY),
            "XDG_CURRENT_DESKTOP=GNOME",
            "XDG_SESSION_TYPE=wayland",
        ])
        .status()
        .expect("run dbus-update-activation-environment");
    assert!(st.success(), "dbus-update-activation-environment: {st}");
}

/// One element of the dialog.
#[derive(Debug, Clone)]
pub struct Element {
    dest: String,
    path: OwnedObjectPath,
    /// AT-SPI role name ("push button", "toggle button", "list item" ...).
    pub role: String,
    /// Accessible name (the label a person reads).
    pub name: String,
    states: Vec<u32>,
}

impl Element {
    fn has(&self, state: u32) -> bool {
        self.states
            .get((state / 32) as usize)
            .is_some_and(|w| w & (1 << (state % 32)) != 0)
    }
}

impl std::fmt::Display for Element {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}] {:?}", self.role, self.name)
    }
}

async fn call<R>(
    conn: &zbus::Connection,
    dest: &str,
    path: &str,
    iface: &str,
    method: &str,
    body: &(impl serde::Serialize + zbus::zvariant::DynamicType),
) -> Result<R, String>
where
    R: serde::de::DeserializeOwned + zbus::zvariant::Type,
{
    conn.call_method(Some(dest), path, Some(iface), method, body)
        .await
        .map_err(|e| format!("{iface}.{method}: {e}"))?
        .body()
        .deserialize::<R>()
        .map_err(|e| format!("{iface}.{method}: {e}"))
}

async fn name_of(conn: &zbus::Connection, r: &Ref) -> String {
    call::<OwnedValue>(
        conn,
        &r.0,
        r.1.as_str(),
        "org.freedesktop.DBus.Properties",
        "Get",
        &(ACCESSIBLE, "Name"),
    )
    .await
    .ok()
    .and_then(|v| String::try_from(v).ok())
    .unwrap_or_default()
}

/// Every element under the applications whose name contains `app` (depth-first).
async fn elements(conn: &zbus::Connection, app: &str) -> Result<Vec<Element>, String> {
    let root: Vec<Ref> = call(
        conn,
        "org.a11y.atspi.Registry",
        "/org/a11y/atspi/accessible/root",
        ACCESSIBLE,
        "GetChildren",
        &(),
    )
    .await?;
    let mut out = Vec::new();
    for a in root {
        let name = name_of(conn, &a).await;
        if !name.contains(app) {
            out.push(Element {
                dest: a.0.clone(),
                path: a.1.clone(),
                role: "other application".into(),
                name,
                states: Vec::new(),
            });
            continue;
        }
        let mut todo = vec![a];
        while let Some(r) = todo.pop() {
            if out.len() > 2000 {
                break;
            }
            let role: String = call(conn, &r.0, r.1.as_str(), ACCESSIBLE, "GetRoleName", &())
                .await
                .unwrap_or_default();
            let states: Vec<u32> = call(conn, &r.0, r.1.as_str(), ACCESSIBLE, "GetState", &())
                .await
                .unwrap_or_default();
            let name = name_of(conn, &r).await;
            let kids: Vec<Ref> = call(conn, &r.0, r.1.as_str(), ACCESSIBLE, "GetChildren", &())
                .await
                .unwrap_or_default();
            out.push(Element {
                dest: r.0.clone(),
                path: r.1.clone(),
                role,
                name,
                states,
            });
            todo.extend(kids.into_iter().rev());
        }
    }
    Ok(out)
}

/// A button labelled `label` (GTK 4 names it with its mnemonic too: "_Share Share").
fn is_button(e: &Element, label: &str) -> bool {
    (e.role == "push button" || e.role == "button")
        && e.name
            .split_whitespace()
            .any(|w| w.trim_start_matches('_') == label)
}

async fn act(conn: &zbus::Connection, e: &Element) -> Result<(), String> {
    let ok: bool = call(conn, &e.dest, e.path.as_str(), ACTION, "DoAction", &(0i32,)).await?;
    if ok {
        Ok(())
    } else {
        Err(format!("{e}: DoAction(0) refused"))
    }
}

async fn a11y_bus(session: &str) -> Result<zbus::Connection, String> {
    let s = zbus::connection::Builder::address(session)
        .map_err(|e| e.to_string())?
        .build()
        .await
        .map_err(|e| format!("session bus: {e}"))?;
    let addr: String = call(
        &s,
        "org.a11y.Bus",
        "/org/a11y/bus",
        "org.a11y.Bus",
        "GetAddress",
        &(),
    )
    .await?;
    zbus::connection::Builder::address(addr.as_str())
        .map_err(|e| e.to_string())?
        .build()
        .await
        .map_err(|e| format!("accessibility bus {addr}: {e}"))
}

/// What [`answer`] did, and what the dialog looked like.
#[derive(Debug, Default)]
pub struct Answered {
    /// The elements acted on, in order.
    pub pressed: Vec<String>,
    /// The dialog's elements as last seen.
    pub seen: Vec<String>,
}

/// Waits up to `limit` for the portal's dialog on the desk whose session bus is
/// `session`, then allows remote interaction and presses the button named `button`
/// ("Share"). Errors carry the elements seen.
pub fn answer(session: &str, button: &str, limit: Duration) -> Result<Answered, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        let deadline = Instant::now() + limit;
        let mut last = String::from("no accessibility bus");
        let mut answered = Answered::default();
        while Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let conn = match a11y_bus(session).await {
                Ok(c) => c,
                Err(e) => {
                    last = e;
                    continue;
                }
            };
            let all = match elements(&conn, "portal").await {
                Ok(a) => a,
                Err(e) => {
                    last = e;
                    continue;
                }
            };
            answered.seen = all.iter().map(|e| e.to_string()).collect();
            let Some(share) = all.iter().find(|e| is_button(e, button)) else {
                last = format!("no {button:?} button yet");
                continue;
            };
            let lower = |e: &Element| e.name.to_lowercase();
            for e in all.iter().filter(|e| {
                (e.role.contains("toggle") || e.role == "switch" || e.role == "check box")
                    && lower(e).contains("remote")
                    && !e.has(STATE_CHECKED)
            }) {
                act(&conn, e).await?;
                answered.pressed.push(e.to_string());
            }
            // A monitor must be chosen before Share is sensitive.
            if !share.has(STATE_SENSITIVE)
                && let Some(row) = all.iter().find(|e| {
                    e.role == "list item" && !lower(e).contains("remote") && !e.has(STATE_SELECTED)
                })
            {
                act(&conn, row).await?;
                answered.pressed.push(row.to_string());
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            act(&conn, share).await?;
            answered.pressed.push(share.to_string());
            return Ok(answered);
        }
        Err(format!(
            "the portal's dialog was not answered: {last}; seen: {}",
            answered.seen.join(", ")
        ))
    })
}

/// Whether a portal dialog is on screen now (its button `button` is in the tree).
pub fn dialog_shown(session: &str, button: &str) -> bool {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return false;
    };
    rt.block_on(async {
        let Ok(conn) = a11y_bus(session).await else {
            return false;
        };
        elements(&conn, "portal")
            .await
            .is_ok_and(|all| all.iter().any(|e| is_button(e, button)))
    })
}
