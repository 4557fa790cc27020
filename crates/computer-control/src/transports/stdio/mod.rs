//! The stdio transport (PROTOCOL §1): one JSON-RPC message per line on stdin, answers
//! and event notifications one per line on stdout, logs only on stderr.

mod lines;
#[cfg(target_os = "linux")]
mod looking;
mod output;
mod turns;

use std::io::{BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use cc_engine::{Answering, Engine, Inline, Looking};

use super::fifo::{self, Fifo};
use super::jsonrpc::{self, INVALID_REQUEST, PARSE_ERROR};
use super::pool::Pool;
use lines::{Line, read_line};
use output::Output;
use turns::{Runner, Turns};

/// Serves until stdin closes; then ends the session (releasing anything held) and
/// waits for answers still owed.
pub fn serve(engine: Engine) -> anyhow::Result<()> {
    #[cfg(target_os = "linux")]
    let stdin = looking::LookingStdin::new()?;
    #[cfg(not(target_os = "linux"))]
    let stdin = std::io::stdin();
    serve_io(engine, stdin, Box::new(std::io::stdout()))
}

/// What the thread holding the input reads and decides, one thread at a time.
struct Input<R> {
    reader: BufReader<R>,
    /// A `session.stop` was read with no `session.start` after it.
    after_stop: bool,
    /// Stdin closed (or failed): every thread ends once the lane is empty.
    eof: bool,
}

/// What the connection's threads share.
struct Conn<'a> {
    engine: &'a Engine,
    writer: Output,
    lane: Fifo,
    pool: Pool,
    /// `session.stop` calls still running: meanwhile an action read after one is
    /// refused at once, as over HTTP, rather than queued behind the action in flight
    /// until the session is gone.
    stops: Arc<AtomicUsize>,
    /// Which thread reads stdin next.
    turns: Arc<Turns>,
}

/// [`serve`] over any reader and writer.
///
/// Two threads take turns (`turns.rs`). The one reading stdin runs a request of the
/// ordered lane that finds the lane idle itself, and the engine runs its action on the
/// same thread when the worker is idle: a lone request passes between none of the
/// server's threads (on an idle machine each hand-off wakes a sleeping CPU). The other
/// thread takes over reading when the request will wait or runs long, so a stop or an
/// approval is never queued behind it.
pub fn serve_io(
    engine: Engine,
    input: impl Read + Send,
    output: Box<dyn Write + Send>,
) -> anyhow::Result<()> {
    // Subscribed before anything is read, so no event of this connection is missed.
    let writer = Output::new(&engine, output);
    let ew = writer.clone();
    // Set once the session has ended: the thread then writes what is queued and exits.
    let ended = Arc::new(AtomicBool::new(false));
    let done = ended.clone();
    let events = std::thread::Builder::new()
        .name("cc-events".into())
        .spawn(
            move || {
                while ew.wait_and_write_events() || !done.load(Ordering::SeqCst) {}
            },
        )?;
    let conn = Conn {
        engine: &engine,
        writer,
        lane: Fifo::new(),
        pool: Pool::new(),
        stops: Arc::new(AtomicUsize::new(0)),
        turns: Arc::new(Turns::default()),
    };
    let input = Mutex::new(Input {
        reader: BufReader::with_capacity(1 << 16, input),
        after_stop: false,
        eof: false,
    });
    std::thread::scope(|s| -> anyhow::Result<()> {
        let other = std::thread::Builder::new()
            .name("cc-stdio".into())
            .spawn_scoped(s, || take_turns(&conn, &input, true))?;
        take_turns(&conn, &input, false);
        let _ = other.join();
        Ok(())
    })?;
    conn.pool.wait_idle();
    let stop = engine.stop();
    if !stop.ok {
        tracing::warn!("session.stop at shutdown failed: {:?}", stop.error);
    }
    // What the stop emitted is queued already (events are emitted before a call
    // returns): the event thread writes it and exits.
    ended.store(true, Ordering::SeqCst);
    let _ = events.join();
    Ok(())
}

