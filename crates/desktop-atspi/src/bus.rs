//! The accessibility bus: found through `org.a11y.Bus.GetAddress` on the session bus
//! (or `$AT_SPI_BUS_ADDRESS`), with `org.a11y.Status.IsEnabled` set so that toolkits
//! started afterwards (Qt) expose their trees, and one event listener registered so
//! that GTK3's bridge activates its bulk cache. Qt (5.15.8 in Debian 12) turns its
//! bridge on at start when the bus launcher runs (it reads the `AT_SPI_BUS` property
//! the launcher puts on the X root window), or when `org.a11y.Bus` appears later with
//! `IsEnabled` or `ScreenReaderEnabled` true; it never re-reads them. Setting the
//! property is what starts the launcher here (D-Bus activation), so a Qt application
//! started after the driver is exposed (`tests/x11_qt.rs`). Calls are raw D-Bus calls decoded into
//! plain types, so an unknown role or state value from a newer toolkit decodes fine.

use std::time::Duration;

use ::atspi::proxy::bus::{BusProxy, StatusProxy};
use serde::Serialize;
use serde::de::DeserializeOwned;
use zbus::Connection;
use zbus::zvariant::{DynamicType, OwnedObjectPath, OwnedValue};

use cc_desktop::DriverError;

/// A D-Bus object reference `(so)`: bus name and path.
pub(crate) type Ref = (String, OwnedObjectPath);

pub(crate) const ACCESSIBLE: &str = "org.a11y.atspi.Accessible";
pub(crate) const REGISTRY: &str = "org.a11y.atspi.Registry";
pub(crate) const ROOT_PATH: &str = "/org/a11y/atspi/accessible/root";

/// How long any one call may take: a hung application must not hang the driver.
const CALL_TIMEOUT: Duration = Duration::from_secs(3);

/// A connection to the accessibility bus.
pub(crate) struct Bus {
    pub conn: Connection,
    /// Never use the bulk cache (tests of the walk that toolkits without one need).
    pub walk_only: bool,
}

fn unavailable(what: &str, e: impl std::fmt::Display) -> DriverError {
    DriverError::Unavailable(format!("accessibility bus: {what}: {e}"))
}

impl Bus {
    /// Connects, enables accessibility, and registers for one rare event. The bus
    /// address is `$AT_SPI_BUS_ADDRESS`, else the one the bus launcher published on
    /// the X root window (`x_address`), else `org.a11y.Bus.GetAddress` on the session
    /// bus (`session`, else `$DBUS_SESSION_BUS_ADDRESS`), which also starts the bus.
    pub async fn connect(
        session: Option<&str>,
        x_address: Option<&str>,
    ) -> Result<Bus, DriverError> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let session_addr = session
            .map(str::to_string)
            .or_else(|| env("DBUS_SESSION_BUS_ADDRESS"));
        let session = match session_addr {
            Some(a) => match zbus::connection::Builder::address(a.as_str()) {
                Ok(b) => b.method_timeout(CALL_TIMEOUT).build().await.ok(),
                Err(_) => None,
            },
            None => None,
        };
        if let Some(session) = session.as_ref()
            && let Ok(status) = StatusProxy::new(session).await
        {
            // Best effort: older buses lack the property.
            let _ = status.set_is_enabled(true).await;
        }
        let address = match env("AT_SPI_BUS_ADDRESS").or(x_address.map(str::to_string)) {
            Some(a) => a,
            None => {
                let session = session.as_ref().ok_or_else(|| {
                    unavailable("no session bus", "$DBUS_SESSION_BUS_ADDRESS is not set")
                })?;
                BusProxy::new(session)
                    .await
                    .map_err(|e| unavailable("org.a11y.Bus", e))?
                    .get_address()
                    .await
                    .map_err(|e| unavailable("org.a11y.Bus.GetAddress", e))?
            }
        };
        let conn = zbus::connection::Builder::address(address.as_str())
            .map_err(|e| unavailable("address", e))?
            .method_timeout(CALL_TIMEOUT)
            .build()
            .await
            .map_err(|e| unavailable(&format!("connect to {address}"), e))?;
        let bus = Bus {
            conn,
            walk_only: false,
        };
        // GTK3's bridge answers Cache.GetItems only while some client listens to
        // events. A window event is rare, so it costs the applications next to nothing.
        let registered = bus
            .call::<()>(
                REGISTRY,
                "/org/a11y/atspi/registry",
                REGISTRY,
                "RegisterEvent",
                &("window:activate", Vec::<String>::new(), ""),
            )
            .await;
        if registered.is_err() {
            let _ = bus
                .call::<()>(
                    REGISTRY,
                    "/org/a11y/atspi/registry",
                    REGISTRY,
                    "RegisterEvent",
                    &("window:activate",),
                )
                .await;
        }
        Ok(bus)
    }

    /// One method call, its reply decoded into `R`.
    pub async fn call<R>(
        &self,
        dest: &str,
        path: &str,
        iface: &str,
        method: &str,
        body: &(impl Serialize + DynamicType),
    ) -> zbus::Result<R>
    where
        R: DeserializeOwned + zbus::zvariant::Type,
    {
        let msg = self
            .conn
            .call_method(Some(dest), path, Some(iface), method, body)
            .await?;
        msg.body().deserialize::<R>()
    }

    /// One property, as a variant.
    pub async fn prop(
        &self,
        dest: &str,
        path: &str,
        iface: &str,
        name: &str,
    ) -> zbus::Result<OwnedValue> {
        self.call::<OwnedValue>(
            dest,
            path,
            "org.freedesktop.DBus.Properties",
            "Get",
            &(iface, name),
        )
        .await
    }

    /// The process id behind a bus name.
    pub async fn pid(&self, name: &str) -> Option<u32> {
        self.call::<u32>(
            "org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus",
            "GetConnectionUnixProcessID",
            &(name,),
        )
        .await
        .ok()
    }

    /// The applications registered on the bus (their root objects).
    pub async fn applications(&self) -> Result<Vec<Ref>, DriverError> {
        self.call::<Vec<Ref>>(REGISTRY, ROOT_PATH, ACCESSIBLE, "GetChildren", &())
            .await
            .map_err(|e| DriverError::Failed(format!("list accessible applications: {e}")))
    }
}

/// True when a call failed because the object (or its application) no longer exists.
pub(crate) fn is_gone(e: &zbus::Error) -> bool {
    match e {
        zbus::Error::MethodError(name, _, _) => matches!(
            name.as_str(),
            "org.freedesktop.DBus.Error.ServiceUnknown"
                | "org.freedesktop.DBus.Error.NameHasNoOwner"
                | "org.freedesktop.DBus.Error.UnknownObject"
                | "org.freedesktop.DBus.Error.UnknownMethod"
                | "org.freedesktop.DBus.Error.UnknownInterface"
                | "org.freedesktop.DBus.Error.NoReply"
        ),
        zbus::Error::FDO(e) => matches!(
            **e,
            zbus::fdo::Error::ServiceUnknown(_)
                | zbus::fdo::Error::NameHasNoOwner(_)
                | zbus::fdo::Error::UnknownObject(_)
                | zbus::fdo::Error::UnknownMethod(_)
                | zbus::fdo::Error::UnknownInterface(_)
        ),
        _ => false,
    }
}

/// The string inside a variant (empty if it is something else).
pub(crate) fn string_of(v: OwnedValue) -> String {
    String::try_from(v).unwrap_or_default()
}
