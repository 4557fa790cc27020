//! Element re-reads, semantic actions (the Action interface, or the parent's
//! Selection for `select`), text through EditableText or Value, and whether the
//! focused element is a password field. Never a pointer fallback: the engine decides
//! that.

use std::collections::HashMap;

use zbus::names::BusName;
use zbus::zvariant::{ObjectPath, OwnedObjectPath, Value};

use super::bus::{ACCESSIBLE, Bus, ROOT_PATH};
use super::roles::{self, r, s};
use super::snapshot::{self, bind_tops, read_tops, top_name};
use super::tree::{self, Item, iface};
use crate::Toplevel;
use cc_desktop::{DriverError, ElementHandle, ElementInfo, SemanticAction};

const ACTION: &str = "org.a11y.atspi.Action";

/// Action names that invoke, in preference order.
const INVOKE: &[&str] = &["click", "press", "activate", "jump", "open", "invoke"];
/// Action names that toggle a checkable element, in preference order.
const TOGGLE: &[&str] = &["toggle", "click", "press", "activate"];
/// Action names that select an item when no Selection parent exists.
const SELECT: &[&str] = &["select", "activate", "click", "press"];

/// Splits a handle `"bus_name|object_path"`, checking both parts.
pub(crate) fn parse_handle(h: &ElementHandle) -> Result<(String, String), DriverError> {
    let bad = || DriverError::Failed(format!("unknown element handle {:?}", h.0));
    let (bus, path) = h.0.split_once('|').ok_or_else(bad)?;
    BusName::try_from(bus).map_err(|_| bad())?;
    ObjectPath::try_from(path).map_err(|_| bad())?;
    Ok((bus.to_string(), path.to_string()))
}

async fn action_names(bus: &Bus, app: &str, path: &str) -> Vec<String> {
    if let Ok(list) = bus
        .call::<Vec<(String, String, String)>>(app, path, ACTION, "GetActions", &())
        .await
    {
        return list.into_iter().map(|(n, _, _)| n.to_lowercase()).collect();
    }
    let n = bus
        .call::<i32>(app, path, ACTION, "GetNActions", &())
        .await
        .unwrap_or(0);
    let mut out = Vec::new();
    for i in 0..n.clamp(0, 32) {
        out.push(
            bus.call::<String>(app, path, ACTION, "GetName", &(i,))
                .await
                .unwrap_or_default()
                .to_lowercase(),
        );
    }
    out
}

fn first_of(names: &[String], wanted: &[&str]) -> Option<i32> {
    wanted
        .iter()
        .find_map(|w| names.iter().position(|n| n == w))
        .and_then(|i| i32::try_from(i).ok())
}

/// What an element offers, from its role, its action names and its parent.
fn offered(item: &Item, names: &[String], parent_selects: bool) -> Vec<SemanticAction> {
    let mut out = Vec::new();
    let toggles = roles::toggles(item.role);
    if toggles && first_of(names, TOGGLE).is_some()
        || (!toggles && names.iter().any(|n| n == "toggle"))
    {
        out.push(SemanticAction::Toggle);
    }
    if roles::selectable_item(item.role) && (parent_selects || names.iter().any(|n| n == "select"))
    {
        out.push(SemanticAction::Select);
    }
    if !toggles && first_of(names, INVOKE).is_some() {
        out.push(SemanticAction::Invoke);
    }
    out
}

async fn parent_selects(bus: &Bus, app: &str, item: &Item) -> bool {
    match &item.parent {
        Some(p) if p != ROOT_PATH => bus
            .call::<Vec<String>>(app, p, ACCESSIBLE, "GetInterfaces", &())
            .await
            .is_ok_and(|v| tree::iface::bits(&v) & iface::SELECTION != 0),
        _ => false,
    }
}

fn can_take_text(item: &Item) -> bool {
    let editable = item.states.has(s::EDITABLE) && !item.states.has(s::READ_ONLY);
    (item.ifaces & iface::EDITABLE_TEXT != 0 && editable)
        || (item.ifaces & iface::VALUE != 0
            && matches!(item.role, r::SLIDER | r::SPIN_BUTTON | r::DIAL))
}

/// The top-level object that owns `path` (walking up `Parent`).
async fn top_of(bus: &Bus, app: &str, item: &Item) -> Option<String> {
    let mut cur = item.path.clone();
    let mut parent = item.parent.clone();
    for _ in 0..64 {
        match parent {
            None => return Some(cur),
            Some(p) if p == ROOT_PATH => return Some(cur),
            Some(p) => {
                let next = bus
                    .prop(app, &p, ACCESSIBLE, "Parent")
                    .await
                    .ok()
                    .and_then(|v| <(String, OwnedObjectPath)>::try_from(v).ok());
                cur = p;
                parent = match next {
                    Some((b, path)) if b == app || b.is_empty() => {
                        Some(path.as_str().to_string()).filter(|p| p != "/")
                    }
                    _ => None,
                };
            }
        }
    }
    None
}

