//! Engine-level tests of the safety layer where time or the desktop must be controlled:
//! a manual clock for expiry memory and idleness, a driver that presses the hotkey.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cc_desktop::{
    Axis, Button, Capabilities, Driver, DriverError, DriverEvent, ElementHandle, ElementInfo,
    HeldInputs, Layout, Pace, RawNode, SemanticAction, VirtualDesktop, WindowInfo,
};
use cc_protocol::{ErrorCode, Event, Key, PhysicalRect};
use serde_json::{Value, json};

use crate::Engine;
use crate::clock::{ManualClock, SystemClock};
use crate::config::ConfigStack;
use crate::events::Subscription;

fn engine_with(driver: Box<dyn Driver>, clock: Arc<dyn crate::clock::Clock>) -> Engine {
    Engine::with_clock(driver, ConfigStack::new(), clock)
}

fn start(e: &Engine, config: Value) {
    let env = e.start(&config);
    assert!(env.ok, "{env:?}");
}

fn result(env: &cc_protocol::Envelope) -> Value {
    env.result.clone().unwrap_or(Value::Null)
}

fn code(env: &cc_protocol::Envelope) -> Option<ErrorCode> {
    env.error_code()
}

/// Waits (real time) for an event of this type.
fn wait_for(sub: &Subscription, seen: &mut Vec<Event>, kind: &str) -> Event {
    if let Some(e) = seen.iter().find(|e| e.kind == kind) {
        return e.clone();
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(e) = sub.rx.recv_timeout(Duration::from_millis(20)) {
            let e = e.to_event();
            seen.push(e.clone());
            if e.kind == kind {
                return e;
            }
        }
    }
    panic!(
        "no {kind} event; got {:?}",
        seen.iter().map(|e| &e.kind).collect::<Vec<_>>()
    );
}

/// Collects events for a while (real time).
fn drain(sub: &Subscription, seen: &mut Vec<Event>, d: Duration) {
    let deadline = Instant::now() + d;
    while Instant::now() < deadline {
        if let Ok(e) = sub.rx.recv_timeout(Duration::from_millis(5)) {
            seen.push(e.to_event());
        }
    }
}

fn count(seen: &[Event], kind: &str) -> usize {
    seen.iter().filter(|e| e.kind == kind).count()
}

fn state(e: &Engine) -> Value {
    result(&e.status())["state"].clone()
}

fn confirm(e: &Engine, id: &str, approve: bool) -> cc_protocol::Envelope {
    e.confirm(&json!({"request_id": id, "approve": approve}))
}

/// §5.3.4: an expired id answers `confirmation_expired` for 300 s, then
/// `confirmation_not_found`.
#[test]
fn expired_ids_are_remembered_for_300_s() {
    let clock = Arc::new(ManualClock::new());
    let e = engine_with(Box::new(VirtualDesktop::default()), clock.clone());
    let (_, sub) = e.subscribe(1024, None);
    let mut seen = Vec::new();
    start(&e, json!({"safety": {"confirm_timeout_s": 30}}));
    let env = e.call_tool("keyboard.combo", &json!({"keys": ["win", "r"]}));
    let id = result(&env)["request_id"].as_str().unwrap().to_string();
    // Real time passes, the manual clock does not: still pending.
    drain(&sub, &mut seen, Duration::from_millis(60));
    assert_eq!(state(&e), "confirming");
    clock.advance(Duration::from_secs(29));
    drain(&sub, &mut seen, Duration::from_millis(60));
    assert_eq!(count(&seen, "safety.confirmation_expired"), 0);
    clock.advance(Duration::from_secs(1));
    let expired = wait_for(&sub, &mut seen, "safety.confirmation_expired");
    assert_eq!(expired.payload, json!({"request_id": id}));
    assert_eq!(state(&e), "ready");
    assert_eq!(
        code(&confirm(&e, &id, true)),
        Some(ErrorCode::ConfirmationExpired)
    );
    clock.advance(Duration::from_secs(299));
    assert_eq!(
        code(&confirm(&e, &id, false)),
        Some(ErrorCode::ConfirmationExpired)
    );
    clock.advance(Duration::from_secs(1));
    assert_eq!(
        code(&confirm(&e, &id, true)),
        Some(ErrorCode::ConfirmationNotFound)
    );
    assert_eq!(count(&seen, "safety.confirmation_resolved"), 0);
}

/// §5.3.4: an answer that comes after the deadline, before any tick noticed it, is
/// still `confirmation_expired` (the answer path expires first, under the same lock).
#[test]
fn an_answer_after_the_deadline_is_expired_even_before_a_tick() {
    let clock = Arc::new(ManualClock::new());
    let e = engine_with(Box::new(VirtualDesktop::default()), clock.clone());
    start(&e, json!({"safety": {"confirm_timeout_s": 5}}));
    let env = e.call_tool("keyboard.press", &json!({"key": "win"}));
    let id = result(&env)["request_id"].as_str().unwrap().to_string();
    clock.advance(Duration::from_secs(5));
    assert_eq!(
        code(&confirm(&e, &id, true)),
        Some(ErrorCode::ConfirmationExpired)
    );
}

