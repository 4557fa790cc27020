//! Reading the input one bounded line at a time.

use std::io::BufRead;

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Cursor};

    #[test]
    fn reads_lines_and_bounds_long_ones() {
        let mut r = BufReader::with_capacity(4, Cursor::new(b"ab\n0123456789\nxyz".to_vec()));
        assert_eq!(read_line(&mut r, 5).unwrap(), Line::Text(b"ab".to_vec()));
        assert_eq!(read_line(&mut r, 5).unwrap(), Line::TooLong);
        assert_eq!(read_line(&mut r, 5).unwrap(), Line::Text(b"xyz".to_vec()));
        assert_eq!(read_line(&mut r, 5).unwrap(), Line::Eof);
    }
}
