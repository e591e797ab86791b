//! iperf3's UDP datagram header and its UDP "connect" hello.
//!
//! Header, network byte order: seconds (u32), microseconds (u32) of the sender's clock, then
//! the sequence number, u32 by default or u64 with `udp_counters_64bit`. Sequence numbers
//! start at 1. The rest of the datagram is payload.
//!
//! Hello: once per stream the client sends a 4-byte datagram and the server answers with 4
//! bytes. On the wire since 3.17 they are ASCII `9876` and `6789`; 3.12-3.16 wrote the same
//! numbers in host byte order (so a big-endian host sends `6789` and expects `9876`), and older
//! clients sent 123456789 in host order and ignored the answer. [`HelloForm`] recognises all
//! four and [`HelloForm::reply`] answers in the same form.

use thiserror::Error;

/// Header bytes with 32-bit sequence numbers.
pub const HEADER_LEN_32: usize = 12;
/// Header bytes with 64-bit sequence numbers.
pub const HEADER_LEN_64: usize = 16;
/// The hello as 3.17+ (and little-endian 3.12-3.16) clients send it.
pub const HELLO: [u8; 4] = *b"9876";
/// The answer 3.17+ servers send.
pub const REPLY: [u8; 4] = *b"6789";
const LEGACY_HELLO: u32 = 123_456_789;
const LEGACY_REPLY: u32 = 987_654_321;

/// Header length for the negotiated counter width.
pub fn header_len(wide: bool) -> usize {
    if wide {
        HEADER_LEN_64
    } else {
        HEADER_LEN_32
    }
}

/// The header of one iperf3 UDP datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpHeader {
    pub sec: u32,
    pub usec: u32,
    pub seq: u64,
}

/// A datagram too short for its header, or a header that does not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum UdpError {
    #[error("{got}-byte datagram is shorter than the {need}-byte iperf3 header")]
    Short { got: usize, need: usize },
    #[error("sequence number {0} does not fit 32 bits")]
    SeqOverflow(u64),
}

impl UdpHeader {
    /// The header for a send time in nanoseconds on the sender's clock.
    pub fn at(send_ns: u64, seq: u64) -> Self {
        Self {
            sec: (send_ns / 1_000_000_000) as u32,
            usec: ((send_ns % 1_000_000_000) / 1000) as u32,
            seq,
        }
    }

    /// The send time in nanoseconds (seconds wrap at 2^32, which jitter does not notice).
    pub fn send_ns(&self) -> u64 {
        u64::from(self.sec) * 1_000_000_000 + u64::from(self.usec) * 1000
    }

    /// Reads the header at the start of `buf`.
    ///
    /// # Errors
    /// [`UdpError::Short`] when `buf` is shorter than the header.
    pub fn parse(buf: &[u8], wide: bool) -> Result<Self, UdpError> {
        let need = header_len(wide);
        if buf.len() < need {
            return Err(UdpError::Short {
                got: buf.len(),
                need,
            });
        }
        let be32 = |i: usize| u32::from_be_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
        let seq = if wide {
            (u64::from(be32(8)) << 32) | u64::from(be32(12))
        } else {
            u64::from(be32(8))
        };
        Ok(Self {
            sec: be32(0),
            usec: be32(4),
            seq,
        })
    }

    /// Writes the header at the start of `buf`.
    ///
    /// # Errors
    /// [`UdpError::Short`] when `buf` is too small, [`UdpError::SeqOverflow`] when a 32-bit
    /// header cannot hold the sequence number.
    pub fn emit(&self, buf: &mut [u8], wide: bool) -> Result<(), UdpError> {
        let need = header_len(wide);
        if buf.len() < need {
            return Err(UdpError::Short {
                got: buf.len(),
                need,
            });
        }
        buf[0..4].copy_from_slice(&self.sec.to_be_bytes());
        buf[4..8].copy_from_slice(&self.usec.to_be_bytes());
        if wide {
            buf[8..16].copy_from_slice(&self.seq.to_be_bytes());
        } else {
            let s = u32::try_from(self.seq).map_err(|_| UdpError::SeqOverflow(self.seq))?;
            buf[8..12].copy_from_slice(&s.to_be_bytes());
        }
        Ok(())
    }
}

