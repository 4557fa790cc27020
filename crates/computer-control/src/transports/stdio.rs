//! The stdio transport (PROTOCOL §1): one JSON-RPC message per line on stdin, answers
//! and event notifications one per line on stdout, logs only on stderr.

use std::io::{BufRead, BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use cc_engine::Engine;
use cc_engine::SharedEvent;

use super::fifo::{self, Fifo};
use super::jsonrpc::{self, INVALID_REQUEST, PARSE_ERROR};
use super::pool::Pool;

/// How often the event thread looks whether the session has ended while no event
/// comes (it blocks on the queue in between).
const EVENT_POLL: Duration = Duration::from_millis(50);

/// The largest accepted line (PROTOCOL §1: 10 MiB, as the HTTP body limit).
pub const MAX_LINE: usize = 10 * 1024 * 1024;

/// Stdout, shared; each message is written and flushed as one whole line.
#[derive(Clone)]
pub struct LineWriter {
    out: Arc<Mutex<Box<dyn Write + Send>>>,
}

impl LineWriter {
    /// Wraps a writer.
    pub fn new(w: Box<dyn Write + Send>) -> Self {
        LineWriter {
            out: Arc::new(Mutex::new(w)),
        }
    }

    /// Writes one message as one line.
    pub fn send(&self, v: &Value) {
        let mut line = match serde_json::to_vec(v) {
            Ok(l) => l,
            Err(e) => {
                tracing::error!("cannot serialize an outgoing message: {e}");
                return;
            }
        };
        line.push(b'\n');
        self.write_lines(&line);
    }

    /// Writes whole lines already serialized (each ending in `\n`), in one write.
    pub fn write_lines(&self, lines: &[u8]) {
        let mut g = self.out.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = g.write_all(lines).and_then(|_| g.flush()) {
            tracing::warn!("stdout write failed: {e}");
        }
    }
}

/// How many queued events one write carries at most.
const EVENTS_PER_WRITE: usize = 64;

/// Appends an event's notification line: the event's JSON as the bus wrote it, inside
/// the JSON-RPC frame, without parsing or serializing it again.
fn event_line(out: &mut Vec<u8>, ev: &SharedEvent) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","method":"event","params":"#);
    out.extend_from_slice(ev.json().as_bytes());
    out.extend_from_slice(b"}\n");
}

/// One line read from the input.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    Text(Vec<u8>),
    TooLong,
    Eof,
}

/// Reads one `\n`-terminated line of at most `max` bytes. A longer line is consumed to
/// its end and reported as `TooLong`, without ever holding more than `max` bytes.
pub fn read_line(r: &mut impl BufRead, max: usize) -> std::io::Result<Line> {
    let mut buf = Vec::new();
    let mut too_long = false;
    loop {
        let available = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if buf.is_empty() {
                Line::Eof
            } else {
                Line::Text(buf)
            });
        }
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        if !too_long {
            if buf.len() + chunk.len() > max {
                too_long = true;
                buf = Vec::new();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        let used = done.unwrap_or(available.len());
        r.consume(used);
        if done.is_some() {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Text(buf)
            });
        }
    }
}

/// Serves until stdin closes; then ends the session (releasing anything held) and
/// waits for answers still owed.
pub fn serve(engine: Engine) -> anyhow::Result<()> {
    serve_io(engine, std::io::stdin(), Box::new(std::io::stdout()))
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
    writer: LineWriter,
    lane: Fifo,
    pool: Pool,
    /// `session.stop` calls still running: meanwhile an action read after one is
    /// refused at once, as over HTTP, rather than queued behind the action in flight
    /// until the session is gone.
    stops: Arc<AtomicUsize>,
}

