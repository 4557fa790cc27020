//! How the C allocator keeps memory: a long-running server that captures the screen
//! allocates and frees buffers of megabytes (a 1080p capture is 6 MB of pixels), and
//! glibc's defaults keep them. After the first such block is freed, glibc raises its
//! mmap threshold to that size, so later blocks come from the arenas and stay there
//! when freed; and every thread that allocates may get an arena of its own (up to
//! eight per core). Measured after a capture/click/type/snapshot workload over MCP,
//! the arenas held about 26 MB, mostly free (docs/PERFORMANCE.md, "Memory").
//!
//! [`keep_small`] pins the threshold (blocks of 128 KiB and more are mapped on their
//! own and go back to the system when freed) and caps the arenas at two. The cost is
//! a fresh mapping per large block, measured in the same topic.

/// glibc's own starting threshold, pinned so it no longer rises.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 128 * 1024;

/// Arenas: the worker thread's and one for everything else.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const ARENA_MAX: libc::c_int = 2;

/// Tunes glibc's allocator as described above; called first thing in `main`, before
/// any other thread exists. Elsewhere (musl, other systems) it does nothing.
pub fn keep_small() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: `mallopt` only changes allocator parameters; both are documented
    // values, and it is called before any other thread allocates.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_ARENA_MAX, ARENA_MAX);
    }
}
