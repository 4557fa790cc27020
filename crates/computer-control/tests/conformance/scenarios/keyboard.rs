//! The keyboard against a typing oracle: Unicode arrives exactly; a combo's keys are
//! all released (typing after it is plain again, nothing held); a panic in the middle
//! of a long type (the desk's real emergency chord where the suite can press it)
//! answers it `safety_stopped` with an exact prefix typed and nothing held, and
//! likewise a click holding its button (PROTOCOL §5.4).

use std::time::{Duration, Instant};

use serde_json::json;

use super::{assert_nothing_held, can, event};
use crate::common::Server;
use crate::conformance::desk::{Desk, Oracle, serve, wait_until};

/// Waits until `oracle` shows exactly what typing `typed` shows.
fn arrives(s: &mut Server, oracle: &dyn Oracle, typed: &str) {
    let want = oracle.shows(typed);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let got = oracle.received(s);
        if got == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "typed {typed:?}, received {got:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A session whose snapshots carry long values whole (the virtual oracle reads one).
fn session<D: Desk>(desk: &D) -> Server {
    let mut s = serve(desk, "info", None);
    s.start_session(json!({"a11y": {"max_name_len": 4096}}));
    s
}

pub fn unicode_typing<D: Desk>() {
    let mut desk = D::start();
    let mut s = session(&desk);
    if !can(&desk, &mut s, "input") {
        return;
    }
    let oracle = desk.typing_oracle(&mut s);
    let text = "héllo wörld — 世界 🎉 e\u{301} ✓ \"q\" \\ 𝄞 Ω≈ç√\n";
    let r = s.ok("keyboard.type", json!({"text": text}));
    assert_eq!(r["chars"], text.chars().count(), "{r}");
    arrives(&mut s, oracle.as_ref(), text);
}

pub fn key_combos_leave_nothing_held<D: Desk>() {
    let mut desk = D::start();
    let mut s = session(&desk);
    if !can(&desk, &mut s, "input") {
        return;
    }
    let oracle = desk.typing_oracle(&mut s);
    let r = s.ok("keyboard.combo", json!({"keys": "Shift+A"}));
    assert_eq!(r["keys"], json!(["shift", "a"]), "{r}");
    assert_nothing_held(&desk, oracle.as_ref(), &mut s);
    // Nothing is left held after a combo: typing is plain again.
    s.ok("keyboard.type", json!({"text": "b\n"}));
    arrives(&mut s, oracle.as_ref(), "Ab\n");
    assert_nothing_held(&desk, oracle.as_ref(), &mut s);
}

pub fn panic_during_a_long_type_leaves_nothing_held<D: Desk>() {
    let mut desk = D::start();
    let mut s = session(&desk);
    if !can(&desk, &mut s, "input") {
        return;
    }
    let oracle = desk.typing_oracle(&mut s);
    // 9 900 characters: under keyboard.type's limit of 10 000.
    let text = "abcdé世✓ghi\n".repeat(900);
    let whole = oracle.shows(&text);
    let id = s.send(
        "tools.call",
        json!({"tool": "keyboard.type", "arguments": {"text": text, "interval_ms": 1}}),
    );
    if oracle.independent() {
        // A whole line has arrived: the type is under way.
        wait_until("the first typed line", Duration::from_secs(20), || {
            !oracle.received(&mut s).is_empty()
        });
    } else {
        event(&mut s, "action.started", |p| p["tool"] == "keyboard.type");
        std::thread::sleep(Duration::from_millis(300));
    }
    // The desk's own emergency chord where it has one, else the operator's stop.
    let by_chord = desk.capabilities()["hotkey"] == true && desk.press_emergency_chord();
    if !by_chord {
        let panic = s.call("control.panic", json!({"on": true}));
        assert_eq!(panic["result"]["state"], "stopped", "{panic}");
    }
    let typed = s.response(id)["result"].clone();
    assert_eq!(typed["ok"], false, "{typed}");
    assert_eq!(typed["error"]["code"], "safety_stopped", "{typed}");
    if by_chord {
        let stop = event(&mut s, "safety.panic_triggered", |_| true);
        assert_eq!(stop["payload"]["source"], "hotkey", "{stop}");
        assert_eq!(s.status()["state"], "stopped");
    }
    assert_nothing_held(&desk, oracle.as_ref(), &mut s);
    // Released (an oracle read through the server reads only then): what arrived is an
    // exact prefix of the text, and not all of it.
    let released = s.call("control.panic", json!({"on": false}));
    assert_eq!(released["result"]["state"], "ready", "{released}");
    std::thread::sleep(Duration::from_millis(300));
    let got = oracle.received(&mut s);
    assert!(
        !got.is_empty() && got.len() < whole.len(),
        "{} bytes",
        got.len()
    );
    assert!(whole.starts_with(&got), "typed exactly a prefix: {got:?}");
    let fin = event(&mut s, "action.finished", |p| p["tool"] == "keyboard.type");
    assert_eq!(fin["payload"]["error_code"], "safety_stopped", "{fin}");

    // A key is down for moments only; a button held for 10 s is down for sure when the
    // panic comes, and must be up after it.
    let id = s.send(
        "tools.call",
        json!({"tool": "pointer.click", "arguments": {"x": 1420, "y": 795, "hold_ms": 10000}}),
    );
    wait_until("the held button", Duration::from_secs(10), || {
        s.status()["held"]["buttons"] == json!(["left"]) && desk.button_down() != Some(false)
    });
    let panic = s.call("control.panic", json!({"on": true}));
    assert_eq!(panic["result"]["state"], "stopped", "{panic}");
    let held = s.response(id)["result"].clone();
    assert_eq!(held["error"]["code"], "safety_stopped", "{held}");
    assert_nothing_held(&desk, oracle.as_ref(), &mut s);
}
