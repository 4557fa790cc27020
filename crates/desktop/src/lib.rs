//! The `Driver` trait and its backends.
//!
//! A driver is the only code that touches a desktop. It is deliberately low level
//! (one key down, one notch of scroll, one character) so that the engine can split
//! every action into small steps and check the stop flag between them: pre-emption by
//! panic is an engine property, identical on every backend.
//!
//! Architecture invariant: a driver knows nothing of sessions, policy, canvases or
//! the wire. It speaks physical pixels and opaque element handles.

pub mod driver;
pub mod image;
pub mod virtual_desktop;
pub mod x11;

pub use driver::{
    Axis, Button, Capabilities, Driver, DriverError, DriverEvent, ElementHandle, ElementInfo,
    HeldInputs, Layout, PhysicalDisplay, RawNode, SemanticAction, WindowInfo,
};
pub use image::RgbImage;
pub use virtual_desktop::{VirtualConfig, VirtualDesktop};
pub use x11::{X11Desktop, X11Options, X11Report};
