//! What a tool is: every fact the rest of the system asks about it, in one value.
//!
//! A fact that can be stated without arguments is a field of [`ToolDef`] (none has a
//! default, so a tool that omits one does not compile); a fact that depends on the
//! arguments is a method of [`Tool`] over the tool's own typed arguments (none has a
//! default either). Nothing outside the tool table matches a tool by its name.

use cc_protocol::{Description, ErrorCode, Risk, ToolError};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Typed;
use super::describe::Judged;
use super::exec::Exec;
use crate::config::Config;
use crate::spec::{Issue, Ty};

/// What a tool needs from the backend (for `tools.list`'s `available`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Runs on any desktop.
    Nothing,
    /// Screen capture.
    Capture,
    /// Synthetic pointer and keyboard input.
    Input,
    /// An accessibility tree (AT-SPI on Linux).
    Accessibility,
    /// A list of windows.
    Windows,
    /// The clipboard.
    Clipboard,
    /// Starting programs.
    Launch,
}

impl Needs {
    /// Why a tool with this need is `available: false`: what this desktop lacks, so a
    /// model (or its operator) knows what to start or choose instead.
    pub fn missing(self) -> &'static str {
        match self {
            Needs::Nothing => "",
            Needs::Capture => "this desktop offers no screen capture",
            Needs::Input => "this desktop offers no synthetic input",
            Needs::Accessibility => {
                "no accessibility (AT-SPI) bus: start the desktop session with one (at-spi-bus-launcher) and the application after it"
            }
            Needs::Windows => "this desktop does not list its windows",
            Needs::Clipboard => "this desktop offers no clipboard to the server",
            Needs::Launch => "this desktop cannot start programs",
        }
    }
}

/// What running the tool does to the desktop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nature {
    /// Reads the desktop and changes nothing: may run while a confirmation is pending
    /// (when configured), read-only for an MCP client, any execution mode.
    Observes,
    /// Only lets time pass: changes nothing, but is not an observation either (it would
    /// hold the worker while a confirmation is pending).
    Waits,
    /// Reads something that may be secret (the clipboard) and changes nothing:
    /// read-only for an MCP client, but never a benign observation, and the `text`
    /// member of its result is shown redacted, with its length, in events, logs,
    /// the console and governed receipts (only the caller receives it).
    Reveals,
    /// Changes the desktop (input, focus, or a batch of such calls).
    Acts,
}

/// Whether the tool writes text, and into what: the field whose password state makes
/// it high risk and its `text` argument secret in events, logs and previews.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextEntry {
    /// Writes no text.
    No,
    /// Types into whatever has the keyboard focus; a tab or newline in the text may move
    /// the focus to another field, so the text after it is shown redacted.
    Focused,
    /// Sets the text of an element of the latest snapshot.
    Element,
}

/// What the tool lands on, whatever its arguments: for window-scoped rules and for a
/// governed capability's interference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lands {
    /// The focused window (keyboard tools, observations).
    Focused,
    /// Canvas points under the physical pointer, which it moves.
    Pointer,
    /// A window it names, which it may raise.
    Window,
    /// An element of the latest snapshot (its window, else the focused one).
    Element,
    /// Each of its items lands on its own.
    Items,
}

/// Where one call lands, from its arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// The focused window.
    Focused,
    /// Canvas points, unclamped; none means where the pointer is now.
    Points(Vec<(f64, f64)>),
    /// Points relative to a window's top-left corner (canvas units), placed where the
    /// window is when the call is judged and again when it runs.
    InWindow(u64, Vec<(f64, f64)>),
    /// A window by id.
    Window(u64),
    /// An element, however it was named.
    Element(ElementTarget),
    /// Points under the pointer of which some are elements' centres (a pointer tool
    /// aimed at an element): each judged like the point it resolves to, the plain
    /// ones placed relative to `window` when the call names one.
    Aimed {
        /// The window the plain points are relative to, when the call names one.
        window: Option<u64>,
        /// The points, in order (a drag's from and to).
        spots: Vec<Spot>,
    },
}

