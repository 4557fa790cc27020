//! The remote-desktop session's clipboard: what types characters no key of the layout
//! has (Mutter drops such keysyms), and the clipboard tools.
//!
//! The session offers text (`SetSelection`); when an application pastes, Mutter asks
//! the session for it (`SelectionTransfer`) and a task on the connection's thread
//! writes it into the pipe Mutter hands over (`SelectionWrite`). Reading goes the
//! other way (`SelectionRead`): Mutter asks the owner and the session reads the pipe.
//! An owner that offers `x-kde-passwordManagerHint` with the value `secret` (a password
//! manager's copy) is reported as secret and its text is never read.

use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cc_desktop::DriverError;
use futures_util::StreamExt as _;
use zbus::zvariant::{OwnedFd, Value};

use crate::mutter::failed;

/// The text mime type asked for and offered first; the others are what X11 clients
/// under Xwayland and older toolkits ask for.
const UTF8: &str = "text/plain;charset=utf-8";
const OFFERED: &[&str] = &[UTF8, "text/plain", "UTF8_STRING", "STRING", "TEXT"];
/// Longest a clipboard read may take (the owner writes into a pipe).
const READ_TIMEOUT: Duration = Duration::from_secs(2);
/// Largest clipboard text read back.
const MAX_READ: u64 = 16 << 20;
/// The type a password manager adds to a copied password, with the value `secret`.
const PASSWORD_HINT: &str = "x-kde-passwordManagerHint";

/// What the clipboard holds, as read.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// Its text; `None` when it is empty, holds no text, or is secret.
    pub text: Option<String>,
    /// This session put it there.
    pub ours: bool,
    /// Its owner marked it a password: the text was not read.
    pub secret: bool,
}

/// The session's clipboard: the text it offers and how many transfers it served.
pub struct Clipboard {
    rd: zbus::Proxy<'static>,
    offer: Arc<Mutex<Option<String>>>,
    served: Arc<AtomicU64>,
    served_note: Arc<tokio::sync::Notify>,
    /// The session owns the clipboard now (Mutter refuses to read a session's own
    /// selection back to it, so its offer is the answer).
    owned: Arc<AtomicBool>,
    /// The types the clipboard's owner offers, as Mutter last announced them.
    types: Arc<Mutex<Vec<String>>>,
}

impl Clipboard {
    /// Enables the session's clipboard and starts answering transfers.
    pub async fn enable(rd: &zbus::Proxy<'static>) -> Result<Clipboard, DriverError> {
        let opts: HashMap<&str, Value> = HashMap::new();
        rd.call::<_, _, ()>("EnableClipboard", &(opts,))
            .await
            .map_err(failed("RemoteDesktop.EnableClipboard"))?;
        let mut transfers = rd
            .receive_signal("SelectionTransfer")
            .await
            .map_err(failed("SelectionTransfer"))?;
        let c = Clipboard {
            rd: rd.clone(),
            offer: Arc::new(Mutex::new(None)),
            served: Arc::new(AtomicU64::new(0)),
            served_note: Arc::new(tokio::sync::Notify::new()),
            owned: Arc::new(AtomicBool::new(false)),
            types: Arc::new(Mutex::new(Vec::new())),
        };
        let mut owners = rd
            .receive_signal("SelectionOwnerChanged")
            .await
            .map_err(failed("SelectionOwnerChanged"))?;
        let (owned, types) = (c.owned.clone(), c.types.clone());
        tokio::spawn(async move {
            while let Some(msg) = owners.next().await {
                let Ok((opts,)) = msg
                    .body()
                    .deserialize::<(HashMap<String, zbus::zvariant::OwnedValue>,)>()
                else {
                    continue;
                };
                let ours = opts
                    .get("session-is-owner")
                    .and_then(|v| bool::try_from(v).ok())
                    .unwrap_or(false);
                let offered = opts
                    .get("mime-types")
                    .map(|v| strings(v))
                    .unwrap_or_default();
                *types.lock().unwrap_or_else(|e| e.into_inner()) = offered;
                owned.store(ours, Ordering::SeqCst);
            }
        });
        let (rd, offer, served, note) = (
            c.rd.clone(),
            c.offer.clone(),
            c.served.clone(),
            c.served_note.clone(),
        );
        tokio::spawn(async move {
            while let Some(msg) = transfers.next().await {
                let Ok((_mime, serial)) = msg.body().deserialize::<(String, u32)>() else {
                    continue;
                };
                let text = offer.lock().unwrap_or_else(|e| e.into_inner()).clone();
                let ok = serve(&rd, serial, text).await;
                let _ = rd
                    .call::<_, _, ()>("SelectionWriteDone", &(serial, ok))
                    .await;
                served.fetch_add(1, Ordering::SeqCst);
                note.notify_waiters();
            }
        });
        Ok(c)
    }

    /// Transfers served so far.
    pub fn served(&self) -> u64 {
        self.served.load(Ordering::SeqCst)
    }