/// One of the connection's two threads: reads until a request it must run itself,
/// runs it and whatever queued behind it, then reads again, unless it asked the other
/// thread to read meanwhile (or the other reads already): then it stands by until asked.
/// Ends at end of input with the lane empty.
fn take_turns<R: Read>(conn: &Conn<'_>, input: &Mutex<Input<R>>, mut standby: bool) {
    loop {
        let guard = if standby {
            conn.turns.stand_by();
            Some(input.lock().unwrap_or_else(|p| p.into_inner()))
        } else {
            match input.try_lock() {
                Ok(g) => Some(g),
                Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
                // The other thread reads: stand by rather than queue on the lock, or
                // both would wake each other at every request.
                Err(std::sync::TryLockError::WouldBlock) => None,
            }
        };
        let Some(mut inp) = guard else {
            standby = true;
            continue;
        };
        let first = loop {
            if inp.eof {
                break None;
            }
            match next_ordered(conn, &mut inp) {
                Some(msg) => {
                    if let Some(mine) = conn.lane.enter(msg) {
                        break Some(mine);
                    }
                }
                None => inp.eof = true,
            }
        };
        drop(inp);
        let Some(mut msg) = first else {
            conn.turns.close();
            return;
        };
        let handed = Arc::new(AtomicBool::new(false));
        loop {
            run(conn, &handed, &msg);
            match conn.lane.next_after() {
                Some(next) => msg = next,
                None => break,
            }
        }
        standby = handed.load(Ordering::SeqCst);
    }
}

/// Runs one request of the lane on this thread and writes its answer (unless the
/// worker answered it first: a `timeout`). Only a lone `tools.call` may run its action
/// here and read nothing meanwhile; anything else first asks the other thread to read.
fn run(conn: &Conn<'_>, handed: &Arc<AtomicBool>, msg: &Value) {
    let runner = Arc::new(Runner::new(&conn.turns, handed, &conn.writer, msg));
    let lone_call = msg.get("method").and_then(Value::as_str) == Some("tools.call");
    if !lone_call {
        cc_engine::InlineCaller::hand_over(runner.as_ref());
    }
    let answer = {
        let _answering = Answering::begin();
        // The client may call back to back: the engine's waits look first.
        let _looking = Looking::begin();
        let _inline = lone_call.then(|| Inline::begin(runner.clone()));
        jsonrpc::handle_value(conn.engine, msg)
    };
    // Its events go out either way; the answer only once.
    conn.writer
        .send(runner.claim().then_some(answer).flatten().as_ref());
}

/// Reads until a message for the ordered lane; answers everything else on the way
/// (bad lines, control methods inline, `session.stop` on the pool). `None` at end of
/// input.
fn next_ordered<R: Read>(conn: &Conn<'_>, inp: &mut Input<R>) -> Option<Value> {
    let (engine, writer) = (conn.engine, &conn.writer);
    loop {
        let line = match read_line(&mut inp.reader, super::MAX_MESSAGE) {
            Ok(l) => l,
            Err(e) => {
                tracing::error!("stdin read failed: {e}");
                return None;
            }
        };
        let bytes = match line {
            Line::Eof => return None,
            Line::TooLong => {
                writer.send(Some(
                    &jsonrpc::error(Value::Null, INVALID_REQUEST, "line longer than 10 MiB").into(),
                ));
                continue;
            }
            Line::Text(b) => b,
        };
        let Ok(text) = std::str::from_utf8(&bytes) else {
            writer.send(Some(
                &jsonrpc::error(
                    Value::Null,
                    PARSE_ERROR,
                    "parse error: the line is not valid UTF-8",
                )
                .into(),
            ));
            continue;
        };
        let text = text.trim();
        if text.is_empty() {
            continue; // blank lines are keep-alives, never answered
        }
        let msg: Value = match jsonrpc::parse(text) {
            Ok(v) => v,
            Err(e) => {
                writer.send(Some(&e.response().into()));
                continue;
            }
        };
        let method = msg.get("method").and_then(Value::as_str);
        if jsonrpc::is_control(&msg) {
            let _answering = Answering::begin();
            let resp = jsonrpc::handle_message(engine, &msg);
            writer.send(resp.as_ref());
        } else if method == Some("session.stop") {
            // Queued actions are refused at once, not after the action in flight.
            for refused in conn.lane.refuse_actions(engine) {
                writer.send(Some(&refused));
            }
            inp.after_stop = true;
            conn.stops.fetch_add(1, Ordering::SeqCst);
            let (e, w, n) = (engine.clone(), writer.clone(), conn.stops.clone());
            conn.pool.execute(move || {
                let _answering = Answering::begin();
                let resp = jsonrpc::handle_message(&e, &msg);
                // Done before the answer goes out: what the client sends after reading
                // it meets the session as it now is (none: `not_started`).
                n.fetch_sub(1, Ordering::SeqCst);
                w.send(resp.as_ref());
            });
        } else if let Some(answer) = (inp.after_stop && conn.stops.load(Ordering::SeqCst) > 0)
            .then(|| fifo::refused(engine, &msg))
            .flatten()
        {
            if let Some(a) = answer {
                writer.send(Some(&a));
            }
        } else {
            // A new session's requests wait their turn behind it, as sent.
            inp.after_stop &= method != Some("session.start");
            return Some(msg);
        }
    }
}