/// Re-reads an element; `Ok(None)` when it is gone.
pub(crate) async fn element(
    bus: &Bus,
    pids: &mut HashMap<String, Option<u32>>,
    wins: &[Toplevel],
    handle: &ElementHandle,
) -> Result<Option<ElementInfo>, DriverError> {
    let (app, path) = parse_handle(handle)?;
    let Some(item) = tree::read_item(bus, &app, &path).await? else {
        return Ok(None);
    };
    let pid = match pids.get(&app) {
        Some(p) => *p,
        None => {
            let p = bus.pid(&app).await;
            pids.insert(app.clone(), p);
            p
        }
    };
    let top = top_of(bus, &app, &item).await;
    let is_top = top.as_ref().is_some_and(|t| *t == item.path);
    let (window_id, name) = match &top {
        Some(top_path) => {
            let tops = read_tops(bus, &app).await;
            let bound = bind_tops(bus, pid, &app, &tops, wins, &Default::default()).await;
            let hit = bound.iter().find(|(i, _, _)| &i.path == top_path);
            let id = hit.and_then(|(_, _, id)| *id);
            let name = if *top_path == item.path {
                top_name(&item, id, wins)
            } else {
                item.name.clone()
            };
            (id, name)
        }
        None => (None, item.name.clone()),
    };
    let (rect, value, names, selects) = tokio::join!(
        async {
            if snapshot::on_screen(&item) {
                snapshot::extents(bus, &app, &item.path).await
            } else {
                None
            }
        },
        snapshot::value(bus, &app, &item),
        async {
            if item.ifaces & iface::ACTION != 0 {
                action_names(bus, &app, &item.path).await
            } else {
                Vec::new()
            }
        },
        parent_selects(bus, &app, &item),
    );
    Ok(Some(ElementInfo {
        role: snapshot::node_role(&item, is_top),
        name,
        window_id,
        rect,
        states: roles::states(item.role, item.states),
        value: if item.role == r::PASSWORD_TEXT {
            None
        } else {
            value
        },
        actions: offered(&item, &names, selects),
        settable_text: can_take_text(&item),
    }))
}

async fn existing(bus: &Bus, handle: &ElementHandle) -> Result<(String, Item), DriverError> {
    let (app, path) = parse_handle(handle)?;
    let item = tree::read_item(bus, &app, &path)
        .await?
        .ok_or_else(|| DriverError::Failed(format!("no element {:?}", handle.0)))?;
    Ok((app, item))
}

async fn do_action(bus: &Bus, app: &str, path: &str, index: i32) -> Result<(), DriverError> {
    let done = bus
        .call::<bool>(app, path, ACTION, "DoAction", &(index,))
        .await
        .map_err(|e| DriverError::Failed(format!("DoAction: {e}")))?;
    if done {
        Ok(())
    } else {
        Err(DriverError::Failed(
            "the application refused the action".into(),
        ))
    }
}

/// Performs a semantic action the element offers.
pub(crate) async fn perform(
    bus: &Bus,
    handle: &ElementHandle,
    action: SemanticAction,
) -> Result<(), DriverError> {
    let (app, item) = existing(bus, handle).await?;
    let names = if item.ifaces & iface::ACTION != 0 {
        action_names(bus, &app, &item.path).await
    } else {
        Vec::new()
    };
    let selects = parent_selects(bus, &app, &item).await;
    if !offered(&item, &names, selects).contains(&action) {
        return Err(DriverError::Failed(format!(
            "{:?} does not offer {action:?}",
            handle.0
        )));
    }
    match action {
        SemanticAction::Toggle => match first_of(&names, TOGGLE) {
            Some(i) => do_action(bus, &app, &item.path, i).await,
            None => Err(DriverError::Failed("no toggle action".into())),
        },
        SemanticAction::Invoke => match first_of(&names, INVOKE) {
            Some(i) => do_action(bus, &app, &item.path, i).await,
            None => Err(DriverError::Failed("no invoke action".into())),
        },
        SemanticAction::Select => {
            if let Some(i) = names.iter().position(|n| n == "select") {
                let i = i32::try_from(i).unwrap_or(0);
                return do_action(bus, &app, &item.path, i).await;
            }
            if selects && let Some(parent) = &item.parent {
                let index = bus
                    .call::<i32>(&app, &item.path, ACCESSIBLE, "GetIndexInParent", &())
                    .await
                    .map_err(|e| DriverError::Failed(format!("GetIndexInParent: {e}")))?;
                let ok = bus
                    .call::<bool>(
                        &app,
                        parent,
                        "org.a11y.atspi.Selection",
                        "SelectChild",
                        &(index,),
                    )
                    .await
                    .map_err(|e| DriverError::Failed(format!("SelectChild: {e}")))?;
                return if ok {
                    Ok(())
                } else {
                    Err(DriverError::Failed(
                        "the application refused to select".into(),
                    ))
                };
            }
            match first_of(&names, SELECT) {
                Some(i) => do_action(bus, &app, &item.path, i).await,
                None => Err(DriverError::Failed("no select action".into())),
            }
        }
    }
}