/// §5.5: idle once after the timeout, standby refuses, resume; a pending confirmation
/// holds the watchdog off however long it waits.
#[test]
fn idle_watchdog_on_a_manual_clock() {
    let clock = Arc::new(ManualClock::new());
    let e = engine_with(Box::new(VirtualDesktop::default()), clock.clone());
    let (_, sub) = e.subscribe(1024, None);
    let mut seen = Vec::new();
    start(
        &e,
        json!({"safety": {"idle_timeout_s": 10, "confirm_timeout_s": 100}}),
    );
    clock.advance(Duration::from_secs(9));
    drain(&sub, &mut seen, Duration::from_millis(60));
    assert_eq!(count(&seen, "session.idle"), 0);
    // An action resets the idle time.
    assert!(e.call_tool("pointer.move", &json!({"x": 1, "y": 1})).ok);
    clock.advance(Duration::from_secs(9));
    drain(&sub, &mut seen, Duration::from_millis(60));
    assert_eq!(count(&seen, "session.idle"), 0);
    // A pending confirmation holds it off, for longer than the idle timeout.
    let env = e.call_tool("keyboard.press", &json!({"key": "win"}));
    let id = result(&env)["request_id"].as_str().unwrap().to_string();
    clock.advance(Duration::from_secs(50));
    drain(&sub, &mut seen, Duration::from_millis(60));
    assert_eq!(count(&seen, "session.idle"), 0);
    assert_eq!(state(&e), "confirming");
    assert!(confirm(&e, &id, false).ok);
    clock.advance(Duration::from_secs(10));
    let idle = wait_for(&sub, &mut seen, "session.idle");
    assert_eq!(idle.payload, json!({"after_s": 10.0}));
    assert_eq!(state(&e), "standby");
    assert_eq!(
        code(&e.call_tool("pointer.move", &json!({"x": 1, "y": 1}))),
        Some(ErrorCode::SafetyStandby)
    );
    clock.advance(Duration::from_secs(100));
    drain(&sub, &mut seen, Duration::from_millis(60));
    assert_eq!(count(&seen, "session.idle"), 1, "emitted once");
    let r = e.resume();
    assert_eq!(result(&r)["state"], "ready");
    let resumed = wait_for(&sub, &mut seen, "session.resumed");
    assert_eq!(resumed.payload, json!({"from": "standby"}));
    assert!(e.call_tool("pointer.move", &json!({"x": 2, "y": 2})).ok);
}

/// A virtual desktop whose emergency hotkey the test presses, and whose captures the
/// test may hold (to keep the worker busy at a known point).
struct HotkeyDesk {
    inner: VirtualDesktop,
    presses: Arc<AtomicUsize>,
    /// The hotkey the engine asked for.
    grabbed: Grabbed,
    /// `(entered, release)`: a capture says it started, then waits to be released.
    hold: Option<(std::sync::mpsc::Sender<()>, std::sync::mpsc::Receiver<()>)>,
    /// The focused element cannot be inspected (a driver failure).
    focus_unreadable: bool,
    /// This many reads of the accessibility tree come back empty (an element that
    /// appears later).
    hidden_trees: usize,
}

impl Driver for HotkeyDesk {
    fn platform(&self) -> &'static str {
        self.inner.platform()
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            hotkey: true,
            ..self.inner.capabilities()
        }
    }
    fn layout(&mut self) -> Result<Layout, DriverError> {
        self.inner.layout()
    }
    fn capture(&mut self, rect: PhysicalRect) -> Result<cc_desktop::RgbImage, DriverError> {
        if let Some((entered, release)) = &self.hold {
            let _ = entered.send(());
            let _ = release.recv_timeout(Duration::from_secs(10));
        }
        self.inner.capture(rect)
    }
    fn pointer_position(&mut self) -> Result<(i32, i32), DriverError> {
        self.inner.pointer_position()
    }
    fn pointer_move(&mut self, x: i32, y: i32) -> Result<(), DriverError> {
        self.inner.pointer_move(x, y)
    }
    fn button(&mut self, button: Button, down: bool) -> Result<(), DriverError> {
        self.inner.button(button, down)
    }
    fn scroll(&mut self, axis: Axis, positive: bool) -> Result<(), DriverError> {
        self.inner.scroll(axis, positive)
    }
    fn key(&mut self, key: Key, down: bool) -> Result<(), DriverError> {
        self.inner.key(key, down)
    }
    fn type_char(&mut self, c: char) -> Result<(), DriverError> {
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
        self.inner.windows()
    }
    fn window_at(&mut self, x: i32, y: i32) -> Result<Option<WindowInfo>, DriverError> {
        self.inner.window_at(x, y)
    }
    fn focus_window(&mut self, id: u64) -> Result<(), DriverError> {
        self.inner.focus_window(id)
    }
    fn focused_is_password(&mut self) -> Result<bool, DriverError> {
        if self.focus_unreadable {
            return Err(DriverError::Failed("no focus information".into()));
        }
        self.inner.focused_is_password()
    }
    fn a11y_tree(&mut self, w: Option<u64>, max: usize) -> Result<Vec<RawNode>, DriverError> {
        if self.hidden_trees > 0 {
            self.hidden_trees -= 1;
            return Ok(Vec::new());
        }
        self.inner.a11y_tree(w, max)
    }
    fn a11y_element(&mut self, h: &ElementHandle) -> Result<Option<ElementInfo>, DriverError> {
        self.inner.a11y_element(h)
    }
    fn a11y_perform(&mut self, h: &ElementHandle, a: SemanticAction) -> Result<(), DriverError> {
        self.inner.a11y_perform(h, a)
    }
    fn a11y_set_text(&mut self, h: &ElementHandle, text: &str) -> Result<(), DriverError> {
        self.inner.a11y_set_text(h, text)
    }
    fn set_hotkey(&mut self, keys: &[Key]) -> Result<(), DriverError> {
        *self.grabbed.lock().unwrap() = keys.iter().map(Key::name).collect();
        Ok(())
    }
    fn poll_events(&mut self) -> Vec<DriverEvent> {
        let mut events = self.inner.poll_events();
        let n = self.presses.swap(0, Ordering::SeqCst);
        events.extend(std::iter::repeat_n(DriverEvent::Hotkey, n));
        events
    }
}

