//! UDP stream set-up that survives packet loss.
//!
//! iperf3 opens a UDP stream with one unacknowledged 4-byte datagram; at 10-20 % link loss whole
//! tests failed because of it. sonde's client sends a [`Hello`] for each UDP stream and repeats
//! it until the server's [`HelloAck`] for that stream arrives (the runtime chooses the retry
//! interval and gives up after a deadline). The server answers every copy, so a lost ack is
//! repaired by the next hello.
//!
//! Layouts (network byte order):
//! - hello: `SNDH` (4), version (u8), cookie (16), stream id (u32): 25 bytes;
//! - ack:   `SNDA` (4), version (u8), cookie (16), stream id (u32): 25 bytes.
//!
//! A data datagram starts with a 64-bit sequence number whose top bytes are zero in any real
//! test, so it can never be mistaken for either.

use crate::preamble::{Cookie, COOKIE_LEN};
use thiserror::Error;

const HELLO_MAGIC: &[u8; 4] = b"SNDH";
const ACK_MAGIC: &[u8; 4] = b"SNDA";
/// Version byte of the hello/ack format.
pub const HELLO_VERSION: u8 = 1;
/// Length of both the hello and the ack.
pub const HELLO_LEN: usize = 4 + 1 + COOKIE_LEN + 4;

/// A client's request to bind a UDP stream to a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hello {
    pub cookie: Cookie,
    pub stream_id: u32,
}

/// The server's acknowledgement of a [`Hello`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HelloAck {
    pub cookie: Cookie,
    pub stream_id: u32,
}

/// Why a datagram is not a hello or ack.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum HelloError {
    #[error("{0}-byte datagram is not a {HELLO_LEN}-byte sonde UDP hello/ack")]
    BadLength(usize),
    #[error("datagram does not start with the sonde hello/ack magic")]
    BadMagic,
    #[error("unsupported UDP hello version {0}")]
    BadVersion(u8),
}

fn parse_with(magic: &[u8; 4], buf: &[u8]) -> Result<(Cookie, u32), HelloError> {
    if buf.len() != HELLO_LEN {
        return Err(HelloError::BadLength(buf.len()));
    }
    if &buf[..4] != magic {
        return Err(HelloError::BadMagic);
    }
    if buf[4] != HELLO_VERSION {
        return Err(HelloError::BadVersion(buf[4]));
    }
    let mut cookie = [0u8; COOKIE_LEN];
    cookie.copy_from_slice(&buf[5..5 + COOKIE_LEN]);
    let id = [buf[21], buf[22], buf[23], buf[24]];
    Ok((cookie, u32::from_be_bytes(id)))
}

fn emit_with(magic: &[u8; 4], cookie: &Cookie, stream_id: u32) -> [u8; HELLO_LEN] {
    let mut out = [0u8; HELLO_LEN];
    out[..4].copy_from_slice(magic);
    out[4] = HELLO_VERSION;
    out[5..5 + COOKIE_LEN].copy_from_slice(cookie);
    out[5 + COOKIE_LEN..].copy_from_slice(&stream_id.to_be_bytes());
    out
}

impl Hello {
    /// # Errors
    /// [`HelloError`] when `buf` is not exactly a version-1 hello.
    pub fn parse(buf: &[u8]) -> Result<Self, HelloError> {
        parse_with(HELLO_MAGIC, buf).map(|(cookie, stream_id)| Self { cookie, stream_id })
    }
    pub fn emit(&self) -> [u8; HELLO_LEN] {
        emit_with(HELLO_MAGIC, &self.cookie, self.stream_id)
    }
}

impl HelloAck {
    /// # Errors
    /// [`HelloError`] when `buf` is not exactly a version-1 ack.
    pub fn parse(buf: &[u8]) -> Result<Self, HelloError> {
        parse_with(ACK_MAGIC, buf).map(|(cookie, stream_id)| Self { cookie, stream_id })
    }
    pub fn emit(&self) -> [u8; HELLO_LEN] {
        emit_with(ACK_MAGIC, &self.cookie, self.stream_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_literal_bytes() {
        let h = Hello {
            cookie: [1; COOKIE_LEN],
            stream_id: 258,
        };
        let b = h.emit();
        assert_eq!(&b[..5], b"SNDH\x01");
        assert_eq!(&b[21..], &[0, 0, 1, 2]);
        assert_eq!(Hello::parse(&b), Ok(h));
    }

    #[test]
    fn ack_is_not_a_hello() {
        let a = HelloAck {
            cookie: [9; COOKIE_LEN],
            stream_id: 1,
        }
        .emit();
        assert_eq!(Hello::parse(&a), Err(HelloError::BadMagic));
        assert!(HelloAck::parse(&a).is_ok());
    }

    #[test]
    fn rejects_bad_length_and_version() {
        assert_eq!(Hello::parse(b"9876"), Err(HelloError::BadLength(4)));
        let mut b = Hello {
            cookie: [0; COOKIE_LEN],
            stream_id: 1,
        }
        .emit();
        b[4] = 9;
        assert_eq!(Hello::parse(&b), Err(HelloError::BadVersion(9)));
    }

    #[test]
    fn data_datagram_is_neither() {
        let mut d = [0u8; HELLO_LEN];
        d[7] = 1;
        assert_eq!(HelloAck::parse(&d), Err(HelloError::BadMagic));
    }
}
