//! What each tool declares beside its input schema (PROTOCOL §7): an `outputSchema`
//! for its `structuredContent` and `annotations` with all four hints stated (hosts
//! treat an unstated hint as the worst case: one prompts for every tool without
//! `readOnlyHint: true`, another fails an unannotated tool under a never-ask policy).
//! `openWorldHint` is true for what reaches the desktop's applications (whose content
//! is not the server's) and false for what only reads or changes the journal.
//!
//! Clients validate every successful result against the output schema, so these are
//! deliberately open: an object whose known members are documented, none required
//! (a plain tool may instead answer `{status: "awaiting_confirmation", request_id}`),
//! others allowed. Failures (`isError`) are `{error, message, details}` and are not
//! validated against it, as MCP says.

use rmcp::model::ToolAnnotations;
use serde_json::{Map, Value, json};

use cc_engine::Vocabulary;
use cc_engine::tools::ToolDef;
use cc_governance::{Changes, governed_tool};

/// An open object schema documenting `members`.
fn open_object(members: &[(&str, &str)]) -> Value {
    let props: Map<String, Value> = members
        .iter()
        .map(|(name, doc)| (name.to_string(), json!({"description": doc})))
        .collect();
    json!({"type": "object", "properties": props})
}

/// A plain tool's output schema: the members its table entry documents (a capture's
/// pixels are not among them: they come as an image content block).
pub fn plain_output_schema(def: &ToolDef) -> Value {
    let mut members = def.outputs.to_vec();
    if !members.iter().any(|(n, _)| *n == "status") {
        members.push(("status", "awaiting_confirmation when a person must approve"));
    }
    members.push((
        "request_id",
        "the pending confirmation (with awaiting_confirmation)",
    ));
    members.push(("risk", "the assessed risk (with awaiting_confirmation)"));
    members.push((
        "reason",
        "why confirmation is needed (with awaiting_confirmation)",
    ));
    open_object(&members)
}

/// Every hint stated, in one place.
fn hints(
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool,
) -> ToolAnnotations {
    ToolAnnotations::new()
        .read_only(read_only)
        .destructive(destructive)
        .idempotent(idempotent)
        .open_world(open_world)
}

/// A plain tool's annotations, from its table entry: an observer reads and may be
/// repeated; any other tool acts on a desktop, where an action may destroy something
/// and doing it twice is not doing it once.
pub fn plain_annotations(def: &ToolDef) -> ToolAnnotations {
    if def.read_only() {
        hints(true, false, true, true)
    } else {
        hints(false, true, false, true)
    }
}

/// A vocabulary's annotations: it acts on the desktop (the engine judges each of the
/// tools it becomes), so it is neither read-only nor idempotent.
pub fn vocabulary_annotations() -> ToolAnnotations {
    hints(false, true, false, true)
}

/// A vocabulary's output schema: the vendor's answer as structured content (OpenAI's
/// `computer_call_output`, Gemini's `FunctionResponse`, Anthropic's `tool_result`
/// `{content, is_error}`), the screenshot's bytes in the image block.
pub fn vocabulary_output_schema(v: &Vocabulary) -> Value {
    match v.vendor {
        "anthropic" => open_object(&[
            (
                "content",
                "the tool_result content: text blocks, and image blocks whose data is the MCP image block",
            ),
            ("is_error", "false on success"),
        ]),
        "openai" => open_object(&[
            ("type", "computer_call_output"),
            ("call_id", "the computer_call's call_id"),
            (
                "output",
                "{type: computer_screenshot, image_url: a data URL}",
            ),
            (
                "acknowledged_safety_checks",
                "the checks a person acknowledged",
            ),
        ]),
        "google" => open_object(&[
            ("name", "the function called"),
            ("id", "the function call's id, when it had one"),
            ("response", "{safety_acknowledgement?}"),
            (
                "parts",
                "[{inline_data: {mime_type, data}}]: the screenshot",
            ),
        ]),
        _ => open_object(&[]),
    }
}

/// A governed tool's output schema (the upstream v8 result shapes, from its table entry).
pub fn governed_output_schema(tool: &str) -> Value {
    open_object(governed_tool(tool).map_or(&[], |t| t.outputs))
}

/// A governed tool's annotations, from what it changes: reads are read-only;
/// `execute_action` acts on the desktop (replaying an action id answers its receipt
/// without acting again); deletions destroy; the rest change governance state only.
pub fn governed_annotations(tool: &str) -> ToolAnnotations {
    match governed_tool(tool).map(|t| t.changes) {
        Some(Changes::Nothing) => hints(true, false, true, false),
        Some(Changes::Desktop) => hints(false, true, true, true),
        Some(Changes::Deletes) => hints(false, true, true, false),
        Some(Changes::Journal) | None => hints(false, false, false, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_engine::tools::tools;
    use cc_governance::GOVERNED_TOOLS;

    #[test]
    fn every_tool_documents_its_result() {
        for t in tools() {
            assert!(!t.outputs.is_empty(), "{}", t.name);
            let schema = plain_output_schema(t);
            assert_eq!(schema["type"], "object");
            assert!(
                schema.get("required").is_none(),
                "{}: nothing required",
                t.name
            );
        }
        let observers: Vec<&str> = tools()
            .iter()
            .filter(|t| t.read_only())
            .map(|t| t.name)
            .collect();
        assert_eq!(
            observers,
            [
                "screen.capture",
                "pointer.position",
                "wait.pause",
                "wait.for",
                "a11y.snapshot",
                "window.list",
                "clipboard.read"
            ]
        );
        for t in GOVERNED_TOOLS {
            assert_eq!(governed_output_schema(t.name)["type"], "object");
        }
        let reads: Vec<&str> = GOVERNED_TOOLS
            .iter()
            .filter(|t| governed_annotations(t.name).read_only_hint == Some(true))
            .map(|t| t.name)
            .collect();
        assert_eq!(
            reads,
            [
                "get_session",
                "get_session_events",
                "get_execution_capabilities",
                "preview_action",
                "get_follow_ups"
            ]
        );
    }

    #[test]
    fn observers_are_read_only_and_actors_are_not() {
        let def = |name: &str| {
            tools()
                .iter()
                .find(|t| t.name == name)
                .unwrap_or_else(|| panic!("{name}"))
        };
        assert_eq!(
            plain_annotations(def("screen.capture")).read_only_hint,
            Some(true)
        );
        let click = plain_annotations(def("pointer.click"));
        assert_eq!(click.read_only_hint, Some(false));
        assert_eq!(click.destructive_hint, Some(true));
        assert_eq!(
            governed_annotations("execute_action").destructive_hint,
            Some(true)
        );
        assert_eq!(
            governed_annotations("preview_action").read_only_hint,
            Some(true)
        );
    }
}
