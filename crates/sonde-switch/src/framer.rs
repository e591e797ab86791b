//! Reads whole frames from a socket with a read timeout, keeping partial frames across
//! timeouts (so a reader thread can wake up, look at the session, and go on reading).

use crate::wire::{Frame, Header, ParseError, HEADER_LEN, MAX_PAYLOAD};

/// The DATA frame type.
pub const DATA: u8 = 3;
use std::io::{self, Read};

/// What one [`FrameReader::poll`] call found.
pub enum Polled<'a> {
    Frame(Frame<'a>),
    /// The read timed out before a whole frame was in.
    Pending,
    /// The peer closed the connection.
    Eof,
}

/// An error from reading frames: the socket, or a malformed frame.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("reading: {0}")]
    Io(#[from] io::Error),
    #[error("malformed frame: {0}")]
    Parse(#[from] ParseError),
}

/// A buffer that assembles one frame at a time; never holds more than one maximal frame.
pub struct FrameReader {
    buf: Vec<u8>,
    have: usize,
    /// Bytes of the frame just returned, dropped at the next poll.
    consumed: usize,
    eof: bool,
    /// Bytes read from the socket so far: a count that moves proves the path alive even
    /// while a long frame is still incomplete.
    received: u64,
}

impl Default for FrameReader {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameReader {
    pub fn new() -> Self {
        Self {
            buf: vec![0; HEADER_LEN + MAX_PAYLOAD],
            have: 0,
            consumed: 0,
            eof: false,
            received: 0,
        }
    }

    /// Whether the last read found the end of the stream.
    pub fn at_eof(&self) -> bool {
        self.eof
    }

    /// Bytes read from the socket so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// The header of the next frame, once its 5 bytes are in (reads no further).
    ///
    /// # Errors
    /// A socket error or an invalid header.
    pub fn peek_header(&mut self, r: &mut impl Read) -> Result<Option<Header>, ReadError> {
        self.shift();
        if !self.fill(r, HEADER_LEN)? {
            return Ok(None);
        }
        let mut hb = [0u8; HEADER_LEN];
        hb.copy_from_slice(self.buf.get(..HEADER_LEN).unwrap_or(&[0; HEADER_LEN]));
        Ok(Some(Header::parse(&hb)?))
    }

    /// The stream offset of the next frame when it is DATA, once its first 13 bytes are in
    /// (reads no further); `None` for other frames or while they are not all in.
    ///
    /// # Errors
    /// A socket error or an invalid header.
    pub fn peek_data_offset(&mut self, r: &mut impl Read) -> Result<Option<u64>, ReadError> {
        match self.peek_header(r)? {
            Some(h) if h.kind == DATA && h.len >= 8 => {}
            _ => return Ok(None),
        }
        if !self.fill(r, HEADER_LEN + 8)? {
            return Ok(None);
        }
        let mut b = [0u8; 8];
        if let Some(s) = self.buf.get(HEADER_LEN..HEADER_LEN + 8) {
            b.copy_from_slice(s);
        }
        Ok(Some(u64::from_be_bytes(b)))
    }

    /// Reads until a whole frame is in, the read times out, or the peer closes.
    ///
    /// # Errors
    /// A socket error or a malformed frame.
    pub fn poll(&mut self, r: &mut impl Read) -> Result<Polled<'_>, ReadError> {
        let h = match self.peek_header(r) {
            Ok(Some(h)) => h,
            Ok(None) if self.eof => return Ok(Polled::Eof),
            Ok(None) => return Ok(Polled::Pending),
            Err(e) => return Err(e),
        };
        let total = HEADER_LEN + h.len;
        if !self.fill(r, total)? {
            return Ok(if self.eof {
                Polled::Eof
            } else {
                Polled::Pending
            });
        }
        self.consumed = total;
        let payload = self.buf.get(HEADER_LEN..total).unwrap_or(&[]);
        Ok(Polled::Frame(Frame::parse(h, payload)?))
    }

    fn shift(&mut self) {
        if self.consumed > 0 {
            self.buf.copy_within(self.consumed..self.have, 0);
            self.have -= self.consumed;
            self.consumed = 0;
        }
    }

    /// Reads until `want` bytes are buffered; false on timeout or end of stream.
    fn fill(&mut self, r: &mut impl Read, want: usize) -> Result<bool, ReadError> {
        self.eof = false;
        while self.have < want {
            // Never past the frame: bytes of the next one would have to be moved to the
            // front of the buffer afterwards, a copy of up to a whole frame each time.
            let Some(space) = self.buf.get_mut(self.have..want) else {
                return Ok(false);
            };
            match r.read(space) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.have += n;
                    self.received += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Ok(false)
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_split_anywhere_come_out_whole() {
        let mut bytes = Vec::new();
        Frame::Ack { offset: 9 }.emit(&mut bytes);
        Frame::Data {
            offset: 0,
            bytes: b"abc",
        }
        .emit(&mut bytes);
        // A reader that returns one byte, then "times out", alternately.
        struct Drip(Vec<u8>, usize, bool);
        impl Read for Drip {
            fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
                self.2 = !self.2;
                if self.2 {
                    return Err(io::ErrorKind::WouldBlock.into());
                }
                match self.0.get(self.1) {
                    Some(x) => {
                        b[0] = *x;
                        self.1 += 1;
                        Ok(1)
                    }
                    None => Ok(0),
                }
            }
        }
        let mut r = Drip(bytes, 0, false);
        let mut fr = FrameReader::new();
        let mut got = Vec::new();
        for _ in 0..200 {
            match fr.poll(&mut r).unwrap() {
                Polled::Frame(f) => got.push(format!("{f:?}")),
                Polled::Pending => {}
                Polled::Eof => break,
            }
        }
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[1].contains("Data"));
    }

    #[test]
    fn reads_stop_at_the_frame_end_so_nothing_is_moved_afterwards() {
        let mut bytes = Vec::new();
        let payload = vec![7u8; 100_000];
        for offset in [0u64, 100_000] {
            Frame::Data {
                offset,
                bytes: &payload,
            }
            .emit(&mut bytes);
        }
        let first_len = bytes.len() / 2;
        let mut r = io::Cursor::new(bytes);
        let mut fr = FrameReader::new();
        assert!(matches!(fr.poll(&mut r).unwrap(), Polled::Frame(_)));
        // The first frame came out, and not one byte of the second was taken from the socket.
        assert_eq!(r.position(), first_len as u64);
        assert_eq!(fr.received(), first_len as u64);
        match fr.poll(&mut r).unwrap() {
            Polled::Frame(f) => assert!(format!("{f:?}").contains("100000")),
            _ => panic!("the second frame"),
        }
    }
}
