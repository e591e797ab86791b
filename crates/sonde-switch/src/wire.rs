//! The framed switch protocol on the wire: every message is one length-prefixed frame.
//!
//! Explicit frame types carry the control messages, so application bytes are never escaped
//! and never mistaken for a marker. Layout (all integers big-endian):
//!
//! ```text
//! 0      1              5
//! +------+--------------+------------------------+
//! | type | payload len  | payload (len bytes)    |
//! +------+--------------+------------------------+
//! ```
//!
//! | type | name     | payload                                             |
//! |------|----------|-----------------------------------------------------|
//! | 1    | HELLO    | magic `SNSW`, version (1), session id (16)          |
//! | 2    | HELLO_OK | version (1), session id (16)                        |
//! | 3    | DATA     | stream offset (8), bytes                            |
//! | 4    | ACK      | offset the receiver has taken into its buffer (8)   |
//! | 5    | JOIN     | session id (16), receiver's next expected offset (8)|
//! | 6    | JOIN_OK  | receiver's next expected offset (8)                 |
//! | 7    | MOVED    | end of this path: the last offset sent on it (8)    |
//! | 8    | FIN      | final length of the sender's stream (8)             |
//! | 9    | PING     | token (8)                                           |
//! | 10   | PONG     | token (8)                                           |
//! | 11   | REJECT   | reason code (1)                                     |
//! | 12   | REWIND   | resend from this offset on the active path (8)      |
//!
//! REWIND (version 2) is the receiver's request after it lost a path whose last bytes may not
//! have arrived: a planned switch no longer resends unconfirmed bytes on the new path, so the
//! receiver asks for them when the old path could not deliver them. A version 1 peer is
//! refused at HELLO (REJECT with the version reason), never fed a frame it does not know.
//!
//! A parser never allocates more than [`MAX_PAYLOAD`] for one frame, whatever the peer claims.

use thiserror::Error;

/// Frame header length: type and payload length.
pub const HEADER_LEN: usize = 5;
/// The largest payload a peer may announce (DATA carries at most this minus 8 bytes).
pub const MAX_PAYLOAD: usize = 256 * 1024;
/// The protocol version this crate speaks.
pub const VERSION: u8 = 2;
/// The first bytes of a HELLO payload.
pub const MAGIC: [u8; 4] = *b"SNSW";

/// Byte ranges of the header fields.
mod field {
    use std::ops::Range;
    pub const TYPE: usize = 0;
    pub const LEN: Range<usize> = 1..5;
}

/// A 128-bit random session identifier, shared by every path of one session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SessionId(pub [u8; 16]);

/// Why a JOIN or HELLO was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectReason {
    /// JOIN named a session the listener does not know (or has closed).
    UnknownSession,
    /// HELLO carried a version this end does not speak.
    Version,
    /// A code this version does not know.
    Other(u8),
}

impl std::fmt::Display for RejectReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UnknownSession => f.write_str("it does not know the session"),
            Self::Version => f.write_str("it speaks another protocol version"),
            Self::Other(c) => write!(f, "reason code {c}"),
        }
    }
}

impl RejectReason {
    fn code(self) -> u8 {
        match self {
            Self::UnknownSession => 1,
            Self::Version => 2,
            Self::Other(c) => c,
        }
    }
    fn from_code(c: u8) -> Self {
        match c {
            1 => Self::UnknownSession,
            2 => Self::Version,
            c => Self::Other(c),
        }
    }
}

/// One decoded frame (the validated form; DATA borrows its bytes from the input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame<'a> {
    Hello { version: u8, session: SessionId },
    HelloOk { version: u8, session: SessionId },
    Data { offset: u64, bytes: &'a [u8] },
    Ack { offset: u64 },
    Join { session: SessionId, next: u64 },
    JoinOk { next: u64 },
    Moved { offset: u64 },
    Fin { offset: u64 },
    Ping { token: u64 },
    Pong { token: u64 },
    Reject { reason: RejectReason },
    Rewind { offset: u64 },
}

/// A frame that cannot be decoded; the path that carried it is ended.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ParseError {
    #[error("frame type {0} is unknown")]
    UnknownType(u8),
    #[error("frame payload of {0} bytes exceeds the limit of {MAX_PAYLOAD}")]
    TooLong(usize),
    #[error("frame type {kind} has a payload of {len} bytes, expected {expected}")]
    BadLength {
        kind: u8,
        len: usize,
        expected: &'static str,
    },
    #[error("HELLO does not start with the SNSW magic")]
    BadMagic,
    #[error("DATA at offset {0} overflows the 64-bit stream offset")]
    OffsetOverflow(u64),
}

/// A checked view of a frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub kind: u8,
    pub len: usize,
}

