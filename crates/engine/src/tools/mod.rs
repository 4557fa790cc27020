//! The tools: their table, argument validation, and how each one runs on a driver.
//!
//! Each tool is one file here (its argument spec and typed arguments, its facts and
//! how it runs) and one line in the table below.

pub(crate) mod args;
pub(crate) mod call;
/// Argument validation, for the wire's fuzz checks and anyone validating before calling.
pub use args::validate_args;
pub(crate) mod def;
pub(crate) mod describe;
pub(crate) mod element;
pub(crate) mod exec;
pub(crate) mod fields;
pub(crate) mod observe;
mod table;

use cc_protocol::{Description, ErrorCode, ToolError};
use serde_json::Value;

use crate::config::Config;
use def::Tool;
use describe::Judged;
use exec::Exec;

/// Declares each tool's file, lists its `def` in [`TABLE`] in order, and makes the
/// typed form of a call ([`Typed`]): one variant per tool, named after the tool's own
/// type, so a call is dispatched by a `match` rather than looked up by name.
macro_rules! table {
    ($($tool:ident :: $Tool:ident),* $(,)?; $batch:ident) => {
        $(pub(crate) mod $tool;)*
        mod $batch;
        /// Every tool, in the order of the spec: one line each.
        const TABLE: &[fn() -> ToolDef] = &[$($tool::def,)* $batch::def];

        /// A validated call's arguments in the tool's own typed form.
        // One per call, made once and borrowed from then on: its size costs nothing
        // worth a box per variant.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone)]
        pub(crate) enum Typed {
            $($Tool($tool::Args),)*
            /// `batch.execute`: other tools' calls, each typed.
            Batch(call::Batch),
        }

        $(impl From<$tool::Args> for Typed {
            fn from(a: $tool::Args) -> Typed {
                Typed::$Tool(a)
            }
        })*

        /// Each tool's position in [`TABLE`], so a typed call finds its definition
        /// without its name.
        enum Row {
            $($Tool,)*
            Batch,
        }

        impl Typed {
            /// The tool these arguments are for: known from their type, never from a
            /// name.
            pub(crate) fn def(&self) -> &'static ToolDef {
                let at = match self {
                    $(Typed::$Tool(_) => Row::$Tool,)*
                    Typed::Batch(_) => Row::Batch,
                };
                &tools()[at as usize]
            }

            /// See [`Tool::escalates`]; a batch's items are judged one by one.
            pub(crate) fn escalates(&self) -> bool {
                match self {
                    $(Typed::$Tool(a) => Tool::escalates(&$tool::$Tool, a),)*
                    Typed::Batch(_) => false,
                }
            }

            /// See [`Tool::operator_trusts`].
            pub(crate) fn operator_trusts(&self, config: &Config) -> bool {
                match self {
                    $(Typed::$Tool(a) => Tool::operator_trusts(&$tool::$Tool, a, config),)*
                    Typed::Batch(_) => false,
                }
            }

            /// See [`Tool::pastes`].
            pub(crate) fn pastes(&self) -> bool {
                match self {
                    $(Typed::$Tool(a) => Tool::pastes(&$tool::$Tool, a),)*
                    Typed::Batch(_) => false,
                }
            }

            /// See [`Tool::target`]; `None` for a batch, whose items land each on
            /// their own.
            pub(crate) fn target(&self) -> Option<Target> {
                match self {
                    $(Typed::$Tool(a) => Some(Tool::target(&$tool::$Tool, a)),)*
                    Typed::Batch(_) => None,
                }
            }

            /// See [`Tool::describe`]; a batch is described by its items.
            pub(crate) fn describe(&self, judged: &Judged<'_>) -> Description {
                match self {
                    $(Typed::$Tool(a) => Tool::describe(&$tool::$Tool, a, judged),)*
                    Typed::Batch(_) => $batch::describe(judged),
                }
            }

            /// See [`Tool::run`]. The tool consumes its arguments, so it gets its own
            /// copy (a struct copy: nothing is parsed again).
            pub(crate) fn run(&self, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
                match self {
                    $(Typed::$Tool(a) => Tool::run(&$tool::$Tool, a.clone(), ex),)*
                    Typed::Batch(_) => Err(ToolError::new(
                        ErrorCode::InvalidArguments,
                        "batch.execute runs as a batch, not alone",
                    )),
                }
            }
        }
    };
}

table! {
    screen_capture::ScreenCapture,
    pointer_move::PointerMove,
    pointer_position::PointerPosition,
    pointer_click::PointerClick,
    pointer_drag::PointerDrag,
    pointer_scroll::PointerScroll,
    keyboard_press::KeyboardPress,
    keyboard_combo::KeyboardCombo,
    keyboard_type::KeyboardType,
    wait_pause::WaitPause,
    wait_for::WaitFor,
    a11y_snapshot::A11ySnapshot,
    a11y_activate::A11yActivate,
    a11y_input::A11yInput,
    window_list::WindowList,
    window_focus::WindowFocus,
    clipboard_read::ClipboardRead,
    clipboard_write::ClipboardWrite,
    app_launch::AppLaunch,
    ;
    batch_execute
}

pub use call::ToolCall;
pub use def::{ElementTarget, Lands, Nature, Needs, Spot, Target, TextEntry, ToolDef};
pub(crate) use table::index;
pub use table::{batch, find, tools};
