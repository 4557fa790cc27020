//! Stdin read without a sleeping CPU's wake-up when the next request is about to
//! arrive: a client calling back to back finds the server awake ([`Lookout`]). Linux
//! only (`poll` through `nix`); elsewhere the server reads stdin as it is.

use std::io::Read;

use cc_engine::Lookout;

/// The server's stdin, looked at before each blocking read while the last requests
/// came within the lookout's window.
pub struct LookingStdin {
    file: std::fs::File,
    lookout: Lookout,
}

impl LookingStdin {
    /// Stdin, unbuffered: a copy of its descriptor, so no library buffer can hold a
    /// line that `poll` does not see.
    pub fn new() -> std::io::Result<LookingStdin> {
        use std::os::fd::AsFd;
        let fd = std::io::stdin().as_fd().try_clone_to_owned()?;
        Ok(LookingStdin::over(fd))
    }

    /// Any descriptor read the same way (the tests' sockets).
    fn over(fd: std::os::fd::OwnedFd) -> LookingStdin {
        LookingStdin {
            file: std::fs::File::from(fd),
            lookout: Lookout::default(),
        }
    }
}

impl Read for LookingStdin {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let file = &self.file;
        match self
            .lookout
            .look(std::time::Duration::MAX, || readable(file).then_some(()))
        {
            Ok(()) => self.file.read(buf),
            Err(start) => {
                let r = self.file.read(buf);
                self.lookout.slept(start, matches!(r, Ok(n) if n > 0));
                r
            }
        }
    }
}

/// Whether a read would not block now (data, end of input, or an error to report).
fn readable(fd: &impl std::os::fd::AsFd) -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
    // A failed poll reads at once: the read reports what is wrong.
    poll(&mut fds, PollTimeout::ZERO).map_or(true, |n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::net::UnixStream;

    #[test]
    fn readable_sees_data_and_end_of_input_but_not_silence() {
        let (mut a, b) = UnixStream::pair().unwrap();
        assert!(!readable(&b), "nothing written yet");
        a.write_all(b"x\n").unwrap();
        assert!(readable(&b));
        let mut buf = [0u8; 4];
        (&b).read_exact(&mut buf[..2]).unwrap();
        assert!(!readable(&b), "all read");
        drop(a);
        assert!(
            readable(&b),
            "end of input is readable: the read reports it"
        );
    }

    #[test]
    fn lines_arrive_whole_whether_they_are_found_looking_or_sleeping() {
        let (mut a, b) = UnixStream::pair().unwrap();
        let mut input = LookingStdin::over(b.into());
        let mut buf = [0u8; 16];
        // At once: the next read looks first and finds the next line while looking.
        for _ in 0..3 {
            a.write_all(b"ping\n").unwrap();
            let n = input.read(&mut buf).unwrap();
            assert_eq!(&buf[..n], b"ping\n");
        }
        // Long after: found by the blocking read.
        let writer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            a.write_all(b"late\n").unwrap();
        });
        let n = input.read(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"late\n");
        writer.join().unwrap();
        assert_eq!(input.read(&mut buf).unwrap(), 0, "end of input");
    }
}
