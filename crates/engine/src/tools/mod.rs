//! The tools: their table, argument validation, and how each one runs on a driver.
//!
//! Each tool is one file here (its argument spec and typed arguments, its facts and
//! how it runs) and one line in the table below.

pub(crate) mod args;
/// Argument validation, for the wire's fuzz checks and anyone validating before calling.
pub use args::validate_args;
pub(crate) mod def;
pub(crate) mod element;
pub(crate) mod exec;
mod fields;
pub(crate) mod observe;
mod table;

/// Declares each tool's file and lists its `def` in [`TABLE`], in order.
macro_rules! table {
    ($($tool:ident),* $(,)?) => {
        $(mod $tool;)*
        /// Every tool, in the order of the spec: one line each.
        const TABLE: &[fn() -> ToolDef] = &[$($tool::def),*];
    };
}

table! {
    screen_capture,
    pointer_move,
    pointer_position,
    pointer_click,
    pointer_drag,
    pointer_scroll,
    keyboard_press,
    keyboard_combo,
    keyboard_type,
    wait_pause,
    wait_for,
    a11y_snapshot,
    a11y_activate,
    a11y_input,
    window_list,
    window_focus,
    clipboard_read,
    clipboard_write,
    app_launch,
    batch_execute,
}

pub(crate) use batch_execute::Args as BatchArgs;
pub use def::{ElementTarget, Lands, Nature, Needs, Spot, Target, TextEntry, ToolDef};
pub(crate) use table::index;
pub use table::{batch, find, tools};
