//! A driver that fails on purpose, so every error path of the server can be provoked
//! end to end: compiled only with the `fault-injection` feature (the test build turns
//! it on; a release build has no trace of it) and armed only by
//! `COMPUTER_CONTROL_FAULTS`.
//!
//! The variable is a comma-separated list of `op[@n]=effect`: `op` is a driver call
//! (`capture`, `layout`, `pointer_move`, `button`, `scroll`, `key`, `type_char`,
//! `windows`, `focus_window`, `a11y_tree`, `a11y_perform`, `a11y_set_text`,
//! `clipboard_read`, `clipboard_write`, `launch`), `n` the
//! 1-based call it hits (every call without it), and `effect` one of `unavailable`
//! (`backend_unavailable`), `failed` (`driver_failed`), `panic` (a bug inside the
//! driver), or `hang:MS` (the call blocks that long, for `timeout`).

use std::collections::HashMap;
use std::time::Duration;

use cc_desktop::{
    Axis, Button, Capabilities, Driver, DriverError, DriverEvent, ElementHandle, ElementInfo,
    HeldInputs, Layout, Pace, RawNode, RgbImage, SemanticAction, WindowInfo,
};
use cc_protocol::{Key, PhysicalRect};

/// The environment variable that arms it.
pub const FAULTS_VAR: &str = "COMPUTER_CONTROL_FAULTS";

/// What a fault does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    Unavailable,
    Failed,
    Panic,
    Hang(u64),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Fault {
    op: String,
    /// The call it hits (1-based); every call when `None`.
    nth: Option<u64>,
    effect: Effect,
}

const OPS: &[&str] = &[
    "capture",
    "layout",
    "pointer_move",
    "button",
    "scroll",
    "key",
    "type_char",
    "windows",
    "focus_window",
    "a11y_tree",
    "a11y_perform",
    "a11y_set_text",
    "clipboard_read",
    "clipboard_write",
    "launch",
];

/// Parses the variable's value; a mistake is refused with the reason, never ignored.
fn parse(spec: &str) -> Result<Vec<Fault>, String> {
    spec.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|item| {
            let (target, effect) = item
                .split_once('=')
                .ok_or_else(|| format!("{item:?}: expected op[@n]=effect"))?;
            let (op, nth) = match target.split_once('@') {
                Some((op, n)) => (
                    op,
                    Some(
                        n.parse::<u64>()
                            .ok()
                            .filter(|n| *n > 0)
                            .ok_or_else(|| format!("{item:?}: @n must be a positive integer"))?,
                    ),
                ),
                None => (target, None),
            };
            if !OPS.contains(&op) {
                return Err(format!(
                    "{item:?}: unknown op {op:?} (known: {})",
                    OPS.join(", ")
                ));
            }
            let effect = match effect {
                "unavailable" => Effect::Unavailable,
                "failed" => Effect::Failed,
                "panic" => Effect::Panic,
                e => match e.strip_prefix("hang:").and_then(|ms| ms.parse().ok()) {
                    Some(ms) => Effect::Hang(ms),
                    None => {
                        return Err(format!(
                            "{item:?}: effect must be unavailable, failed, panic or hang:MS"
                        ));
                    }
                },
            };
            Ok(Fault {
                op: op.to_string(),
                nth,
                effect,
            })
        })
        .collect()
}

/// A driver wrapped with faults.
pub struct FaultDriver {
    inner: Box<dyn Driver>,
    faults: Vec<Fault>,
    calls: HashMap<&'static str, u64>,
}

/// Wraps `inner` when `COMPUTER_CONTROL_FAULTS` is set; a bad value stops the start.
pub fn wrap(inner: Box<dyn Driver>) -> anyhow::Result<Box<dyn Driver>> {
    let Ok(spec) = std::env::var(FAULTS_VAR) else {
        return Ok(inner);
    };
    let faults = parse(&spec).map_err(|e| anyhow::anyhow!("{FAULTS_VAR}: {e}"))?;
    tracing::warn!("fault injection armed: {spec}");
    Ok(Box::new(FaultDriver {
        inner,
        faults,
        calls: HashMap::new(),
    }))
}

impl FaultDriver {
    /// Counts a call of `op` and applies the fault aimed at it, if any.
    fn hit(&mut self, op: &'static str) -> Result<(), DriverError> {
        let n = self.calls.entry(op).or_insert(0);
        *n += 1;
        let n = *n;
        let Some(f) = self
            .faults
            .iter()
            .find(|f| f.op == op && f.nth.is_none_or(|k| k == n))
        else {
            return Ok(());
        };
        match f.effect {
            Effect::Unavailable => Err(DriverError::Unavailable(format!("injected: {op} #{n}"))),
            Effect::Failed => Err(DriverError::Failed(format!("injected: {op} #{n}"))),
            Effect::Panic => panic!("injected panic in {op} #{n}"),
            Effect::Hang(ms) => {
                std::thread::sleep(Duration::from_millis(ms));
                Ok(())
            }
        }
    }
}