type Grabbed = Arc<std::sync::Mutex<Vec<String>>>;

fn hotkey_engine() -> (Engine, Arc<AtomicUsize>, Grabbed) {
    let presses = Arc::new(AtomicUsize::new(0));
    let grabbed = Grabbed::default();
    let desk = HotkeyDesk {
        inner: VirtualDesktop::default(),
        presses: presses.clone(),
        grabbed: grabbed.clone(),
        hold: None,
        focus_unreadable: false,
        hidden_trees: 0,
    };
    let e = engine_with(Box::new(desk), Arc::new(SystemClock));
    (e, presses, grabbed)
}

/// §5.3.3: an approved action that the re-gate refuses (a panic came between the
/// approval and its turn on the worker) still reports its outcome, since nobody
/// waits for its response: `action.finished {ok:false, request_id, envelope}`.
#[test]
fn an_approved_action_refused_at_its_turn_reports_action_finished() {
    let (entered_tx, entered) = std::sync::mpsc::channel();
    let (release, release_rx) = std::sync::mpsc::channel();
    let desk = HotkeyDesk {
        inner: VirtualDesktop::default(),
        presses: Arc::default(),
        grabbed: Grabbed::default(),
        hold: Some((entered_tx, release_rx)),
        focus_unreadable: false,
        hidden_trees: 0,
    };
    let e = engine_with(Box::new(desk), Arc::new(SystemClock));
    let (_, sub) = e.subscribe(1024, None);
    let mut seen = Vec::new();
    start(&e, json!({"safety": {"observe_while_confirming": true}}));
    let env = e.call_tool("keyboard.combo", &json!({"keys": ["win", "r"]}));
    let id = result(&env)["request_id"].as_str().unwrap().to_string();
    // An observation occupies the worker (held inside the capture)...
    let e2 = e.clone();
    let capture = std::thread::spawn(move || e2.call_tool("screen.capture", &json!({})));
    entered.recv_timeout(Duration::from_secs(10)).unwrap();
    // ...while the approval queues the action and a panic comes before its turn.
    assert!(confirm(&e, &id, true).ok);
    assert!(e.panic(&json!({"on": true})).ok);
    release.send(()).unwrap();
    assert!(capture.join().unwrap().ok);
    let fin = loop {
        let ev = wait_for(&sub, &mut seen, "action.finished");
        if ev.payload["request_id"] == id.as_str() {
            break ev;
        }
        seen.retain(|e| e.seq != ev.seq);
    };
    assert_eq!(fin.payload["ok"], false, "{:?}", fin.payload);
    assert_eq!(fin.payload["error_code"], "safety_stopped");
    assert_eq!(fin.payload["envelope"]["error"]["code"], "safety_stopped");
    assert!(
        !seen
            .iter()
            .any(|e| e.kind == "action.started" && e.payload["request_id"] == id.as_str()),
        "it never started"
    );
}

