//! Latency probes: the UDP request/reply format of `sonde latency` (and its TCP-RR framing).
//!
//! A client sends a [`Probe`] of kind [`ProbeKind::Request`]; the server's responder answers with
//! the same bytes (same length, so the reply can never be larger than the request: a public
//! server is no amplifier), the kind changed to [`ProbeKind::Reply`] and its receive and send
//! times and request count filled in. With the four timestamps of a probe (client send, server
//! receive, server send, client receive) the client computes the round trip without the server's
//! turnaround and, with synchronised clocks or an estimated offset, both one-way delays (the
//! NTP on-wire calculation, RFC 5905 §8). The server's count of requests received in the session
//! splits loss into upstream (requests that never arrived) and downstream (replies lost).
//!
//! Layout (network byte order), [`HEADER_LEN`] = 56 bytes, then zero or more padding bytes up to
//! the probe size the user asked for:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `SNDP` |
//! | 4 | 1 | version (1) |
//! | 5 | 1 | kind: 1 request, 2 reply, 3 count query, 4 count reply |
//! | 6 | 2 | reserved, zero |
//! | 8 | 8 | session token, chosen by the client, echoed |
//! | 16 | 8 | sequence number (from 1; a count query carries 0) |
//! | 24 | 8 | client send time, ns since the Unix epoch (client's clock) |
//! | 32 | 8 | server receive time, ns since the Unix epoch (server's clock; 0 in a request) |
//! | 40 | 8 | server send time, ns since the Unix epoch (server's clock; 0 in a request) |
//! | 48 | 8 | requests of this session the server has received (0 in a request) |
//!
//! Times are wall-clock (`CLOCK_REALTIME`) nanoseconds because that is the clock NTP and PTP
//! synchronise; a one-way delay between two monotonic clocks would mean nothing.
//!
//! ```
//! use sonde_proto::probe::{Probe, ProbeKind, HEADER_LEN};
//! let p = Probe::request(9, 1, 1_000);
//! let mut buf = [0u8; 64];
//! p.emit(&mut buf).unwrap();
//! let back = Probe::parse(&buf).unwrap();
//! assert_eq!((back.kind, back.seq, HEADER_LEN), (ProbeKind::Request, 1, 56));
//! ```

use thiserror::Error;

/// Magic bytes opening every probe.
pub const MAGIC: &[u8; 4] = b"SNDP";
/// Version byte of this format.
pub const VERSION: u8 = 1;
/// Size of the probe header, also the smallest UDP probe.
pub const HEADER_LEN: usize = 56;
/// The largest UDP payload over IPv4 (65535 - 20 - 8), the largest probe.
pub const MAX_PROBE_LEN: usize = 65_507;

/// What a probe asks or answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeKind {
    Request,
    Reply,
    /// "How many requests of this session have you received?" (sent at the end of a run).
    CountQuery,
    CountReply,
}

impl ProbeKind {
    fn code(self) -> u8 {
        match self {
            ProbeKind::Request => 1,
            ProbeKind::Reply => 2,
            ProbeKind::CountQuery => 3,
            ProbeKind::CountReply => 4,
        }
    }
    fn from_code(c: u8) -> Option<Self> {
        Some(match c {
            1 => ProbeKind::Request,
            2 => ProbeKind::Reply,
            3 => ProbeKind::CountQuery,
            4 => ProbeKind::CountReply,
            _ => return None,
        })
    }
    /// True for the kinds a client sends (the responder answers these).
    pub fn is_query(self) -> bool {
        matches!(self, ProbeKind::Request | ProbeKind::CountQuery)
    }
}

/// A parsed probe header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    pub kind: ProbeKind,
    pub token: u64,
    pub seq: u64,
    pub client_send_ns: u64,
    pub server_recv_ns: u64,
    pub server_send_ns: u64,
    pub server_count: u64,
}

/// Why bytes are not a probe.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProbeError {
    #[error("{0}-byte datagram is shorter than the {HEADER_LEN}-byte sonde probe header")]
    TooShort(usize),
    #[error("datagram does not start with the sonde probe magic")]
    BadMagic,
    #[error("unsupported probe version {0}")]
    BadVersion(u8),
    #[error("unknown probe kind {0}")]
    BadKind(u8),
    #[error("a probe request has sequence number 0")]
    ZeroSequence,
}

fn u64_at(buf: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&buf[at..at + 8]);
    u64::from_be_bytes(b)
}

/// True when `buf` starts with the probe magic (a cheap test before [`Probe::parse`]).
pub fn looks_like_probe(buf: &[u8]) -> bool {
    buf.starts_with(MAGIC)
}

impl Probe {
    /// A request with the client's send time.
    pub fn request(token: u64, seq: u64, client_send_ns: u64) -> Self {
        Self {
            kind: ProbeKind::Request,
            token,
            seq,
            client_send_ns,
            server_recv_ns: 0,
            server_send_ns: 0,
            server_count: 0,
        }
    }

