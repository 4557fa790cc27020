//! The CLIPBOARD selection (ICCCM §2), read and owned through a window of our own.
//!
//! Reading asks the owner for `TARGETS`, then for `UTF8_STRING` (else `STRING`), into a
//! property of our window, and waits for its `SelectionNotify` for at most
//! [`WAIT`]. An owner that sends its data incrementally (`INCR`, what toolkits do above
//! about a quarter of the server's request size) is refused as too large, not read in
//! part. An owner that offers `x-kde-passwordManagerHint` with the value `secret` (the
//! convention of KeePassXC and Plasma's clipboard for copied passwords) is reported as
//! secret and its text is not read. GTK itself never puts a password entry's text on
//! the clipboard (copy and cut do nothing in an entry whose text is hidden), which is
//! what the rest relies on.
//!
//! Writing makes our window the owner; the driver's event polling answers
//! `SelectionRequest`s (`TARGETS`, `TIMESTAMP`, `UTF8_STRING`, `TEXT`, `STRING`) until
//! another client takes the selection (`SelectionClear`). Like any X client's, what
//! we own is gone when the driver disconnects (no clipboard manager keeps it).

use std::time::{Duration, Instant};

use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ConnectionExt as _, CreateWindowAux, EventMask, PropMode,
    SELECTION_NOTIFY_EVENT, SelectionNotifyEvent, SelectionRequestEvent, Timestamp, Window,
    WindowClass,
};
use x11rb::wrapper::ConnectionExt as _;

use cc_desktop::{ClipboardContent, DriverError};

use crate::connection::{Conn, cerr, xerr};

x11rb::atom_manager! {
    /// The selection atoms.
    pub(super) ClipAtoms: ClipAtomsCookie {
        CLIPBOARD,
        TARGETS,
        TIMESTAMP,
        TEXT,
        INCR,
        UTF8_STRING,
        CC_CLIPBOARD_DATA,
        PASSWORD_HINT: b"x-kde-passwordManagerHint",
    }
}

/// How long an owner has to answer.
const WAIT: Duration = Duration::from_secs(2);

/// The owner reported for text this driver put there.
const SELF_OWNER: &str = "computer-control";

/// The most a reply may carry, in 32-bit units (16 MiB).
const MAX_LONGS: u32 = 4 << 20;

/// The selection state of one driver.
#[derive(Default)]
pub(super) struct Clipboard {
    window: Option<Window>,
    atoms: Option<ClipAtoms>,
    /// The text we serve while we own CLIPBOARD, and since when.
    owned: Option<(String, Timestamp)>,
    /// Events read while waiting for an answer, for the driver's next poll.
    deferred: Vec<Event>,
}

impl std::fmt::Debug for Clipboard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Clipboard")
            .field("window", &self.window)
            .field(
                "owned_chars",
                &self.owned.as_ref().map(|(t, _)| t.chars().count()),
            )
            .finish()
    }
}

fn failed(what: &str) -> DriverError {
    DriverError::Failed(format!("X11 clipboard: {what}"))
}

impl Clipboard {
    /// Our window (created unmapped on first use) and the atoms.
    fn setup(&mut self, conn: &Conn) -> Result<(Window, ClipAtoms), DriverError> {
        if let (Some(w), Some(a)) = (self.window, self.atoms) {
            return Ok((w, a));
        }
        let atoms = ClipAtoms::new(&conn.conn)
            .map_err(cerr("interning atoms"))?
            .reply()
            .map_err(xerr("interning atoms"))?;
        let w = conn
            .conn
            .generate_id()
            .map_err(|e| failed(&e.to_string()))?;
        conn.conn
            .create_window(
                0,
                w,
                conn.root,
                -10,
                -10,
                1,
                1,
                0,
                WindowClass::INPUT_ONLY,
                0,
                &CreateWindowAux::new().event_mask(EventMask::PROPERTY_CHANGE),
            )
            .map_err(cerr("creating its window"))?
            .check()
            .map_err(xerr("creating its window"))?;
        self.window = Some(w);
        self.atoms = Some(atoms);
        Ok((w, atoms))
    }

    /// The events read while waiting, then the server's pending ones, without those
    /// the selection consumed (requests answered, ownership lost).
    pub(super) fn drain(&mut self, conn: &Conn) -> Vec<Event> {
        let mut out = Vec::new();
        let pending = std::mem::take(&mut self.deferred);
        for e in pending {
            if !self.on_event(conn, &e) {
                out.push(e);
            }
        }
        while let Ok(Some(e)) = conn.conn.poll_for_event() {
            if !self.on_event(conn, &e) {
                out.push(e);
            }
        }
        let _ = conn.conn.flush();
        out
    }