impl Header {
    /// Reads the header from the first [`HEADER_LEN`] bytes.
    ///
    /// # Errors
    /// An unknown type, or a length above [`MAX_PAYLOAD`].
    pub fn parse(b: &[u8; HEADER_LEN]) -> Result<Self, ParseError> {
        let kind = b[field::TYPE];
        if !(1..=12).contains(&kind) {
            return Err(ParseError::UnknownType(kind));
        }
        let mut len = [0u8; 4];
        len.copy_from_slice(&b[field::LEN]);
        let len = u32::from_be_bytes(len) as usize;
        if len > MAX_PAYLOAD {
            return Err(ParseError::TooLong(len));
        }
        Ok(Self { kind, len })
    }
}

fn u64_at(p: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    if let Some(s) = p.get(at..at + 8) {
        b.copy_from_slice(s);
    }
    u64::from_be_bytes(b)
}

fn session_at(p: &[u8], at: usize) -> SessionId {
    let mut b = [0u8; 16];
    if let Some(s) = p.get(at..at + 16) {
        b.copy_from_slice(s);
    }
    SessionId(b)
}

impl<'a> Frame<'a> {
    /// Decodes the payload of a frame whose header was `h`.
    ///
    /// # Errors
    /// A payload whose length does not fit its type, a HELLO without the magic, or DATA whose
    /// end would pass 2^64.
    pub fn parse(h: Header, p: &'a [u8]) -> Result<Self, ParseError> {
        let want = |n: usize, expected: &'static str| {
            if p.len() == n {
                Ok(())
            } else {
                Err(ParseError::BadLength {
                    kind: h.kind,
                    len: p.len(),
                    expected,
                })
            }
        };
        Ok(match h.kind {
            1 | 2 => {
                let (hello, n, what) = (h.kind == 1, if h.kind == 1 { 21 } else { 17 }, "21/17");
                want(n, what)?;
                let base = if hello {
                    if p.get(0..4) != Some(&MAGIC[..]) {
                        return Err(ParseError::BadMagic);
                    }
                    4
                } else {
                    0
                };
                let version = p.get(base).copied().unwrap_or(0);
                let session = session_at(p, base + 1);
                if hello {
                    Frame::Hello { version, session }
                } else {
                    Frame::HelloOk { version, session }
                }
            }
            3 => {
                if p.len() < 8 {
                    return Err(ParseError::BadLength {
                        kind: 3,
                        len: p.len(),
                        expected: "at least 8",
                    });
                }
                let offset = u64_at(p, 0);
                let bytes = p.get(8..).unwrap_or(&[]);
                if offset.checked_add(bytes.len() as u64).is_none() {
                    return Err(ParseError::OffsetOverflow(offset));
                }
                Frame::Data { offset, bytes }
            }
            5 => {
                want(24, "24")?;
                Frame::Join {
                    session: session_at(p, 0),
                    next: u64_at(p, 16),
                }
            }
            11 => {
                want(1, "1")?;
                Frame::Reject {
                    reason: RejectReason::from_code(p.first().copied().unwrap_or(0)),
                }
            }
            kind => {
                want(8, "8")?;
                let v = u64_at(p, 0);
                match kind {
                    4 => Frame::Ack { offset: v },
                    6 => Frame::JoinOk { next: v },
                    7 => Frame::Moved { offset: v },
                    8 => Frame::Fin { offset: v },
                    9 => Frame::Ping { token: v },
                    10 => Frame::Pong { token: v },
                    12 => Frame::Rewind { offset: v },
                    other => return Err(ParseError::UnknownType(other)),
                }
            }
        })
    }

    fn kind(&self) -> u8 {
        match self {
            Frame::Hello { .. } => 1,
            Frame::HelloOk { .. } => 2,
            Frame::Data { .. } => 3,
            Frame::Ack { .. } => 4,
            Frame::Join { .. } => 5,
            Frame::JoinOk { .. } => 6,
            Frame::Moved { .. } => 7,
            Frame::Fin { .. } => 8,
            Frame::Ping { .. } => 9,
            Frame::Pong { .. } => 10,
            Frame::Reject { .. } => 11,
            Frame::Rewind { .. } => 12,
        }
    }

    /// The payload length of this frame.
    pub fn payload_len(&self) -> usize {
        match self {
            Frame::Hello { .. } => 21,
            Frame::HelloOk { .. } => 17,
            Frame::Data { bytes, .. } => 8 + bytes.len(),
            Frame::Join { .. } => 24,
            Frame::Reject { .. } => 1,
            _ => 8,
        }
    }

    /// The whole frame's length on the wire.
    pub fn len(&self) -> usize {
        HEADER_LEN + self.payload_len()
    }

    /// Never true: every frame has at least a header.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Appends the frame's bytes to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.push(self.kind());
        out.extend_from_slice(&(self.payload_len() as u32).to_be_bytes());
        match self {
            Frame::Hello { version, session } => {
                out.extend_from_slice(&MAGIC);
                out.push(*version);
                out.extend_from_slice(&session.0);
            }
            Frame::HelloOk { version, session } => {
                out.push(*version);
                out.extend_from_slice(&session.0);
            }
            Frame::Data { offset, bytes } => {
                out.extend_from_slice(&offset.to_be_bytes());
                out.extend_from_slice(bytes);
            }
            Frame::Join { session, next } => {
                out.extend_from_slice(&session.0);
                out.extend_from_slice(&next.to_be_bytes());
            }
            Frame::Reject { reason } => out.push(reason.code()),
            Frame::Ack { offset: v }
            | Frame::JoinOk { next: v }
            | Frame::Moved { offset: v }
            | Frame::Fin { offset: v }
            | Frame::Ping { token: v }
            | Frame::Pong { token: v }
            | Frame::Rewind { offset: v } => out.extend_from_slice(&v.to_be_bytes()),
        }
    }
}