/// One point of a pointer action aimed at an element.
#[derive(Debug, Clone, PartialEq)]
pub enum Spot {
    /// A canvas point, unclamped (relative to the call's window when it names one).
    Point(f64, f64),
    /// The centre of an element's rectangle, wherever it is when the call is judged
    /// and again when it runs.
    Centre(ElementTarget),
}

/// How a call names its element.
#[derive(Debug, Clone, PartialEq)]
pub enum ElementTarget {
    /// A node of a snapshot (only the latest one's may be acted on).
    Node {
        /// The snapshot the node is of.
        snapshot_id: String,
        /// The node's id in that snapshot.
        node_id: u32,
    },
    /// A stable element reference, valid while the element lives.
    Ref(String),
    /// Whatever single element of the live tree matches.
    Select(crate::selector::Selector),
}

/// The behaviour of a tool over its typed arguments. Every method is required.
pub(crate) trait Tool: Sync + 'static {
    /// The arguments after validation (defaults filled, coercions applied).
    type Args: DeserializeOwned + Clone;
    /// Whether these arguments raise the action to high risk whatever the desktop says
    /// (a shell combo, say). Typing into a password field is judged by the engine for
    /// every [`TextEntry`] tool and needs no answer here.
    fn escalates(&self, args: &Self::Args) -> bool;
    /// Where the call lands.
    fn target(&self, args: &Self::Args) -> Target;
    /// Runs the call on the driver, in pre-emptible steps.
    fn run(&self, args: Self::Args, ex: &mut Exec<'_>) -> Result<Value, ToolError>;
    /// What the call does, in the words an operator is shown (a confirmation, the
    /// trail, a governed approval): from its arguments and where the gate placed it
    /// (`judged`), its text only as `judged` shows it (redacted as its events are). The
    /// engine adds the element and the window the gate read.
    fn describe(&self, args: &Self::Args, judged: &Judged<'_>) -> Description;
    /// Whether the operator's configuration vouches for these arguments, so that the
    /// call is at most moderate risk (an application listed in `apps.launch_allowed`);
    /// `escalates` and a secret still make it high. Only operator keys may decide
    /// this. The one default of the trait: no configuration vouches for anything
    /// unless a tool says which key does.
    fn operator_trusts(&self, args: &Self::Args, config: &Config) -> bool {
        let _ = (args, config);
        false
    }
    /// Whether the call pastes the clipboard at the focus (ctrl+v): it then writes
    /// text as typing does, so into a password field it is high risk (what an agent
    /// put on the clipboard must not reach a password field unconfirmed). Defaults to
    /// no: only a key combo pastes.
    fn pastes(&self, args: &Self::Args) -> bool {
        let _ = args;
        false
    }
}

/// Makes a tool's typed call from its validated JSON, so the table can hold every
/// tool alike.
pub(crate) trait Ops: Sync {
    /// Deserializes normalized arguments into the tool's typed ones: once per call.
    fn parse(&self, args: &Value) -> Result<Typed, ToolError>;
}

/// Deserializes validated arguments into typed ones. Validation already shaped them,
/// so a failure here is the engine's own mismatch between a spec and its struct:
/// refused as `invalid_arguments`, never run with guessed values.
pub(crate) fn typed<A: DeserializeOwned>(args: &Value) -> Result<A, ToolError> {
    A::deserialize(args).map_err(|e| {
        ToolError::new(
            ErrorCode::InvalidArguments,
            format!("arguments do not fit the tool: {e}"),
        )
    })
}

impl<T: Tool> Ops for T
where
    T::Args: Into<Typed>,
{
    fn parse(&self, args: &Value) -> Result<Typed, ToolError> {
        typed::<T::Args>(args).map(Into::into)
    }
}

/// How the engine runs a tool.
#[derive(Clone, Copy)]
pub(crate) enum Runs {
    /// On the driver, as one gated action.
    Alone(&'static dyn Ops),
    /// As a list of other tools' calls, gated as a whole and then item by item
    /// (`batch.execute`).
    Items,
}

impl std::fmt::Debug for Runs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Runs::Alone(_) => f.write_str("Alone"),
            Runs::Items => f.write_str("Items"),
        }
    }
}

