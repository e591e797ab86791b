//! ICMP echo request and reply (RFC 792 for IPv4, RFC 4443 §4 for IPv6), for
//! `sonde latency --icmp`.
//!
//! Message layout: type (1), code (1), checksum (2), identifier (2), sequence (2), data. sonde
//! puts its own 64-bit sequence number and the send time (wall-clock ns) in the first 16 data
//! bytes, so the 16-bit ICMP sequence may wrap without confusing the statistics; the rest of
//! the data is padding. `--size` counts the data (ping's `-s`), not the 8-byte ICMP header.
//!
//! Raw IPv4 sockets deliver the IP header before the message ([`strip_ipv4_header`]); ICMPv6
//! sockets never do. ICMPv6 checksums cover a pseudo-header the kernel computes, and
//! unprivileged "ping" sockets fill in identifier and checksum themselves, so only raw IPv4
//! needs [`checksum`].
//!
//! ```
//! use sonde_proto::icmp::{parse_reply, echo_request, Family};
//! let mut req = echo_request(Family::V4, 7, 42, 100, 16);
//! req[0] = 0; // as if the peer answered (type 0 = echo reply)
//! let r = parse_reply(Family::V4, &req).unwrap();
//! assert_eq!((r.ident, r.seq, r.send_ns), (7, 42, 100));
//! ```

use thiserror::Error;

/// The ICMP header length.
pub const ICMP_HEADER_LEN: usize = 8;
/// Data bytes sonde needs for its sequence and timestamp (the smallest `--size`).
pub const MIN_DATA_LEN: usize = 16;

/// IPv4 (ICMP) or IPv6 (ICMPv6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    V4,
    V6,
}

impl Family {
    fn request_type(self) -> u8 {
        match self {
            Family::V4 => 8,
            Family::V6 => 128,
        }
    }
    fn reply_type(self) -> u8 {
        match self {
            Family::V4 => 0,
            Family::V6 => 129,
        }
    }
}

/// A parsed echo reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EchoReply {
    pub ident: u16,
    pub icmp_seq: u16,
    /// sonde's sequence number from the data.
    pub seq: u64,
    /// Send time from the data.
    pub send_ns: u64,
    /// Data bytes (without the ICMP header).
    pub data_len: usize,
}

/// Why a message is not an echo reply sonde can use.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum IcmpError {
    #[error("{0}-byte ICMP message is too short for an echo reply with sonde data")]
    TooShort(usize),
    #[error("ICMP type {0} is not an echo reply")]
    NotReply(u8),
    #[error("malformed IPv4 header")]
    BadIpHeader,
}

/// The Internet checksum (RFC 1071) over `data`.
pub fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [b] = chunks.remainder() {
        sum += u32::from(*b) << 8;
    }
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// An echo request with `data_len` data bytes (at least [`MIN_DATA_LEN`]); the checksum is
/// filled in for IPv4 (ICMPv6's is the kernel's job).
pub fn echo_request(
    family: Family,
    ident: u16,
    seq: u64,
    send_ns: u64,
    data_len: usize,
) -> Vec<u8> {
    let data_len = data_len.max(MIN_DATA_LEN);
    let mut m = vec![0u8; ICMP_HEADER_LEN + data_len];
    m[0] = family.request_type();
    m[4..6].copy_from_slice(&ident.to_be_bytes());
    m[6..8].copy_from_slice(&(seq as u16).to_be_bytes());
    m[8..16].copy_from_slice(&seq.to_be_bytes());
    m[16..24].copy_from_slice(&send_ns.to_be_bytes());
    for (i, b) in m[24..].iter_mut().enumerate() {
        *b = (i % 251) as u8;
    }
    if family == Family::V4 {
        let c = checksum(&m);
        m[2..4].copy_from_slice(&c.to_be_bytes());
    }
    m
}

/// Parses an echo reply (the ICMP message, no IP header).
///
/// # Errors
/// [`IcmpError`] for other ICMP types and messages too short for sonde's data.
pub fn parse_reply(family: Family, m: &[u8]) -> Result<EchoReply, IcmpError> {
    if m.len() < ICMP_HEADER_LEN + MIN_DATA_LEN {
        return Err(IcmpError::TooShort(m.len()));
    }
    if m[0] != family.reply_type() {
        return Err(IcmpError::NotReply(m[0]));
    }
    let u64_at = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&m[i..i + 8]);
        u64::from_be_bytes(b)
    };
    Ok(EchoReply {
        ident: u16::from_be_bytes([m[4], m[5]]),
        icmp_seq: u16::from_be_bytes([m[6], m[7]]),
        seq: u64_at(8),
        send_ns: u64_at(16),
        data_len: m.len() - ICMP_HEADER_LEN,
    })
}

/// The ICMP message inside an IPv4 packet as a raw socket delivers it.
///
/// # Errors
/// [`IcmpError::BadIpHeader`] when the header length is impossible.
pub fn strip_ipv4_header(p: &[u8]) -> Result<&[u8], IcmpError> {
    let first = *p.first().ok_or(IcmpError::BadIpHeader)?;
    let ihl = usize::from(first & 0x0F) * 4;
    if first >> 4 != 4 || ihl < 20 {
        return Err(IcmpError::BadIpHeader);
    }
    p.get(ihl..).ok_or(IcmpError::BadIpHeader)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3 example words 0001 f203 f4f5 f6f7 sum to ddf2; the checksum is ~ddf2.
        assert_eq!(
            checksum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
            !0xddf2
        );
        assert_eq!(checksum(&[0xff]), !0xff00);
    }

    #[test]
    fn v4_request_literal_header_and_valid_checksum() {
        let m = echo_request(Family::V4, 0x1234, 0x1_0005, 9, 16);
        assert_eq!(m.len(), 24);
        assert_eq!(&m[..2], &[8, 0]);
        assert_eq!(&m[4..8], &[0x12, 0x34, 0x00, 0x05], "16-bit sequence wraps");
        assert_eq!(checksum(&m), 0, "a message with its checksum sums to zero");
        let v6 = echo_request(Family::V6, 1, 1, 1, 3);
        assert_eq!((v6[0], v6.len(), &v6[2..4]), (128, 24, &[0u8, 0][..]));
    }

    #[test]
    fn replies_and_rejections() {
        let mut m = echo_request(Family::V6, 3, 77, 5, 56);
        assert_eq!(parse_reply(Family::V6, &m), Err(IcmpError::NotReply(128)));
        m[0] = 129;
        let r = parse_reply(Family::V6, &m).unwrap();
        assert_eq!((r.seq, r.send_ns, r.data_len, r.icmp_seq), (77, 5, 56, 77));
        assert_eq!(
            parse_reply(Family::V6, &m[..20]),
            Err(IcmpError::TooShort(20))
        );
        let mut ip = vec![0x45u8; 20];
        ip.extend_from_slice(&m);
        assert_eq!(strip_ipv4_header(&ip).unwrap(), &m[..]);
        assert!(strip_ipv4_header(&[0x41]).is_err());
        assert!(strip_ipv4_header(&[0x4f, 0, 0]).is_err());
        assert!(strip_ipv4_header(&[]).is_err());
    }
}
