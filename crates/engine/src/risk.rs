//! Risk of one concrete action (PROTOCOL §4, §5): the tool's base risk, escalated by
//! what the arguments and the desktop say.

use cc_protocol::{Key, Risk, keys::ModifierFamily};
use serde_json::Value;

use crate::tools::registry::find;

/// What the desktop says about an action, read just before gating.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The focused element is a password field (keyboard.type).
    pub focused_password: bool,
    /// The target element of a11y.input is a password field.
    pub target_password: bool,
}

/// Families in a combo.
fn families(keys: &Value) -> Vec<ModifierFamily> {
    keys.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .filter_map(|k| Key::parse(k).ok())
                .filter_map(|k| k.modifier_family())
                .collect()
        })
        .unwrap_or_default()
}

/// True when a combo reaches the OS shell or the ctrl+alt family (task managers,
/// session switches): a win/super/meta key, or ctrl with alt.
pub fn combo_is_high(keys: &Value) -> bool {
    let f = families(keys);
    f.contains(&ModifierFamily::Win)
        || (f.contains(&ModifierFamily::Ctrl) && f.contains(&ModifierFamily::Alt))
}

/// The risk of one (non-batch) action.
pub fn action_risk(tool: &str, args: &Value, ctx: &Context) -> Risk {
    let base = find(tool).map(|t| t.risk).unwrap_or(Risk::High);
    let escalated = match tool {
        "keyboard.combo" => combo_is_high(args.get("keys").unwrap_or(&Value::Null)),
        // A lone win key opens the shell's launcher: as risky as a win combo.
        "keyboard.press" => {
            args.get("key")
                .and_then(Value::as_str)
                .and_then(|k| Key::parse(k).ok())
                .and_then(|k| k.modifier_family())
                == Some(ModifierFamily::Win)
        }
        "keyboard.type" => ctx.focused_password,
        "a11y.input" => ctx.target_password,
        _ => false,
    };
    if escalated { Risk::High } else { base }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn combo_escalation_with_aliases() {
        let c = Context::default();
        for high in [
            json!(["win", "r"]),
            json!(["super", "e"]),
            json!(["meta", "x"]),
            json!(["lctrl", "ralt", "delete"]),
            json!(["ctrl", "alt", "t"]),
            json!(["rwin"]),
        ] {
            assert_eq!(
                action_risk("keyboard.combo", &json!({"keys": high}), &c),
                Risk::High,
                "{high}"
            );
        }
        for moderate in [
            json!(["ctrl", "c"]),
            json!(["alt", "tab"]),
            json!(["ctrl", "shift", "esc"]),
        ] {
            assert_eq!(
                action_risk("keyboard.combo", &json!({"keys": moderate}), &c),
                Risk::Moderate,
                "{moderate}"
            );
        }
    }

    #[test]
    fn password_typing_is_high() {
        let args = json!({"text": "x"});
        assert_eq!(
            action_risk("keyboard.type", &args, &Context::default()),
            Risk::Moderate
        );
        let ctx = Context {
            focused_password: true,
            ..Default::default()
        };
        assert_eq!(action_risk("keyboard.type", &args, &ctx), Risk::High);
    }

    #[test]
    fn base_risks() {
        let c = Context::default();
        assert_eq!(action_risk("screen.capture", &json!({}), &c), Risk::Benign);
        assert_eq!(action_risk("pointer.click", &json!({}), &c), Risk::Moderate);
        assert_eq!(
            action_risk("keyboard.press", &json!({"key": "win"}), &c),
            Risk::High
        );
    }
}
