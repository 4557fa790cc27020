//! The one place of the workspace that needs `unsafe`: a SysV shared memory segment
//! (`shmget`/`shmat`) shared with the X server for MIT-SHM capture. Nothing safe can
//! express "memory another process writes into", so this module wraps the raw calls
//! behind a safe type: the mapping is created, read and released only through
//! [`Segment`], and no pointer leaves it.

// The workspace denies `unsafe_code`; this module alone is allowed (see above).
#![allow(unsafe_code)]

use x11rb::connection::Connection;
use x11rb::protocol::shm::ConnectionExt as _;

use super::connection::{Conn, cerr, xerr};
use cc_desktop::DriverError;

/// A SysV shared memory segment attached both here and in the X server.
pub(super) struct Segment {
    xid: u32,
    addr: *mut u8,
    size: usize,
}

// SAFETY: the mapping is private to this driver; only the thread that holds the driver
// touches it (the `Driver` is used through `&mut self`), so moving it is sound.
unsafe impl Send for Segment {}

impl Segment {
    /// The X id the server knows the segment by (for `ShmGetImage`).
    pub(super) fn xid(&self) -> u32 {
        self.xid
    }

    /// The segment's size in bytes.
    pub(super) fn size(&self) -> usize {
        self.size
    }

    /// Creates a segment of `size` bytes and attaches it to the server. The id is
    /// removed right away so the kernel frees it when both sides detach, even if this
    /// process dies.
    pub(super) fn create(conn: &Conn, size: usize) -> Result<Segment, DriverError> {
        // SAFETY: plain SysV calls; every failure is checked before use.
        let shmid = unsafe { libc::shmget(libc::IPC_PRIVATE, size, libc::IPC_CREAT | 0o600) };
        if shmid < 0 {
            return Err(DriverError::Failed(format!(
                "shmget: {}",
                std::io::Error::last_os_error()
            )));
        }
        // SAFETY: `shmid` is a valid id created above.
        let addr = unsafe { libc::shmat(shmid, std::ptr::null(), 0) };
        if addr as isize == -1 {
            let err = std::io::Error::last_os_error();
            // SAFETY: removing the id we just created.
            unsafe { libc::shmctl(shmid, libc::IPC_RMID, std::ptr::null_mut()) };
            return Err(DriverError::Failed(format!("shmat: {err}")));
        }
        let free = |addr: *mut libc::c_void| {
            // SAFETY: `addr` was returned by a successful shmat; `shmid` is ours.
            unsafe {
                libc::shmdt(addr);
                libc::shmctl(shmid, libc::IPC_RMID, std::ptr::null_mut());
            }
        };
        let xid = match conn.conn.generate_id() {
            Ok(id) => id,
            Err(e) => {
                free(addr);
                return Err(DriverError::Failed(format!("X11 id: {e}")));
            }
        };
        let attached = conn
            .conn
            .shm_attach(xid, shmid as u32, false)
            .map_err(cerr("shm attach"))
            .and_then(|c| c.check().map_err(xerr("shm attach")));
        // Attached or not, the id is no longer needed: the segment lives while mapped.
        free_id(shmid);
        if let Err(e) = attached {
            // SAFETY: detaching our own mapping.
            unsafe { libc::shmdt(addr) };
            return Err(e);
        }
        Ok(Segment {
            xid,
            addr: addr.cast(),
            size,
        })
    }

    /// The first `len` bytes of the segment (at most its size), as the server wrote them.
    pub(super) fn bytes(&self, len: usize) -> &[u8] {
        let len = len.min(self.size);
        // SAFETY: `addr` maps `size` bytes for as long as `self` lives; the server wrote
        // them before replying to the ShmGetImage we waited for.
        unsafe { std::slice::from_raw_parts(self.addr, len) }
    }

    /// Detaches the segment from the server and from this process.
    pub(super) fn release(self, conn: &Conn) {
        let _ = conn.conn.shm_detach(self.xid);
        let _ = conn.conn.flush();
        // SAFETY: detaching our own mapping; `self` is consumed so nothing reads it later.
        unsafe { libc::shmdt(self.addr.cast()) };
    }
}

fn free_id(shmid: i32) {
    // SAFETY: marks our own segment for removal once detached.
    unsafe { libc::shmctl(shmid, libc::IPC_RMID, std::ptr::null_mut()) };
}