/// Replaces an element's text (EditableText) or sets its number (Value).
pub(crate) async fn set_text(
    bus: &Bus,
    handle: &ElementHandle,
    text: &str,
) -> Result<(), DriverError> {
    let (app, item) = existing(bus, handle).await?;
    if !can_take_text(&item) {
        return Err(DriverError::Failed(format!(
            "{:?} does not take text",
            handle.0
        )));
    }
    if item.ifaces & iface::EDITABLE_TEXT != 0 {
        let ok = bus
            .call::<bool>(
                &app,
                &item.path,
                "org.a11y.atspi.EditableText",
                "SetTextContents",
                &(text,),
            )
            .await
            .map_err(|e| DriverError::Failed(format!("SetTextContents: {e}")))?;
        return if ok {
            Ok(())
        } else {
            Err(DriverError::Failed(
                "the application refused the text".into(),
            ))
        };
    }
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| DriverError::Failed(format!("{text:?} is not a number for this element")))?;
    bus.call::<()>(
        &app,
        &item.path,
        "org.freedesktop.DBus.Properties",
        "Set",
        &("org.a11y.atspi.Value", "CurrentValue", Value::from(v)),
    )
    .await
    .map_err(|e| DriverError::Failed(format!("set Value.CurrentValue: {e}")))
}

/// True when the element with keyboard focus (in the active window's application,
/// else in any) is a password field.
pub(crate) async fn focused_is_password(
    bus: &Bus,
    pids: &mut HashMap<String, Option<u32>>,
    wins: &[Toplevel],
) -> Result<bool, DriverError> {
    let apps = bus.applications().await?;
    let active_pid = wins
        .iter()
        .find(|w| w.info.focused)
        .and_then(|w| w.info.pid);
    let mut names: Vec<String> = Vec::new();
    for (n, _) in apps {
        if !pids.contains_key(&n) {
            let p = bus.pid(&n).await;
            pids.insert(n.clone(), p);
        }
        names.push(n);
    }
    // The active window's application first; the others only if it has no focus.
    names.sort_by_key(|n| pids.get(n).copied().flatten() != active_pid || active_pid.is_none());
    for n in names {
        let app = tree::read_app(bus, &n, 20_000).await;
        let focused = app
            .items
            .values()
            .find(|it| it.states.has(s::FOCUSED) && it.states.showing());
        if let Some(it) = focused {
            return Ok(it.role == r::PASSWORD_TEXT);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roles::States;

    fn item(role: u32, states: &[u32], ifaces: u32) -> Item {
        Item {
            path: "/p".into(),
            parent: Some("/q".into()),
            index: 0,
            role,
            name: String::new(),
            states: States(states.iter().fold(0, |a, b| a | (1u64 << b))),
            ifaces,
            children: Vec::new(),
        }
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn handles_are_checked() {
        let ok = ElementHandle(":1.7|/org/a11y/atspi/accessible/12".into());
        assert_eq!(
            parse_handle(&ok).unwrap(),
            (":1.7".into(), "/org/a11y/atspi/accessible/12".into())
        );
        for junk in [
            "",
            "|",
            ":1.7",
            ":1.7|",
            "|/a",
            ":1.7|a/b",
            "no bus|/a",
            ":1.7|/a//b",
        ] {
            assert!(parse_handle(&ElementHandle(junk.into())).is_err(), "{junk}");
        }
    }

    #[test]
    fn actions_follow_role_and_names() {
        let cb = item(r::CHECK_BOX, &[], iface::ACTION);
        assert_eq!(
            offered(&cb, &names(&["click"]), false),
            [SemanticAction::Toggle]
        );
        let b = item(r::BUTTON, &[], iface::ACTION);
        assert_eq!(
            offered(&b, &names(&["click"]), false),
            [SemanticAction::Invoke]
        );
        assert!(offered(&b, &[], false).is_empty());
        let li = item(r::LIST_ITEM, &[], 0);
        assert_eq!(offered(&li, &[], true), [SemanticAction::Select]);
        assert!(offered(&li, &[], false).is_empty());
        let tab = item(r::PAGE_TAB, &[], iface::ACTION);
        assert_eq!(
            offered(&tab, &names(&["select", "activate"]), false),
            [SemanticAction::Select, SemanticAction::Invoke]
        );
        assert_eq!(first_of(&names(&["press", "click"]), INVOKE), Some(1));
    }

    #[test]
    fn text_goes_to_editable_fields_and_numbers() {
        assert!(can_take_text(&item(
            r::TEXT,
            &[s::EDITABLE],
            iface::EDITABLE_TEXT
        )));
        assert!(!can_take_text(&item(
            r::TEXT,
            &[s::EDITABLE, s::READ_ONLY],
            iface::EDITABLE_TEXT
        )));
        assert!(!can_take_text(&item(r::LABEL, &[], iface::TEXT)));
        assert!(can_take_text(&item(r::SLIDER, &[], iface::VALUE)));
        assert!(!can_take_text(&item(r::SCROLL_BAR, &[], iface::VALUE)));
    }
}
