//! The header of a `sonde stress -u --echo` request: which flow, which request, when it left.
//!
//! An RFC 862 echo server returns the datagram as it came, so the header comes back with the
//! reply and the client needs to keep no per-request state to match it: the sequence number
//! says which request it answers, the send time gives the round trip. The rest of the datagram
//! is chargen pattern, checked on return.
//!
//! ```text
//!  0      4      8             16            24
//!  | magic| flow |    seq      |  sent (ns)  | pattern ...
//! ```
//! All fields big-endian; `sent` is nanoseconds since the run's start on the sender's clock.

use std::ops::Range;

mod field {
    use std::ops::Range;
    pub const MAGIC: Range<usize> = 0..4;
    pub const FLOW: Range<usize> = 4..8;
    pub const SEQ: Range<usize> = 8..16;
    pub const SENT: Range<usize> = 16..24;
}

/// `"sndU"`: tells a reply of ours from anything else arriving on the socket.
pub const MAGIC: [u8; 4] = *b"sndU";
/// Header bytes; requests are at least this long.
pub const LEN: usize = 24;

/// The validated header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    pub flow: u32,
    pub seq: u64,
    pub sent_ns: u64,
}

fn get<const N: usize>(b: &[u8], r: Range<usize>) -> Option<[u8; N]> {
    b.get(r).and_then(|s| s.try_into().ok())
}

impl Probe {
    /// The header at the start of `b`; `None` when `b` is shorter or not ours.
    pub fn parse(b: &[u8]) -> Option<Self> {
        if get::<4>(b, field::MAGIC)? != MAGIC {
            return None;
        }
        Some(Self {
            flow: u32::from_be_bytes(get(b, field::FLOW)?),
            seq: u64::from_be_bytes(get(b, field::SEQ)?),
            sent_ns: u64::from_be_bytes(get(b, field::SENT)?),
        })
    }

    /// Writes the header into the first [`LEN`] bytes of `b`; false when `b` is shorter.
    pub fn emit(&self, b: &mut [u8]) -> bool {
        let Some(h) = b.get_mut(..LEN) else {
            return false;
        };
        h[field::MAGIC].copy_from_slice(&MAGIC);
        h[field::FLOW].copy_from_slice(&self.flow.to_be_bytes());
        h[field::SEQ].copy_from_slice(&self.seq.to_be_bytes());
        h[field::SENT].copy_from_slice(&self.sent_ns.to_be_bytes());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_bytes_round_trip() {
        let p = Probe {
            flow: 2,
            seq: 0x0102,
            sent_ns: 5,
        };
        let mut b = [0u8; 26];
        assert!(p.emit(&mut b));
        assert_eq!(
            b[..LEN],
            [b's', b'n', b'd', b'U', 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 5]
        );
        assert_eq!(Probe::parse(&b), Some(p));
    }

    #[test]
    fn rejects_short_and_foreign() {
        assert_eq!(Probe::parse(b"sndU\0\0"), None);
        assert_eq!(Probe::parse(&[0u8; 24]), None);
        assert!(!Probe {
            flow: 0,
            seq: 0,
            sent_ns: 0
        }
        .emit(&mut [0u8; 23]));
    }
}
