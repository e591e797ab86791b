//! The header at the start of every `--bounceback` request and its echo.
//!
//! A bounceback client writes `size` bytes at a time on a TCP connection; each write starts
//! with this header and the server writes the same number of bytes back, the header with its
//! own receive and send times filled in. The first request is also the test request: its
//! flags carry [`BOUNCEBACK`](super::client_hdr::flags::BOUNCEBACK) instead of a
//! [`client_hdr`](super::client_hdr).
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | flags (2.1.8: `0x0080_0000`, bounceback) |
//! | 4 | 4 | size of each request and reply, header included (`--bounceback-bytes`, 100) |
//! | 8 | 4 | request number, from 1 |
//! | 12 | 2 | bounceback flags ([`QUICKACK`] unless `--bounceback-no-quickack`, [`CLOCK_SYNCED`], [`TOS_SET`], [`STOP`]) |
//! | 14 | 2 | TOS for the reply (filler `0x5a5a` unless [`TOS_SET`]) |
//! | 16 | 4 | run time, 10 ms units (2.1.8 sends 0) |
//! | 20 | 8 | client's send time (s, us) |
//! | 28 | 8 | server's receive time (the client sends all ones) |
//! | 36 | 8 | server's send time (likewise) |
//! | 44 | 4 | hold between the server's read and its write, microseconds (`--bounceback-hold 5` sends 5000) |
//! | 48 | 4 | round-trip time (optional; filler `0x5a5a5a5a` from 2.1.8) |
//! | 52 | 8 | read time (optional; filler likewise) |
//!
//! The first 48 bytes are required; the last 12 are read when the bytes hold them.

use super::{Iperf2Error, Reader, Refusal, Timestamp, MAX_DURATION_CS, MAX_LEN};

/// Bounceback flag: the server sets TCP quick-ack.
pub const QUICKACK: u16 = 0x8000;
/// Bounceback flag: both clocks are synchronised (one-way times are meaningful).
pub const CLOCK_SYNCED: u16 = 0x4000;
/// Bounceback flag: the reply's TOS is in the header.
pub const TOS_SET: u16 = 0x2000;
/// Bounceback flag: the last request.
pub const STOP: u16 = 0x1000;
/// Bytes every bounceback header has.
pub const MIN_LEN: usize = 48;
/// Bytes with the optional round-trip and read-time fields.
pub const LEN: usize = 60;
/// Longest hold accepted: one second.
pub const MAX_HOLD_US: u32 = 1_000_000;

/// The optional tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BounceTail {
    pub rtt: u32,
    pub read: Timestamp,
}

/// A bounceback header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BouncebackHeader {
    pub flags: u32,
    pub size: u32,
    pub id: u32,
    pub bb_flags: u16,
    pub tos: u16,
    pub run_time: u32,
    pub client_tx: Timestamp,
    pub server_rx: Timestamp,
    pub server_tx: Timestamp,
    pub hold: u32,
    pub tail: Option<BounceTail>,
}

impl BouncebackHeader {
    /// Reads a header; returns it and the bytes it takes (48 or 60).
    ///
    /// # Errors
    /// [`Iperf2Error::Short`] below 48 bytes.
    pub fn parse(buf: &[u8]) -> Result<(Self, usize), Iperf2Error> {
        let mut r = Reader::new(buf, "iperf2 bounceback header");
        r.need(MIN_LEN)?;
        let mut h = BouncebackHeader {
            flags: r.u32()?,
            size: r.u32()?,
            id: r.u32()?,
            bb_flags: r.u16()?,
            tos: r.u16()?,
            run_time: r.u32()?,
            client_tx: r.ts()?,
            server_rx: r.ts()?,
            server_tx: r.ts()?,
            hold: r.u32()?,
            tail: None,
        };
        if r.remaining() >= LEN - MIN_LEN {
            h.tail = Some(BounceTail {
                rtt: r.u32()?,
                read: r.ts()?,
            });
        }
        Ok((h, r.at()))
    }

