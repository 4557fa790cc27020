//! The `Driver` trait every desktop backend implements, its value types, and the
//! built-in virtual desktop.
//!
//! A driver is the only code that touches a desktop. It is deliberately low level
//! (one key down, one notch of scroll, one character) so that the engine can split
//! every action into small steps and check the stop flag between them: pre-emption by
//! panic is an engine property, identical on every backend.
//!
//! Architecture invariant: a driver knows nothing of sessions, policy, canvases or
//! the wire. It speaks physical pixels and opaque element handles. This crate has no
//! platform dependency; each real desktop is its own crate (`cc-desktop-x11`, …) that
//! exports a [`Platform`] for the binary to select.

#![warn(missing_docs)]

pub mod driver;
pub mod image;
#[cfg(unix)]
pub mod launch;
pub mod platform;
pub mod virtual_desktop;

pub use driver::{
    Axis, Button, Capabilities, Changes, ClipboardContent, Driver, DriverError, DriverEvent,
    ElementHandle, ElementInfo, HeldInputs, Indicator, Launched, Layout, Pace, PhysicalDisplay,
    RawNode, SemanticAction, Watching, WindowInfo,
};
pub use image::RgbImage;
pub use platform::Platform;
pub use virtual_desktop::{VirtualConfig, VirtualDesktop};
