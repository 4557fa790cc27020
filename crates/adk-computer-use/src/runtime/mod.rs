//! The runtime side of the library: the [`ComputerUseRuntime`] trait the graph drives, the
//! values that flow through it ([`types`]), the clock the checks read and the binding of
//! runtime responses ([`binding`]).

pub mod binding;
mod clock;
mod runtime_trait;
pub mod types;

pub use clock::{Clock, ManualClock, SystemClock};
pub use runtime_trait::{ComputerUseRuntime, RuntimeResult};
pub use types::{
    PreviewRecord, ProposedAction, RuntimeCapabilities, SemanticObservation, VisualObservation,
};