/// §5.4: the hotkey engages the stop, from standby too, and pressed again releases
/// nothing: a chord is input an agent can synthesize, so only the operator channel
/// releases (here `control.panic {on:false}`, as a stdio host or the operator sends it).
#[test]
fn the_hotkey_engages_the_stop_and_never_releases_it() {
    let (e, presses, grabbed) = hotkey_engine();
    let (_, sub) = e.subscribe(1024, None);
    let mut seen = Vec::new();
    start(&e, json!({"safety": {"idle_timeout_s": 0.2}}));
    // The configured hotkey was handed to the driver.
    assert_eq!(*grabbed.lock().unwrap(), ["ctrl", "alt", "f12"]);
    let idle = wait_for(&sub, &mut seen, "session.idle");
    assert_eq!(idle.payload["after_s"], 0.2);
    assert_eq!(state(&e), "standby");
    e.configure(&json!({"safety": {"idle_timeout_s": 0}}));
    // In standby the chord stops; it does not resume.
    presses.fetch_add(1, Ordering::SeqCst);
    let t = wait_for(&sub, &mut seen, "safety.panic_triggered");
    assert_eq!(t.payload, json!({"source": "hotkey"}));
    assert_eq!(state(&e), "stopped");
    assert_eq!(count(&seen, "session.resumed"), 0);
    assert_eq!(
        code(&e.call_tool("pointer.move", &json!({"x": 1, "y": 1}))),
        Some(ErrorCode::SafetyStopped)
    );
    // Pressed again (and again), the stop holds.
    presses.fetch_add(2, Ordering::SeqCst);
    let deadline = Instant::now() + Duration::from_secs(2);
    while presses.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        let _ = e.status();
    }
    std::thread::sleep(Duration::from_millis(100));
    while let Ok(ev) = sub.rx.try_recv() {
        seen.push(ev.to_event());
    }
    assert_eq!(state(&e), "stopped");
    assert_eq!(count(&seen, "safety.panic_released"), 0);
    assert_eq!(count(&seen, "safety.panic_triggered"), 1);
    assert_eq!(
        code(&e.call_tool("pointer.move", &json!({"x": 1, "y": 1}))),
        Some(ErrorCode::SafetyStopped)
    );
    // The operator's release is the one that works.
    assert!(
        e.call_method("control.panic", &json!({"on": false}))
            .is_some_and(|env| env.ok)
    );
    let r = wait_for(&sub, &mut seen, "safety.panic_released");
    assert_eq!(r.payload, json!({"source": "protocol"}));
    assert_eq!(state(&e), "ready");
    assert!(e.call_tool("pointer.move", &json!({"x": 1, "y": 1})).ok);
}

/// §5.4: the hotkey pre-empts the action in flight (it is polled between injection
/// steps, not only between actions), and nothing stays held.
#[test]
fn the_hotkey_interrupts_an_action_in_flight() {
    let (e, presses, _) = hotkey_engine();
    start(&e, json!({}));
    let e2 = e.clone();
    let typing = std::thread::spawn(move || {
        e2.call_tool(
            "keyboard.type",
            &json!({"text": "x".repeat(5000), "interval_ms": 1}),
        )
    });
    std::thread::sleep(Duration::from_millis(150));
    let pressed = Instant::now();
    presses.fetch_add(1, Ordering::SeqCst);
    let env = typing.join().unwrap();
    let took = pressed.elapsed();
    assert_eq!(code(&env), Some(ErrorCode::SafetyStopped), "{env:?}");
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert_eq!(state(&e), "stopped");
    let held = result(&e.status())["held"].clone();
    assert_eq!(held, json!({"keys": [], "buttons": []}));
}

/// §5.4: the hotkey also pre-empts an action that only waits (`wait.pause`, a long
/// `hold_ms`): the wait polls the desktop between its slices.
#[test]
fn the_hotkey_interrupts_a_pure_wait() {
    let (e, presses, _) = hotkey_engine();
    start(&e, json!({}));
    let e2 = e.clone();
    let waiting = std::thread::spawn(move || e2.call_tool("wait.pause", &json!({"ms": 20_000})));
    std::thread::sleep(Duration::from_millis(150));
    presses.fetch_add(1, Ordering::SeqCst);
    let env = waiting.join().unwrap();
    assert_eq!(code(&env), Some(ErrorCode::SafetyStopped), "{env:?}");
    assert_eq!(state(&e), "stopped");
}