    /// Appends the header to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        for v in [self.flags, self.size, self.id] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        out.extend_from_slice(&self.bb_flags.to_be_bytes());
        out.extend_from_slice(&self.tos.to_be_bytes());
        out.extend_from_slice(&self.run_time.to_be_bytes());
        for t in [self.client_tx, self.server_rx, self.server_tx] {
            super::put_ts(out, t);
        }
        out.extend_from_slice(&self.hold.to_be_bytes());
        if let Some(t) = &self.tail {
            out.extend_from_slice(&t.rtt.to_be_bytes());
            super::put_ts(out, t.read);
        }
    }

    /// Bytes [`emit`](Self::emit) writes.
    pub fn len(&self) -> usize {
        if self.tail.is_some() {
            LEN
        } else {
            MIN_LEN
        }
    }

    /// Never empty; here for the `len` convention.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The reply to this request: the same header with the server's times.
    pub fn reply(&self, server_rx: Timestamp, server_tx: Timestamp) -> Self {
        BouncebackHeader {
            server_rx,
            server_tx,
            ..*self
        }
    }

    /// Refuses requests without the bounceback flag, sizes below the header or above
    /// [`MAX_LEN`], holds over a second, run times beyond a day and bad send times.
    pub fn check(&self) -> Result<(), Refusal> {
        if self.flags & super::client_hdr::flags::BOUNCEBACK == 0 {
            return Err(Refusal::NotBounceback);
        }
        let size = i64::from(self.size);
        if size < MIN_LEN as i64 || size > MAX_LEN {
            return Err(Refusal::Length(size));
        }
        if self.hold > MAX_HOLD_US {
            return Err(Refusal::Hold(self.hold));
        }
        if i64::from(self.run_time) > MAX_DURATION_CS {
            return Err(Refusal::Duration(i64::from(self.run_time)));
        }
        self.client_tx.check()
    }
}

#[cfg(test)]
mod tests {
    use super::super::captures::{self, hex};
    use super::*;

    #[test]
    fn captured_request_and_reply() {
        let b = hex(captures::BOUNCEBACK_REQUEST);
        let (q, n) = BouncebackHeader::parse(&b).unwrap();
        assert_eq!((n, q.len()), (LEN, LEN));
        assert_eq!((q.size, q.id, q.bb_flags, q.hold), (100, 1, QUICKACK, 0));
        assert_eq!(q.server_rx, Timestamp::UNSET);
        assert_eq!(q.client_tx.usec, 446_507);
        q.check().unwrap();
        let mut out = Vec::new();
        q.emit(&mut out);
        assert_eq!(out, b);

        let b = hex(captures::BOUNCEBACK_REPLY);
        let (p, _) = BouncebackHeader::parse(&b).unwrap();
        assert_eq!(q.reply(p.server_rx, p.server_tx), p);
        assert_eq!(p.server_tx.usec, 447_749);
        let mut out = Vec::new();
        p.emit(&mut out);
        assert_eq!(out, b);
    }

    #[test]
    fn hold_is_in_microseconds_and_quickack_is_the_default() {
        let (h, _) = BouncebackHeader::parse(&hex(captures::BOUNCEBACK_HOLD5)).unwrap();
        assert_eq!((h.hold, h.bb_flags), (5000, QUICKACK));
        h.check().unwrap();
        let b = hex(captures::BOUNCEBACK_NO_QUICKACK);
        let (n, _) = BouncebackHeader::parse(&b).unwrap();
        assert_eq!(n.bb_flags, 0);
        let mut out = Vec::new();
        n.emit(&mut out);
        assert_eq!(out, b);
    }

    #[test]
    fn truncated_and_absurd_requests() {
        let b = hex(captures::BOUNCEBACK_REQUEST);
        for cut in 0..MIN_LEN {
            assert!(BouncebackHeader::parse(&b[..cut]).is_err());
        }
        let (short, n) = BouncebackHeader::parse(&b[..MIN_LEN + 5]).unwrap();
        assert_eq!((n, short.tail), (MIN_LEN, None));
        let (q, _) = BouncebackHeader::parse(&b).unwrap();
        let refuse = |f: &dyn Fn(&mut BouncebackHeader)| {
            let mut h = q;
            f(&mut h);
            h.check()
        };
        assert_eq!(refuse(&|h| h.flags = 0), Err(Refusal::NotBounceback));
        assert_eq!(refuse(&|h| h.size = 10), Err(Refusal::Length(10)));
        assert_eq!(
            refuse(&|h| h.size = u32::MAX),
            Err(Refusal::Length(i64::from(u32::MAX)))
        );
        assert_eq!(
            refuse(&|h| h.hold = 5_000_000),
            Err(Refusal::Hold(5_000_000))
        );
        assert_eq!(
            refuse(&|h| h.run_time = u32::MAX),
            Err(Refusal::Duration(i64::from(u32::MAX)))
        );
    }
}
