//! The ordered lane of a JSON-RPC connection: requests that must run in the order
//! they were sent wait here. `session.stop` takes the queued actions out and refuses
//! them at once (`safety_stopped`, PROTOCOL §10) instead of letting them wait behind
//! the action in flight.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use cc_engine::Engine;

use super::jsonrpc::Answer;

#[derive(Default)]
struct State {
    queue: VecDeque<Value>,
    /// A thread runs the lane's messages itself ([`Fifo::enter`]).
    running: bool,
}

/// A FIFO of parsed messages, shared by the connection's threads: whoever enters a
/// message into the idle lane runs it and what queues behind it ([`Fifo::enter`]).
#[derive(Clone, Default)]
pub struct Fifo {
    inner: Arc<Mutex<State>>,
}

/// The tool an action request names (`tools.call` or `tools.call_batch`), if it is one.
fn action_tool(msg: &Value) -> Option<String> {
    match msg.get("method").and_then(Value::as_str)? {
        "tools.call" => Some(
            msg.pointer("/params/tool")
                .and_then(Value::as_str)
                .unwrap_or("tools.call")
                .to_string(),
        ),
        "tools.call_batch" => Some(cc_engine::tools::batch().name.to_string()),
        _ => None,
    }
}

impl Fifo {
    /// An open, empty lane.
    pub fn new() -> Fifo {
        Fifo::default()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Gives a message to the lane: returned when the lane is idle, and the caller
    /// then runs it, and after it whatever [`Fifo::next_after`] hands out; else queued
    /// behind the message running.
    pub fn enter(&self, msg: Value) -> Option<Value> {
        let mut g = self.state();
        if g.running || !g.queue.is_empty() {
            g.queue.push_back(msg);
            return None;
        }
        g.running = true;
        Some(msg)
    }

    /// The next message for the caller that [`Fifo::enter`] made the lane's runner;
    /// `None` when nothing waits (the lane is idle again).
    pub fn next_after(&self) -> Option<Value> {
        let mut g = self.state();
        let next = g.queue.pop_front();
        g.running = next.is_some();
        next
    }

    /// Refuses every queued action at once (`session.stop`): returns the responses
    /// owed (notifications get none). Other queued requests keep their place.
    pub fn refuse_actions(&self, engine: &Engine) -> Vec<Answer> {
        let taken: Vec<Value> = {
            let mut g = self.state();
            let (actions, rest): (Vec<Value>, Vec<Value>) =
                g.queue.drain(..).partition(only_actions);
            g.queue = rest.into();
            actions
        };
        taken
            .iter()
            .filter_map(|m| refused(engine, m).flatten())
            .collect()
    }
}

/// True for an action request, or a JSON-RPC batch of nothing but actions: what
/// `session.stop` refuses without running (a batch mixing in other methods keeps its
/// place and runs in order).
fn only_actions(msg: &Value) -> bool {
    match msg {
        Value::Array(items) => !items.is_empty() && items.iter().all(|m| action_tool(m).is_some()),
        one => action_tool(one).is_some(),
    }
}

/// Refuses an action, or a batch of nothing but actions, because `session.stop` came
/// before it ran (PROTOCOL §10: `safety_stopped`, never run). `None` for any other
/// message, which takes its turn; `Some(None)` when nothing is owed (notifications).
pub fn refused(engine: &Engine, msg: &Value) -> Option<Option<Answer>> {
    if !only_actions(msg) {
        return None;
    }
    let one = |m: &Value| {
        let id = m.get("id")?.clone();
        Some(Answer::result(id, engine.refuse_stopping(&action_tool(m)?)))
    };
    Some(match msg {
        Value::Array(items) => {
            let out: Vec<Answer> = items.iter().filter_map(one).collect();
            (!out.is_empty()).then_some(Answer::Batch(out))
        }
        m => one(m),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_to_enter_an_idle_lane_runs_what_comes_after_in_order() {
        let f = Fifo::new();
        assert_eq!(f.enter(json!(1)), Some(json!(1)));
        assert_eq!(f.enter(json!(2)), None);
        assert_eq!(f.enter(json!(3)), None);
        assert_eq!(f.next_after(), Some(json!(2)));
        assert_eq!(f.next_after(), Some(json!(3)));
        assert_eq!(f.next_after(), None);
        // Idle again: the next one runs at once.
        assert_eq!(f.enter(json!(4)), Some(json!(4)));
        assert_eq!(f.next_after(), None);
    }

    #[test]
    fn only_actions_are_taken() {
        let f = Fifo::new();
        let push = |m: Value| f.state().queue.push_back(m);
        push(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools.call", "params": {"tool": "pointer.move"}}),
        );
        push(json!({"jsonrpc": "2.0", "id": 2, "method": "session.start"}));
        push(json!({"jsonrpc": "2.0", "method": "tools.call_batch", "params": {}}));
        push(json!([
            {"jsonrpc": "2.0", "id": 3, "method": "tools.call", "params": {"tool": "wait.pause"}},
            {"jsonrpc": "2.0", "id": 4, "method": "tools.call_batch", "params": {}}
        ]));
        push(json!([
            {"jsonrpc": "2.0", "id": 5, "method": "tools.call", "params": {"tool": "wait.pause"}},
            {"jsonrpc": "2.0", "id": 6, "method": "session.start"}
        ]));
        push(json!([]));
        let actions: Vec<Option<String>> = f.state().queue.iter().map(action_tool).collect();
        assert_eq!(
            actions,
            vec![
                Some("pointer.move".into()),
                None,
                Some("batch.execute".into()),
                None,
                None,
                None
            ]
        );
        let whole: Vec<bool> = f.state().queue.iter().map(only_actions).collect();
        assert_eq!(whole, vec![true, false, true, true, false, false]);
    }
}