/// §5.4: while the panic file exists, nothing releases the stop but its removal.
#[test]
fn the_panic_file_holds_the_stop_until_removed() {
    let dir = std::env::temp_dir().join(format!("cc-engine-panic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("STOP");
    let _ = std::fs::remove_file(&file);
    let e = engine_with(Box::new(VirtualDesktop::default()), Arc::new(SystemClock));
    let (_, sub) = e.subscribe(1024, None);
    let mut seen = Vec::new();
    std::fs::write(&file, b"stop").unwrap();
    start(
        &e,
        json!({"safety": {"panic_file": file.to_str().unwrap()}}),
    );
    // Stopped from the first moment, before the watcher's first look.
    assert_eq!(state(&e), "stopped");
    let t = wait_for(&sub, &mut seen, "safety.panic_triggered");
    assert_eq!(t.payload, json!({"source": "file"}));
    let r = e.panic(&json!({"on": false}));
    assert_eq!(result(&r)["state"], "stopped", "{r:?}");
    assert_eq!(result(&r)["panic"], true);
    assert_eq!(result(&e.resume())["state"], "stopped");
    assert_eq!(count(&seen, "safety.panic_released"), 0);
    std::fs::remove_file(&file).unwrap();
    let rel = wait_for(&sub, &mut seen, "safety.panic_released");
    assert_eq!(rel.payload, json!({"source": "file"}));
    assert_eq!(state(&e), "ready");
    let _ = std::fs::remove_dir_all(&dir);
}

/// §10 for concurrent transports: actions waiting for the worker when `session.stop`
/// comes are refused at once; the one in flight runs to its end.
#[test]
fn stop_refuses_queued_actions_at_once() {
    let e = engine_with(Box::new(VirtualDesktop::default()), Arc::new(SystemClock));
    start(&e, json!({}));
    let e1 = e.clone();
    let running = std::thread::spawn(move || e1.call_tool("wait.pause", &json!({"ms": 700})));
    std::thread::sleep(Duration::from_millis(100));
    let queued: Vec<_> = (0..3)
        .map(|i| {
            let e2 = e.clone();
            std::thread::spawn(move || {
                let t = Instant::now();
                (e2.call_tool("pointer.move", &json!({"x": i, "y": i})), t)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    let e3 = e.clone();
    let stop = std::thread::spawn(move || e3.stop());
    for q in queued {
        let (env, t) = q.join().unwrap();
        assert_eq!(code(&env), Some(ErrorCode::SafetyStopped), "{env:?}");
        assert!(
            t.elapsed() < Duration::from_millis(450),
            "not at once: {:?}",
            t.elapsed()
        );
    }
    let env = running.join().unwrap();
    assert!(env.ok, "the action in flight was cut: {env:?}");
    assert_eq!(result(&env)["waited_ms"], 700);
    assert!(stop.join().unwrap().ok);
    assert_eq!(state(&e), "idle");
}

/// A call prepared as a transport prepares it, then judged ([`Engine::assess`]).
fn judged(
    e: &Engine,
    tool: &str,
    args: &Value,
    declared: crate::assess::Declared,
) -> Result<crate::assess::Assessment, cc_protocol::ToolError> {
    e.prepare(tool, args).and_then(|c| e.assess(&c, declared))
}

/// The governed kernel's read-only question (`Engine::assess`, its `secret_target`):
/// does a text-entry action write into a password field. The focused element and the
/// latest snapshot's nodes answer it; asking replaces nothing, and what cannot be told
/// (arguments that do not validate included) is `None`.
fn secret(e: &Engine, tool: &str, args: &Value) -> Option<bool> {
    let a = judged(e, tool, args, crate::assess::Declared::default()).ok()?;
    a.items.first()?.secret_target
}

#[test]
fn the_password_query_reads_the_desktop_without_replacing_the_snapshot() {
    fn node<'a>(n: &'a Value, name: &str) -> Option<&'a Value> {
        if n["role"] == "edit" && n["name"] == name {
            return Some(n);
        }
        n["children"].as_array()?.iter().find_map(|c| node(c, name))
    }
    let e = engine_with(Box::new(VirtualDesktop::default()), Arc::new(SystemClock));
    start(&e, json!({}));
    let snap = result(&e.call_tool("a11y.snapshot", &json!({"level": "full"})));
    let id = snap["snapshot_id"].clone();
    let password = node(&snap["tree"], "Password").unwrap().clone();
    let name = node(&snap["tree"], "Name").unwrap()["id"].clone();
    let r = &password["rect"];
    let centre = |a: usize, b: usize| (r[a].as_i64().unwrap() + r[b].as_i64().unwrap()) / 2;
    let typed = json!({"text": "x"});
    assert_eq!(secret(&e, "keyboard.type", &typed), Some(false));
    let click = json!({"x": centre(0, 2), "y": centre(1, 3)});
    assert!(e.call_tool("pointer.click", &click).ok);
    assert_eq!(secret(&e, "keyboard.type", &typed), Some(true));
    let input = |node_id: &Value| json!({"snapshot_id": id, "node_id": node_id, "text": "x"});
    assert_eq!(
        secret(&e, "a11y.input", &input(&password["id"])),
        Some(true)
    );
    assert_eq!(secret(&e, "a11y.input", &input(&name)), Some(false));
    // Not text entry, a node the snapshot lacks, arguments without a node: unknown.
    assert_eq!(secret(&e, "pointer.click", &click), None);
    assert_eq!(secret(&e, "a11y.input", &input(&json!(99_999))), None);
    assert_eq!(secret(&e, "a11y.input", &typed), None);
    // The snapshot is still the latest: its node ids still act.
    assert!(e.call_tool("a11y.input", &input(&name)).ok);
    // A newer snapshot makes the old one unknown, not "not a password field".
    assert!(e.call_tool("a11y.snapshot", &json!({})).ok);
    assert_eq!(secret(&e, "a11y.input", &input(&password["id"])), None);
    // A driver that cannot read the focus: unknown.
    let desk = HotkeyDesk {
        inner: VirtualDesktop::default(),
        presses: Arc::default(),
        grabbed: Grabbed::default(),
        hold: None,
        focus_unreadable: true,
        hidden_trees: 0,
    };
    let blind = engine_with(Box::new(desk), Arc::new(SystemClock));
    start(&blind, json!({}));
    assert_eq!(secret(&blind, "keyboard.type", &typed), None);

    // A worker that does not answer (held inside a capture): unknown, rather than
    // holding the caller (the governed kernel holds its journal while it previews).
    let (entered_tx, entered) = std::sync::mpsc::channel();
    let (release, release_rx) = std::sync::mpsc::channel();
    let desk = HotkeyDesk {
        inner: VirtualDesktop::default(),
        presses: Arc::default(),
        grabbed: Grabbed::default(),
        hold: Some((entered_tx, release_rx)),
        focus_unreadable: false,
        hidden_trees: 0,
    };
    let busy = engine_with(Box::new(desk), Arc::new(SystemClock));
    start(&busy, json!({}));
    let b2 = busy.clone();
    let capture = std::thread::spawn(move || b2.call_tool("screen.capture", &json!({})));
    entered.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(secret(&busy, "keyboard.type", &typed), None);
    release.send(()).unwrap();
    assert!(capture.join().unwrap().ok);
    // The question left behind is answered into the void; the worker goes on.
    assert_eq!(secret(&busy, "keyboard.type", &typed), Some(false));
}

/// Rules compile when the config is validated: a pattern that does not compile refuses
/// the whole `session.configure` as `invalid_config` (nothing applied), instead of
/// becoming a deny rule that matches nothing; the rules before it keep applying.
#[test]
fn a_rule_that_does_not_compile_is_invalid_config_and_changes_nothing() {
    let e = engine_with(Box::new(VirtualDesktop::default()), Arc::new(SystemClock));
    start(
        &e,
        json!({"safety": {"rules": [{"match": {"tool": "wait.pause"}, "effect": "deny"}]}}),
    );
    for bad in [
        json!({"tool": "pointer.*", "argument": {"name": "x", "matcher": "regex", "value": "(("}}),
        json!({"tool": "pointer.{", "argument": {"name": "x", "matcher": "equals", "value": 1}}),
        json!({"tool": "*", "window": {"app": "[a"}}),
    ] {
        let patch = json!({"safety": {"rules": [{"match": bad, "effect": "deny"}]}});
        let env = e.configure(&json!({ "patch": patch }));
        assert_eq!(code(&env), Some(ErrorCode::InvalidConfig), "{env:?}");
        let issues = &env.error.as_ref().unwrap().data.as_ref().unwrap()["issues"];
        assert!(
            issues[0]["path"]
                .as_str()
                .unwrap()
                .starts_with("safety.rules[0].match."),
            "{issues}"
        );
    }
    // The rule set before the refused patches still stands: wait.pause is denied,
    // everything else is not.
    let denied = e.call_tool("wait.pause", &json!({"ms": 0}));
    assert_eq!(code(&denied), Some(ErrorCode::PolicyDenied), "{denied:?}");
    assert!(e.call_tool("pointer.move", &json!({"x": 1, "y": 1})).ok);
}

/// `Engine::assess` judges as the gate would, without acting: before a session (the
/// base config, the layout read for the occasion), under the live config after
/// `session.configure`, per item for a batch; unknown tools and bad arguments are
/// refused as `tools.call` refuses them.
#[test]
fn assess_judges_like_the_gate_without_acting() {
    use crate::assess::Declared;
    use crate::assess::Outcome;
    let mut base = ConfigStack::new();
    let region = json!({"safety": {"rules": [
        {"match": {"tool": "pointer.move", "argument": {"name": "x", "matcher": "in_region",
                   "value": {"x": 0, "y": 0, "width": 1, "height": 1}}}, "effect": "deny"}
    ]}});
    base.apply(&region).unwrap();
    let e = Engine::with_clock(
        Box::new(VirtualDesktop::default()),
        base,
        Arc::new(SystemClock),
    );
    let none = Declared::default();
    let unknown = judged(&e, "pointer.teleport", &json!({}), none).unwrap_err();
    assert_eq!(unknown.code, ErrorCode::UnknownTool);
    let bad = judged(&e, "pointer.click", &json!({"x": 1}), none).unwrap_err();
    assert_eq!(bad.code, ErrorCode::InvalidArguments);
    assert_eq!(bad.data.unwrap()["issues"][0]["path"], "y");
    // No session yet: the base config, and the points read on a canvas of the moment.
    let before = judged(&e, "pointer.click", &json!({"x": 5, "y": 7}), none).unwrap();
    assert!(
        matches!(before.outcome, Outcome::Allow { .. }),
        "{before:?}"
    );
    assert_eq!(before.items[0].landing.points, vec![(5, 7)]);
    let corner = judged(&e, "pointer.move", &json!({"x": 0, "y": 0}), none).unwrap();
    assert!(matches!(corner.outcome, Outcome::Deny { .. }), "{corner:?}");
    assert_eq!(state(&e), "idle", "assessing starts nothing");
    start(&e, json!({}));
    // No rule asks where an action lands (the built-in console rule lifted): the
    // desktop is not asked either.
    assert!(
        e.configure(&json!({"patch": {"safety": {"rules": [], "protect_console": false}}}))
            .ok
    );
    let unasked = judged(&e, "pointer.click", &json!({"x": 5, "y": 7}), none).unwrap();
    assert!(unasked.items[0].landing.points.is_empty());
    let patch = json!({"safety": {"rules": [
        {"match": {"tool": "pointer.click", "argument": {"name": "x", "matcher": "in_region",
                   "value": {"x": 0, "y": 0, "width": 10, "height": 10}}}, "effect": "confirm"}
    ]}});
    assert!(e.configure(&json!({ "patch": patch })).ok);
    let inside = judged(&e, "pointer.click", &json!({"x": 5, "y": 7}), none).unwrap();
    assert!(
        matches!(inside.outcome, Outcome::Confirm { .. }),
        "{inside:?}"
    );
    let outside = judged(&e, "pointer.click", &json!({"x": 50, "y": 7}), none).unwrap();
    assert!(
        matches!(outside.outcome, Outcome::Allow { .. }),
        "{outside:?}"
    );
    let batch = json!({"items": [
        {"tool": "pointer.click", "arguments": {"x": 50, "y": 50}},
        {"tool": "pointer.click", "arguments": {"x": 1, "y": 1}}
    ]});
    let b = judged(&e, "tools.nope", &batch, none)
        .map(|_| ())
        .unwrap_err();
    assert_eq!(b.code, ErrorCode::UnknownTool);
    let b = judged(&e, "batch.execute", &batch, none).unwrap();
    assert_eq!(b.items.len(), 2);
    assert_eq!(b.verdict.confirm, Some(0));
    assert!(matches!(b.outcome, Outcome::Confirm { .. }));
    // Nothing was parked or run.
    assert!(result(&e.status())["pending_confirmation"].is_null());
    assert_eq!(result(&e.status())["action_count"], 0);
}

/// A confirm rule on one batch item parks the whole batch before anything runs, even
/// when another item matches no rule (only allowlist mode asks every item to be listed).
#[test]
fn a_confirm_rule_on_one_item_parks_the_whole_batch() {
    let e = engine_with(Box::new(VirtualDesktop::default()), Arc::new(SystemClock));
    start(
        &e,
        json!({"safety": {"rules": [{"match": {"tool": "pointer.click"}, "effect": "confirm"}]}}),
    );
    let batch = json!({"items": [
        {"tool": "wait.pause", "arguments": {"ms": 0}},
        {"tool": "pointer.click", "arguments": {"x": 1, "y": 1}}
    ]});
    let env = e.call_tool("batch.execute", &batch);
    assert_eq!(result(&env)["status"], "awaiting_confirmation", "{env:?}");
    assert_eq!(result(&e.status())["action_count"], 0, "nothing ran");
}

/// An element that was not there when an action was judged is not acted on when it
/// appears by the time the action runs: the rules never saw where it lands (a console's
/// Approve button rendering between the two must not be clickable that way).
#[test]
fn an_element_that_appears_between_the_gate_and_the_run_is_refused_not_acted_on() {
    let checked = |e: &Engine| {
        let snap = result(&e.call_tool("a11y.snapshot", &json!({})));
        let text = snap.to_string();
        assert!(text.contains("Remember me"), "{text}");
        fn find(n: &Value) -> Option<bool> {
            if n["name"] == "Remember me" {
                return Some(
                    n["states"]
                        .as_array()
                        .is_some_and(|s| s.iter().any(|x| x == "checked")),
                );
            }
            n["children"].as_array()?.iter().find_map(find)
        }
        snap["windows"]
            .as_array()
            .and_then(|ws| ws.iter().find_map(|w| find(&w["tree"])))
            .or_else(|| find(&snap["tree"]))
            .expect("the checkbox")
    };
    for (tool, args) in [
        (
            "pointer.click",
            json!({"element": {"selector": {"role": "checkbox", "name": "Remember me"}}}),
        ),
        (
            "a11y.activate",
            json!({"selector": {"role": "checkbox", "name": "Remember me"}}),
        ),
    ] {
        let desk = HotkeyDesk {
            inner: VirtualDesktop::default(),
            presses: Arc::default(),
            grabbed: Grabbed::default(),
            hold: None,
            focus_unreadable: false,
            // The gate's read finds nothing; the run's finds the checkbox.
            hidden_trees: 1,
        };
        let e = engine_with(Box::new(desk), Arc::new(SystemClock));
        start(&e, json!({}));
        let pointer = result(&e.call_tool("pointer.position", &json!({})));
        let env = e.call_tool(tool, &args);
        assert_eq!(code(&env), Some(ErrorCode::StaleElement), "{tool}: {env:?}");
        assert!(!checked(&e), "{tool} acted");
        assert_eq!(
            result(&e.call_tool("pointer.position", &json!({}))),
            pointer,
            "{tool} moved the pointer"
        );
        // Sent again, judged with the element there: it acts.
        let env = e.call_tool(tool, &args);
        assert!(env.ok, "{tool}: {env:?}");
        assert!(checked(&e), "{tool} did not act");
    }
}

/// §5.4: the server's own hotkey (its config file's) is handed to the driver when the
/// server starts, not at the first `session.start`; a session's own chord replaces it
/// while the session runs, and the server's comes back when the session ends.
#[test]
fn the_servers_hotkey_is_held_from_its_start_and_after_each_session() {
    let grabbed = Grabbed::default();
    let desk = HotkeyDesk {
        inner: VirtualDesktop::default(),
        presses: Arc::default(),
        grabbed: grabbed.clone(),
        hold: None,
        focus_unreadable: false,
        hidden_trees: 0,
    };
    let mut base = ConfigStack::new();
    base.apply(&json!({"safety": {"emergency_hotkey": "ctrl+alt+f11"}}))
        .unwrap();
    let e = Engine::with_clock(Box::new(desk), base, Arc::new(SystemClock));
    assert_eq!(*grabbed.lock().unwrap(), ["ctrl", "alt", "f11"]);
    start(
        &e,
        json!({"config": {"safety": {"emergency_hotkey": "ctrl+alt+f10"}}}),
    );
    assert_eq!(*grabbed.lock().unwrap(), ["ctrl", "alt", "f10"]);
    assert!(e.stop().ok);
    assert_eq!(*grabbed.lock().unwrap(), ["ctrl", "alt", "f11"]);
}

/// §5.3: `safety.confirmation_requested` and `system.status` carry where the action
/// lands as the gate judged it: a point relative to a window placed on the canvas with
/// the window under it, an element a pointer tool aims at with its centre, a batch's
/// items one by one; whether a rule read the windows for the judgement or not.
#[test]
fn the_confirmation_carries_the_landing_the_gate_judged() {
    let confirm_pointer = json!({"match": {"tool": "pointer.*"}, "effect": "confirm"});
    let by_window =
        json!({"match": {"tool": "pointer.*", "window": {"app": "cc-*"}}, "effect": "confirm"});
    for rule in [confirm_pointer, by_window] {
        let e = engine_with(Box::new(VirtualDesktop::default()), Arc::new(SystemClock));
        start(&e, json!({"safety": {"rules": [rule]}}));
        let (_, sub) = e.subscribe(1024, None);
        let windows = result(&e.call_tool("window.list", &json!({})));
        let form = windows["windows"]
            .as_array()
            .and_then(|ws| ws.iter().find(|w| w["app_id"] == "cc-form"))
            .expect("the form")
            .clone();
        let shown = json!({"id": form["id"], "title": form["title"], "app_id": "cc-form"});
        let asked = |args: Value, tool: &str| {
            let env = e.call_tool(tool, &args);
            let r = result(&env);
            assert_eq!(r["status"], "awaiting_confirmation", "{rule}: {env:?}");
            let id = r["request_id"].as_str().unwrap().to_string();
            let mut seen = Vec::new();
            let ev = wait_for(&sub, &mut seen, "safety.confirmation_requested");
            assert_eq!(ev.payload["request_id"], json!(id));
            let status = result(&e.status());
            assert_eq!(
                status["pending_confirmation"]["landing"], ev.payload["landing"],
                "{rule}"
            );
            assert!(confirm(&e, &id, false).ok);
            ev.payload["landing"].clone()
        };
        let (x, y) = (
            form["rect"]["x"].as_i64().unwrap(),
            form["rect"]["y"].as_i64().unwrap(),
        );
        let l = asked(
            json!({"x": 30, "y": 60, "window": form["id"]}),
            "pointer.click",
        );
        assert_eq!(
            l,
            json!({"points": [{"x": x + 30, "y": y + 60, "window": shown}], "window": shown}),
            "{rule}"
        );
        let batch = json!({"items": [
            {"tool": "wait.pause", "arguments": {"ms": 0}},
            {"tool": "pointer.click", "arguments": {"element": {"selector": {"role": "button", "name": "Submit"}}}}
        ]});
        let l = asked(batch, "batch.execute");
        let items = l["items"].as_array().expect("items");
        assert_eq!(items.len(), 2, "{l}");
        // A pause touches no point and lands, like a keyboard tool, on the focused window.
        assert!(
            items[0]["points"].is_null() && items[0]["element"].is_null(),
            "{l}"
        );
        assert!(items[0]["window"]["id"].is_u64(), "{l}");
        let p = &items[1]["points"][0];
        assert_eq!(p["element"]["role"], "button", "{l}");
        assert_eq!(p["element"]["name"], "Submit", "{l}");
        assert!(p["element"]["ref"].is_string(), "{l}");
        assert_eq!(p["window"], shown, "{l}");
        assert_eq!(items[1]["window"], shown, "{l}");
    }
}
