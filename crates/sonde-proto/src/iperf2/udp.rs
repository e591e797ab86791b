//! The 16-byte header at the start of every iperf 2 UDP datagram.
//!
//! Offset 0: sequence number, low 32 bits; 4: send time, seconds; 8: microseconds; 12: the
//! sequence number's high 32 bits. 2.1.8 always writes all 16 bytes and sets the client
//! header's [`SEQNO64B`](super::client_hdr::flags::SEQNO64B) flag, so the sequence number is
//! the 64-bit signed value of both halves; a peer without that flag has a 32-bit signed
//! sequence number in the first word only (see [`UdpDatagram::seq`]).
//!
//! Sequence numbers count up from 1. When the client is done it sends its last sequence
//! number negated, repeating it until the server's report arrives; a negative sequence
//! number therefore means "the test is over", not a datagram lost in the past.

use super::{Iperf2Error, Reader, Timestamp};

/// Bytes of the datagram header.
pub const LEN: usize = 16;

/// One datagram's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UdpDatagram {
    /// Low 32 bits of the sequence number.
    pub id: u32,
    /// The sender's clock at the write.
    pub sent: Timestamp,
    /// High 32 bits of the sequence number (64-bit senders), otherwise whatever was there.
    pub id2: u32,
}

impl UdpDatagram {
    /// The header for a signed 64-bit sequence number (both halves written).
    pub fn new(seq: i64, sent: Timestamp) -> Self {
        let raw = seq as u64;
        UdpDatagram {
            id: raw as u32,
            sent,
            id2: (raw >> 32) as u32,
        }
    }

    /// The sequence number: both halves when `wide` (the sender's flags said 64-bit),
    /// otherwise the first word as a signed 32-bit number.
    pub fn seq(&self, wide: bool) -> i64 {
        if wide {
            ((u64::from(self.id2) << 32) | u64::from(self.id)) as i64
        } else {
            i64::from(self.id as i32)
        }
    }

    /// Whether this is one of the client's final datagrams (a negative sequence number).
    pub fn is_final(&self, wide: bool) -> bool {
        self.seq(wide) < 0
    }

    /// Reads the header at the start of `buf`; returns it and [`LEN`].
    ///
    /// # Errors
    /// [`Iperf2Error::Short`] when `buf` holds fewer than 16 bytes.
    pub fn parse(buf: &[u8]) -> Result<(Self, usize), Iperf2Error> {
        let mut r = Reader::new(buf, "iperf2 UDP datagram header");
        r.need(LEN)?;
        let id = r.u32()?;
        let sent = r.ts()?;
        let id2 = r.u32()?;
        Ok((UdpDatagram { id, sent, id2 }, LEN))
    }

    /// Appends the 16 header bytes to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.id.to_be_bytes());
        super::put_ts(out, self.sent);
        out.extend_from_slice(&self.id2.to_be_bytes());
    }

    /// Bytes [`emit`](Self::emit) writes.
    pub fn len(&self) -> usize {
        LEN
    }

    /// Never empty; here for the `len` convention.
    pub fn is_empty(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::super::captures::{self, hex};
    use super::*;

    #[test]
    fn captured_first_and_final_datagrams() {
        let b = hex(captures::UDP_FIRST);
        let (h, n) = UdpDatagram::parse(&b).unwrap();
        assert_eq!(n, 16);
        assert_eq!(h.seq(true), 1);
        assert_eq!(h.sent.sec, 0x6b12_293b);
        assert_eq!(h.sent.usec, 798_144);
        assert!(!h.is_final(true));
        let mut out = Vec::new();
        h.emit(&mut out);
        assert_eq!(out, b);

        let b = hex(captures::UDP_FINAL);
        let (h, _) = UdpDatagram::parse(&b).unwrap();
        assert_eq!(h.seq(true), -89);
        assert_eq!(h.seq(false), -89);
        assert!(h.is_final(true));
        assert_eq!(UdpDatagram::new(-89, h.sent), h);
        let mut out = Vec::new();
        h.emit(&mut out);
        assert_eq!(out, b);
    }

    #[test]
    fn wide_and_narrow_sequence_numbers() {
        let h = UdpDatagram::new(0x1_0000_0002, Timestamp::default());
        assert_eq!((h.id, h.id2), (2, 1));
        assert_eq!(h.seq(true), 0x1_0000_0002);
        assert_eq!(h.seq(false), 2);
        let h = UdpDatagram {
            id: 0x8000_0000,
            ..h
        };
        assert!(h.is_final(false));
        for cut in 0..LEN {
            assert!(UdpDatagram::parse(&[0u8; LEN][..cut]).is_err());
        }
    }
}
