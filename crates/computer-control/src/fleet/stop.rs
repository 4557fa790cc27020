//! Stop-all: the emergency stop engaged on every desk at once, each over its own
//! operator channel (`control.panic {"on": true}`), then each desk asked until it says
//! `stopped` with no key or button held. The desks are stopped concurrently, so one slow
//! or unreachable desk delays no other.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::desk::Desk;

/// How long the plane waits for one desk to confirm it is stopped with nothing held.
pub const CONFIRM_WITHIN: Duration = Duration::from_secs(5);

/// True when a `system.status` result, read after the stop was engaged, shows nothing
/// running and nothing held: `stopped` (a session was open) or `idle` (none was; the
/// stop is the server's and the next session starts `stopped`).
pub fn stopped_clean(status: &Value) -> bool {
    let empty = |k: &str| {
        status
            .pointer(&format!("/held/{k}"))
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
    };
    matches!(
        status.get("state").and_then(Value::as_str),
        Some("stopped" | "idle")
    ) && empty("keys")
        && empty("buttons")
}

/// Stops one desk: `{desk, stopped, held, ms, error}`, `ms` from the start of the
/// stop-all to this desk's confirmation.
async fn stop_one(name: String, desk: Desk, t0: Instant) -> Value {
    match desk.rpc("control.panic", json!({"on": true})).await {
        Ok(r) if r.get("panic") == Some(&Value::Bool(true)) => {}
        Ok(r) => {
            return json!({"desk": name, "stopped": false,
                "error": format!("the desk did not engage its stop: {r}")});
        }
        Err(e) => return json!({"desk": name, "stopped": false, "error": e.to_string()}),
    }
    let deadline = Instant::now() + CONFIRM_WITHIN;
    loop {
        match desk.rpc("system.status", json!({})).await {
            Ok(s) if stopped_clean(&s) => {
                return json!({
                    "desk": name, "stopped": true, "state": s["state"], "held": s["held"],
                    "ms": t0.elapsed().as_secs_f64() * 1000.0,
                });
            }
            Ok(s) if Instant::now() >= deadline => {
                return json!({"desk": name, "stopped": false, "state": s["state"],
                    "held": s["held"], "error": "not stopped with nothing held in time"});
            }
            Err(e) if Instant::now() >= deadline => {
                return json!({"desk": name, "stopped": false, "error": e.to_string()});
            }
            _ => tokio::time::sleep(Duration::from_millis(2)).await,
        }
    }
}

/// Stops every desk: `{all_stopped, ms, desks: [...]}`.
pub async fn stop_all(desks: Vec<(String, Desk)>) -> Value {
    let t0 = Instant::now();
    let tasks: Vec<_> = desks
        .into_iter()
        .map(|(name, desk)| tokio::spawn(stop_one(name, desk, t0)))
        .collect();
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap_or_else(
            |e| json!({"stopped": false, "error": format!("the stop task failed: {e}")}),
        ));
    }
    let all = !out.is_empty() && out.iter().all(|d| d["stopped"] == json!(true));
    json!({
        "all_stopped": all,
        "ms": t0.elapsed().as_secs_f64() * 1000.0,
        "desks": out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopped_means_nothing_held() {
        let held = |k: Value| json!({"state": "stopped", "held": {"keys": k, "buttons": []}});
        assert!(stopped_clean(&held(json!([]))));
        assert!(!stopped_clean(&held(json!(["shift"]))));
        assert!(!stopped_clean(
            &json!({"state": "running", "held": {"keys": [], "buttons": []}})
        ));
        assert!(!stopped_clean(&json!({"state": "confirming"})));
    }
}
