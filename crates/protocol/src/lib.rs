//! Wire types of the computer-control plugin protocol (PROTOCOL.md).
//!
//! This crate is the vocabulary every other crate speaks: it has no behaviour beyond
//! parsing and printing, so a transport, the engine and a driver can never disagree on
//! what a word means.

#![warn(missing_docs)]

pub mod a11y;
pub mod description;
pub mod envelope;
pub mod error_code;
pub mod event;
pub mod geometry;
pub mod keys;
pub mod landing;
pub mod risk;
pub mod state;

pub use a11y::{A11yNode, Role, StateFlag};
pub use description::{Description, Mark};
pub use envelope::{Envelope, Meta, ToolError};
pub use error_code::ErrorCode;
pub use event::Event;
pub use geometry::{DisplayInfo, PhysicalRect, Point, Rect, Surface};
pub use keys::{Key, KeyParseError};
pub use landing::{LANDING_TEXT_CHARS, Landing, LandingElement, LandingPoint, LandingWindow};
pub use risk::Risk;
pub use state::SessionState;
