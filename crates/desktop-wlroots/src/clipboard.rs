//! The clipboard through the wlr data-control protocol, which lets a client that has
//! no window read and own the seat's selection (what `wl-copy`/`wl-paste` use).
//!
//! Reading takes the selection's current offer and receives its text (UTF-8 types
//! first) through a pipe, waiting at most [`WAIT`] for the owner. An offer that also
//! carries `x-kde-passwordManagerHint` with the value `secret` (KeePassXC's and
//! Plasma's convention for a copied password) is reported as secret and its text is not
//! received. Wayland does not say which client owns the selection, so `owner` is known
//! only when it is this driver.
//!
//! Writing offers a source of our own as the selection; the driver's event polling
//! answers paste requests (each written by a short-lived thread, so a reader that never
//! reads holds no one up) until another client takes the selection. Like any Wayland
//! client's, what we own is gone when the driver disconnects.

use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

use cc_desktop::{ClipboardContent, DriverError};
use rustix::event::PollFlags;
use wayland_client::Proxy as _;
use wayland_protocols_wlr::data_control::v1::client::zwlr_data_control_offer_v1::ZwlrDataControlOfferV1;
use wayland_protocols_wlr::data_control::v1::client::zwlr_data_control_source_v1::ZwlrDataControlSourceV1;

use crate::client::Client;
use crate::ready::ready;

/// How long an owner has to hand its text over (and a paster to take ours).
const WAIT: Duration = Duration::from_secs(2);
/// The most text read from the clipboard.
const MAX_BYTES: usize = 16 << 20;
const PASSWORD_HINT: &str = "x-kde-passwordManagerHint";
/// Text types, best first (the X11 names are what Xwayland clients offer).
const TEXT_TYPES: [&str; 5] = [
    "text/plain;charset=utf-8",
    "UTF8_STRING",
    "text/plain",
    "TEXT",
    "STRING",
];
/// The owner reported for text this driver put there.
const SELF_OWNER: &str = "computer-control";

fn failed(what: impl std::fmt::Display) -> DriverError {
    DriverError::Failed(format!("clipboard: {what}"))
}

/// What this driver owns on the clipboard.
#[derive(Default)]
pub struct Clipboard {
    source: Option<(ZwlrDataControlSourceV1, String)>,
}

impl Clipboard {
    /// Whether the compositor serves the clipboard to this driver.
    pub fn available(c: &Client) -> bool {
        c.data_device.is_some() && !c.state.device_finished
    }

    fn require(c: &Client) -> Result<(), DriverError> {
        if Clipboard::available(c) {
            Ok(())
        } else {
            Err(DriverError::Unavailable(
                "the compositor offers no zwlr_data_control_manager_v1: no clipboard".into(),
            ))
        }
    }

    /// The clipboard's text now.
    pub fn read(&mut self, c: &mut Client) -> Result<ClipboardContent, DriverError> {
        Clipboard::require(c)?;
        c.roundtrip()?;
        self.serve(c);
        if let Some((_, text)) = &self.source {
            return Ok(ClipboardContent {
                text: Some(text.clone()),
                owner: Some(SELF_OWNER.into()),
                secret: false,
            });
        }
        let empty = ClipboardContent {
            text: None,
            owner: None,
            secret: false,
        };
        let Some((offer, types)) = c.state.selection.and_then(|id| c.state.offers.get(&id)) else {
            return Ok(empty);
        };
        let (offer, types) = (offer.clone(), types.clone());
        if types.iter().any(|t| t == PASSWORD_HINT) {
            let hint = receive(c, &offer, PASSWORD_HINT, 64)?;
            if hint.trim_ascii() == b"secret" {
                return Ok(ClipboardContent {
                    secret: true,
                    ..empty
                });
            }
        }
        let Some(mime) = TEXT_TYPES.iter().find(|t| types.iter().any(|x| x == *t)) else {
            return Ok(empty);
        };
        let bytes = receive(c, &offer, mime, MAX_BYTES)?;
        let text = match String::from_utf8(bytes) {
            Ok(t) => t,
            // X11's STRING is Latin-1.
            Err(e) if *mime == "STRING" => e.into_bytes().iter().map(|&b| char::from(b)).collect(),
            Err(_) => return Err(failed(format!("the {mime} text is not UTF-8"))),
        };
        Ok(ClipboardContent {
            text: Some(text),
            ..empty
        })
    }

    /// Puts `text` on the clipboard, served until another client takes it.
    pub fn write(&mut self, c: &mut Client, text: &str) -> Result<(), DriverError> {
        Clipboard::require(c)?;
        let (Some(manager), Some(device)) = (&c.data_control, &c.data_device) else {
            return Clipboard::require(c);
        };
        let source = manager.create_data_source(&c.qh, ());
        for t in TEXT_TYPES {
            source.offer(t.to_string());
        }
        device.set_selection(Some(&source));
        if let Some((old, _)) = self.source.replace((source, text.to_string())) {
            old.destroy();
        }
        c.roundtrip()?;
        self.serve(c);
        Ok(())
    }

    /// Answers paste requests for our text, and lets our source go once another client
    /// took the clipboard. Called from the driver's event polling.
    pub fn serve(&mut self, c: &mut Client) {
        let cancelled = std::mem::take(&mut c.state.cancelled_sources);
        if let Some((s, _)) = &self.source
            && cancelled.contains(&s.id().protocol_id())
        {
            s.destroy();
            self.source = None;
        }
        for (id, _mime, fd) in std::mem::take(&mut c.state.source_sends) {
            // A request for a source we let go is answered by closing the pipe.
            let Some((s, text)) = &self.source else {
                continue;
            };
            if s.id().protocol_id() != id {
                continue;
            }
            let bytes = text.clone().into_bytes();
            let _ = std::thread::Builder::new()
                .name("cc-clipboard-send".into())
                .spawn(move || send(fd, &bytes));
        }
    }

    /// Lets go of what we own (the driver is closing).
    pub fn close(&mut self) {
        if let Some((s, _)) = self.source.take() {
            s.destroy();
        }
    }
}

/// Receives the offer's data of one type through a pipe.
fn receive(
    c: &Client,
    offer: &ZwlrDataControlOfferV1,
    mime: &str,
    max: usize,
) -> Result<Vec<u8>, DriverError> {
    let (mut reader, writer) = std::io::pipe().map_err(failed)?;
    offer.receive(mime.to_string(), writer.as_fd());
    c.flush()?;
    drop(writer);
    let deadline = Instant::now() + WAIT;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(failed(format!(
                "its owner did not hand it over within {} s",
                WAIT.as_secs()
            )));
        }
        match ready(&reader, PollFlags::IN, left) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e) => return Err(failed(e)),
        }
        let n = reader.read(&mut buf).map_err(failed)?;
        if n == 0 {
            return Ok(out);
        }
        if out.len() + n > max {
            return Err(failed(format!("it holds more than {} bytes", max)));
        }
        out.extend_from_slice(&buf[..n]);
    }
}

/// Writes our text into a paster's pipe, giving up after [`WAIT`] without progress.
fn send(fd: OwnedFd, bytes: &[u8]) {
    if rustix::fs::fcntl_setfl(&fd, rustix::fs::OFlags::NONBLOCK).is_err() {
        return;
    }
    let mut file = std::fs::File::from(fd);
    let mut rest = bytes;
    while !rest.is_empty() {
        match file.write(rest) {
            Ok(0) => return,
            Ok(n) => rest = &rest[n..],
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if !matches!(ready(&file, PollFlags::OUT, WAIT), Ok(true)) {
                    return;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}