impl Driver for FaultDriver {
    fn platform(&self) -> &'static str {
        self.inner.platform()
    }
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }
    fn layout(&mut self) -> Result<Layout, DriverError> {
        self.hit("layout")?;
        self.inner.layout()
    }
    fn capture(&mut self, rect: PhysicalRect) -> Result<RgbImage, DriverError> {
        self.hit("capture")?;
        self.inner.capture(rect)
    }
    fn pointer_position(&mut self) -> Result<(i32, i32), DriverError> {
        self.inner.pointer_position()
    }
    fn pointer_move(&mut self, x: i32, y: i32) -> Result<(), DriverError> {
        self.hit("pointer_move")?;
        self.inner.pointer_move(x, y)
    }
    fn button(&mut self, button: Button, down: bool) -> Result<(), DriverError> {
        self.hit("button")?;
        self.inner.button(button, down)
    }
    fn scroll(&mut self, axis: Axis, positive: bool) -> Result<(), DriverError> {
        self.hit("scroll")?;
        self.inner.scroll(axis, positive)
    }
    fn key(&mut self, key: Key, down: bool) -> Result<(), DriverError> {
        // Releases are never failed: a fault that pins a key down would test the
        // fault, not the server.
        if down {
            self.hit("key")?;
        }
        self.inner.key(key, down)
    }
    fn type_char(&mut self, c: char) -> Result<(), DriverError> {
        self.hit("type_char")?;
        self.inner.type_char(c)
    }
    fn prepare_typing(&mut self, text: &str, pace: Pace) -> Result<(), DriverError> {
        self.inner.prepare_typing(text, pace)
    }
    fn release_all(&mut self) -> Result<(), DriverError> {
        self.inner.release_all()
    }
    fn held_inputs(&mut self) -> HeldInputs {
        self.inner.held_inputs()
    }
    fn windows(&mut self) -> Result<Vec<WindowInfo>, DriverError> {
        self.hit("windows")?;
        self.inner.windows()
    }
    fn window_shown(&mut self, id: u64) -> Result<Option<WindowInfo>, DriverError> {
        self.hit("windows")?;
        self.inner.window_shown(id)
    }
    fn window_at(&mut self, x: i32, y: i32) -> Result<Option<WindowInfo>, DriverError> {
        self.hit("windows")?;
        self.inner.window_at(x, y)
    }
    fn focus_window(&mut self, id: u64) -> Result<(), DriverError> {
        self.hit("focus_window")?;
        self.inner.focus_window(id)
    }
    fn focused_is_password(&mut self) -> Result<bool, DriverError> {
        self.inner.focused_is_password()
    }
    fn a11y_tree(
        &mut self,
        window: Option<u64>,
        max_nodes: usize,
    ) -> Result<Vec<RawNode>, DriverError> {
        self.hit("a11y_tree")?;
        self.inner.a11y_tree(window, max_nodes)
    }
    fn a11y_element(&mut self, handle: &ElementHandle) -> Result<Option<ElementInfo>, DriverError> {
        self.inner.a11y_element(handle)
    }
    fn a11y_perform(
        &mut self,
        handle: &ElementHandle,
        action: SemanticAction,
    ) -> Result<(), DriverError> {
        self.hit("a11y_perform")?;
        self.inner.a11y_perform(handle, action)
    }
    fn a11y_set_text(&mut self, handle: &ElementHandle, text: &str) -> Result<(), DriverError> {
        self.hit("a11y_set_text")?;
        self.inner.a11y_set_text(handle, text)
    }
    fn poll_events(&mut self) -> Vec<DriverEvent> {
        self.inner.poll_events()
    }
    fn pump(&mut self) {
        self.inner.pump()
    }
    fn set_hotkey(&mut self, keys: &[Key]) -> Result<(), DriverError> {
        self.inner.set_hotkey(keys)
    }
    fn set_indicator(&mut self, state: cc_desktop::Indicator) -> Result<(), DriverError> {
        self.inner.set_indicator(state)
    }
    fn watch_changes(&mut self, on: bool) -> cc_desktop::Watching {
        self.inner.watch_changes(on)
    }
    fn wait_changes(&mut self, timeout: Duration) -> cc_desktop::Changes {
        self.inner.wait_changes(timeout)
    }
    fn clipboard_read(&mut self) -> Result<cc_desktop::ClipboardContent, DriverError> {
        self.hit("clipboard_read")?;
        self.inner.clipboard_read()
    }
    fn clipboard_write(&mut self, text: &str) -> Result<(), DriverError> {
        self.hit("clipboard_write")?;
        self.inner.clipboard_write(text)
    }
    fn launch(&mut self, app: &str, args: &[String]) -> Result<cc_desktop::Launched, DriverError> {
        self.hit("launch")?;
        self.inner.launch(app, args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_or_say_why() {
        assert_eq!(
            parse("key@2=failed, capture=unavailable,type_char@3=hang:50").unwrap(),
            vec![
                Fault {
                    op: "key".into(),
                    nth: Some(2),
                    effect: Effect::Failed
                },
                Fault {
                    op: "capture".into(),
                    nth: None,
                    effect: Effect::Unavailable
                },
                Fault {
                    op: "type_char".into(),
                    nth: Some(3),
                    effect: Effect::Hang(50)
                },
            ]
        );
        assert_eq!(parse("").unwrap(), vec![]);
        for bad in [
            "key",
            "nope=failed",
            "key@0=failed",
            "key@x=failed",
            "key=explode",
            "key=hang:x",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