/// The arguments' cross-field rules, run after the spec's checks (and even when they
/// failed, so one retry can fix everything).
pub(crate) struct Checked<'a> {
    /// The normalized arguments, when the spec's checks passed.
    pub out: Option<&'a mut Value>,
    /// The arguments as given.
    pub raw: &'a Value,
    /// The session config (defaults of batch items' own arguments).
    pub config: &'a Value,
    pub issues: &'a mut Vec<Issue>,
    /// Validates another tool's arguments (a batch item, an observation) the way the
    /// call's own were: handed in, so a rule that nests calls imports no validator.
    pub validate: Validate,
}

/// How arguments are validated and normalized: a tool, its arguments, the config.
pub(crate) type Validate = fn(&ToolDef, &Value, &Value) -> Result<Value, Vec<Issue>>;

impl Checked<'_> {
    /// Whether an argument was given (normalized when possible).
    pub fn given(&self, k: &str) -> bool {
        match &self.out {
            Some(o) => o.get(k).is_some(),
            None => self.raw.get(k).is_some_and(|v| !v.is_null()),
        }
    }

    /// Records a problem.
    pub fn issue(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.issues.push(Issue {
            path: path.into(),
            message: message.into(),
        });
    }
}

/// No cross-field rule: the spec says everything.
pub(crate) fn no_check(_: &mut Checked<'_>) {}

/// One tool: everything the rest of the system asks about it.
#[derive(Debug, Clone)]
pub struct ToolDef {
    /// The dotted name callers use (`pointer.click`).
    pub name: &'static str,
    /// One line for `tools.list`, the manifest and MCP.
    pub summary: &'static str,
    /// Risk before the arguments and the desktop are considered.
    pub risk: Risk,
    /// What the backend must offer for it to be available.
    pub needs: Needs,
    /// Whether it observes, waits or acts.
    pub nature: Nature,
    /// Whether it writes text, and where (what is redacted, what escalates).
    pub text: TextEntry,
    /// Whether the focus may be elsewhere afterwards (a later batch item's text is then
    /// redacted whole: the field it will type into is not known yet).
    pub moves_focus: bool,
    /// What it lands on, whatever its arguments.
    pub lands: Lands,
    /// The members of its result, documented for MCP output schemas.
    pub outputs: &'static [(&'static str, &'static str)],
    /// Its arguments' spec: validation, defaults and the schema ([`ToolDef::schema`]).
    pub(crate) params: Ty,
    /// Example arguments, published with the schema (each validates: a table test).
    pub examples: Vec<Value>,
    /// The cross-field rules the spec cannot say.
    pub(crate) check: fn(&mut Checked<'_>),
    /// Alone on the driver, or as a batch of items.
    pub(crate) runs: Runs,
}

impl ToolDef {
    /// Read-only for a client (MCP `readOnlyHint`): it changes nothing on the desktop.
    pub fn read_only(&self) -> bool {
        self.nature != Nature::Acts
    }

    /// May destroy something (MCP `destructiveHint`): high risk before any argument.
    pub fn destructive(&self) -> bool {
        self.risk == Risk::High
    }

    /// Whether what it reads may be secret: its result's `text` is redacted
    /// everywhere but in the caller's own answer.
    pub fn reveals(&self) -> bool {
        self.nature == Nature::Reveals
    }

    /// Whether it changes the desktop (a batch counts: its items may).
    pub fn mutates(&self) -> bool {
        self.nature == Nature::Acts
    }

    /// Whether it is a batch of other tools' calls.
    pub fn is_batch(&self) -> bool {
        matches!(self.runs, Runs::Items)
    }

    /// Whether it writes text into a field.
    pub fn writes_text(&self) -> bool {
        self.text != TextEntry::No
    }

    /// The JSON Schema of its arguments, as `tools.list`, the manifest and MCP publish
    /// it.
    pub fn schema(&self) -> Value {
        crate::spec::to_json_schema(&self.params)
    }
}