/// The spelling of a client's UDP hello.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HelloForm {
    /// `9876`: 3.17+, or 3.12-3.16 on a little-endian host.
    Ascii,
    /// `6789`: 3.12-3.16 on a big-endian host.
    AsciiSwapped,
    /// 123456789, little-endian host (before 3.12).
    LegacyLe,
    /// 123456789, big-endian host (before 3.12).
    LegacyBe,
}

impl HelloForm {
    /// Recognises a 4-byte iperf3 hello.
    pub fn parse(d: &[u8]) -> Option<Self> {
        let b: [u8; 4] = d.try_into().ok()?;
        match b {
            HELLO => Some(HelloForm::Ascii),
            REPLY => Some(HelloForm::AsciiSwapped),
            _ if u32::from_le_bytes(b) == LEGACY_HELLO => Some(HelloForm::LegacyLe),
            _ if u32::from_be_bytes(b) == LEGACY_HELLO => Some(HelloForm::LegacyBe),
            _ => None,
        }
    }

    /// The answer this client understands.
    pub fn reply(self) -> [u8; 4] {
        match self {
            HelloForm::Ascii => REPLY,
            HelloForm::AsciiSwapped => HELLO,
            HelloForm::LegacyLe => LEGACY_REPLY.to_le_bytes(),
            HelloForm::LegacyBe => LEGACY_REPLY.to_be_bytes(),
        }
    }
}

/// True when `d` is a server's answer to a hello in any form a real server sends.
pub fn is_reply(d: &[u8]) -> bool {
    let Ok(b) = <[u8; 4]>::try_from(d) else {
        return false;
    };
    b == REPLY
        || b == HELLO
        || u32::from_le_bytes(b) == LEGACY_REPLY
        || u32::from_be_bytes(b) == LEGACY_REPLY
}

/// Fills an iperf3 payload buffer: the repeated digits, or the given pseudo-random bytes.
pub fn repeating_payload(len: usize) -> Vec<u8> {
    b"0123456789".iter().copied().cycle().take(len).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_32_and_64_bit() {
        let h = UdpHeader {
            sec: 1,
            usec: 2,
            seq: 0x0102_0304,
        };
        let mut b = [0u8; 16];
        h.emit(&mut b, false).unwrap();
        assert_eq!(&b[..12], &[0, 0, 0, 1, 0, 0, 0, 2, 1, 2, 3, 4]);
        assert_eq!(UdpHeader::parse(&b[..12], false), Ok(h));
        let h = UdpHeader { seq: 1 << 40, ..h };
        assert_eq!(h.emit(&mut b, false), Err(UdpError::SeqOverflow(1 << 40)));
        h.emit(&mut b, true).unwrap();
        assert_eq!(&b[8..16], &[0, 0, 1, 0, 0, 0, 0, 0]);
        assert_eq!(UdpHeader::parse(&b, true), Ok(h));
        assert!(UdpHeader::parse(&b[..15], true).is_err());
        assert_eq!(UdpHeader::at(3_000_005_000, 9).send_ns(), 3_000_005_000);
    }

    #[test]
    fn hello_forms_and_replies() {
        assert_eq!(HelloForm::parse(b"9876"), Some(HelloForm::Ascii));
        assert_eq!(
            HelloForm::parse(&[0x39, 0x38, 0x37, 0x36]).map(|f| f.reply()),
            Some(*b"6789")
        );
        assert_eq!(HelloForm::parse(b"6789").map(|f| f.reply()), Some(*b"9876"));
        assert_eq!(
            HelloForm::parse(&[0x15, 0xcd, 0x5b, 0x07]),
            Some(HelloForm::LegacyLe)
        );
        assert_eq!(
            HelloForm::parse(&[0x07, 0x5b, 0xcd, 0x15]),
            Some(HelloForm::LegacyBe)
        );
        assert_eq!(HelloForm::parse(b"98765"), None);
        assert_eq!(HelloForm::parse(b"abcd"), None);
        for f in [
            HelloForm::Ascii,
            HelloForm::AsciiSwapped,
            HelloForm::LegacyLe,
            HelloForm::LegacyBe,
        ] {
            assert!(is_reply(&f.reply()));
        }
        assert!(!is_reply(b"0000"));
        assert_eq!(repeating_payload(12), b"012345678901".to_vec());
    }
}
