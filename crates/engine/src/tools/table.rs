//! Looking tools up in the table (`tools/mod.rs`): `tools.list`, the manifest, MCP,
//! validation, the gate and the governed preview all read it; a tool is found here by
//! name and nowhere else.

use std::sync::OnceLock;

use super::TABLE;
use super::def::ToolDef;

/// Every tool, in the order of the spec.
pub fn tools() -> &'static [ToolDef] {
    static TOOLS: OnceLock<Vec<ToolDef>> = OnceLock::new();
    TOOLS.get_or_init(|| {
        TABLE
            .iter()
            .map(|def| super::observe::extend(def()))
            .collect()
    })
}

/// Looks a tool up by name.
pub fn find(name: &str) -> Option<&'static ToolDef> {
    tools().iter().find(|t| t.name == name)
}

/// The position of a tool in the table (rules precompute which tools a glob matches).
pub(crate) fn index(name: &str) -> Option<usize> {
    tools().iter().position(|t| t.name == name)
}

/// The batch tool's name, for transports that map `tools.call_batch` onto it.
pub fn batch() -> &'static ToolDef {
    tools()
        .iter()
        .find(|t| t.is_batch())
        .unwrap_or_else(|| unreachable!("the table holds batch.execute"))
}

#[cfg(test)]
mod tests {
    use super::super::args::validate_args;
    use super::super::call::ToolCall;
    use super::super::def::{Lands, Nature, Target, TextEntry};
    use super::*;
    use crate::config::defaults;
    use crate::spec::Ty;
    use cc_protocol::Risk;

    #[test]
    fn twenty_tools_and_no_confirmation_tool() {
        assert_eq!(tools().len(), 20);
        assert!(tools().iter().all(|t| !t.name.contains("confirm")));
    }

    /// The facts the type system cannot demand: names unique and dotted, a summary and
    /// documented outputs, examples that validate, one batch tool, and facts that agree
    /// with each other.
    #[test]
    fn every_tool_states_every_fact() {
        let mut names: Vec<&str> = tools().iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), tools().len(), "names are unique");
        assert_eq!(tools().iter().filter(|t| t.is_batch()).count(), 1);
        assert!(tools().len() <= 64, "rules index tools in a u64");
        for t in tools() {
            assert!(t.name.contains('.') && t.name.len() <= 64, "{}", t.name);
            assert!(!t.summary.is_empty(), "{}: summary", t.name);
            assert!(!t.outputs.is_empty(), "{}: outputs", t.name);
            assert!(!t.examples.is_empty(), "{}: examples", t.name);
            let Ty::Object(fields) = &t.params else {
                panic!("{}: params must be an object", t.name);
            };
            if t.text != TextEntry::No {
                // What redaction hides is the `text` member.
                assert!(fields.iter().any(|f| f.name == "text"), "{}: text", t.name);
                assert_eq!(t.nature, Nature::Acts, "{}", t.name);
            }
            if matches!(t.nature, Nature::Observes | Nature::Waits) {
                assert_eq!(t.risk, Risk::Benign, "{}: observers are benign", t.name);
            }
            if t.nature == Nature::Reveals {
                // What may be secret is never a benign observation, and its secret is
                // the `text` member of its result.
                assert_ne!(t.risk, Risk::Benign, "{}", t.name);
                assert!(t.outputs.iter().any(|(o, _)| *o == "text"), "{}", t.name);
            }
            if t.nature != Nature::Acts {
                assert!(!t.moves_focus, "{}", t.name);
            }
            assert_eq!(t.is_batch(), t.lands == Lands::Items, "{}", t.name);
            for ex in &t.examples {
                let norm = validate_args(t, ex, &defaults());
                // Examples name a snapshot that does not exist, but they validate.
                let norm = norm.unwrap_or_else(|e| panic!("{}: {ex}: {e:?}", t.name));
                // The typed arguments accept every validated example, and the target
                // agrees with what the tool says it lands on.
                let call = ToolCall::typed(t, norm)
                    .unwrap_or_else(|e| panic!("{}: {ex} fits its typed arguments: {e}", t.name));
                let Some(target) = call.target() else {
                    assert!(t.is_batch(), "{}", t.name);
                    continue;
                };
                let fits = matches!(
                    (t.lands, &target),
                    (
                        Lands::Pointer,
                        Target::Points(_) | Target::Aimed { .. } | Target::InWindow(..)
                    ) | (Lands::Window, Target::Window(_))
                        | (Lands::Element, Target::Element(_))
                        | (Lands::Focused, Target::Focused)
                );
                assert!(fits, "{}: {target:?} vs {:?}", t.name, t.lands);
            }
        }
    }
}
