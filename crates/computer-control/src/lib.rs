//! `computer-control` as a library: CLI, platform selection and transports. The binary
//! (`main.rs`) only parses arguments and sets up logging, so the transports can also be
//! linked by tests and the fuzz checks (`crates/fuzz-checks`).

pub mod allocator;
pub mod check;
pub mod cli;
pub mod compose;
#[cfg(feature = "fault-injection")]
mod fault_driver;
pub mod fleet;
mod gnome_extension;
pub mod hosts;
pub mod manifest;
pub mod places;
pub mod platform;
pub mod session;
pub mod setup;
pub mod transports;
