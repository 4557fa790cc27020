//! How the binary finds a desktop backend without knowing its crate's types: each
//! driver crate exports one [`Platform`], and the binary lists them in the order
//! `--platform auto` tries them.

use crate::{Driver, DriverError};

/// One desktop backend as the binary selects it.
#[derive(Debug, Clone, Copy)]
pub struct Platform {
    /// The `--platform` / `platform.name` value.
    pub name: &'static str,
    /// Opens the backend on the desktop the environment names (`--platform NAME`):
    /// fails only when that desktop cannot be reached at all.
    pub open: fn() -> Result<Box<dyn Driver>, DriverError>,
    /// Opens the backend only when the environment names a desktop it can really drive
    /// (input possible), for `--platform auto`; otherwise says why not.
    pub detect: fn() -> Result<Box<dyn Driver>, String>,
    /// Whether the display server the environment names accepts a connection now,
    /// without opening a driver: a readiness probe (`/health`, a Kubernetes probe)
    /// must not hold a second session on the desktop. `Ok` says what answered, `Err`
    /// why not.
    pub reach: fn() -> Result<String, String>,
}