/// [`serve`] over any reader and writer.
///
/// Two threads take turns. The one holding the input reads; a request of the ordered
/// lane that finds the lane idle is run by the thread that read it, which first hands
/// the input to the other: the answer to a lone request never waits for another
/// thread to wake (on an idle machine that is most of a round trip), and stdin is
/// still read while it runs, so a stop or an approval is never queued behind it.
pub fn serve_io(
    engine: Engine,
    input: impl Read + Send,
    output: Box<dyn Write + Send>,
) -> anyhow::Result<()> {
    let writer = LineWriter::new(output);
    // Subscribe before reading anything so no event of this connection is missed; the
    // queue is large because stdio must not lose events a harness relies on.
    let last = engine.bus_stats().last_seq;
    let (_, sub) = engine.subscribe(65_536, Some(last));
    let ew = writer.clone();
    // Set once the session has ended: the thread then writes what is queued and exits.
    let ended = Arc::new(AtomicBool::new(false));
    let done = ended.clone();
    let events = std::thread::Builder::new()
        .name("cc-events".into())
        .spawn(move || {
            let mut lines = Vec::new();
            loop {
                match sub.rx.recv_timeout(EVENT_POLL) {
                    Ok(ev) => {
                        // What else is queued goes out in the same write.
                        lines.clear();
                        event_line(&mut lines, &ev);
                        for ev in sub.rx.try_iter().take(EVENTS_PER_WRITE - 1) {
                            event_line(&mut lines, &ev);
                        }
                        ew.write_lines(&lines);
                    }
                    Err(RecvTimeoutError::Timeout) if done.load(Ordering::SeqCst) => break,
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            }
        })?;
    let conn = Conn {
        engine: &engine,
        writer,
        lane: Fifo::new(),
        pool: Pool::new(),
        stops: Arc::new(AtomicUsize::new(0)),
    };
    let input = Mutex::new(Input {
        reader: BufReader::with_capacity(1 << 16, input),
        after_stop: false,
        eof: false,
    });
    std::thread::scope(|s| -> anyhow::Result<()> {
        let other = std::thread::Builder::new()
            .name("cc-stdio".into())
            .spawn_scoped(s, || take_turns(&conn, &input))?;
        take_turns(&conn, &input);
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

/// One of the connection's two threads: holds the input until it reads a request it
/// must run itself, then runs it and whatever queued behind it, then waits for the
/// input again. Ends at end of input with the lane empty.
fn take_turns<R: Read>(conn: &Conn<'_>, input: &Mutex<Input<R>>) {
    loop {
        let first = {
            let mut inp = input.lock().unwrap_or_else(|p| p.into_inner());
            loop {
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
            }
        };
        let Some(mut msg) = first else {
            return;
        };
        loop {
            if let Some(r) = jsonrpc::handle_value(conn.engine, &msg) {
                conn.writer.send(&r);
            }
            match conn.lane.next_after() {
                Some(next) => msg = next,
                None => break,
            }
        }
    }
}

/// Reads until a message for the ordered lane; answers everything else on the way
/// (bad lines, control methods inline, `session.stop` on the pool). `None` at end of
/// input.
fn next_ordered<R: Read>(conn: &Conn<'_>, inp: &mut Input<R>) -> Option<Value> {
    let (engine, writer) = (conn.engine, &conn.writer);
    loop {
        let line = match read_line(&mut inp.reader, MAX_LINE) {
            Ok(l) => l,
            Err(e) => {
                tracing::error!("stdin read failed: {e}");
                return None;
            }
        };
        let bytes = match line {
            Line::Eof => return None,
            Line::TooLong => {
                writer.send(&jsonrpc::error(
                    Value::Null,
                    INVALID_REQUEST,
                    "line longer than 10 MiB",
                ));
                continue;
            }
            Line::Text(b) => b,
        };
        let Ok(text) = std::str::from_utf8(&bytes) else {
            writer.send(&jsonrpc::error(
                Value::Null,
                PARSE_ERROR,
                "parse error: the line is not valid UTF-8",
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
                writer.send(&e.response());
                continue;
            }
        };
        let method = msg.get("method").and_then(Value::as_str);
        if jsonrpc::is_control(&msg) {
            if let Some(resp) = jsonrpc::handle_message(engine, &msg) {
                writer.send(&resp);
            }
        } else if method == Some("session.stop") {
            // Queued actions are refused at once, not after the action in flight.
            for refused in conn.lane.refuse_actions(engine) {
                writer.send(&refused);
            }
            inp.after_stop = true;
            conn.stops.fetch_add(1, Ordering::SeqCst);
            let (e, w, n) = (engine.clone(), writer.clone(), conn.stops.clone());
            conn.pool.execute(move || {
                let resp = jsonrpc::handle_message(&e, &msg);
                // Done before the answer goes out: what the client sends after reading
                // it meets the session as it now is (none: `not_started`).
                n.fetch_sub(1, Ordering::SeqCst);
                if let Some(resp) = resp {
                    w.send(&resp);
                }
            });
        } else if let Some(answer) = (inp.after_stop && conn.stops.load(Ordering::SeqCst) > 0)
            .then(|| fifo::refused(engine, &msg))
            .flatten()
        {
            if let Some(a) = answer {
                writer.send(&a);
            }
        } else {
            // A new session's requests wait their turn behind it, as sent.
            inp.after_stop &= method != Some("session.start");
            return Some(msg);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn event_lines_frame_the_bus_json_as_notifications() {
        let bus = cc_engine::EventBus::new(std::sync::Arc::new(cc_engine::clock::SystemClock));
        let (_, sub) = bus.subscribe(8, None);
        bus.emit(
            "action.started",
            serde_json::json!({"tool": "wait.pause", "text": "a\nb"}),
        );
        bus.emit("action.finished", serde_json::json!({"ok": true}));
        let mut lines = Vec::new();
        for ev in sub.rx.try_iter() {
            event_line(&mut lines, &ev);
        }
        let text = String::from_utf8(lines).unwrap();
        let parsed: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(parsed.len(), 2, "{text}");
        assert_eq!(parsed[0]["jsonrpc"], "2.0");
        assert_eq!(parsed[0]["method"], "event");
        assert_eq!(parsed[0]["params"]["type"], "action.started");
        assert_eq!(parsed[0]["params"]["payload"]["text"], "a\nb");
        assert_eq!(parsed[1]["params"]["type"], "action.finished");
        assert_eq!(parsed[1]["params"]["seq"], 2);
    }

    #[test]
    fn reads_lines_and_bounds_long_ones() {
        let mut r = BufReader::with_capacity(4, Cursor::new(b"ab\n0123456789\nxyz".to_vec()));
        assert_eq!(read_line(&mut r, 5).unwrap(), Line::Text(b"ab".to_vec()));
        assert_eq!(read_line(&mut r, 5).unwrap(), Line::TooLong);
        assert_eq!(read_line(&mut r, 5).unwrap(), Line::Text(b"xyz".to_vec()));
        assert_eq!(read_line(&mut r, 5).unwrap(), Line::Eof);
    }
}
