//! Keyboard tools: one key, combos (pressed in order, released in reverse), and text of
//! any Unicode, one pre-emptible character at a time.

use cc_protocol::{Key, ToolError};
use serde_json::{Value, json};

use super::{Exec, drv, str_arg, u64_arg};

fn parse(name: &str) -> Result<Key, ToolError> {
    Key::parse(name)
        .map_err(|e| ToolError::new(cc_protocol::ErrorCode::InvalidArguments, e.to_string()))
}

pub fn press(args: &Value, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
    let key = parse(str_arg(args, "key"))?;
    ex.check_stop()?;
    drv(ex.driver.key(key, true))?;
    drv(ex.driver.key(key, false))?;
    Ok(json!({"key": key.name()}))
}

pub fn combo(args: &Value, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
    let names: Vec<&str> = args
        .get("keys")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let keys = names
        .iter()
        .map(|n| parse(n))
        .collect::<Result<Vec<_>, _>>()?;
    let mut down: Vec<Key> = Vec::with_capacity(keys.len());
    let mut failure = None;
    for k in &keys {
        if let Err(e) = ex.check_stop().and_then(|_| drv(ex.driver.key(*k, true))) {
            failure = Some(e);
            break;
        }
        down.push(*k);
    }
    // Release in reverse whatever went down, even after a failure.
    for k in down.iter().rev() {
        if let Err(e) = drv(ex.driver.key(*k, false)) {
            failure.get_or_insert(e);
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(json!({"keys": names})),
    }
}

pub fn type_text(args: &Value, ex: &mut Exec<'_>) -> Result<Value, ToolError> {
    let text = str_arg(args, "text");
    let interval = u64_arg(args, "interval_ms");
    let submit = args.get("submit").and_then(Value::as_bool).unwrap_or(false);
    let mut chars = 0usize;
    for c in text.chars() {
        ex.check_stop()?;
        drv(ex.driver.type_char(c))?;
        chars += 1;
        if interval > 0 {
            ex.sleep_ms(interval)?;
        }
    }
    if submit {
        ex.check_stop()?;
        let enter = Key::Named(cc_protocol::keys::Named::Enter);
        drv(ex.driver.key(enter, true))?;
        drv(ex.driver.key(enter, false))?;
    }
    Ok(json!({"chars": chars, "submit": submit}))
}