    /// Waits until more than `since` transfers were served, or `limit` passes.
    pub async fn wait_served(&self, since: u64, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.served_note.notified();
            if self.served() > since {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.served() > since;
            }
        }
    }

    /// Makes the session the clipboard's owner, offering `text`.
    pub async fn offer(&self, text: &str) -> Result<(), DriverError> {
        *self.offer.lock().unwrap_or_else(|e| e.into_inner()) = Some(text.to_string());
        self.owned.store(true, Ordering::SeqCst);
        let mut opts: HashMap<&str, Value> = HashMap::new();
        opts.insert("mime-types", Value::from(OFFERED.to_vec()));
        self.rd
            .call::<_, _, ()>("SetSelection", &(opts,))
            .await
            .map_err(failed("RemoteDesktop.SetSelection"))
    }

    /// What the clipboard holds: this session's own offer, a password manager's copy
    /// (secret, unread), or another owner's text.
    pub async fn read(&self) -> Result<Selection, DriverError> {
        if self.owned.load(Ordering::SeqCst) {
            return Ok(Selection {
                text: self.offer.lock().unwrap_or_else(|e| e.into_inner()).clone(),
                ours: true,
                secret: false,
            });
        }
        let hinted = self
            .types
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|t| t == PASSWORD_HINT);
        if hinted
            && self
                .read_type(PASSWORD_HINT, 64)
                .await?
                .is_some_and(|h| h.trim_ascii() == b"secret")
        {
            return Ok(Selection {
                secret: true,
                ..Selection::default()
            });
        }
        let text = self
            .read_type(UTF8, MAX_READ)
            .await?
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        Ok(Selection {
            text,
            ..Selection::default()
        })
    }

    /// At most `limit` bytes of the clipboard as `mime`; `None` when there is no owner
    /// or it has no such type.
    async fn read_type(&self, mime: &str, limit: u64) -> Result<Option<Vec<u8>>, DriverError> {
        let fd: OwnedFd = match self.rd.call("SelectionRead", &(mime,)).await {
            Ok(fd) => fd,
            Err(zbus::Error::MethodError(..)) => return Ok(None),
            Err(e) => return Err(failed("RemoteDesktop.SelectionRead")(e)),
        };
        let fd: std::os::fd::OwnedFd = fd.into();
        let read = tokio::task::spawn_blocking(move || drain(fd, limit));
        match tokio::time::timeout(READ_TIMEOUT, read).await {
            Ok(Ok(Ok(bytes))) => Ok(Some(bytes)),
            Ok(Ok(Err(e))) => Err(DriverError::Failed(format!("reading the clipboard: {e}"))),
            Ok(Err(e)) => Err(DriverError::Failed(format!("reading the clipboard: {e}"))),
            Err(_) => Err(DriverError::Failed(
                "the clipboard's owner did not hand over its text within 2 s".into(),
            )),
        }
    }
}

/// Reads `fd` to its end, at most `limit` bytes. Mutter hands over a non-blocking pipe:
/// while the owner has not written yet, this waits a moment and reads again, for at
/// most [`READ_TIMEOUT`].
fn drain(fd: std::os::fd::OwnedFd, limit: u64) -> std::io::Result<Vec<u8>> {
    let deadline = std::time::Instant::now() + READ_TIMEOUT;
    let mut pipe = std::fs::File::from(fd).take(limit);
    let mut bytes = Vec::new();
    loop {
        match pipe.read_to_end(&mut bytes) {
            Ok(_) => return Ok(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if std::time::Instant::now() >= deadline {
                    return Err(e);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The strings of an `as`, or of the `as` inside a structure (Mutter has sent the
/// offered types both ways).
fn strings(v: &Value<'_>) -> Vec<String> {
    match v {
        Value::Array(a) => a
            .iter()
            .filter_map(|s| match s {
                Value::Str(s) => Some(s.to_string()),
                _ => None,
            })
            .collect(),
        Value::Structure(st) => st.fields().iter().flat_map(strings).collect(),
        Value::Value(inner) => strings(inner),
        _ => Vec::new(),
    }
}

/// Writes `text` into the pipe Mutter gives for transfer `serial`.
async fn serve(rd: &zbus::Proxy<'static>, serial: u32, text: Option<String>) -> bool {
    let Some(text) = text else { return false };
    let Ok(fd) = rd.call::<_, _, OwnedFd>("SelectionWrite", &(serial,)).await else {
        return false;
    };
    let fd: std::os::fd::OwnedFd = fd.into();
    tokio::task::spawn_blocking(move || std::fs::File::from(fd).write_all(text.as_bytes()))
        .await
        .is_ok_and(|r| r.is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offered_types_are_read_bare_or_in_a_structure() {
        let types = vec!["text/plain", PASSWORD_HINT];
        let bare = Value::from(types.clone());
        assert_eq!(strings(&bare), types);
        let wrapped = Value::from((types.clone(),));
        assert_eq!(strings(&wrapped), types);
        assert!(strings(&Value::from(7u32)).is_empty());
    }

    /// A non-blocking pipe whose writer is slow is read whole, once written.
    #[test]
    fn a_slow_owner_is_waited_for() {
        let (r, w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::NONBLOCK).unwrap();
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            std::fs::File::from(w).write_all(b"late text").unwrap();
        });
        assert_eq!(drain(r, 64).unwrap(), b"late text");
        writer.join().unwrap();
    }
}