    /// Handles a selection event aimed at us; false for every other event.
    fn on_event(&mut self, conn: &Conn, e: &Event) -> bool {
        let (Some(win), Some(atoms)) = (self.window, self.atoms) else {
            return false;
        };
        match e {
            Event::SelectionRequest(r) if r.owner == win => {
                self.answer(conn, &atoms, r);
                true
            }
            Event::SelectionClear(c) if c.owner == win => {
                if c.selection == atoms.CLIPBOARD {
                    self.owned = None;
                }
                true
            }
            _ => false,
        }
    }

    /// Answers one request for what we own; anything we cannot give is refused
    /// (property `None`), as ICCCM says.
    fn answer(&self, conn: &Conn, a: &ClipAtoms, r: &SelectionRequestEvent) {
        let property = if r.property == u32::from(AtomEnum::NONE) {
            r.target // obsolete clients
        } else {
            r.property
        };
        let c = &conn.conn;
        let served = match (&self.owned, r.selection == a.CLIPBOARD) {
            (Some((text, since)), true) => {
                let t = r.target;
                if t == a.TARGETS {
                    let list = [
                        a.TARGETS,
                        a.TIMESTAMP,
                        a.UTF8_STRING,
                        a.TEXT,
                        AtomEnum::STRING.into(),
                    ];
                    c.change_property32(
                        PropMode::REPLACE,
                        r.requestor,
                        property,
                        AtomEnum::ATOM,
                        &list,
                    )
                    .is_ok()
                } else if t == a.TIMESTAMP {
                    c.change_property32(
                        PropMode::REPLACE,
                        r.requestor,
                        property,
                        AtomEnum::INTEGER,
                        &[*since],
                    )
                    .is_ok()
                } else if t == a.UTF8_STRING || t == a.TEXT {
                    fits(conn, text.len())
                        && c.change_property8(
                            PropMode::REPLACE,
                            r.requestor,
                            property,
                            a.UTF8_STRING,
                            text.as_bytes(),
                        )
                        .is_ok()
                } else if t == u32::from(AtomEnum::STRING) {
                    let latin1: Vec<u8> = text
                        .chars()
                        .map(|ch| u8::try_from(u32::from(ch)).unwrap_or(b'?'))
                        .collect();
                    fits(conn, latin1.len())
                        && c.change_property8(
                            PropMode::REPLACE,
                            r.requestor,
                            property,
                            AtomEnum::STRING,
                            &latin1,
                        )
                        .is_ok()
                } else {
                    false
                }
            }
            _ => false,
        };
        let notify = SelectionNotifyEvent {
            response_type: SELECTION_NOTIFY_EVENT,
            sequence: 0,
            time: r.time,
            requestor: r.requestor,
            selection: r.selection,
            target: r.target,
            property: if served {
                property
            } else {
                AtomEnum::NONE.into()
            },
        };
        let _ = c.send_event(false, r.requestor, EventMask::NO_EVENT, notify);
    }

