//! The tools: their table, argument validation, and how each one runs on a driver.

pub mod args;
pub mod exec;
pub mod registry;

pub use registry::{Needs, ToolDef, find, tools};
