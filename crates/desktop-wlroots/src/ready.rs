//! Waiting, with a limit, for a file descriptor to be ready: the compositor's socket to
//! take more of what the driver sends, and a clipboard pipe to the program at its
//! other end.

use std::os::fd::AsFd;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags};

/// Waits at most `within` for `fd` to be ready for `flags` (an interrupted wait is
/// resumed). `Ok(false)` when the time ran out.
pub(crate) fn ready(fd: impl AsFd, flags: PollFlags, within: Duration) -> rustix::io::Result<bool> {
    let deadline = std::time::Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let wait = rustix::time::Timespec {
            tv_sec: i64::try_from(left.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: i64::from(left.subsec_nanos()),
        };
        let mut fds = [PollFd::new(&fd, flags)];
        match rustix::event::poll(&mut fds, Some(&wait)) {
            Ok(0) if left.is_zero() => return Ok(false),
            Ok(0) | Err(rustix::io::Errno::INTR) => continue,
            Ok(_) => return Ok(true),
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_pipe_is_ready_when_written_and_not_before_the_limit() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let t = std::time::Instant::now();
        assert!(!ready(&reader, PollFlags::IN, Duration::from_millis(30)).unwrap());
        assert!(t.elapsed() >= Duration::from_millis(30));
        writer.write_all(b"x").unwrap();
        assert!(ready(&reader, PollFlags::IN, Duration::from_secs(5)).unwrap());
        assert!(ready(&writer, PollFlags::OUT, Duration::ZERO).unwrap());
    }
}