    /// Parses the header at the start of `buf` (padding after it is ignored).
    ///
    /// # Errors
    /// [`ProbeError`] for short buffers, wrong magic, version or kind, and requests with
    /// sequence number 0.
    pub fn parse(buf: &[u8]) -> Result<Self, ProbeError> {
        if buf.len() < HEADER_LEN {
            return Err(ProbeError::TooShort(buf.len()));
        }
        if &buf[..4] != MAGIC {
            return Err(ProbeError::BadMagic);
        }
        if buf[4] != VERSION {
            return Err(ProbeError::BadVersion(buf[4]));
        }
        let kind = ProbeKind::from_code(buf[5]).ok_or(ProbeError::BadKind(buf[5]))?;
        let p = Self {
            kind,
            token: u64_at(buf, 8),
            seq: u64_at(buf, 16),
            client_send_ns: u64_at(buf, 24),
            server_recv_ns: u64_at(buf, 32),
            server_send_ns: u64_at(buf, 40),
            server_count: u64_at(buf, 48),
        };
        if matches!(kind, ProbeKind::Request | ProbeKind::Reply) && p.seq == 0 {
            return Err(ProbeError::ZeroSequence);
        }
        Ok(p)
    }

    /// Writes the header into the first [`HEADER_LEN`] bytes of `buf`; the rest is untouched.
    ///
    /// # Errors
    /// [`ProbeError::TooShort`] when `buf` cannot hold the header.
    pub fn emit(&self, buf: &mut [u8]) -> Result<(), ProbeError> {
        let len = buf.len();
        let h = buf.get_mut(..HEADER_LEN).ok_or(ProbeError::TooShort(len))?;
        h[..4].copy_from_slice(MAGIC);
        h[4] = VERSION;
        h[5] = self.kind.code();
        h[6] = 0;
        h[7] = 0;
        for (i, v) in [
            self.token,
            self.seq,
            self.client_send_ns,
            self.server_recv_ns,
            self.server_send_ns,
            self.server_count,
        ]
        .iter()
        .enumerate()
        {
            h[8 + 8 * i..16 + 8 * i].copy_from_slice(&v.to_be_bytes());
        }
        Ok(())
    }

    /// The answer to this query: the same token, sequence and client time, the server's times
    /// and count filled in. None when this probe is itself an answer (never answer answers:
    /// two responders must not ping-pong).
    pub fn answer(&self, server_recv_ns: u64, server_send_ns: u64, count: u64) -> Option<Self> {
        let kind = match self.kind {
            ProbeKind::Request => ProbeKind::Reply,
            ProbeKind::CountQuery => ProbeKind::CountReply,
            ProbeKind::Reply | ProbeKind::CountReply => return None,
        };
        Some(Self {
            kind,
            server_recv_ns,
            server_send_ns,
            server_count: count,
            ..*self
        })
    }
}

/// Bytes after the `SONDE/R1` preamble of a TCP request/response connection: the transaction
/// size (u32, big-endian). Each transaction is then that many bytes from the client, echoed by
/// the server.
pub const RR_HEADER_LEN: usize = 4;

/// Parses the TCP-RR transaction size.
///
/// # Errors
/// [`ProbeError::TooShort`] for fewer than 4 bytes; sizes of 0 or above [`MAX_PROBE_LEN`] are
/// reported as [`ProbeError::BadKind`] with the low byte (the caller closes the connection).
pub fn parse_rr_size(buf: &[u8]) -> Result<usize, ProbeError> {
    let b: [u8; 4] = buf
        .get(..RR_HEADER_LEN)
        .and_then(|s| s.try_into().ok())
        .ok_or(ProbeError::TooShort(buf.len()))?;
    let n = u32::from_be_bytes(b) as usize;
    if n == 0 || n > MAX_PROBE_LEN {
        return Err(ProbeError::BadKind(b[3]));
    }
    Ok(n)
}

/// Opens a server's refusal of a tcp-rr connection (beyond `--max-clients`), sent instead of
/// the first echo: the magic, the message length (u16, big-endian), the UTF-8 message; then
/// the server closes. An echo always starts with the zero high byte of the client's sequence
/// number (or a zero pad), so a reply whose first byte is `S` can only be a refusal.
pub const RR_REFUSAL_MAGIC: &[u8; 8] = b"SONDE/RX";
/// Longest refusal message; longer ones are cut (at a character boundary).
pub const MAX_RR_REFUSAL_MSG: usize = 512;
/// Longest refusal on the wire.
pub const MAX_RR_REFUSAL_LEN: usize = RR_REFUSAL_MAGIC.len() + 2 + MAX_RR_REFUSAL_MSG;