    /// Reads events until `pred` takes one, answering selection requests meanwhile and
    /// keeping the rest for the driver's next poll; fails after [`WAIT`].
    fn wait_for(
        &mut self,
        conn: &Conn,
        what: &str,
        mut pred: impl FnMut(&Event) -> bool,
    ) -> Result<Event, DriverError> {
        conn.conn.flush().map_err(cerr(what))?;
        let deadline = Instant::now() + WAIT;
        loop {
            while let Some(e) = conn.conn.poll_for_event().map_err(cerr(what))? {
                if pred(&e) {
                    return Ok(e);
                }
                if !self.on_event(conn, &e) {
                    self.deferred.push(e);
                }
            }
            let _ = conn.conn.flush();
            if Instant::now() >= deadline {
                return Err(failed(&format!(
                    "no answer to {what} within {} s",
                    WAIT.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// A server timestamp, from a zero-length append to our own window's property.
    fn now(&mut self, conn: &Conn, win: Window, a: &ClipAtoms) -> Result<Timestamp, DriverError> {
        conn.conn
            .change_property8(
                PropMode::APPEND,
                win,
                a.CC_CLIPBOARD_DATA,
                AtomEnum::STRING,
                &[],
            )
            .map_err(cerr("reading the server time"))?;
        let prop = a.CC_CLIPBOARD_DATA;
        match self.wait_for(
            conn,
            "a timestamp",
            |e| matches!(e, Event::PropertyNotify(p) if p.window == win && p.atom == prop),
        )? {
            Event::PropertyNotify(p) => Ok(p.time),
            _ => Err(failed("no timestamp")),
        }
    }

    /// Becomes the CLIPBOARD owner with `text`.
    pub(super) fn write(&mut self, conn: &Conn, text: &str) -> Result<(), DriverError> {
        if !fits(conn, text.len()) {
            return Err(failed(&format!(
                "{} bytes do not fit in one transfer of this server (incremental transfers are not offered)",
                text.len()
            )));
        }
        let (win, a) = self.setup(conn)?;
        let since = self.now(conn, win, &a)?;
        conn.conn
            .set_selection_owner(win, a.CLIPBOARD, since)
            .map_err(cerr("taking the selection"))?;
        let owner = conn
            .conn
            .get_selection_owner(a.CLIPBOARD)
            .map_err(cerr("taking the selection"))?
            .reply()
            .map_err(xerr("taking the selection"))?
            .owner;
        if owner != win {
            return Err(failed("another client kept the selection"));
        }
        self.owned = Some((text.to_string(), since));
        Ok(())
    }

    /// The clipboard's text, who owns it, and whether its owner marked it secret.
    pub(super) fn read(&mut self, conn: &Conn) -> Result<ClipboardContent, DriverError> {
        let (win, a) = self.setup(conn)?;
        let owner = conn
            .conn
            .get_selection_owner(a.CLIPBOARD)
            .map_err(cerr("asking the owner"))?
            .reply()
            .map_err(xerr("asking the owner"))?
            .owner;
        if owner == u32::from(AtomEnum::NONE) {
            self.owned = None;
            return Ok(ClipboardContent::default());
        }
        if owner == win
            && let Some((text, _)) = &self.owned
        {
            return Ok(ClipboardContent {
                text: Some(text.clone()),
                owner: Some(SELF_OWNER.into()),
                secret: false,
            });
        }
        let owner_name = Some(format!("window {owner:#x}"));
        let targets = self.convert(conn, win, &a, a.TARGETS)?;
        let offered: Option<Vec<Atom>> = targets.map(|(_, v)| {
            v.chunks_exact(4)
                .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
                .collect()
        });
        let offers = |t: Atom| offered.as_ref().is_none_or(|o| o.contains(&t));
        if offered
            .as_ref()
            .is_some_and(|o| o.contains(&a.PASSWORD_HINT))
        {
            let hint = self.convert(conn, win, &a, a.PASSWORD_HINT)?;
            if hint.is_some_and(|(_, v)| v.trim_ascii() == b"secret") {
                return Ok(ClipboardContent {
                    text: None,
                    owner: owner_name,
                    secret: true,
                });
            }
        }
        let string: Atom = AtomEnum::STRING.into();
        for target in [a.UTF8_STRING, string] {
            if !offers(target) {
                continue;
            }
            if let Some((kind, bytes)) = self.convert(conn, win, &a, target)? {
                let text = if kind == string {
                    bytes.iter().map(|&b| char::from(b)).collect()
                } else {
                    String::from_utf8_lossy(&bytes).into_owned()
                };
                return Ok(ClipboardContent {
                    text: Some(text),
                    owner: owner_name,
                    secret: false,
                });
            }
        }
        // Owned, but not as text (an image, say).
        Ok(ClipboardContent {
            text: None,
            owner: owner_name,
            secret: false,
        })
    }

    /// Asks the owner for `target` into our property; its type and bytes, `None` when
    /// the owner refused it.
    fn convert(
        &mut self,
        conn: &Conn,
        win: Window,
        a: &ClipAtoms,
        target: Atom,
    ) -> Result<Option<(Atom, Vec<u8>)>, DriverError> {
        let c = &conn.conn;
        let prop = a.CC_CLIPBOARD_DATA;
        c.delete_property(win, prop).map_err(cerr("converting"))?;
        c.convert_selection(win, a.CLIPBOARD, target, prop, x11rb::CURRENT_TIME)
            .map_err(cerr("converting"))?;
        let sel = a.CLIPBOARD;
        let ev = self.wait_for(conn, "the clipboard's owner", |e| {
            matches!(e, Event::SelectionNotify(n) if n.requestor == win && n.selection == sel && n.target == target)
        })?;
        let Event::SelectionNotify(n) = ev else {
            return Ok(None);
        };
        if n.property == u32::from(AtomEnum::NONE) {
            return Ok(None);
        }
        let r = c
            .get_property(true, win, prop, AtomEnum::ANY, 0, MAX_LONGS)
            .map_err(cerr("reading the transfer"))?
            .reply()
            .map_err(xerr("reading the transfer"))?;
        if r.type_ == a.INCR || r.bytes_after > 0 {
            let _ = c.delete_property(win, prop);
            return Err(failed(
                "the clipboard's content is too large to read: its owner sends it incrementally (INCR), which is not supported",
            ));
        }
        Ok(Some((r.type_, r.value)))
    }

    /// Destroys our window (ownership goes with it).
    pub(super) fn close(&mut self, conn: &Conn) {
        if let Some(w) = self.window.take() {
            let _ = conn.conn.destroy_window(w);
        }
        self.owned = None;
    }
}

/// Whether `bytes` fit in one ChangeProperty request of this server.
fn fits(conn: &Conn, bytes: usize) -> bool {
    bytes + 64 <= conn.conn.maximum_request_bytes()
}
