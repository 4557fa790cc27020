//! What a host shows for each tool beside its name: a title a person reads in an
//! approval prompt, and an icon (PROTOCOL §7). One table for every MCP tool name but the
//! governed ones, whose titles are in their own table (`cc_contract::tools`); a
//! test holds every listed tool to having both.

use rmcp::model::Icon;

/// `(MCP tool name, title)`.
const TITLES: &[(&str, &str)] = &[
    ("screen_capture", "Capture the screen"),
    ("pointer_move", "Move the pointer"),
    ("pointer_position", "Read the pointer position"),
    ("pointer_click", "Click"),
    ("pointer_drag", "Drag"),
    ("pointer_scroll", "Scroll"),
    ("keyboard_press", "Press a key"),
    ("keyboard_combo", "Press a key combination"),
    ("keyboard_type", "Type text"),
    ("wait_pause", "Pause"),
    ("wait_for", "Wait for a condition"),
    ("a11y_snapshot", "Read the accessibility tree"),
    ("a11y_activate", "Activate an element"),
    ("a11y_input", "Set an element's text"),
    ("window_list", "List windows"),
    ("window_focus", "Focus a window"),
    ("clipboard_read", "Read the clipboard"),
    ("clipboard_write", "Write the clipboard"),
    ("app_launch", "Launch an application"),
    ("batch_execute", "Run a batch of actions"),
    (
        "anthropic_computer",
        "Computer use (Anthropic's vocabulary)",
    ),
    ("openai_computer", "Computer use (OpenAI's vocabulary)"),
    ("gemini_computer", "Computer use (Gemini's vocabulary)"),
    ("check_setup", "Check this desktop's setup"),
];

/// A tool's title; the name itself for one the table lacks (a test forbids that).
pub fn title(mcp_name: &str) -> String {
    TITLES
        .iter()
        .find(|(n, _)| *n == mcp_name)
        .map(|(_, t)| *t)
        .or_else(|| cc_governance::governed_tool(mcp_name).map(|t| t.title))
        .unwrap_or(mcp_name)
        .to_string()
}

/// The server's icon (a pointer over a screen), inline so it needs no network.
const ICON_SVG: &str = "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAyNCAyNCI+PHJlY3QgeD0iMiIgeT0iMyIgd2lkdGg9IjIwIiBoZWlnaHQ9IjE0IiByeD0iMiIgZmlsbD0ibm9uZSIgc3Ryb2tlPSIjMzMzIiBzdHJva2Utd2lkdGg9IjIiLz48cGF0aCBkPSJNOCAyMWg4TTEyIDE3djQiIHN0cm9rZT0iIzMzMyIgc3Ryb2tlLXdpZHRoPSIyIi8+PHBhdGggZD0iTTEwIDZsNyA1LTMgMSAyIDMtMiAxLTItMy0yIDJ6IiBmaWxsPSIjZDMzIi8+PC9zdmc+";

/// Every tool's icon.
pub fn icons() -> Vec<Icon> {
    let mut icon = Icon::new(ICON_SVG);
    icon.mime_type = Some("image/svg+xml".into());
    icon.sizes = Some(vec!["any".into()]);
    vec![icon]
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;

    #[test]
    fn the_icon_is_an_svg_a_client_can_decode() {
        let data = ICON_SVG
            .strip_prefix("data:image/svg+xml;base64,")
            .expect("a base64 data URL");
        let svg = base64::engine::general_purpose::STANDARD
            .decode(data)
            .expect("base64");
        let svg = String::from_utf8(svg).expect("UTF-8");
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"), "{svg}");
        assert_eq!(title("pointer_click"), "Click");
    }
}
