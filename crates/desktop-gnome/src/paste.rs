//! The remote-desktop session's clipboard: what types characters no key of the layout
//! has (Mutter drops such keysyms), and the clipboard tools.
//!
//! The session offers text (`SetSelection`); when an application pastes, Mutter asks
//! the session for it (`SelectionTransfer`) and a task on the connection's thread
//! writes it into the pipe Mutter hands over (`SelectionWrite`). Reading goes the
//! other way (`SelectionRead`): Mutter asks the owner and the session reads the pipe.

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

/// The session's clipboard: the text it offers and how many transfers it served.
pub struct Clipboard {
    rd: zbus::Proxy<'static>,
    offer: Arc<Mutex<Option<String>>>,
    served: Arc<AtomicU64>,
    served_note: Arc<tokio::sync::Notify>,
    /// The session owns the clipboard now (Mutter refuses to read a session's own
    /// selection back to it, so its offer is the answer).
    owned: Arc<AtomicBool>,
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
        };
        let mut owners = rd
            .receive_signal("SelectionOwnerChanged")
            .await
            .map_err(failed("SelectionOwnerChanged"))?;
        let owned = c.owned.clone();
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

    /// The clipboard's text; `None` when it is empty or holds no text.
    pub async fn read(&self) -> Result<Option<String>, DriverError> {
        if self.owned.load(Ordering::SeqCst) {
            return Ok(self.offer.lock().unwrap_or_else(|e| e.into_inner()).clone());
        }
        let fd: OwnedFd = match self.rd.call("SelectionRead", &(UTF8,)).await {
            Ok(fd) => fd,
            // No owner, or an owner without text.
            Err(zbus::Error::MethodError(..)) => return Ok(None),
            Err(e) => return Err(failed("RemoteDesktop.SelectionRead")(e)),
        };
        let fd: std::os::fd::OwnedFd = fd.into();
        let read = tokio::task::spawn_blocking(move || {
            let mut bytes = Vec::new();
            std::fs::File::from(fd)
                .take(MAX_READ)
                .read_to_end(&mut bytes)
                .map(|_| bytes)
        });
        match tokio::time::timeout(READ_TIMEOUT, read).await {
            Ok(Ok(Ok(bytes))) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
            Ok(Ok(Err(e))) => Err(DriverError::Failed(format!("reading the clipboard: {e}"))),
            Ok(Err(e)) => Err(DriverError::Failed(format!("reading the clipboard: {e}"))),
            Err(_) => Err(DriverError::Failed(
                "the clipboard's owner did not hand over its text within 2 s".into(),
            )),
        }
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