/// Appends a DATA header for `len` bytes at `offset`; the caller appends the bytes.
pub fn emit_data_header(offset: u64, len: usize, out: &mut Vec<u8>) {
    out.push(3);
    out.extend_from_slice(&((8 + len) as u32).to_be_bytes());
    out.extend_from_slice(&offset.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(f: Frame<'_>) {
        let mut out = Vec::new();
        f.emit(&mut out);
        assert_eq!(out.len(), f.len());
        let mut hb = [0u8; HEADER_LEN];
        hb.copy_from_slice(&out[..HEADER_LEN]);
        let h = Header::parse(&hb).unwrap();
        assert_eq!(h.len, out.len() - HEADER_LEN);
        assert_eq!(Frame::parse(h, &out[HEADER_LEN..]).unwrap(), f);
    }

    #[test]
    fn every_frame_round_trips() {
        let s = SessionId([7; 16]);
        roundtrip(Frame::Hello {
            version: 1,
            session: s,
        });
        roundtrip(Frame::HelloOk {
            version: 1,
            session: s,
        });
        roundtrip(Frame::Data {
            offset: 1 << 40,
            bytes: b"abc",
        });
        roundtrip(Frame::Data {
            offset: 0,
            bytes: b"",
        });
        roundtrip(Frame::Ack { offset: 5 });
        roundtrip(Frame::Join {
            session: s,
            next: 99,
        });
        roundtrip(Frame::JoinOk { next: 3 });
        roundtrip(Frame::Moved { offset: 4 });
        roundtrip(Frame::Fin { offset: 8 });
        roundtrip(Frame::Ping { token: 1 });
        roundtrip(Frame::Pong { token: 2 });
        roundtrip(Frame::Reject {
            reason: RejectReason::UnknownSession,
        });
        roundtrip(Frame::Rewind { offset: 1 << 33 });
    }

    #[test]
    fn literal_bytes() {
        let mut out = Vec::new();
        Frame::Data {
            offset: 0x0102,
            bytes: b"hi",
        }
        .emit(&mut out);
        assert_eq!(out, [3, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 1, 2, b'h', b'i']);
        let mut d = Vec::new();
        emit_data_header(0x0102, 2, &mut d);
        d.extend_from_slice(b"hi");
        assert_eq!(d, out);
        out.clear();
        Frame::Moved { offset: 0xff }.emit(&mut out);
        assert_eq!(out, [7, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0xff]);
        out.clear();
        Frame::Rewind { offset: 0x0102 }.emit(&mut out);
        assert_eq!(out, [12, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 1, 2]);
        let h = Header::parse(&[12, 0, 0, 0, 8]).unwrap();
        assert_eq!(
            Frame::parse(h, &[0, 0, 0, 0, 0, 0, 0, 9]),
            Ok(Frame::Rewind { offset: 9 })
        );
        assert!(Frame::parse(Header { kind: 12, len: 9 }, &[0; 9]).is_err());
    }

    #[test]
    fn rejects_what_it_must() {
        assert_eq!(
            Header::parse(&[0, 0, 0, 0, 0]),
            Err(ParseError::UnknownType(0))
        );
        assert_eq!(
            Header::parse(&[13, 0, 0, 0, 0]),
            Err(ParseError::UnknownType(13))
        );
        assert_eq!(
            Header::parse(&[3, 0xff, 0xff, 0xff, 0xff]),
            Err(ParseError::TooLong(u32::MAX as usize))
        );
        let h = Header { kind: 4, len: 7 };
        assert!(matches!(
            Frame::parse(h, &[0; 7]),
            Err(ParseError::BadLength { .. })
        ));
        let h = Header { kind: 1, len: 21 };
        assert_eq!(Frame::parse(h, &[0; 21]), Err(ParseError::BadMagic));
        let h = Header { kind: 3, len: 9 };
        let mut p = u64::MAX.to_be_bytes().to_vec();
        p.push(1);
        assert_eq!(
            Frame::parse(h, &p),
            Err(ParseError::OffsetOverflow(u64::MAX))
        );
        let h = Header { kind: 3, len: 3 };
        assert!(Frame::parse(h, &[0; 3]).is_err());
    }
}