/// A tcp-rr refusal carrying `msg` (cut to [`MAX_RR_REFUSAL_MSG`] bytes).
pub fn emit_rr_refusal(msg: &str) -> Vec<u8> {
    let mut end = msg.len().min(MAX_RR_REFUSAL_MSG);
    while !msg.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = RR_REFUSAL_MAGIC.to_vec();
    out.extend_from_slice(&(end as u16).to_be_bytes());
    out.extend_from_slice(&msg.as_bytes()[..end]);
    out
}

/// The message of a tcp-rr refusal; `None` when `buf` is not a complete, well-formed one.
pub fn parse_rr_refusal(buf: &[u8]) -> Option<String> {
    let rest = buf.strip_prefix(RR_REFUSAL_MAGIC.as_slice())?;
    let len = usize::from(u16::from_be_bytes(rest.get(..2)?.try_into().ok()?));
    if len > MAX_RR_REFUSAL_MSG {
        return None;
    }
    let msg = rest.get(2..2 + len)?;
    Some(String::from_utf8_lossy(msg).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_literal_bytes() {
        let mut buf = [0xEEu8; 60];
        Probe::request(0x0102, 3, 4).emit(&mut buf).unwrap();
        let mut want = vec![b'S', b'N', b'D', b'P', 1, 1, 0, 0];
        for v in [0x0102u64, 3, 4, 0, 0, 0] {
            want.extend_from_slice(&v.to_be_bytes());
        }
        assert_eq!(&buf[..HEADER_LEN], &want[..]);
        assert_eq!(&buf[HEADER_LEN..], &[0xEE; 4], "padding untouched");
        assert_eq!(Probe::parse(&buf).unwrap(), Probe::request(0x0102, 3, 4));
    }

    #[test]
    fn answer_fills_server_fields_and_never_answers_a_reply() {
        let r = Probe::request(7, 5, 100).answer(200, 210, 5).unwrap();
        assert_eq!(r.kind, ProbeKind::Reply);
        assert_eq!((r.token, r.seq, r.client_send_ns), (7, 5, 100));
        assert_eq!(
            (r.server_recv_ns, r.server_send_ns, r.server_count),
            (200, 210, 5)
        );
        assert!(r.answer(1, 2, 3).is_none());
        let mut q = Probe::request(7, 0, 0);
        q.kind = ProbeKind::CountQuery;
        assert_eq!(q.answer(1, 2, 9).unwrap().kind, ProbeKind::CountReply);
    }

    #[test]
    fn rejects_what_it_must() {
        assert_eq!(Probe::parse(&[0; 10]), Err(ProbeError::TooShort(10)));
        let mut b = [0u8; HEADER_LEN];
        assert_eq!(Probe::parse(&b), Err(ProbeError::BadMagic));
        Probe::request(1, 1, 1).emit(&mut b).unwrap();
        b[4] = 2;
        assert_eq!(Probe::parse(&b), Err(ProbeError::BadVersion(2)));
        b[4] = 1;
        b[5] = 9;
        assert_eq!(Probe::parse(&b), Err(ProbeError::BadKind(9)));
        Probe::request(1, 0, 1).emit(&mut b).unwrap();
        assert_eq!(Probe::parse(&b), Err(ProbeError::ZeroSequence));
        assert!(Probe::request(1, 1, 1).emit(&mut [0; 55]).is_err());
    }

    #[test]
    fn hello_and_data_are_not_probes() {
        assert!(!looks_like_probe(b"SNDH\x01"));
        assert!(!looks_like_probe(&[0, 0, 0, 0, 0, 0, 0, 1]));
        assert!(looks_like_probe(b"SNDP\x01"));
    }

    #[test]
    fn rr_size_bounds() {
        assert_eq!(parse_rr_size(&[0, 0, 0, 56]), Ok(56));
        assert!(parse_rr_size(&[0, 0, 0, 0]).is_err());
        assert!(parse_rr_size(&[0, 1, 0, 0, 9]).is_err());
        assert!(parse_rr_size(&[0, 0]).is_err());
    }

    #[test]
    fn rr_refusal_literal_bytes_and_bounds() {
        let b = emit_rr_refusal("busy");
        assert_eq!(b, b"SONDE/RX\x00\x04busy");
        assert_eq!(parse_rr_refusal(&b).as_deref(), Some("busy"));
        assert_eq!(parse_rr_refusal(&b[..b.len() - 1]), None);
        assert_eq!(parse_rr_refusal(b"SONDE/RX\x02\x01"), None);
        assert_eq!(parse_rr_refusal(&[0u8; 16]), None);
        let long = "é".repeat(400);
        let b = emit_rr_refusal(&long);
        assert!(b.len() <= MAX_RR_REFUSAL_LEN);
        assert_eq!(parse_rr_refusal(&b).unwrap().chars().count(), 256);
    }
}
